// The frame data of unique arrays and their items (cpp/engine/unique_data.h) and JSON values as
// JSON Schema compares them (cpp/engine/json_values.h), for structgen/guides/unique_items.py.
#include <nanobind/nanobind.h>

#include <span>

#include "../engine/json_values.h"
#include "../engine/unique_data.h"
#include "casters.h"
#include "py_pool.h"

namespace structgen::py {

namespace {

std::span<const uint8_t> bytes_span(const nb::bytes& b) { return {reinterpret_cast<const uint8_t*>(b.c_str()), b.size()}; }

nb::bytes to_bytes(const std::string& s) { return nb::bytes(s.data(), s.size()); }

}  // namespace

void bind_unique(nb::module_& m) {
    m.def(
        "json_value_key",
        [](nb::bytes text, bool exponents) -> nb::object {
            auto parsed = parse_json(bytes_span(text));
            if (!parsed || (!exponents && parsed->exponent)) return nb::none();
            return to_bytes(value_key(parsed->value));
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
            if (left < 0 || left > static_cast<int64_t>(UINT32_MAX)) throw OutOfRange("no term " + std::to_string(left) + " in this pool");
            return u.item_key(written, static_cast<Id>(left));
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
        .def_prop_ro("num_items", &UniqueData::num_items)
        .def_prop_ro("num_sets", &UniqueData::num_sets)
        .def_prop_ro("memory_bytes", &UniqueData::bytes);
}

}  // namespace structgen::py
