// A set of bytes as a 256-bit mask (bit b set: byte b is in the set): the currency of byte-set
// terms, byte classes and first bytes. A value type, four words.
#pragma once
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "popcount.h"

namespace structgen {

struct ByteSet {
    std::array<uint64_t, 4> w{0, 0, 0, 0};

    static constexpr ByteSet all() { return ByteSet{{~0ull, ~0ull, ~0ull, ~0ull}}; }
    static ByteSet one(int b) {
        ByteSet s;
        s.w[b >> 6] = 1ull << (b & 63);
        return s;
    }
    static ByteSet range(int lo, int hi) {  // inclusive
        ByteSet s;
        for (int b = lo; b <= hi; ++b) s.set(b);
        return s;
    }
    bool has(int b) const { return (w[b >> 6] >> (b & 63)) & 1; }
    void set(int b) { w[b >> 6] |= 1ull << (b & 63); }
    bool empty() const { return (w[0] | w[1] | w[2] | w[3]) == 0; }
    bool is_all() const { return (w[0] & w[1] & w[2] & w[3]) == ~0ull; }
    int count() const {
        return popcount64(w[0]) + popcount64(w[1]) + popcount64(w[2]) + popcount64(w[3]);
    }
    // the lowest byte of a non-empty set (-1 when empty)
    int lowest() const {
        for (int i = 0; i < 4; ++i)
            if (w[i]) return i * 64 + std::countr_zero(w[i]);
        return -1;
    }
    ByteSet operator&(const ByteSet& o) const {
        return ByteSet{{w[0] & o.w[0], w[1] & o.w[1], w[2] & o.w[2], w[3] & o.w[3]}};
    }
    ByteSet operator|(const ByteSet& o) const {
        return ByteSet{{w[0] | o.w[0], w[1] | o.w[1], w[2] | o.w[2], w[3] | o.w[3]}};
    }
    ByteSet operator~() const { return ByteSet{{~w[0], ~w[1], ~w[2], ~w[3]}}; }
    ByteSet& operator|=(const ByteSet& o) { return *this = *this | o; }
    ByteSet& operator&=(const ByteSet& o) { return *this = *this & o; }
    bool operator==(const ByteSet& o) const = default;

    // calls f(byte) for every byte, ascending
    template <class F>
    void each(F&& f) const {
        for (int i = 0; i < 4; ++i) {
            uint64_t x = w[i];
            while (x) {
                f(i * 64 + std::countr_zero(x));
                x &= x - 1;
            }
        }
    }
    uint64_t hash() const {
        uint64_t h = 0x9E3779B97F4A7C15ull;
        for (uint64_t x : w) h = (h ^ x) * 0xBF58476D1CE4E5B9ull + (h >> 29);
        return h;
    }
};

}  // namespace structgen
