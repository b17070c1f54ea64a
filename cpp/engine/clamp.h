// Counters cut to what a token can tell apart: clamp(e, n) is e with every repetition's counters
// cut to what n bytes can tell apart (for every string w of at most n bytes, w leads somewhere in e
// iff it does in the result, and to a final state iff it does there), so states that differ only
// in large counters (a long string's length so far) share one token mask. An intersection or a
// complement is left whole (whether it can still be completed may depend on any counter), but for a
// string's length far from its bound (clampable_string). Memoised per pool (the Clamps table the
// pool owns). (Python face: automata/expr_rewrite.py's clamp, automata/string_length.py.)
#pragma once
#include <cstdint>
#include <optional>
#include <span>

#include "flat_map.h"
#include "pool.h"

namespace structgen {

class Clamps {
public:
    explicit Clamps(Pool& pool) : pool_(pool) {}
    Id clamp(Id e, int64_t n);
    // an upper bound on the shortest completion (bytes) of every term e leads to (INF: algebra, symbols)
    int64_t longest_shortest(Id e);
    // the string of an intersection with its length unit{0,hi}" far enough from hi that a token of
    // at most n bytes cannot be killed by the length; else none
    std::optional<Id> clampable_string(std::span<const Id> members, int64_t n);
    // whether e reads on inside a string under its length (its first part, down a chain of
    // concatenations, is a string term intersected with its length term, the minimum reached)
    bool in_length_bounded_string(Id e);
    size_t entries() const { return clamped_.size() + longest_.size(); }

private:
    Id cut_repeat(Id x, int64_t lo, int64_t hi, int64_t n);
    Pool& pool_;
    FlatMap<Id> clamped_;  // e << 24 | n (n below 2**24)
    FlatMap<int64_t> longest_;
};

}  // namespace structgen
