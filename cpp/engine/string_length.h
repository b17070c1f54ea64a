// JSON strings under a length (minLength / maxLength): the schema compiler intersects a string
// with the term "unit{lo,hi}" and marks the pool (mark); liveness then asks verdict() before it
// searches: once the minimum is reached, whether the intersection can still be completed is
// whether the string has a completion of at most hi units (fewest_units, a 0-1 search over the
// string's own derivatives, shared by every position). (Python: automata/string_length.py.)
#pragma once
#include <cstdint>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "min_length.h"
#include "pool.h"

namespace structgen {

constexpr size_t REACH_LIMIT = 4096;  // most pairs fewest_units visits before it gives up

struct StringWithLength {
    Id string;
    Id unit;
    int64_t hi;  // -1: unbounded
};

class StringLengths {
public:
    explicit StringLengths(Pool& pool) : pool_(pool) {}

    void mark(Id unit, Id quote);
    bool marked() const { return quote_.has_value(); }
    std::optional<Id> quote() const { return quote_; }
    const std::unordered_set<Id>& units() const { return units_; }
    // where e is a unit, its restriction to a vocabulary's bytes is one too
    void note_restricted(Id e, Id restricted);
    std::optional<StringWithLength> string_with_length(std::span<const Id> members, bool opened = true);
    std::optional<bool> verdict(Id e);
    // the verdict inside a character (the length's term x·unit{0,hi}·quote): live where a shortest
    // completion fits by its bytes, else none (searched)
    std::optional<bool> inside_a_unit(std::span<const Id> members);
    std::optional<int64_t> fewest_units(Id string, Id unit);
    // the pool's shortest lengths, symbols weighing nothing
    MinLength& min_length();

private:
    Pool& pool_;
    std::optional<Id> quote_;
    std::unordered_set<Id> units_;
    std::unordered_map<uint64_t, std::optional<int64_t>> fewest_;
    std::unique_ptr<MinLength> min_length_;
};

}  // namespace structgen
