// Conversions at the boundary: a 256-bit Python int <-> ByteSet, Python errors for the engine's
// exceptions (structgen.errors.CompileBudgetExceeded, ValueError, IndexError).
#pragma once
#include <nanobind/nanobind.h>

#include "../engine/byteset.h"
#include "../engine/errors.h"
#include "../engine/pool.h"

namespace nb = nanobind;

namespace structgen::py {

// a Python int in 0 .. 2**256 - 1 as a ByteSet (ValueError otherwise)
inline ByteSet mask_from(nb::handle h) {
    if (!PyLong_Check(h.ptr())) throw nb::type_error("a byte mask is an int");
    if (PyObject_RichCompareBool(h.ptr(), nb::int_(0).ptr(), Py_LT) == 1)
        throw InvalidArgument("a byte mask is a 256-bit int, not a negative one");
    if (_PyLong_NumBits(h.ptr()) > 256) throw InvalidArgument("a byte mask is a 256-bit int");
    unsigned char buf[32];
#if PY_VERSION_HEX >= 0x030D0000
    if (_PyLong_AsByteArray(reinterpret_cast<PyLongObject*>(h.ptr()), buf, 32, 1, 0, 1) < 0) throw nb::python_error();
#else
    if (_PyLong_AsByteArray(reinterpret_cast<PyLongObject*>(h.ptr()), buf, 32, 1, 0) < 0) throw nb::python_error();
#endif
    ByteSet s;
    for (int i = 0; i < 4; ++i) {
        uint64_t w = 0;
        for (int j = 7; j >= 0; --j) w = (w << 8) | buf[i * 8 + j];
        s.w[i] = w;
    }
    return s;
}

inline nb::object mask_to(const ByteSet& s) {
    unsigned char buf[32];
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 8; ++j) buf[i * 8 + j] = static_cast<unsigned char>(s.w[i] >> (8 * j));
    return nb::steal(_PyLong_FromByteArray(buf, 32, 1, 0));
}

inline int byte_arg(int64_t b) {
    if (b < 0 || b > 255) throw InvalidArgument("a byte is in 0 .. 255, not " + std::to_string(b));
    return static_cast<int>(b);
}

void register_errors(nb::module_& m);

}  // namespace structgen::py
