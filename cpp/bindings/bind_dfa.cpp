// Eager tables at the boundary: a code-point class's automaton and the canonical numbering of a
// table (structgen/automata/utf8.py's code_points_rows, structgen/automata/dfa.py's canonical_dfa).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <cstring>

#include "../engine/errors.h"
#include "../engine/utf8_dfa.h"
#include "casters.h"
#include "numpy.h"

namespace structgen::py {

namespace {

using Table = nb::ndarray<const int32_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using Flags = nb::ndarray<const bool, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Classes = nb::ndarray<const int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// (rows [states, width] int32, finals [states] bool, class_of [256] int32) as numpy arrays
nb::tuple arrays_of(DfaTable&& t) {
    const size_t n = t.finals.size(), width = static_cast<size_t>(t.width);
    auto* rows = new std::vector<int32_t>(std::move(t.rows));
    if (rows->empty()) rows->reserve(1);
    nb::capsule rows_owner(rows, [](void* p) noexcept { delete static_cast<std::vector<int32_t>*>(p); });
    size_t shape[2] = {n, width};
    nb::ndarray<nb::numpy, int32_t, nb::ndim<2>> table(rows->data(), 2, shape, rows_owner);
    auto* finals = new std::vector<uint8_t>(std::move(t.finals));
    if (finals->empty()) finals->reserve(1);
    nb::capsule finals_owner(finals, [](void* p) noexcept { delete static_cast<std::vector<uint8_t>*>(p); });
    size_t fshape[1] = {n};
    nb::ndarray<nb::numpy, bool, nb::ndim<1>> flags(reinterpret_cast<bool*>(finals->data()), 1, fshape, finals_owner);
    std::vector<int32_t> classes(t.class_of.begin(), t.class_of.end());
    return nb::make_tuple(table, flags, owned(std::move(classes)));
}

}  // namespace

void bind_dfa(nb::module_& m) {
    m.def(
        "code_points_rows",
        [](const std::vector<std::pair<int64_t, int64_t>>& intervals) {
            DfaTable t = code_points_rows(intervals);
            nb::tuple got = arrays_of(std::move(t));
            return nb::make_tuple(got[0], got[1]);
        },
        nb::arg("intervals"),
        "(rows [states, 256] int32, finals [states] bool): the minimal automaton (start 0) of one character "
        "whose code point is in intervals (inclusive), as UTF-8 bytes");
    m.def(
        "canonical_dfa",
        [](Table table, Flags finals, int64_t start, Classes class_of) {
            if (table.shape(0) != finals.shape(0))
                throw InvalidArgument("a table of " + std::to_string(table.shape(0)) + " states with " + std::to_string(finals.shape(0)) + " finals");
            if (class_of.shape(0) != 256) throw InvalidArgument("class_of holds " + std::to_string(class_of.shape(0)) + " bytes, not 256");
            if (table.shape(1) == 0 || table.shape(1) > 256) throw InvalidArgument("a table of " + std::to_string(table.shape(1)) + " columns");
            if (start < 0 || start > INT32_MAX) throw InvalidArgument("start state " + std::to_string(start) + " is out of range");
            DfaTable t;
            t.width = static_cast<int32_t>(table.shape(1));
            t.rows.assign(table.data(), table.data() + table.size());
            t.finals.resize(finals.shape(0));
            std::memcpy(t.finals.data(), finals.data(), t.finals.size());
            for (size_t b = 0; b < 256; ++b) t.class_of[b] = class_of.data()[b];
            return arrays_of(canonical_dfa(t, static_cast<int32_t>(start)));
        },
        nb::arg("table"), nb::arg("finals"), nb::arg("start"), nb::arg("class_of"),
        "(transitions, finals, byte_classes): the table renumbered breadth first from start (bytes in "
        "order), byte classes by their first byte, unreachable states and equal columns dropped");
}

}  // namespace structgen::py
