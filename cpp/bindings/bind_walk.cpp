// The walk of a schema's sub-schemas (structgen/json_schema/ops.py, walk): every dict under the
// keywords that hold schemas, with its path, depth first, a schema before its sub-schemas, the
// keywords in the order the caller gives. The front end walks each schema several times per
// compile (the resolver's scan, the $ref targets under a sub-schema, the annotations, the unknown
// keywords); a walk in Python cost a generator step, a sort and a tuple per sub-schema.
//
// It reads the values with Python's own protocols (iteration, item access, isinstance), so a dict
// subclass is walked as Python's walk walked it.
#include <nanobind/nanobind.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "casters.h"

namespace structgen::py {

namespace {

// ``at + extra``: a new tuple (a path of keys and indices).
nb::tuple extended(const nb::tuple& at, std::initializer_list<nb::handle> extra) {
    const Py_ssize_t n = PyTuple_GET_SIZE(at.ptr());
    PyObject* t = PyTuple_New(n + static_cast<Py_ssize_t>(extra.size()));
    if (t == nullptr) throw nb::python_error();
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject* item = PyTuple_GET_ITEM(at.ptr(), i);
        Py_INCREF(item);
        PyTuple_SET_ITEM(t, i, item);
    }
    Py_ssize_t i = n;
    for (nb::handle h : extra) {
        Py_INCREF(h.ptr());
        PyTuple_SET_ITEM(t, i++, h.ptr());
    }
    return nb::steal<nb::tuple>(t);
}

bool contains(nb::handle set_or_dict, nb::handle key) {
    const int r = PySequence_Contains(set_or_dict.ptr(), key.ptr());
    if (r < 0) throw nb::python_error();
    return r == 1;
}

// The sub-schemas (dicts) of ``schema`` and their paths; ``place``: each keyword that holds
// schemas, by its place in the walk; ``maps``, ``lists``: the keywords holding maps and lists of
// schemas (the others hold one).
nb::list walk_schemas(nb::handle schema, nb::tuple tokens, nb::dict place, nb::handle maps, nb::handle lists) {
    nb::list out;
    if (!PyDict_Check(schema.ptr())) return out;
    std::vector<std::pair<nb::object, nb::tuple>> todo;
    todo.emplace_back(nb::borrow(schema), std::move(tokens));
    std::vector<std::pair<Py_ssize_t, nb::object>> held;  // (place, keyword)
    std::vector<std::pair<nb::object, nb::tuple>> found;
    while (!todo.empty()) {
        auto [sub, at] = std::move(todo.back());
        todo.pop_back();
        out.append(nb::make_tuple(sub, at));
        held.clear();
        for (nb::handle key : sub) {
            PyObject* p = PyDict_GetItemWithError(place.ptr(), key.ptr());
            if (p == nullptr) {
                if (PyErr_Occurred()) throw nb::python_error();
                continue;
            }
            held.emplace_back(nb::cast<Py_ssize_t>(nb::handle(p)), nb::borrow(key));
        }
        std::stable_sort(held.begin(), held.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        for (auto k = held.rbegin(); k != held.rend(); ++k) {  // (pushed last first: popped in order)
            const nb::object& key = k->second;
            nb::object value = sub[key];
            if (contains(maps, key)) {
                if (!PyDict_Check(value.ptr())) continue;
                found.clear();
                for (nb::handle item : value.attr("items")()) {
                    if (!PyTuple_Check(item.ptr()) || PyTuple_GET_SIZE(item.ptr()) != 2)
                        throw nb::type_error("a map of schemas whose items() are not (name, schema) pairs");
                    nb::object name = nb::borrow(PyTuple_GET_ITEM(item.ptr(), 0));
                    nb::object v = nb::borrow(PyTuple_GET_ITEM(item.ptr(), 1));
                    if (PyDict_Check(v.ptr())) found.emplace_back(std::move(v), extended(at, {key, name}));
                }
                for (auto f = found.rbegin(); f != found.rend(); ++f) todo.push_back(std::move(*f));
            } else if (contains(lists, key)) {
                if (!PyList_Check(value.ptr())) continue;
                for (Py_ssize_t i = PyObject_Length(value.ptr()) - 1; i >= 0; --i) {
                    nb::object v = value[nb::int_(i)];
                    if (PyDict_Check(v.ptr())) todo.emplace_back(std::move(v), extended(at, {key, nb::int_(i)}));
                }
            } else if (PyDict_Check(value.ptr())) {
                todo.emplace_back(std::move(value), extended(at, {key}));
            }
        }
    }
    return out;
}

}  // namespace

void bind_walk(nb::module_& m) {
    m.def("walk_schemas", &walk_schemas, nb::arg("schema").none(), nb::arg("tokens"), nb::arg("place"), nb::arg("maps"),
          nb::arg("lists"),
          "[(sub-schema, path)]: every dict under the keywords in place (keyword -> its place in the walk), depth first, a "
          "schema before its sub-schemas; maps and lists name the keywords holding maps and lists of schemas (see "
          "structgen.json_schema.ops.walk)");
}

}  // namespace structgen::py
