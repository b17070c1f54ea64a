// The lazy automaton as the binding holds it: the engine's automaton and the Python pool it
// reads (kept alive while the automaton lives).
#pragma once
#include <nanobind/nanobind.h>

#include "../engine/lazy.h"
#include "py_pool.h"

namespace structgen::py {

struct PyLazy {
    nb::object pool_obj;
    LazyAutomaton core;
    PyLazy(nb::object pool, PyPool& p, Id root) : pool_obj(std::move(pool)), core(p, root) {}
    int32_t state(int64_t q) const {
        core.check(q);
        return static_cast<int32_t>(q);
    }
};

}  // namespace structgen::py
