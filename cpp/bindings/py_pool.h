// The pool as the binding holds it: the engine's Pool plus the Python objects it hands out again
// and again (the tuple of each distinct list of byte classes, the frozenset of each symbol set).
#pragma once
#include <nanobind/nanobind.h>

#include <vector>

#include "../engine/pool.h"
#include "casters.h"

namespace structgen::py {

struct PyPool : Pool {
    std::vector<nb::object> class_tuples;
    std::vector<nb::object> symbol_frozensets;

    Id id(int64_t e) const {
        check(e);
        return static_cast<Id>(e);
    }
    Id id(nb::handle h) const {
        int overflow = 0;
        long long v = PyLong_Check(h.ptr()) ? PyLong_AsLongLongAndOverflow(h.ptr(), &overflow) : 0;
        if (!PyLong_Check(h.ptr())) throw nb::type_error("a term is an int");
        if (overflow) throw OutOfRange("no such term in this pool");
        return id(static_cast<int64_t>(v));
    }
    std::vector<Id> ids(nb::handle parts);
    nb::object classes(Id e);
    nb::object symset(uint32_t id);
    nb::object node_tuple(Id e);
};

// a repetition counter: an int in 0 .. 2**62 (CompileBudgetExceeded above, ValueError below 0)
inline int64_t counter_arg(nb::handle h) {
    if (!PyLong_Check(h.ptr())) throw nb::type_error("a repetition counter is an int");
    if (_PyLong_Sign(h.ptr()) < 0) return -1;
    if (_PyLong_NumBits(h.ptr()) > 62) throw BudgetExceeded("a repetition's counter", BIG);
    return nb::cast<int64_t>(h);
}

}  // namespace structgen::py
