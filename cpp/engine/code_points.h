// One character of a code-point class as a term of the pool: its UTF-8 encodings as sequences of
// byte ranges (no surrogates, no overlong forms), those with one lead byte range sharing one
// branch. (Python face: ExprPool.code_points in structgen/automata/expr.py; the eager automaton of
// a large class is utf8_dfa.h's.)
#pragma once
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "pool.h"

namespace structgen {

// A sequence of byte ranges (inclusive): the encodings of a run of code points of one length.
using ByteRanges = std::vector<std::pair<uint8_t, uint8_t>>;

// The UTF-8 encodings of code points lo..hi (surrogates left out) as sequences of byte ranges:
// every code point's bytes fall in exactly one sequence.
std::vector<ByteRanges> utf8_sequences(int64_t lo, int64_t hi);

// The term of one character whose code point is in intervals (inclusive, in the order given; a
// range's part outside 0..U+10FFFF is no code point).
Id code_points_term(Pool& pool, std::span<const std::pair<int64_t, int64_t>> intervals);

}  // namespace structgen
