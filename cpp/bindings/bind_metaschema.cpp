// A dialect's metaschema as a table of native checks: the fast first check of a schema
// (structgen/json_schema/metaschema_check.py compiles the metaschema into the table once per
// process; this evaluates it). Every compile checks its schema; in Python each keyword of the
// metaschema was a closure call per sub-schema.
//
// A verdict of "valid" is jsonschema's; "invalid" sends the schema to jsonschema's own check,
// whose error is raised. So where a value is not plain JSON (a dict or list subclass to iterate,
// nesting past MAX_DEPTH) the answer is "invalid": jsonschema decides.
#include <nanobind/nanobind.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "casters.h"

namespace structgen::py {

namespace {

// Sub-schemas nested deeper are left to jsonschema.
constexpr int MAX_DEPTH = 1000;

// fn(x) read as a bool (a Python error raised as one).
bool truth(const nb::object& fn, PyObject* x) {
    nb::object got = fn(nb::handle(x));
    const int r = PyObject_IsTrue(got.ptr());
    if (r < 0) throw nb::python_error();
    return r == 1;
}

// A type test: one jsonschema's checker answers from the Python type alone, else its function.
struct TypeTest {
    enum Code : int { OBJECT, ARRAY, STRING, BOOLEAN, NULL_, NUMBER, INTEGER, PYTHON };
    Code code = PYTHON;
    nb::object fn;  // x -> bool: PYTHON's test, and a number's where the value is not plain JSON

    bool operator()(PyObject* x) const {
        switch (code) {
            case OBJECT: return instance(x, &PyDict_Type);
            case ARRAY: return instance(x, &PyList_Type);
            case STRING: return instance(x, &PyUnicode_Type);
            case BOOLEAN: return instance(x, &PyBool_Type);
            case NULL_: return x == Py_None;
            case NUMBER:
                if (PyLong_CheckExact(x) || PyFloat_CheckExact(x)) return true;
                if (plain(x)) return false;
                break;
            case INTEGER:
                if (PyLong_CheckExact(x)) return true;
                if (PyFloat_CheckExact(x)) {
                    const double d = PyFloat_AS_DOUBLE(x);
                    return std::isfinite(d) && std::floor(d) == d;
                }
                if (plain(x)) return false;
                break;
            case PYTHON: break;
        }
        return truth(fn, x);
    }

    // Plain JSON of another type than a number (bool included: not a number to jsonschema).
    static bool plain(PyObject* x) {
        return x == Py_None || PyBool_Check(x) || PyUnicode_CheckExact(x) || PyList_CheckExact(x) || PyDict_CheckExact(x);
    }

    static bool instance(PyObject* x, PyTypeObject* t) {
        if (Py_IS_TYPE(x, t)) return true;
        const int r = PyObject_IsInstance(x, reinterpret_cast<PyObject*>(t));
        if (r < 0) throw nb::python_error();
        return r == 1;
    }
};

// One keyword's check of a node.
struct Check {
    enum Kind : int { REF, TYPES, PROPERTIES, ADDITIONAL, ITEMS, ANY_OF, ALL_OF, ENUM_STRINGS, PREDICATE, MINIMUM,
                      EXCLUSIVE_MINIMUM, MIN_ITEMS, PROPERTY_NAMES, NEVER };
    Kind kind = NEVER;
    uint32_t node = 0;            // REF, ADDITIONAL, ITEMS, PROPERTY_NAMES: the node each value is checked by
    std::vector<uint32_t> nodes;  // ANY_OF, ALL_OF; PROPERTIES: the nodes its dict names (checked when made)
    std::vector<TypeTest> types;  // TYPES: any of them
    nb::object names;             // PROPERTIES: dict name -> node; ADDITIONAL, ENUM_STRINGS: a frozenset of names
    nb::object value;             // PREDICATE: x -> bool; MINIMUM, EXCLUSIVE_MINIMUM: the bound; MIN_ITEMS: the count
};

class MetaschemaCheck {
public:
    MetaschemaCheck(std::vector<std::vector<Check>> nodes, TypeTest is_object, TypeTest is_array, TypeTest is_number,
                    TypeTest is_string)
        : nodes_(std::move(nodes)), is_object_(std::move(is_object)), is_array_(std::move(is_array)),
          is_number_(std::move(is_number)), is_string_(std::move(is_string)) {
        for (const auto& node : nodes_)
            for (const auto& c : node) {
                check_index(c.node);
                for (uint32_t n : c.nodes) check_index(n);
            }
        if (nodes_.empty()) throw InvalidArgument("a metaschema check needs its root node");
    }

    bool operator()(nb::handle x) const { return node(0, x.ptr(), 0); }

private:
    std::vector<std::vector<Check>> nodes_;
    TypeTest is_object_, is_array_, is_number_, is_string_;

    void check_index(uint32_t n) const {
        if (n >= nodes_.size()) throw InvalidArgument("a metaschema check refers to node " + std::to_string(n) + " of " + std::to_string(nodes_.size()));
    }

    bool node(uint32_t n, PyObject* x, int depth) const {
        if (depth > MAX_DEPTH) return false;
        for (const Check& c : nodes_[n])
            if (!check(c, x, depth)) return false;
        return true;
    }

    static bool contains(const nb::object& set, PyObject* key) {
        const int r = PySet_Contains(set.ptr(), key);
        if (r < 0) throw nb::python_error();
        return r == 1;
    }

    // Whether f(key, value) holds for every member of x, where x is an object (true where it is
    // not one; false for a dict subclass, whose items() jsonschema reads).
    template <class F>
    bool members(PyObject* x, F&& f) const {
        if (!is_object_(x)) return true;
        if (!PyDict_CheckExact(x)) return false;
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        while (PyDict_Next(x, &pos, &key, &value))
            if (!f(key, value)) return false;
        return true;
    }

    bool check(const Check& c, PyObject* x, int depth) const {
        switch (c.kind) {
            case Check::REF:
                return node(c.node, x, depth + 1);
            case Check::TYPES:
                for (const TypeTest& t : c.types)
                    if (t(x)) return true;
                return false;
            case Check::PROPERTIES:
                return members(x, [&](PyObject* key, PyObject* value) {
                    PyObject* sub = PyDict_GetItemWithError(c.names.ptr(), key);
                    if (sub == nullptr) {
                        if (PyErr_Occurred()) throw nb::python_error();
                        return true;
                    }
                    return node(static_cast<uint32_t>(PyLong_AsUnsignedLong(sub)), value, depth + 1);  // (checked when made)
                });
            case Check::ADDITIONAL:
                return members(x, [&](PyObject* key, PyObject* value) {
                    return contains(c.names, key) || node(c.node, value, depth + 1);
                });
            case Check::ITEMS: {
                if (!is_array_(x)) return true;
                if (!PyList_CheckExact(x)) return false;
                for (Py_ssize_t i = 0; i < PyList_GET_SIZE(x); ++i)
                    if (!node(c.node, PyList_GET_ITEM(x, i), depth + 1)) return false;
                return true;
            }
            case Check::ANY_OF:
                for (uint32_t n : c.nodes)
                    if (node(n, x, depth + 1)) return true;
                return false;
            case Check::ALL_OF:
                for (uint32_t n : c.nodes)
                    if (!node(n, x, depth + 1)) return false;
                return true;
            case Check::ENUM_STRINGS:
                return PyUnicode_Check(x) && contains(c.names, x);
            case Check::PREDICATE:
                return truth(c.value, x);
            case Check::MINIMUM:
            case Check::EXCLUSIVE_MINIMUM: {
                if (!is_number_(x)) return true;
                const int r = PyObject_RichCompareBool(x, c.value.ptr(), c.kind == Check::MINIMUM ? Py_GE : Py_GT);
                if (r < 0) throw nb::python_error();
                return r == 1;
            }
            case Check::MIN_ITEMS: {
                if (!is_array_(x)) return true;
                const Py_ssize_t n = PyObject_Length(x);
                if (n < 0) throw nb::python_error();
                const int r = PyObject_RichCompareBool(nb::int_(n).ptr(), c.value.ptr(), Py_GE);
                if (r < 0) throw nb::python_error();
                return r == 1;
            }
            case Check::PROPERTY_NAMES:
                return members(x, [&](PyObject* key, PyObject*) { return node(c.node, key, depth + 1); });
            case Check::NEVER:
                return false;
        }
        return false;
    }
};

// A type test from (code, function) or a function alone (called for anything but plain JSON).
TypeTest type_test(nb::handle spec) {
    TypeTest t;
    nb::handle fn = spec;
    if (PyTuple_Check(spec.ptr())) {
        nb::tuple pair = nb::borrow<nb::tuple>(spec);
        if (pair.size() != 2) throw InvalidArgument("a type test is (code, function)");
        const long code = nb::cast<long>(pair[0]);
        if (code < TypeTest::OBJECT || code >= TypeTest::PYTHON) throw InvalidArgument("no type test " + std::to_string(code));
        t.code = static_cast<TypeTest::Code>(code);
        fn = pair[1];
    }
    if (!PyCallable_Check(fn.ptr())) throw nb::type_error("a type test is (code, function) or a function");
    t.fn = nb::borrow(fn);
    return t;
}

uint32_t node_index(nb::handle h) { return nb::cast<uint32_t>(h); }

// One check from its description (see structgen/json_schema/metaschema_check.py, _Table).
Check check_from(nb::handle spec) {
    nb::tuple t = nb::cast<nb::tuple>(spec);
    if (t.size() < 1) throw InvalidArgument("an empty check");
    const std::string kind = nb::cast<std::string>(t[0]);
    Check c;
    auto arg = [&](size_t i) -> nb::handle {
        if (i >= t.size()) throw InvalidArgument("the check " + kind + " lacks an argument");
        return t[i];
    };
    if (kind == "ref" || kind == "items" || kind == "propertyNames") {
        c.kind = kind == "ref" ? Check::REF : kind == "items" ? Check::ITEMS : Check::PROPERTY_NAMES;
        c.node = node_index(arg(1));
    } else if (kind == "type") {
        c.kind = Check::TYPES;
        for (nb::handle h : arg(1)) c.types.push_back(type_test(h));
    } else if (kind == "properties") {
        c.kind = Check::PROPERTIES;
        if (!PyDict_CheckExact(arg(1).ptr())) throw nb::type_error("properties: a dict name -> node");
        c.names = nb::steal(PyDict_Copy(arg(1).ptr()));  // (its own copy: the caller's dict may change)
        if (!c.names.is_valid()) throw nb::python_error();
        for (auto [k, v] : nb::borrow<nb::dict>(c.names)) c.nodes.push_back(node_index(v));  // (checked beside the others)
    } else if (kind == "additionalProperties") {
        c.kind = Check::ADDITIONAL;
        c.names = nb::borrow(arg(1));
        c.node = node_index(arg(2));
    } else if (kind == "anyOf" || kind == "allOf") {
        c.kind = kind == "anyOf" ? Check::ANY_OF : Check::ALL_OF;
        for (nb::handle h : arg(1)) c.nodes.push_back(node_index(h));
    } else if (kind == "enum") {
        c.kind = Check::ENUM_STRINGS;
        c.names = nb::borrow(arg(1));
    } else if (kind == "predicate") {
        c.kind = Check::PREDICATE;
        c.value = nb::borrow(arg(1));
        if (!PyCallable_Check(c.value.ptr())) throw nb::type_error("predicate: a callable");
    } else if (kind == "minimum" || kind == "exclusiveMinimum" || kind == "minItems") {
        c.kind = kind == "minimum" ? Check::MINIMUM : kind == "exclusiveMinimum" ? Check::EXCLUSIVE_MINIMUM : Check::MIN_ITEMS;
        c.value = nb::borrow(arg(1));
    } else if (kind == "never") {
        c.kind = Check::NEVER;
    } else {
        throw InvalidArgument("no check " + kind);
    }
    if ((c.kind == Check::ADDITIONAL || c.kind == Check::ENUM_STRINGS) && !PyFrozenSet_Check(c.names.ptr()))
        throw nb::type_error((kind + ": a frozenset of names").c_str());
    return c;
}

}  // namespace

void bind_metaschema(nb::module_& m) {
    nb::class_<MetaschemaCheck>(m, "MetaschemaCheck",
                                "A metaschema as a table of native checks (see structgen.json_schema.metaschema_check).")
        .def("__init__",
             [](MetaschemaCheck* self, nb::list nodes, nb::handle is_object, nb::handle is_array, nb::handle is_number,
                nb::handle is_string) {
                 std::vector<std::vector<Check>> table;
                 table.reserve(nodes.size());
                 for (nb::handle node : nodes) {
                     std::vector<Check> checks;
                     for (nb::handle spec : node) checks.push_back(check_from(spec));
                     table.push_back(std::move(checks));
                 }
                 new (self) MetaschemaCheck(std::move(table), type_test(is_object), type_test(is_array),
                                            type_test(is_number), type_test(is_string));
             },
             nb::arg("nodes"), nb::arg("is_object"), nb::arg("is_array"), nb::arg("is_number"), nb::arg("is_string"),
             "nodes[0] is the root; each node a list of checks (kind, args...); a type test (code, function) or a function")
        .def("__call__", &MetaschemaCheck::operator(), nb::arg("schema").none(), "Whether the schema is valid (else: ask jsonschema)");
}

}  // namespace structgen::py
