// The DFA guide's native core (structgen.guides.dfa_guide.DfaGuide holds one): packed masks, the
// state after a token, forced bytes, token walks.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

#include <cstring>

#include "../engine/dfa_guide.h"
#include "../engine/token_bits.h"
#include "casters.h"
#include "numpy.h"
#include "py_guides.h"
#include "py_lazy.h"

namespace structgen::py {

namespace {

// one byte per token (0 or 1) from packed words: a word at a time, its 32 bits independent (the
// compiler vectorises the inner loop; a bit at a time through has_bit took 240 us on 128k tokens)
Array<uint8_t> unpacked(const uint32_t* words, size_t v) {
    std::vector<uint8_t> out(v);
    uint8_t* o = out.data();
    const size_t full = v / 32;
    for (size_t w = 0; w < full; ++w) {
        const uint32_t x = words[w];
        if (!x) continue;  // (already zero)
        for (int j = 0; j < 32; ++j) o[w * 32 + j] = static_cast<uint8_t>((x >> j) & 1u);
    }
    for (size_t t = full * 32; t < v; ++t) o[t] = static_cast<uint8_t>((words[full] >> (t - full * 32)) & 1u);
    return owned(std::move(out));
}

// a packed mask Python hands over (int32 words, written in place) and token ids
using Words = nb::ndarray<int32_t, nb::numpy, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using ConstWords = nb::ndarray<const int32_t, nb::numpy, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Ids = nb::ndarray<const int64_t, nb::numpy, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

std::span<uint32_t> bits_of(Words& w) { return {reinterpret_cast<uint32_t*>(w.data()), w.shape(0)}; }
std::span<const uint32_t> bits_of(const ConstWords& w) { return {reinterpret_cast<const uint32_t*>(w.data()), w.shape(0)}; }

}  // namespace

void bind_guide(nb::module_& m) {
    m.def("set_token_bits",
          [](Words words, Ids ids) {
              nb::gil_scoped_release quiet;
              set_token_bits(bits_of(words), {ids.data(), ids.shape(0)});
          },
          nb::arg("words").noconvert(), nb::arg("ids"),
          "Set the bits of token ids in a packed mask (int32 words, bit t % 32 of word t // 32), in place; "
          "an id outside the mask is IndexError and nothing is written");
    m.def("or_token_bits",
          [](Words words, ConstWords other) {
              if (words.shape(0) != other.shape(0))
                  throw InvalidArgument("or_token_bits: masks of " + std::to_string(words.shape(0)) + " and " +
                                        std::to_string(other.shape(0)) + " words");
              nb::gil_scoped_release quiet;
              or_token_bits(bits_of(words), bits_of(other));
          },
          nb::arg("words").noconvert(), nb::arg("other"), "words |= other, in place (two packed masks of one width)");
    m.def("count_token_bits", [](ConstWords words) { return count_token_bits(bits_of(words)); }, nb::arg("words"),
          "The tokens a packed mask allows");

    nb::class_<PyDfaGuide>(m, "DfaGuideCore", "The native core of a DfaGuide (see structgen.guides.dfa_guide).")
        .def("__init__",
             [](PyDfaGuide* self, nb::object automaton, std::shared_ptr<TokenIndex> index, int64_t cache_bytes,
                std::string description, std::string vocab_repr) {
                 PyLazy& lazy = nb::cast<PyLazy&>(automaton);
                 new (self) PyDfaGuide(automaton, lazy, std::move(index), cache_bytes, std::move(description), std::move(vocab_repr));
             },
             nb::arg("automaton"), nb::arg("index"), nb::arg("mask_cache_bytes"), nb::arg("description"), nb::arg("vocab_repr"))
        .def("packed",
             [](PyDfaGuide& g, int64_t q) {
                 return packed_copy(*g.core.mask(g.state(q)));
             },
             "the tokens allowed in state q as packed int32 words (a new array)")
        .def("bools",
             [](PyDfaGuide& g, int64_t q) {
                 auto bits = g.core.mask(g.state(q));
                 return unpacked(bits->data(), g.core.index().size());
             },
             "the tokens allowed in state q as one byte per token (a new array)")
        .def("slice_mask",
             [](PyDfaGuide& g, int64_t q) -> nb::object {
                 Bits bits(g.core.index().words(), 0);
                 if (!g.core.slice_only(g.state(q), bits)) return nb::none();
                 return nb::cast(unpacked(bits.data(), g.core.index().size()));
             },
             "the slice part of q's mask (one byte per token, EOS left out), or None where no slice applies")
        .def("is_cached", [](PyDfaGuide& g, int64_t q) { return g.core.cached(g.state(q)) != nullptr; })
        .def("next_state", [](PyDfaGuide& g, int64_t q, int64_t t) {
            return g.core.next_state(q < INT32_MIN || q > INT32_MAX ? -1 : static_cast<int32_t>(q), t);
        })
        .def("forced_bytes", [](PyDfaGuide& g, int64_t q) {
            std::string s = g.core.forced_bytes(g.state(q));
            return nb::bytes(s.data(), s.size());
        })
        .def("walk_tokens", [](PyDfaGuide& g, int64_t q) {
            std::vector<int64_t> ids;
            std::vector<int32_t> ends;
            g.core.walk_tokens(g.state(q), ids, ends);
            return nb::make_tuple(owned(std::move(ids)), owned(std::move(ends)));
        })
        .def_prop_ro("num_masks", [](PyDfaGuide& g) { return g.core.num_masks(); })
        .def_prop_ro("max_masks", [](PyDfaGuide& g) { return g.core.max_masks(); })
        .def_prop_ro("memory_bytes", [](PyDfaGuide& g) { return g.core.memory_bytes(); });
}

}  // namespace structgen::py
