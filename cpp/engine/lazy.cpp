#include "lazy.h"

#include <algorithm>
#include <cstring>

#include "liveness.h"

namespace structgen {

LazyAutomaton::LazyAutomaton(Pool& pool, Id root) : pool_(pool), root_(root) {
    pool.check(root);
    capacity_ = 64;
    storage_.reset(new int32_t[capacity_ * 256]);
    table_ = storage_.get();
    std::fill(table_, table_ + capacity_ * 256, UNBUILT);
    state_of(root);
}

void LazyAutomaton::check(int64_t q) const {
    if (!valid(q)) throw OutOfRange("no state " + std::to_string(q) + " (" + std::to_string(num_states()) + " built)");
}

void LazyAutomaton::grow() {
    int64_t cap = capacity_ * 2;
    std::unique_ptr<int32_t[]> bigger(new int32_t[cap * 256]);
    std::memcpy(bigger.get(), table_, sizeof(int32_t) * capacity_ * 256);
    std::fill(bigger.get() + capacity_ * 256, bigger.get() + cap * 256, UNBUILT);
    retired_bytes_ += sizeof(int32_t) * capacity_ * 256;
    retired_.push_back(std::move(storage_));
    storage_ = std::move(bigger);
    table_ = storage_.get();
    capacity_ = cap;
}

int32_t LazyAutomaton::state_of(Id e) {
    if (const int32_t* got = ids_.find(e)) return *got;
    if (num_states() >= MAX_LAZY_STATES) throw BudgetExceeded("states of one lazy automaton", MAX_LAZY_STATES);
    int32_t q = num_states();
    if (q >= capacity_) grow();
    exprs_.push_back(e);
    finals_.push_back(pool_.nullable(e));
    built_.push_back(0);
    symbols_.emplace_back();
    ids_.put(e, q);
    return q;
}

void LazyAutomaton::fill(int32_t q, const ByteSet& needed) {
    if (built_[q]) return;
    const Id e = exprs_[q];
    const size_t base = static_cast<size_t>(q) * 256;
    bool done = true;
    std::vector<std::pair<ByteSet, int32_t>> filled;
    const std::vector<ByteSet> classes = pool_.byte_classes(e);
    for (const ByteSet& m : classes) {
        const int low = m.lowest();
        if (table_[base + low] != UNBUILT) continue;
        if ((m & needed).empty()) {
            done = false;
            continue;
        }
        const Id d = pool_.derive(e, low);
        if (d == NOTHING || (pool_.algebraic(d) && !pool_.is_live(d)))
            filled.emplace_back(m, -1);  // (an intersection or complement with no string left: dead)
        else
            filled.emplace_back(m, state_of(d));
    }
    int32_t* row = table_ + base;  // (after state_of: the table may have grown)
    for (auto& [m, t] : filled) m.each([&](int b) { row[b] = t; });
    if (done) {
        symbols_of(q);
        built_[q] = 1;
    }
}

int32_t LazyAutomaton::walk(int32_t q, std::span<const uint8_t> data) {
    for (uint8_t b : data) {
        q = step(q, b);
        if (q < 0) return -1;
    }
    return q;
}

const std::vector<std::pair<int64_t, int32_t>>& LazyAutomaton::symbols_of(int32_t q) {
    if (!symbols_[q]) {
        const Id e = exprs_[q];
        const std::vector<int64_t> ks = pool_.symbol_sets().get(pool_.first_symbols(e));
        std::vector<std::pair<int64_t, int32_t>> got;
        for (int64_t k : ks) {
            Id d = pool_.derive_symbol(e, k);
            if (d != NOTHING) got.emplace_back(k, state_of(d));
        }
        symbols_[q] = std::move(got);
    }
    return *symbols_[q];
}

size_t LazyAutomaton::memory_bytes() const {
    return sizeof(int32_t) * capacity_ * 256 + retired_bytes_ + exprs_.size() * (4 + 1 + 1 + 40 + 16);
}

}  // namespace structgen
