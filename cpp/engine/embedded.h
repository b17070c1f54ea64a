// An eager automaton inside expressions: per-state rows of 256 transitions (-1: none), finals,
// calls and guards read back as symbols, byte partitions and shortest lengths. Immutable once
// made (its memo tables aside, which a lock guards: pools on a batch's threads may share one), so
// pools share one by shared_ptr: a fork, a copy of a term.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "byteset.h"

namespace structgen {

struct SymbolEdge {
    int64_t symbol;
    int32_t target;
    bool operator==(const SymbolEdge&) const = default;
};

class EmbeddedDfa {
public:
    // rows: n * 256 transitions; symbols: per state, its (symbol, target) edges (may be empty);
    // column_classes: masks of bytes whose columns are equal in every state (computed if empty)
    EmbeddedDfa(std::vector<int32_t> rows, std::vector<uint8_t> finals, std::vector<std::vector<SymbolEdge>> symbols,
                std::vector<ByteSet> column_classes);

    int32_t num_states() const { return static_cast<int32_t>(finals_.size()); }
    int32_t at(int32_t q, int b) const { return rows_[static_cast<size_t>(q) * 256 + b]; }
    bool is_final(int32_t q) const { return finals_[q]; }
    const std::vector<int32_t>& rows() const { return rows_; }
    const std::vector<uint8_t>& finals() const { return finals_; }
    const std::vector<SymbolEdge>& symbols(int32_t q) const { return symbols_[q]; }
    bool has_symbols() const { return has_symbols_; }
    const std::vector<int64_t>& all_symbols() const { return all_symbols_; }
    const std::vector<ByteSet>& column_classes() const { return columns_; }

    // nothing can follow in q: not final, no byte, no symbol
    bool is_dead(int32_t q) const { return dead_[q]; }
    // a partition of the bytes by where they lead from q (column classes grouped by target)
    const std::vector<ByteSet>& classes(int32_t q);
    // per state, the fewest bytes to a final state, symbol k weighing weights[k] (absent: 0)
    const std::vector<int64_t>& min_lengths(const std::map<int64_t, int64_t>& weights);
    // every byte some state reads
    ByteSet readable_bytes() const { return readable_; }

    std::optional<std::string> regex;  // the regex that spells it from state 0, where one does
    size_t memory_bytes() const { return rows_.size() * 4 + finals_.size() * 8; }

private:
    std::vector<int32_t> rows_;
    std::vector<uint8_t> finals_;
    std::vector<std::vector<SymbolEdge>> symbols_;
    bool has_symbols_ = false;
    std::vector<int64_t> all_symbols_;  // sorted, distinct
    std::vector<ByteSet> columns_;
    std::vector<int> column_reps_;  // the lowest byte of each column class
    std::vector<uint8_t> dead_;
    ByteSet readable_;
    std::vector<std::optional<std::vector<ByteSet>>> classes_;
    std::map<std::vector<std::pair<int64_t, int64_t>>, std::vector<int64_t>> minlen_;
    std::unique_ptr<std::mutex> memo_lock_ = std::make_unique<std::mutex>();  // (a unique_ptr: the DFA is movable)
};

}  // namespace structgen
