// Counting set bits without the popcnt instruction: the engine is built for baseline x86-64, where
// std::popcount becomes a call into libgcc per word (a packed mask over Llama-3 is 4,000 words);
// this is the branch-free SWAR count, a dozen instructions a 64-bit word, inlined.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

namespace structgen {

constexpr int popcount64(uint64_t x) {
#if defined(__POPCNT__)
    return std::popcount(x);
#else
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return static_cast<int>((x * 0x0101010101010101ull) >> 56);
#endif
}

// The bits set in 32-bit words (two at a time).
inline int64_t popcount_words(std::span<const uint32_t> words) {
    int64_t n = 0;
    size_t i = 0;
    for (; i + 1 < words.size(); i += 2) n += popcount64(uint64_t{words[i]} | uint64_t{words[i + 1]} << 32);
    if (i < words.size()) n += popcount64(words[i]);
    return n;
}

}  // namespace structgen
