// Liveness of the terms that hold an intersection or a complement: such a term can match nothing
// without being NOTHING, so whether some string still matches it is searched for over its
// derivatives, and remembered. liveness(): best-first towards the end of a string, after a verdict
// read off the structure, a few guessed strings and a relaxed superset; witness_length(): breadth
// first, the length of a shortest string. Both stop after `limit` terms; a search that gives up
// takes its term as dead (sound: nothing is allowed without a witness of a completion).
// (Python: structgen/automata/liveness.py's docstrings say the same at length.)
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "pool.h"

namespace structgen {

constexpr int64_t LIVENESS_LIMIT = 20000;
constexpr int64_t WITNESS_LENGTH = 512;   // the longest witness read off a term's structure
constexpr size_t GUESSES = 8;             // guessed strings tried before a search
constexpr int64_t GUESSED_LENGTH = 64;    // a plain term's choices are varied while this short
constexpr int64_t RELAXED_COUNTER = 16;   // counters above are read as * or + in the superset
constexpr size_t MAX_GUESS_BYTES = 1 << 16;  // a guess longer than this is not tried

class Liveness {
public:
    explicit Liveness(Pool& pool) : pool_(pool) {}

    // true / false, or nullopt when the search gave up (the term is then taken as dead)
    std::optional<bool> liveness(Id e, int64_t limit = LIVENESS_LIMIT);
    // the length of a shortest string of e (INF: none or gave up)
    int64_t witness_length(Id e, int64_t limit = LIVENESS_LIMIT);
    // a shortest string of a plain term, read off its structure (nullopt: none known)
    const std::optional<std::string>& shortest_text(Id e);
    bool guessed(Id e);
    Id relaxed(Id e);

    std::unordered_map<Id, int64_t> witness;  // term -> its shortest string's length (INF: dead)
    std::unordered_set<Id> gave_up;          // terms whose search ran out (taken as dead)
    std::unordered_set<Id> alive;            // terms some string is known to match

private:
    std::optional<bool> verdict(Id x);
    std::optional<bool> verdict_one(Id x);
    std::optional<bool> known(Id x);
    void remember(Id x, std::optional<bool> got);
    bool relaxed_is_dead(Id e, int64_t limit);
    const std::vector<std::string>& guesses(Id e);
    std::optional<std::string> dfa_text(uint32_t index, int32_t q);

    Pool& pool_;
    std::unordered_map<Id, std::optional<std::string>> texts_;
    std::unordered_map<Id, std::vector<std::string>> guess_texts_;
    std::unordered_map<Id, Id> relax_;
};

}  // namespace structgen
