// Packed token sets: bit t % 32 of word t / 32 is token t (the layout of a serving engine's
// bitmask row). A pushdown guide's mask is the union of its frames' token sets: small sets are
// scattered as ids, large ones kept packed and OR-ed a word at a time.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "errors.h"
#include "popcount.h"

namespace structgen {

// Set the bits of ids in words; an id outside the words is OutOfRange (nothing is written then).
inline void set_token_bits(std::span<uint32_t> words, std::span<const int64_t> ids) {
    const auto limit = static_cast<int64_t>(words.size()) * 32;
    for (const int64_t t : ids)
        if (t < 0 || t >= limit) throw OutOfRange("token id " + std::to_string(t) + " outside a mask of " + std::to_string(limit) + " bits");
    for (const int64_t t : ids) words[static_cast<size_t>(t >> 5)] |= uint32_t{1} << (t & 31);
}

// words |= other, word by word (the shorter length of the two)
inline void or_token_bits(std::span<uint32_t> words, std::span<const uint32_t> other) {
    const size_t n = words.size() < other.size() ? words.size() : other.size();
    for (size_t i = 0; i < n; ++i) words[i] |= other[i];
}

// The tokens set in words, ascending.
inline std::vector<int64_t> ids_of_bits(std::span<const uint32_t> words) {
    std::vector<int64_t> ids;
    ids.reserve(static_cast<size_t>(popcount_words(words)));
    for (size_t w = 0; w < words.size(); ++w)
        for (uint32_t x = words[w]; x; x &= x - 1) ids.push_back(static_cast<int64_t>(w * 32 + static_cast<size_t>(__builtin_ctz(x))));
    return ids;
}

// The number of tokens set in words.
inline int64_t count_token_bits(std::span<const uint32_t> words) {
    return popcount_words(words);
}

}  // namespace structgen
