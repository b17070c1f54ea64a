// numpy arrays at the boundary: read-only views of an object's vectors (the object stays alive
// while a view does), and arrays that own a vector handed over.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace nb = nanobind;

namespace structgen::py {

template <class T>
using Array = nb::ndarray<nb::numpy, T, nb::ndim<1>>;

// a read-only numpy view of v, kept alive by owner
template <class T>
Array<const T> view_of(const std::vector<T>& v, nb::handle owner) {
    static const T none{};
    size_t shape[1] = {v.size()};
    return Array<const T>(v.empty() ? &none : v.data(), 1, shape, owner);
}

// a numpy array that owns v
template <class T>
Array<T> owned(std::vector<T>&& v) {
    auto* heap = new std::vector<T>(std::move(v));
    if (heap->empty()) heap->reserve(1);
    nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
    size_t shape[1] = {heap->size()};
    return Array<T>(heap->data(), 1, shape, owner);
}

// a packed mask's words as a new int32 array (the engine's masks are uint32 words)
inline Array<int32_t> packed_copy(const std::vector<uint32_t>& words) {
    std::vector<int32_t> out(words.size());
    if (!words.empty()) std::memcpy(out.data(), words.data(), words.size() * 4);
    return owned(std::move(out));
}

}  // namespace structgen::py
