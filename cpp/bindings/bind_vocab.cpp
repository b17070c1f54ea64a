// The per-tokenizer data (TokenIndex, TokenTrie, StringSlice), the trie walks, the slices' per-term
// and per-state questions and the spelled distances, as the Python faces in structgen/vocab/ and
// structgen/guides/ read them.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "../engine/clamp.h"
#include "../engine/distances.h"
#include "../engine/token_out.h"
#include "../engine/frame_walk.h"
#include "../engine/slices.h"
#include "../engine/vocab.h"
#include "../engine/walk.h"
#include "casters.h"
#include "numpy.h"
#include "py_lazy.h"
#include "py_pool.h"

namespace structgen::py {

namespace {

std::vector<int32_t> roots_of(const TokenTrie& t, nb::handle node) {
    std::vector<int32_t> out;
    auto one = [&](nb::handle h) {
        const int64_t n = nb::cast<int64_t>(h);
        if (!t.valid(n)) throw OutOfRange("no trie node " + std::to_string(n));
        out.push_back(static_cast<int32_t>(n));
    };
    if (PyLong_Check(node.ptr()))
        one(node);
    else
        for (nb::handle h : node) one(h);
    return out;
}

std::map<int64_t, int64_t> weights(nb::handle d) {
    std::map<int64_t, int64_t> out;
    if (d.is_none()) return out;
    for (auto [k, v] : nb::cast<nb::dict>(d)) {
        const int64_t w = PyLong_Check(v.ptr()) && _PyLong_NumBits(v.ptr()) > 62 ? INF : nb::cast<int64_t>(v);
        out[nb::cast<int64_t>(k)] = std::min(w, DIST_INF);
    }
    return out;
}

struct PySpelled {
    nb::object auto_obj;
    SpelledDistances core;
    PySpelled(nb::object a, PyLazy& lazy, std::shared_ptr<const TokenTrie> trie, bool calls,
              std::map<int64_t, int64_t> bw, std::map<int64_t, int64_t> tw, int64_t guard_first)
        : auto_obj(std::move(a)), core(lazy.core, std::move(trie), calls, std::move(bw), std::move(tw), guard_first) {}
};

thread_local WalkStack scratch;
// a walk's tokens, grown once per thread (a string's walk reads a hundred thousand: grown, copied
// and faulted in again for every walk, they cost more than the walk's one exact copy out)
thread_local FrameWalk scratch_walk;

template <class T>
std::vector<T> exact(const std::vector<T>& v) { return std::vector<T>(v.begin(), v.end()); }

}  // namespace

void bind_vocab(nb::module_& m) {
    nb::class_<TokenTrie>(m, "TokenTrie", "A vocabulary's token trie, breadth first (see structgen.vocab.trie).")
        .def_static("build",
                    [](const std::vector<nb::object>& tokens, std::vector<int64_t> ids) {
                        std::vector<std::string> bytes(tokens.size());
                        for (size_t i = 0; i < tokens.size(); ++i)
                            if (!tokens[i].is_none()) {
                                nb::bytes b(tokens[i]);
                                bytes[i].assign(b.c_str(), b.size());
                            }
                        nb::gil_scoped_release unlocked;
                        return TokenTrie::build(bytes, ids);
                    })
        .def("restrict", [](const TokenTrie& t, std::vector<int64_t> ids) { return t.restrict(ids); })
        .def_prop_ro("num_nodes", &TokenTrie::num_nodes)
        .def_prop_ro("byte", [](nb::handle s) { return view_of(nb::cast<TokenTrie&>(s).byte, s); })
        .def_prop_ro("parent", [](nb::handle s) { return view_of(nb::cast<TokenTrie&>(s).parent, s); })
        .def_prop_ro("first_child", [](nb::handle s) { return view_of(nb::cast<TokenTrie&>(s).first_child, s); })
        .def_prop_ro("num_children", [](nb::handle s) { return view_of(nb::cast<TokenTrie&>(s).num_children, s); })
        .def_prop_ro("token_ids", [](nb::handle s) { return view_of(nb::cast<TokenTrie&>(s).token_ids, s); })
        .def_prop_ro("token_nodes", [](nb::handle s) { return view_of(nb::cast<TokenTrie&>(s).token_nodes, s); })
        .def_prop_ro("origin", [](nb::handle s) -> nb::object {
            const TokenTrie& t = nb::cast<TokenTrie&>(s);
            if (t.origin.empty()) return nb::none();
            return nb::cast(view_of(t.origin, s));
        })
        .def_prop_ro("tok_first", [](nb::handle s) { return view_of(nb::cast<TokenTrie&>(s).tok_first, s); })
        .def_prop_ro("tok_count", [](nb::handle s) { return view_of(nb::cast<TokenTrie&>(s).tok_count, s); })
        .def_prop_ro("tok_ids", [](nb::handle s) { return view_of(nb::cast<TokenTrie&>(s).tok_ids, s); })
        .def_prop_ro("node_token", [](nb::handle s) -> nb::object {
            const TokenTrie& t = nb::cast<TokenTrie&>(s);
            if (t.node_token.empty() && t.num_nodes() > 0) return nb::none();
            return nb::cast(view_of(t.node_token, s));
        })
        .def_prop_ro("depth_starts", [](nb::handle s) { return view_of(nb::cast<TokenTrie&>(s).depth_starts, s); })
        .def_prop_ro("height", [](nb::handle s) { return view_of(nb::cast<TokenTrie&>(s).height, s); })
        .def_prop_ro("memory_bytes", &TokenTrie::memory_bytes)
        .def("child", [](const TokenTrie& t, int64_t n, int64_t b) {
            if (n < 0 || !t.valid(n)) return int32_t(-1);
            return t.child(static_cast<int32_t>(n), byte_arg(b));
        })
        .def("node_of", [](const TokenTrie& t, nb::bytes data) { return t.node_of({data.c_str(), data.size()}); })
        .def("bytes_between", [](const TokenTrie& t, int64_t top, int64_t n) {
            if (!t.valid(top) || !t.valid(n)) throw OutOfRange("no such trie node");
            std::string s = t.bytes_between(static_cast<int32_t>(top), static_cast<int32_t>(n));
            return nb::bytes(s.data(), s.size());
        });

    nb::class_<StringSlice>(m, "StringSlice", "The slice tokens of one vocabulary (see structgen.vocab.slices).")
        .def_ro("k", &StringSlice::k)
        .def_prop_ro("is_slice", [](nb::handle s) { return view_of(nb::cast<StringSlice&>(s).is_slice, s); })
        .def_prop_ro("by_length", [](nb::handle s) { return view_of(nb::cast<StringSlice&>(s).by_length, s); })
        .def_prop_ro("lengths", [](nb::handle s) { return view_of(nb::cast<StringSlice&>(s).lengths, s); })
        .def_prop_ro("length_starts", [](nb::handle s) { return view_of(nb::cast<StringSlice&>(s).length_starts, s); })
        .def_prop_ro("rest", [](StringSlice& s) { return s.rest; })
        .def_prop_ro("longest", &StringSlice::longest)
        .def("count_up_to", &StringSlice::count_up_to)
        .def("rest_cut", [](StringSlice& s, int64_t n) {
            nb::gil_scoped_release unlocked;
            return s.rest_cut(n);
        });

    nb::class_<TokenIndex>(m, "TokenIndex", "The per-tokenizer data of one vocabulary (see structgen.vocab.index).")
        .def("__init__",
             [](TokenIndex* self, nb::handle tokens, std::vector<int64_t> eos) {
                 std::vector<std::string> bytes;
                 std::vector<uint8_t> walkable;
                 for (nb::handle h : tokens) {
                     if (h.is_none()) {
                         bytes.emplace_back();
                         walkable.push_back(0);
                     } else {
                         char* buf;
                         Py_ssize_t len;
                         if (PyBytes_AsStringAndSize(h.ptr(), &buf, &len) < 0) throw nb::python_error();
                         bytes.emplace_back(buf, static_cast<size_t>(len));
                         walkable.push_back(1);
                     }
                 }
                 new (self) TokenIndex(std::move(bytes), std::move(walkable), std::move(eos));
             },
             nb::arg("tokens"), nb::arg("eos"))
        .def_prop_ro("size", &TokenIndex::size)
        .def_prop_ro("trie", [](TokenIndex& x) {
            nb::gil_scoped_release unlocked;
            return x.trie_ptr();
        })
        .def("slice", [](TokenIndex& x, int k) -> StringSlice& {
            nb::gil_scoped_release unlocked;
            return x.slice(k);
        }, nb::rv_policy::reference_internal)
        .def("long_tokens", [](TokenIndex& x, int64_t n) {
            nb::gil_scoped_release unlocked;
            return x.long_tokens(n);
        })
        .def_prop_ro("single_bytes", [](TokenIndex& x) { return mask_to(x.single_bytes()); })
        .def_prop_ro("longest_token", &TokenIndex::longest_token)
        .def_prop_ro("token_lengths", [](nb::handle s) { return view_of(nb::cast<TokenIndex&>(s).token_lengths(), s); })
        .def_prop_ro("short_token_cuts", [](TokenIndex& x) { return x.short_token_cuts(); })
        .def("prepare", &TokenIndex::prepare, nb::call_guard<nb::gil_scoped_release>())
        .def_prop_ro("memory_bytes", &TokenIndex::memory_bytes);

    m.def("walk_trie",
          [](PyLazy& a, std::shared_ptr<TokenTrie> trie, nb::handle node, int64_t state, bool clamp) {
              const int32_t q = a.state(state);
              auto roots = roots_of(*trie, node);
              std::vector<int64_t> nodes;
              std::vector<int32_t> states;
              walk_trie(a.core, *trie, roots, q, clamp, scratch, [&](int32_t n, int32_t s, int32_t) {
                  nodes.push_back(n);
                  states.push_back(s);
              });
              return nb::make_tuple(owned(std::move(nodes)), owned(std::move(states)));
          },
          nb::arg("automaton"), nb::arg("trie"), nb::arg("node"), nb::arg("state"), nb::arg("clamp") = false,
          "(nodes, states): every trie node below node (an int, or several none below another) that the automaton "
          "reads from state, depth first (children by byte), and the state each reaches");
    m.def("walk_tokens",
          [](PyLazy& a, std::shared_ptr<TokenTrie> trie, nb::handle node, int64_t state, bool clamp) {
              const int32_t q = a.state(state);
              auto roots = roots_of(*trie, node);
              std::vector<int64_t>& ids = scratch_walk.ids;
              std::vector<int32_t>& ends = scratch_walk.ends;
              ids.clear(), ends.clear();
              const TokenTrie& t = *trie;
              {
                  TokenOut out(ids, &ends);
                  walk_trie(a.core, t, roots, q, clamp, scratch, [&](int32_t, int32_t s, int32_t p) { out.add(t, p, s); });
              }
              return nb::make_tuple(owned(exact(ids)), owned(exact(ends)));
          },
          nb::arg("automaton"), nb::arg("trie"), nb::arg("node"), nb::arg("state"), nb::arg("clamp") = false,
          "(token ids, states): the tokens that end at the nodes walk_trie reaches, each with its node's state");
    m.def("walk_frame",
          [](PyLazy& a, std::shared_ptr<TokenTrie> trie, nb::handle node, int64_t state, bool clamp,
             nb::handle full) {
              const int32_t q = a.state(state);
              auto roots = roots_of(*trie, node);
              const TokenTrie* whole = full.is_none() ? nullptr : &nb::cast<TokenTrie&>(full);
              FrameWalk& out = scratch_walk;
              out.ids.clear(), out.ends.clear(), out.branch_nodes.clear(), out.branch_states.clear();
              walk_frame(a.core, *trie, roots, q, clamp, whole, scratch, out);
              return nb::make_tuple(owned(exact(out.ids)), owned(exact(out.ends)), owned(exact(out.branch_nodes)),
                                    owned(exact(out.branch_states)));
          },
          nb::arg("automaton"), nb::arg("trie"), nb::arg("node"), nb::arg("state"), nb::arg("clamp") = false,
          nb::arg("full").none() = nb::none(),
          "(token ids, states, branch nodes, branch states): the tokens walk_tokens reads and the nodes reached that "
          "have children and whose state may return, call or pass a guard (full: t's nodes as full's, through its origin)");
    m.def("slice_characters", [](int k, nb::bytes token) { return slice_characters(k, {token.c_str(), token.size()}); });
    m.attr("MIXED") = MIXED;
    m.attr("NUM_SLICES") = NUM_SLICES;

    nb::class_<PySpelled>(m, "SpelledDistances",
                          "Tokens to finish from each state of one automaton, along one shortest byte path "
                          "(see structgen.guides.distances).")
        .def("__init__",
             [](PySpelled* self, nb::object a, std::shared_ptr<TokenTrie> trie, bool calls, nb::handle byte_weights,
                nb::handle token_weights, int64_t guard_first) {
                 PyLazy& lazy = nb::cast<PyLazy&>(a);
                 new (self) PySpelled(a, lazy, std::move(trie), calls, weights(byte_weights), weights(token_weights), guard_first);
             },
             nb::arg("automaton"), nb::arg("trie"), nb::kw_only(), nb::arg("calls") = false,
             nb::arg("byte_weights").none() = nb::none(), nb::arg("token_weights").none() = nb::none(),
             nb::arg("guard_first") = int64_t(1) << 40)
        .def("bytes_to_end", [](PySpelled& d, int64_t q) {
            PyLazy& a = nb::cast<PyLazy&>(d.auto_obj);
            return d.core.bytes_to_end(a.state(q));
        })
        .def("tokens_to_end", [](PySpelled& d, int64_t q) {
            PyLazy& a = nb::cast<PyLazy&>(d.auto_obj);
            return d.core.tokens_to_end(a.state(q));
        })
        .def_prop_ro("memory_bytes", [](PySpelled& d) { return d.core.memory_bytes(); });
}

}  // namespace structgen::py
