// A schema's JSON text, written once, and where each of its objects' texts lies in it. The JSON
// Schema front end keys its memos and caches by sub-schema text (structgen/json_schema/ops.py,
// schema_text): encoding every sub-schema again wrote each character once per level above it.
// Here one walk writes the root as json.JSONEncoder(ensure_ascii=False) writes it and keeps each
// object's span; a sub-schema's text is a slice. Anything the walk would not write exactly as
// JSONEncoder does (another type, a subclass, a key that is not a str, a deep or circular value, an
// int too long to write) makes json_texts() answer None, and the caller encodes in Python as before.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>

#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "casters.h"

namespace structgen::py {

namespace {

// Deeper values are left to Python (its encoder raises RecursionError near 1,000 levels).
constexpr int MAX_DEPTH = 400;

// A value the walk leaves to Python's encoder.
struct LeftToPython {};

// Writes JSON text as code points; keeps the span of each dict written.
class TextWriter {
public:
    std::vector<Py_UCS4> out;
    std::vector<std::pair<PyObject*, std::pair<Py_ssize_t, Py_ssize_t>>> spans;

    void value(PyObject* o, int depth) {
        if (o == Py_None) {
            ascii("null");
        } else if (o == Py_True) {
            ascii("true");
        } else if (o == Py_False) {
            ascii("false");
        } else if (PyUnicode_CheckExact(o)) {
            string(o);
        } else if (PyLong_CheckExact(o)) {
            written(PyLong_Type.tp_repr(o));
        } else if (PyFloat_CheckExact(o)) {
            number(o);
        } else if (PyDict_CheckExact(o)) {
            object(o, depth);
        } else if (PyList_CheckExact(o)) {
            list(o, depth);
        } else {
            throw LeftToPython{};
        }
    }

private:
    // Whether a str may be read in place (always from Python 3.12; a legacy one made ready).
    static bool ready(PyObject* s) {
#if PY_VERSION_HEX < 0x030C0000
        if (PyUnicode_READY(s) < 0) {
            PyErr_Clear();
            return false;
        }
#endif
        return true;
    }

    void ascii(const char* s) {
        for (; *s; ++s) out.push_back(static_cast<unsigned char>(*s));
    }

    // A repr's text (a new reference, or NULL with a Python error: left to Python).
    void written(PyObject* text) {
        if (text == nullptr) {
            PyErr_Clear();
            throw LeftToPython{};
        }
        nb::object held = nb::steal(text);
        if (!ready(text)) throw LeftToPython{};
        const int kind = PyUnicode_KIND(text);
        const void* data = PyUnicode_DATA(text);
        const Py_ssize_t n = PyUnicode_GET_LENGTH(text);
        for (Py_ssize_t i = 0; i < n; ++i) out.push_back(PyUnicode_READ(kind, data, i));
    }

    // As the encoder's C float writer: repr, or the names of the non-finite values.
    void number(PyObject* o) {
        const double d = PyFloat_AS_DOUBLE(o);
        if (d != d) {
            ascii("NaN");
        } else if (d == Py_HUGE_VAL) {
            ascii("Infinity");
        } else if (d == -Py_HUGE_VAL) {
            ascii("-Infinity");
        } else {
            written(PyFloat_Type.tp_repr(o));
        }
    }

    // As json.encoder.encode_basestring: quotes, backslashes and control characters escaped.
    void string(PyObject* s) {
        static constexpr char HEX[] = "0123456789abcdef";
        if (!ready(s)) throw LeftToPython{};
        const int kind = PyUnicode_KIND(s);
        const void* data = PyUnicode_DATA(s);
        const Py_ssize_t n = PyUnicode_GET_LENGTH(s);
        out.push_back('"');
        for (Py_ssize_t i = 0; i < n; ++i) {
            const Py_UCS4 c = PyUnicode_READ(kind, data, i);
            switch (c) {
                case '\\': ascii("\\\\"); break;
                case '"': ascii("\\\""); break;
                case '\b': ascii("\\b"); break;
                case '\f': ascii("\\f"); break;
                case '\n': ascii("\\n"); break;
                case '\r': ascii("\\r"); break;
                case '\t': ascii("\\t"); break;
                default:
                    if (c <= 0x1f) {
                        ascii("\\u00");
                        out.push_back(HEX[c >> 4]);
                        out.push_back(HEX[c & 0xf]);
                    } else {
                        out.push_back(c);
                    }
            }
        }
        out.push_back('"');
    }

    void object(PyObject* d, int depth) {
        if (depth >= MAX_DEPTH) throw LeftToPython{};
        const Py_ssize_t start = static_cast<Py_ssize_t>(out.size());
        out.push_back('{');
        Py_ssize_t pos = 0;
        PyObject *key, *item;
        bool first = true;
        while (PyDict_Next(d, &pos, &key, &item)) {
            if (!PyUnicode_CheckExact(key)) throw LeftToPython{};
            if (!first) ascii(", ");
            first = false;
            string(key);
            ascii(": ");
            value(item, depth + 1);
        }
        out.push_back('}');
        spans.push_back({d, {start, static_cast<Py_ssize_t>(out.size())}});
    }

    void list(PyObject* l, int depth) {
        if (depth >= MAX_DEPTH) throw LeftToPython{};
        out.push_back('[');
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(l); ++i) {
            if (i) ascii(", ");
            value(PyList_GET_ITEM(l, i), depth + 1);
        }
        out.push_back(']');
    }
};

// The text of a value and the spans of its dicts, each dict held (an id is not reused meanwhile).
class JsonTexts {
public:
    JsonTexts(nb::object text, TextWriter&& w) : text_(std::move(text)) {
        held_.reserve(w.spans.size());
        spans_.reserve(w.spans.size());
        for (const auto& [d, span] : w.spans) {
            held_.push_back(nb::borrow(d));
            spans_.emplace(d, span);
        }
    }

    const nb::object& text() const { return text_; }

    size_t size() const { return spans_.size(); }

    // The text of ``d`` if it is one of the dicts written, else None.
    nb::object text_of(nb::handle d) const {
        const auto it = spans_.find(d.ptr());
        if (it == spans_.end()) return nb::none();
        const auto [start, end] = it->second;
        if (start == 0 && end == PyUnicode_GET_LENGTH(text_.ptr())) return text_;
        PyObject* slice = PyUnicode_Substring(text_.ptr(), start, end);
        if (slice == nullptr) throw nb::python_error();
        return nb::steal(slice);
    }

private:
    nb::object text_;
    std::vector<nb::object> held_;
    std::unordered_map<PyObject*, std::pair<Py_ssize_t, Py_ssize_t>> spans_;
};

std::optional<JsonTexts> json_texts(nb::handle value) {
    TextWriter w;
    try {
        w.value(value.ptr(), 0);
    } catch (const LeftToPython&) {
        return std::nullopt;
    }
    PyObject* text = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, w.out.data(), static_cast<Py_ssize_t>(w.out.size()));
    if (text == nullptr) throw nb::python_error();
    return JsonTexts(nb::steal(text), std::move(w));
}

}  // namespace

void bind_texts(nb::module_& m) {
    nb::class_<JsonTexts>(m, "JsonTexts", "A value's JSON text and the texts of its dicts (see structgen.json_schema.ops).")
        .def_prop_ro("text", &JsonTexts::text, "The value's text, as json.JSONEncoder(ensure_ascii=False) writes it.")
        .def("text_of", &JsonTexts::text_of, nb::arg("d").none(), "The text of a dict inside the value (this very object), else None.")
        .def("__len__", &JsonTexts::size);
    m.def("json_texts", &json_texts, nb::arg("value").none(),
          "The JSON text of ``value`` with its dicts' texts (JsonTexts), or None where json.JSONEncoder must write it.");
}

}  // namespace structgen::py
