// The frame data of unique arrays and their items (cpp/engine/unique_data.h) and JSON values as
// JSON Schema compares them (cpp/engine/json_values.h), for structgen/guides/unique_items.py.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>

#include <span>

#include "../engine/json_values.h"
#include "../engine/unique_data.h"
#include "casters.h"
#include "numpy.h"
#include "py_lazy.h"
#include "py_pool.h"

namespace structgen::py {

namespace {

std::span<const uint8_t> bytes_span(const nb::bytes& b) { return {reinterpret_cast<const uint8_t*>(b.c_str()), b.size()}; }

nb::bytes to_bytes(const std::string& s) { return nb::bytes(s.data(), s.size()); }

Id term_of(int64_t e) {
    if (e < 0 || e > static_cast<int64_t>(UINT32_MAX)) throw OutOfRange("no term " + std::to_string(e) + " in this pool");
    return static_cast<Id>(e);
}

}  // namespace

void bind_unique(nb::module_& m) {
    m.def(
        "json_value_key",
        [](nb::bytes text, bool exponents) -> nb::object {
            auto parsed = parse_json(bytes_span(text));
            if (!parsed || (!exponents && parsed->exponent)) return nb::none();
            try {
                return to_bytes(value_key(parsed->value));
            } catch (const BudgetExceeded&) {  // (too deep to key near the stack's end: as one too deep to read)
                return nb::none();
            }
        },
        nb::arg("text"), nb::arg("exponents") = true,
        "A key (bytes) equal for the JSON values JSON Schema calls equal, of one JSON text; None where the text is "
        "not one JSON value (or, exponents=False, a number of it has an exponent).");
    m.def(
        "json_value_texts",
        [](PyPool& pool, nb::bytes text) -> Id {
            auto parsed = parse_json(bytes_span(text));
            if (!parsed) throw InvalidArgument("not one JSON value");
            CharTexts chars;
            return value_texts(pool, parsed->value, chars);
        },
        nb::arg("pool"), nb::arg("text"), "Every JSON text of the value of one JSON text, as a term of pool.");

    nb::class_<UniqueData>(m, "UniqueData", "The frame data of unique arrays and their items (see structgen.guides.unique_items).")
        .def(nb::init<PyPool&>(), nb::arg("pool"), nb::keep_alive<1, 2>())
        .def("item_start", &UniqueData::item_start, nb::arg("written"))
        .def("read", &UniqueData::read, nb::arg("item"), nb::arg("b"))
        .def("item_key", [](UniqueData& u, int32_t written, int64_t left) {
            return u.item_key(written, term_of(left));
        })
        .def("mask_key", &UniqueData::mask_key)
        .def("in_danger", [](const UniqueData& u, int32_t i) { return u.item(i).left != NOTHING; })
        .def("left", [](const UniqueData& u, int32_t i) { return u.item(i).left; })
        .def("written", [](const UniqueData& u, int32_t i) { return u.item(i).set; })
        .def("text", [](const UniqueData& u, int32_t i) { return to_bytes(u.text(i)); })
        .def("taken", &UniqueData::taken)
        .def("after_item", [](UniqueData& u, int32_t written, nb::bytes text) { return u.after_item(written, bytes_span(text)); })
        .def("has_key", [](const UniqueData& u, int32_t written, nb::bytes key) {
            return u.has_key(written, std::string_view(key.c_str(), key.size()));
        })
        .def("alive", [](UniqueData& u, int64_t expr, int64_t left) { return u.alive(term_of(expr), term_of(left)); },
             nb::arg("expr"), nb::arg("left"))
        .def("dead_tokens",
             [](UniqueData& u, PyLazy& item, std::shared_ptr<TokenTrie> trie, int64_t q, int64_t node, int64_t left) {
                 std::vector<int64_t> dead;
                 if (node < 0 || node > INT32_MAX) throw OutOfRange("no trie node " + std::to_string(node));
                 u.dead_tokens(item.core, *trie, item.state(q), static_cast<int32_t>(node), term_of(left), dead);
                 return owned(std::move(dead));
             },
             nb::arg("item"), nb::arg("trie"), nb::arg("q"), nb::arg("node"), nb::arg("left"),
             "The tokens from trie node node that an item in state q of automaton item (which calls nothing), with "
             "spellings left of written values ahead, must not take (see cpp/engine/unique_data.h)")
        .def_prop_ro("num_items", &UniqueData::num_items)
        .def_prop_ro("num_sets", &UniqueData::num_sets)
        .def_prop_ro("memory_bytes", &UniqueData::bytes);
}

}  // namespace structgen::py
