// The automaton of a term, built state by state as walks reach it: states are the terms met
// (the root is state 0), a state's transitions are computed the first time something steps
// from it, one derivative per byte class, and only for the classes asked for (fill()). Every
// state is live: a transition leads to a state from which the output can still be completed, or
// is -1 (a derivative that is NOTHING, or an intersection / complement with no string left).
//
// Rows live in one flat int32 table (state * 256 + byte; UNBUILT where not built yet), which the
// Python side reads as a numpy view of the rows of the states met. A row is written when its
// state is met, so a table that grew touches no page it does not use yet. The table grows by
// reallocation; the buffers it outgrows are kept until the automaton dies, so a view handed out
// before a growth stays valid (it reads the rows as they were: fetch the table again after
// building a state).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "flat_map.h"
#include "pool.h"

namespace structgen {

constexpr int32_t UNBUILT = -2;
// the most states one lazy automaton builds (a state costs 1 KiB of table)
constexpr int64_t MAX_LAZY_STATES = int64_t(1) << 24;

class LazyAutomaton {
public:
    LazyAutomaton(Pool& pool, Id root);
    Pool& pool() const { return pool_; }
    Id root() const { return root_; }
    int32_t num_states() const { return static_cast<int32_t>(exprs_.size()); }
    bool valid(int64_t q) const { return q >= 0 && q < num_states(); }
    void check(int64_t q) const;
    Id expr(int32_t q) const { return exprs_[q]; }
    bool is_final(int32_t q) const { return finals_[q]; }
    bool is_built(int32_t q) const { return built_[q]; }
    // whether a walk may branch off at q: a return (q is final), a call or a guard (a symbol may
    // come first; read off q's term when q is made, its row need not be built)
    bool may_branch(int32_t q) const { return branches_[q]; }

    // the state of term e (numbered when first met)
    int32_t state_of(Id e);
    // the transitions of q for the bytes of needed (and the rest of their classes)
    void fill(int32_t q, const ByteSet& needed);
    void build(int32_t q) { if (!built_[q]) fill(q, ByteSet::all()); }
    int32_t step(int32_t q, int b) {
        int32_t t = table_[static_cast<size_t>(q) * 256 + b];
        if (t == UNBUILT) {
            fill(q, ByteSet::one(b));
            t = table_[static_cast<size_t>(q) * 256 + b];
        }
        return t;
    }
    // the state after data from q, or -1
    int32_t walk(int32_t q, std::span<const uint8_t> data);
    int32_t at(int64_t i) const { return table_[i]; }  // flat table entry (state * 256 + byte)
    // ((symbol, next state), ...) that may come first from q (sorted by symbol)
    const std::vector<std::pair<int64_t, int32_t>>& symbols_of(int32_t q);

    // -- clamps (counters cut to what a token can tell apart: clamp.h) --------------------------
    // q's term with its counters cut for n bytes: tokens of at most n bytes read both alike
    int32_t clamped(int32_t q, int64_t n);
    // q with only the term it reads first (the head of its chain) clamped for n bytes, where that
    // head holds a counter over n and no symbol (a choice that calls: the head of each of its ways
    // so); rounded: n rounded up to a power of two first
    int32_t clamped_head(int32_t q, int64_t n, bool rounded = false);
    // (n, state): the first n of lengths (longest first) for which clamped (only inside a string
    // under a length) changes q; (0, q) where none does
    std::pair<int64_t, int32_t> clamped_below(int32_t q, std::span<const int64_t> lengths);
    // (n, state): the first n of lengths (longest first) for which clamped_head changes q and the
    // next position shares the cut (q after one more character, a letter or a digit, cut for n bytes
    // is the same state: a counter the head is reading, such as a pattern's {2,62}, is cut too, not
    // only the string's length), else inside a string under a length bound the first for which it
    // changes q, else the first whose cut state an earlier position met as one of its cuts (the
    // positions of a string whose counters' lower bounds are read again after each separator,
    // `(-?[a-z0-9]){2,62}`, cycle through a few cut states); (0, q) where none does. The same
    // answer for q every time it is asked with the same lengths (the last case is decided once,
    // when first asked; lengths without the cut decided then decide anew without keeping it).
    std::pair<int64_t, int32_t> head_cut(int32_t q, std::span<const int64_t> lengths);
    // whether q reads on inside a string under its length
    bool in_bounded_string(int32_t q);

    const int32_t* table() const { return table_; }
    int64_t capacity() const { return capacity_; }
    size_t memory_bytes() const;

private:
    void grow();
    // e with the head of its chain clamped for n bytes, where it holds a counter over n and no symbol
    Id chain_head_clamped(Id e, int64_t n);
    Pool& pool_;
    Id root_;
    std::vector<Id> exprs_;
    std::vector<uint8_t> finals_, built_, branches_;
    std::vector<std::optional<std::vector<std::pair<int64_t, int32_t>>>> symbols_;
    FlatMap<int32_t> ids_;
    FlatMap<int32_t> clamped_, heads_;  // q << 24 | n
    // head_cut's cut states met (for any number of bytes), and per state the cut taken where the
    // next position shares none (its number of bytes, 0: none): decided when first asked
    FlatMap<uint8_t> cut_met_;
    FlatMap<int64_t> cut_taken_;
    std::unique_ptr<int32_t[]> storage_;
    int32_t* table_ = nullptr;
    int64_t capacity_ = 0;
    std::vector<std::unique_ptr<int32_t[]>> retired_;  // outgrown tables (views may still read them)
    size_t retired_bytes_ = 0;
};

}  // namespace structgen
