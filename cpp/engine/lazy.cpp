#include "lazy.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "clamp.h"
#include "liveness.h"

namespace structgen {

LazyAutomaton::LazyAutomaton(Pool& pool, Id root) : pool_(pool), root_(root) {
    pool.check(root);
    capacity_ = 8;  // (rows are 1 KiB: most automata of a compile stay small, and a fresh table is page faults)
    storage_.reset(new int32_t[capacity_ * 256]);  // (each row written when its state is met: state_of)
    table_ = storage_.get();
    state_of(root);
}

void LazyAutomaton::check(int64_t q) const {
    if (!valid(q)) throw OutOfRange("no state " + std::to_string(q) + " (" + std::to_string(num_states()) + " built)");
}

void LazyAutomaton::grow() {
    int64_t cap = capacity_ * 2;
    // Only the rows of states met are copied; the rest are written as their states are met
    // (state_of), so the half of a doubled table not used yet is not touched (page faults: the
    // largest native cost of a fresh guide's cold steps, perf over the batch's k8s row).
    std::unique_ptr<int32_t[]> bigger(new int32_t[cap * 256]);
    std::memcpy(bigger.get(), table_, sizeof(int32_t) * size_t(num_states()) * 256);
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
    std::fill(table_ + size_t(q) * 256, table_ + size_t(q) * 256 + 256, UNBUILT);
    exprs_.push_back(e);
    finals_.push_back(pool_.nullable(e));
    branches_.push_back(finals_.back() || pool_.first_symbols(e) != 0);
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
    return sizeof(int32_t) * capacity_ * 256 + retired_bytes_ + exprs_.size() * (4 + 1 + 1 + 1 + 40 + 16) + clamped_.bytes() +
           heads_.bytes() + cut_met_.bytes() + cut_taken_.bytes();
}

namespace {
constexpr int64_t KEYED = int64_t(1) << 24;  // clamps for more bytes than this are not memoised
}

int32_t LazyAutomaton::clamped(int32_t q, int64_t n) {
    const Id e = exprs_[q];
    if (pool_.counter(e) <= n) return q;  // (no counter to cut)
    const uint64_t key = (uint64_t(q) << 24) | uint64_t(n);
    if (n < KEYED)
        if (const int32_t* got = clamped_.find(key)) return *got;
    const int32_t got = state_of(pool_.clamps().clamp(e, n));
    if (n < KEYED) clamped_.put(key, got);
    return got;
}

Id LazyAutomaton::chain_head_clamped(Id e, int64_t n) {
    const Node node = pool_.node(e);
    const Id head = node.kind == Kind::Seq ? node.a : e;
    if (pool_.counter(head) <= n || pool_.symbols_id(head) != 0) return e;
    const Id cut = pool_.clamps().clamp(head, n);
    if (cut == head) return e;
    return node.kind == Kind::Seq ? pool_.seq(cut, node.b) : cut;
}

int32_t LazyAutomaton::clamped_head(int32_t q, int64_t n, bool rounded) {
    const Id e = exprs_[q];
    if (pool_.counter(e) <= n) return q;
    if (rounded) n = n <= 1 ? 1 : int64_t(1) << std::bit_width(static_cast<uint64_t>(n - 1));
    const uint64_t key = (uint64_t(q) << 24) | uint64_t(n);
    if (n < KEYED)
        if (const int32_t* got = heads_.find(key)) return *got;
    Id cut = e;
    if (pool_.kind(e) == Kind::Alt && pool_.symbols_id(e) != 0) {
        // (a choice whose ways call: each way's head clamped alone, the rest of each way as it is;
        // a string that may end here or read on under a counter, `"…|x{0,124}y"…`)
        std::vector<Id> ways;
        bool changed = false;
        for (const Id m : pool_.members(e)) {
            ways.push_back(chain_head_clamped(m, n));
            changed |= ways.back() != m;
        }
        if (changed) cut = pool_.alt(ways);
    } else {
        cut = chain_head_clamped(e, n);
    }
    const int32_t got = cut == e ? q : state_of(cut);
    if (n < KEYED) heads_.put(key, got);
    return got;
}

namespace {
template <class Cut>
std::pair<int64_t, int32_t> first_cut(int32_t q, std::span<const int64_t> lengths, Cut&& cut) {
    // (a cut for fewer bytes cuts at least as much: where the shortest does not, none does)
    if (lengths.empty() || cut(q, lengths.back()) == q) return {0, q};
    for (int64_t n : lengths) {
        const int32_t got = cut(q, n);
        if (got != q) return {n, got};
    }
    return {0, q};
}
}  // namespace

std::pair<int64_t, int32_t> LazyAutomaton::clamped_below(int32_t q, std::span<const int64_t> lengths) {
    if (!in_bounded_string(q)) return {0, q};
    return first_cut(q, lengths, [&](int32_t s, int64_t n) { return clamped(s, n); });
}

std::pair<int64_t, int32_t> LazyAutomaton::head_cut(int32_t q, std::span<const int64_t> lengths) {
    const std::pair<int64_t, int32_t> first = first_cut(q, lengths, [&](int32_t s, int64_t n) { return clamped_head(s, n); });
    if (!first.first) return first;
    // (the position after q: a cut it shares is one walk for both, and for the positions after them)
    int32_t next = -1;
    for (const int b : {'a', '0'})
        if ((next = step(q, b)) >= 0) break;
    if (next < 0) return first;
    for (const int64_t n : lengths) {
        if (n > first.first) continue;
        const int32_t got = clamped_head(q, n);
        if (got != q && clamped_head(next, n) == got) return {n, got};
    }
    // (none shared: a counter whose lower bound the head is still reading; a string under a length
    // bound is cut all the same, its positions in one band of cuts share the cut without its length)
    if (in_bounded_string(q)) return first;
    // (nor elsewhere: where another position was cut to the same state, for the same or another
    // number of bytes, the positions cycle through a few cuts, one walk each; decided once for q,
    // so that every caller walks q alike)
    const uint64_t key = static_cast<uint64_t>(q);
    const int64_t* kept = cut_taken_.find(key);
    if (kept) {
        if (!*kept) return {0, q};
        if (std::find(lengths.begin(), lengths.end(), *kept) != lengths.end()) return {*kept, clamped_head(q, *kept)};
    }
    std::pair<int64_t, int32_t> taken{0, q};
    for (const int64_t n : lengths) {
        if (n > first.first) continue;
        const int32_t got = clamped_head(q, n);
        if (got == q) continue;
        if (!taken.first && cut_met_.contains(static_cast<uint64_t>(got))) taken = {n, got};
        cut_met_.put(static_cast<uint64_t>(got), 1);
    }
    if (!kept) cut_taken_.put(key, taken.first);  // (the first decision stays: lengths without its cut decide anew, unkept)
    return taken;
}

bool LazyAutomaton::in_bounded_string(int32_t q) { return pool_.clamps().in_length_bounded_string(exprs_[q]); }

}  // namespace structgen
