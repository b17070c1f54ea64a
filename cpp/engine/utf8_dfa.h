// Eager byte automata as flat tables: the automaton of one character of a code-point class, built
// minimal (as UTF-8: no surrogates, no overlong forms), and the canonical numbering of any table
// (states breadth first from the start, bytes in order; byte classes by their first byte), which
// makes equal languages equal tables. (Python face: automata/utf8.py's code_points_rows and
// automata/dfa.py's canonical_dfa; a Unicode category spelled out in a pattern is one such class.)
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace structgen {

constexpr int64_t MAX_CODE_POINT = 0x10FFFF;

// A table of n states: rows[s * width + column] is the state after the column, or -1.
struct DfaTable {
    std::vector<int32_t> rows;
    std::vector<uint8_t> finals;  // per state
    int32_t width = 256;          // columns per state
    std::array<int32_t, 256> class_of{};  // byte -> its column
    int32_t states() const { return static_cast<int32_t>(finals.size()); }
};

// The minimal automaton (start state 0, not numbered canonically; one column per byte) of one
// character whose code point is in intervals (inclusive; any order, overlapping, past U+10FFFF
// cut). Minimal by construction: after a lead byte, a state has j continuation bytes to read, and
// its language is the set of values their 6j bits may still spell; two states are one state exactly
// when both are equal. InvalidArgument for a negative code point.
DfaTable code_points_rows(std::span<const std::pair<int64_t, int64_t>> intervals);

// The table renumbered canonically (see above): the states the start reaches by bytes, breadth
// first (a state's targets in byte order), and the columns as those states read them, equal ones
// made one and numbered by their first byte. A function of the automaton the bytes read from start
// alone (not of its numbering); states are not merged (minimal_dfa minimises first).
// InvalidArgument for a start, target or class outside the table.
DfaTable canonical_dfa(const DfaTable& t, int32_t start);

}  // namespace structgen
