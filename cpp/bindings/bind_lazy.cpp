// The lazy automaton's Python class (structgen.automata.lazy.LazyAutomaton derives from it), and
// the live views of its rows (flat), finals and expressions that grow in place as it is built.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/vector.h>

#include "../engine/lazy.h"
#include "../engine/slices.h"
#include "casters.h"
#include "py_lazy.h"
#include "py_pool.h"

namespace structgen::py {

namespace {

// a live view of one of the automaton's per-state arrays: indexing reads it as it is now
template <int Which>
struct View {
    nb::object owner;
    PyLazy* lazy;
    int64_t size() const {
        return Which == 0 ? int64_t(lazy->core.num_states()) * 256 : lazy->core.num_states();
    }
    int64_t item(int64_t i) const {
        if constexpr (Which == 0) return lazy->core.at(i);
        if constexpr (Which == 1) return lazy->core.is_final(static_cast<int32_t>(i));
        return lazy->core.expr(static_cast<int32_t>(i));
    }
};

// The views' indexing as CPython slots, not nanobind-dispatched methods: `flat[q * 256 + b]` runs
// once per byte of every token a guide steps through (tens of nanoseconds, not hundreds).
template <int Which>
PyObject* view_item(PyObject* self, Py_ssize_t i) {
    View<Which>* v = nb::inst_ptr<View<Which>>(self);
    const int64_t n = v->size();
    if (i < 0 || i >= n) {
        PyErr_SetString(PyExc_IndexError, "index out of range");
        return nullptr;
    }
    if constexpr (Which == 1) return PyBool_FromLong(v->item(i));
    return PyLong_FromLongLong(v->item(i));
}

template <int Which>
PyObject* view_subscript(PyObject* self, PyObject* key) {
    View<Which>* v = nb::inst_ptr<View<Which>>(self);
    const int64_t n = v->size();
    if (PySlice_Check(key)) {
        Py_ssize_t start, stop, step, len;
        if (PySlice_GetIndicesEx(key, n, &start, &stop, &step, &len) < 0) return nullptr;
        PyObject* out = PyList_New(len);
        if (!out) return nullptr;
        for (Py_ssize_t j = 0, i = start; j < len; ++j, i += step) {
            PyObject* x = Which == 1 ? PyBool_FromLong(v->item(i)) : PyLong_FromLongLong(v->item(i));
            if (!x) {
                Py_DECREF(out);
                return nullptr;
            }
            PyList_SET_ITEM(out, j, x);
        }
        return out;
    }
    Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
    if (i == -1 && PyErr_Occurred()) return nullptr;
    if (i < 0) i += n;
    return view_item<Which>(self, i);
}

template <int Which>
Py_ssize_t view_length(PyObject* self) {
    return nb::inst_ptr<View<Which>>(self)->size();
}

template <int Which>
void bind_view(nb::module_& m, const char* name) {
    static PyType_Slot slots[] = {
        {Py_mp_subscript, reinterpret_cast<void*>(view_subscript<Which>)},
        {Py_mp_length, reinterpret_cast<void*>(view_length<Which>)},
        {Py_sq_item, reinterpret_cast<void*>(view_item<Which>)},
        {Py_sq_length, reinterpret_cast<void*>(view_length<Which>)},
        {0, nullptr}};
    nb::class_<View<Which>>(m, name, "A live view of a lazy automaton's per-state data (it grows as states are met).",
                            nb::type_slots(slots));
}

std::vector<uint8_t> bytes_of_handle(nb::handle data) {
    char* buf;
    Py_ssize_t len;
    if (PyBytes_Check(data.ptr())) {
        PyBytes_AsStringAndSize(data.ptr(), &buf, &len);
        return {reinterpret_cast<uint8_t*>(buf), reinterpret_cast<uint8_t*>(buf) + len};
    }
    nb::bytes b(data);  // bytearray, memoryview, ...
    return {reinterpret_cast<const uint8_t*>(b.c_str()), reinterpret_cast<const uint8_t*>(b.c_str()) + b.size()};
}

}  // namespace

void bind_lazy(nb::module_& m) {
    m.attr("UNBUILT") = UNBUILT;
    bind_view<0>(m, "FlatView");
    bind_view<1>(m, "FinalsView");
    bind_view<2>(m, "ExprsView");

    nb::class_<PyLazy>(m, "LazyAutomaton", "The automaton of a term, built lazily (see structgen.automata.lazy).")
        .def("__init__",
             [](PyLazy* self, nb::object pool, int64_t root) {
                 PyPool& p = nb::cast<PyPool&>(pool);
                 new (self) PyLazy(pool, p, p.id(root));
             },
             nb::arg("pool"), nb::arg("root"))
        .def_prop_ro("pool", [](PyLazy& a) { return a.pool_obj; })
        .def_prop_ro("root", [](PyLazy& a) { return a.core.root(); })
        .def_prop_ro("num_states", [](PyLazy& a) { return a.core.num_states(); })
        .def_prop_ro("memory_bytes", [](PyLazy& a) { return a.core.memory_bytes(); })
        .def_prop_ro("flat", [](nb::handle self) { return View<0>{nb::borrow(self), &nb::cast<PyLazy&>(self)}; })
        .def_prop_ro("finals", [](nb::handle self) { return View<1>{nb::borrow(self), &nb::cast<PyLazy&>(self)}; })
        .def_prop_ro("exprs", [](nb::handle self) { return View<2>{nb::borrow(self), &nb::cast<PyLazy&>(self)}; })
        .def("state_of", [](PyLazy& a, int64_t e) { return a.core.state_of(nb::cast<PyPool&>(a.pool_obj).id(e)); })
        .def("build", [](PyLazy& a, int64_t q) { a.core.build(a.state(q)); })
        .def("fill", [](PyLazy& a, int64_t q, nb::handle needed) { a.core.fill(a.state(q), mask_from(needed)); })
        .def("is_final", [](PyLazy& a, int64_t q) { return a.core.is_final(a.state(q)); })
        .def("is_built", [](PyLazy& a, int64_t q) { return a.core.is_built(a.state(q)); })
        .def("step", [](PyLazy& a, int64_t q, int64_t b) { return a.core.step(a.state(q), byte_arg(b)); })
        .def("walk", [](PyLazy& a, int64_t q, nb::handle data) {
            auto bytes = bytes_of_handle(data);
            return a.core.walk(a.state(q), bytes);
        })
        .def("accepts", [](PyLazy& a, nb::handle data) {
            auto bytes = bytes_of_handle(data);
            int32_t q = a.core.walk(0, bytes);
            return q >= 0 && a.core.is_final(q);
        })
        .def("row", [](PyLazy& a, int64_t q) {
            int32_t s = a.state(q);
            a.core.build(s);
            std::vector<int32_t> out(a.core.table() + size_t(s) * 256, a.core.table() + size_t(s) * 256 + 256);
            nb::list l;
            for (int32_t t : out) l.append(t);
            return l;
        })
        .def("symbols_of", [](PyLazy& a, int64_t q) {
            const auto& es = a.core.symbols_of(a.state(q));
            nb::list out;
            for (auto [k, r] : es) out.append(nb::make_tuple(k, r));
            return nb::tuple(out);
        })
        .def("edges", [](PyLazy& a, int64_t q) {
            int32_t s = a.state(q);
            a.core.build(s);
            nb::dict out;
            const int32_t* row = a.core.table() + size_t(s) * 256;
            for (int b = 0; b < 256; ++b)
                if (row[b] >= 0) out[nb::int_(b)] = row[b];
            return out;
        })
        .def_prop_ro("table", [](nb::handle self) {
            PyLazy& a = nb::cast<PyLazy&>(self);
            size_t shape[2] = {static_cast<size_t>(a.core.num_states()), 256};  // (the rows of the states met)
            return nb::ndarray<nb::numpy, int32_t, nb::ndim<2>>(const_cast<int32_t*>(a.core.table()), 2, shape, self);
        })
        // the clamps (counters cut to what a token can tell apart)
        .def("clamped", [](PyLazy& a, int64_t q, int64_t n) { return a.core.clamped(a.state(q), n); })
        .def("clamped_head", [](PyLazy& a, int64_t q, int64_t n, bool rounded) {
            return a.core.clamped_head(a.state(q), n, rounded);
        }, nb::arg("q"), nb::arg("n"), nb::arg("rounded") = false)
        .def("clamped_below", [](PyLazy& a, int64_t q, std::vector<int64_t> lengths) {
            return a.core.clamped_below(a.state(q), lengths);
        })
        .def("head_cut", [](PyLazy& a, int64_t q, std::vector<int64_t> lengths) {
            return a.core.head_cut(a.state(q), lengths);
        })
        .def("in_bounded_string", [](PyLazy& a, int64_t q) { return a.core.in_bounded_string(a.state(q)); })
        // the string slices, per state
        .def("char_successor", [](PyLazy& a, int64_t q, int k) { return char_successor(a.core, a.state(q), k); },
             nb::arg("q"), nb::arg("k") = 0)
        .def("counted_run", [](PyLazy& a, int64_t q, int k, int64_t longest) {
            return counted_run(a.core, a.state(q), k, longest);
        })
        .def("slice_chain", [](PyLazy& a, int64_t q, int k, int64_t longest) {
            return slice_chain(a.core, a.state(q), k, longest);
        })
        .def("table_for", [](nb::handle self, nb::handle states) {
            PyLazy& a = nb::cast<PyLazy&>(self);
            for (nb::handle q : states) {
                nb::object i = nb::steal(PyNumber_Index(q.ptr()));
                if (!i.is_valid()) throw nb::python_error();
                a.core.build(a.state(nb::cast<int64_t>(i)));
            }
            size_t shape[2] = {static_cast<size_t>(a.core.num_states()), 256};  // (the rows of the states met)
            return nb::ndarray<nb::numpy, int32_t, nb::ndim<2>>(const_cast<int32_t*>(a.core.table()), 2, shape, self);
        });
}

}  // namespace structgen::py
