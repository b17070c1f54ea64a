#include "stack_table.h"

#include <algorithm>
#include <climits>
#include <string>

#include "errors.h"

namespace structgen {

namespace {
uint64_t key_of(uint64_t h) { return h == FlatMap<int64_t>::EMPTY ? 0 : h; }

uint64_t stack_hash(int64_t a, int64_t q, int64_t parent, int64_t data) {
    return key_of(mix64(mix64(mix64(static_cast<uint64_t>(a) * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(q)) ^
                              static_cast<uint64_t>(parent + 1)) ^ static_cast<uint64_t>(data)));
}

uint64_t config_hash(std::span<const int64_t> stacks) {
    uint64_t h = 0x243F6A8885A308D3ull;
    for (const int64_t s : stacks) h = mix64(h ^ static_cast<uint64_t>(s));
    return key_of(h);
}
}  // namespace

StackTable::StackTable(FrameSolver& frames, int64_t max_depth) : frames_(frames), max_depth_(max_depth), guards_(frames) {
    if (max_depth < 1) throw InvalidArgument("StackTable: max_depth must be at least 1");
    const int64_t root = stack(0, 0, -1);
    config(std::span<const int64_t>(&root, 1));
}

void StackTable::share_data(UniqueData* unique, std::vector<uint8_t> kinds, std::vector<uint64_t> required) {
    if (num_stacks() != 1 || carries_) throw InvalidArgument("StackTable: frame data is shared once, before any step");
    for (const uint8_t k : kinds) {
        if (k > HELD) throw InvalidArgument("StackTable: a kind is 0 (plain), 1 (unique array), 2 (item), 3 (key guards) or 4 (held)");
        if ((k == ARRAY || k == ITEM || k == HELD) && !unique) throw InvalidArgument("StackTable: unique arrays and items need unique data");
    }
    if (!kinds.empty() && kinds[0] == ITEM) throw InvalidArgument("StackTable: the root is no item");
    if (required.size() > kinds.size()) throw InvalidArgument("StackTable: required keys for an automaton with no kind");
    for (size_t k = 0; k < required.size(); ++k)
        if (required[k] && kinds[k] != GUARDED) throw InvalidArgument("StackTable: required keys of automaton " + std::to_string(k) + ", which has no key guards");
    guards_.set_required(std::move(required));
    unique_ = unique;
    frames_only_ = std::find(kinds.begin(), kinds.end(), uint8_t{HELD}) != kinds.end();
    kinds_ = std::move(kinds);
    carries_ = true;
    stacks_[0].data = 0;
}

void StackTable::check_data(int64_t a, int64_t data) const {
    const Kind k = kind(a);
    if (data && (k == PLAIN || k == HELD)) throw InvalidArgument("StackTable: automaton " + std::to_string(a) + " carries no frame data here");
    if (data < 0 || (k == GUARDED && static_cast<uint64_t>(data) >> KeyGuards::CLOSE) ||
        (k == ITEM && data >= static_cast<int64_t>(unique_->num_items())) ||
        (k == ARRAY && data >= static_cast<int64_t>(unique_->num_sets())))
        throw OutOfRange("StackTable: no frame data " + std::to_string(data) + " for automaton " + std::to_string(a));
}

UniqueData& StackTable::unique() const {
    if (!unique_) throw InvalidArgument("StackTable: the stacks carry no unique data");
    return *unique_;
}

int64_t StackTable::stack(int64_t a, int64_t q, int64_t parent, int64_t data) {
    if (a < 0 || a >= frames_.num_automata()) throw OutOfRange("StackTable: no automaton " + std::to_string(a));
    if (q < 0 || q > INT32_MAX || (frames_.has_automaton(a) && !frames_.automaton(a).valid(q)))
        throw OutOfRange("StackTable: automaton " + std::to_string(a) + " has no state " + std::to_string(q));
    if (parent < -1 || parent >= num_stacks()) throw OutOfRange("StackTable: no parent stack " + std::to_string(parent));
    check_data(a, data);
    const Kind k = kind(a);
    const uint64_t h = stack_hash(a, q, parent, data);
    const int64_t* head = stack_ids_.find(h);
    for (int64_t s = head ? *head : -1; s >= 0; s = stack_next_[static_cast<size_t>(s)]) {
        const Entry& e = stacks_[static_cast<size_t>(s)];
        if (e.a == a && e.q == q && e.parent == parent && e.data == data) return s;
    }
    if (stacks_.size() >= static_cast<size_t>(INT32_MAX)) throw BudgetExceeded("stacks of a pushdown guide", INT32_MAX);
    const int64_t sid = num_stacks();
    const int32_t depth = parent < 0 ? 1 : stacks_[static_cast<size_t>(parent)].depth + 1;
    const bool records = k == ITEM || (parent >= 0 && stacks_[static_cast<size_t>(parent)].records);
    stacks_.push_back({a, static_cast<int32_t>(q), depth, parent, data, records});
    stack_next_.push_back(head ? *head : -1);
    stamps_.push_back(0);
    stack_ids_.put(h, sid);
    return sid;
}

int64_t StackTable::config(std::span<const int64_t> stacks) {
    for (const int64_t s : stacks) entry(s);
    sorted_.assign(stacks.begin(), stacks.end());
    std::sort(sorted_.begin(), sorted_.end());
    sorted_.erase(std::unique(sorted_.begin(), sorted_.end()), sorted_.end());
    const uint64_t h = config_hash(sorted_);
    const int64_t* head = config_ids_.find(h);
    for (int64_t c = head ? *head : -1; c >= 0; c = config_next_[static_cast<size_t>(c)]) {
        const std::span<const int64_t> got = stacks_of(c);
        if (std::equal(got.begin(), got.end(), sorted_.begin(), sorted_.end())) return c;
    }
    if (config_next_.size() >= static_cast<size_t>(INT32_MAX)) throw BudgetExceeded("states of a pushdown guide", INT32_MAX);
    const int64_t cid = num_configs();
    config_stacks_.insert(config_stacks_.end(), sorted_.begin(), sorted_.end());
    config_starts_.push_back(static_cast<int64_t>(config_stacks_.size()));
    config_next_.push_back(head ? *head : -1);
    config_ids_.put(h, cid);
    return cid;
}

const StackTable::Entry& StackTable::entry(int64_t sid) const {
    if (sid < 0 || sid >= num_stacks()) throw OutOfRange("StackTable: no stack " + std::to_string(sid));
    return stacks_[static_cast<size_t>(sid)];
}

std::span<const int64_t> StackTable::stacks_of(int64_t state) const {
    if (state < 0 || state >= num_configs()) throw OutOfRange("StackTable: no state " + std::to_string(state));
    const auto lo = static_cast<size_t>(config_starts_[static_cast<size_t>(state)]);
    const auto hi = static_cast<size_t>(config_starts_[static_cast<size_t>(state) + 1]);
    return std::span<const int64_t>(config_stacks_).subspan(lo, hi - lo);
}

const ByteSet& StackTable::first_bytes(int64_t k) {
    if (auto it = firsts_.find(k); it != firsts_.end()) return it->second;
    // (the bytes of the start states of k and of every automaton called at a start state from it,
    // through guards: zero-width, whatever the data)
    ByteSet got;
    std::vector<std::pair<int64_t, int32_t>> reach{{k, 0}};
    for (size_t i = 0; i < reach.size(); ++i) {
        const auto [a, q] = reach[i];
        LazyAutomaton& au = frames_.automaton(a);
        au.build(q);
        for (int b = 0; b < 256; ++b)
            if (au.at(static_cast<int64_t>(q) * 256 + b) >= 0) got.set(b);
        const std::vector<std::pair<int64_t, int32_t>> calls = au.symbols_of(q);
        for (const auto& [j, r] : calls) {
            const std::pair<int64_t, int32_t> next = j >= GUARD_FIRST ? std::pair<int64_t, int32_t>{a, r} : std::pair<int64_t, int32_t>{j, 0};
            if (j >= GUARD_FIRST && kind(a) != GUARDED) throw InvalidArgument("StackTable: automaton " + std::to_string(a) + " passes a guard");
            if (std::find(reach.begin(), reach.end(), next) == reach.end()) reach.push_back(next);
        }
    }
    return firsts_.emplace(k, got).first->second;
}

void StackTable::step(std::span<const int64_t> stacks, int b, std::vector<int64_t>& out) {
    if (b < 0 || b > 255) throw InvalidArgument("StackTable: no byte " + std::to_string(b));
    if (frames_only_) throw InvalidArgument("StackTable: unique arrays nest in items here, the stacks are the guide's");
    for (const int64_t s : stacks) entry(s);
    out.clear();
    todo_.assign(stacks.begin(), stacks.end());
    if (++stamp_ == 0) {  // (a wrapped stamp: every stack unseen again)
        std::fill(stamps_.begin(), stamps_.end(), 0);
        stamp_ = 1;
    }
    std::vector<std::pair<int64_t, int32_t>> calls;
    while (!todo_.empty()) {
        const int64_t sid = todo_.back();
        todo_.pop_back();
        uint32_t& mark = stamps_[static_cast<size_t>(sid)];
        if (mark == stamp_) continue;
        mark = stamp_;
        const Entry e = stacks_[static_cast<size_t>(sid)];  // (a copy: stack() may grow the table)
        LazyAutomaton& au = frames_.automaton(e.a);
        if (!au.valid(e.q)) throw OutOfRange("StackTable: automaton " + std::to_string(e.a) + " has no state " + std::to_string(e.q));
        const Kind k = kind(e.a);
        const int32_t t = au.step(e.q, b);
        if (t >= 0) out.push_back(stack(e.a, t, e.parent, k == ITEM ? unique_->read(static_cast<int32_t>(e.data), b) : e.data));
        calls = au.symbols_of(e.q);  // (a copy: first_bytes may build states of this automaton)
        for (const auto& [callee, r] : calls) {
            if (callee >= GUARD_FIRST) {  // (a guard: zero-width, the same frame with new data, at any depth)
                if (k != GUARDED) throw InvalidArgument("StackTable: automaton " + std::to_string(e.a) + " passes a guard");
                const int64_t passed = guards_.pass(e.a, callee - GUARD_FIRST, e.data);
                if (passed >= 0) todo_.push_back(stack(e.a, r, e.parent, passed));
                continue;
            }
            if (e.depth >= max_depth_ || !first_bytes(callee).has(b)) continue;
            const int64_t data = k == ARRAY ? unique_->item_start(static_cast<int32_t>(e.data)) : 0;  // (a new item of the set)
            todo_.push_back(stack(callee, 0, stack(e.a, r, e.parent, e.data), data));
        }
        if (e.parent >= 0 && au.is_final(e.q)) {
            const int64_t caller = k == ITEM ? returned(e.parent, e.data) : e.parent;
            if (caller >= 0) todo_.push_back(caller);
        }
    }
}

int64_t StackTable::returned(int64_t parent, int64_t item, std::string_view more) {
    const Entry p = entry(parent);
    if (kind(p.a) != ARRAY) throw InvalidArgument("StackTable: an item returns to automaton " + std::to_string(p.a) + ", no unique array");
    std::string text = unique_->text(static_cast<int32_t>(item));
    text += more;
    const int32_t now = unique_->after_item(static_cast<int32_t>(p.data), {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
    return now < 0 ? -1 : stack(p.a, p.q, p.parent, now);
}

bool StackTable::stuck(int64_t sid) {
    const Entry& e = stacks_[static_cast<size_t>(sid)];
    if (kind(e.a) == GUARDED) return guards_.is_dead(e.a, e.q, e.data);  // (an object that can no longer finish)
    if (kind(e.a) != ITEM) return false;
    const Id left = unique_->item(static_cast<int32_t>(e.data)).left;
    return !unique_->alive(frames_.automaton(e.a).expr(e.q), left);  // (an item that only written values could finish)
}

int64_t StackTable::next_state(int64_t state, std::span<const uint8_t> token) {
    const std::span<const int64_t> start = stacks_of(state);
    here_.assign(start.begin(), start.end());
    for (const uint8_t b : token) {
        step(here_, b, there_);
        if (there_.empty()) return -1;
        here_.swap(there_);
    }
    if (carries_) {
        here_.erase(std::remove_if(here_.begin(), here_.end(), [&](int64_t sid) { return stuck(sid); }), here_.end());
        if (here_.empty()) return -1;
    }
    return config(here_);
}

bool StackTable::is_final(int64_t sid) const {
    for (int64_t s = sid;;) {
        const Entry& e = entry(s);
        if (!frames_.automaton(e.a).is_final(e.q)) return false;
        if (e.parent < 0) return true;
        s = e.parent;
    }
}

size_t StackTable::memory_bytes() const {
    return stacks_.capacity() * (sizeof(Entry) + sizeof(int64_t) + sizeof(uint32_t)) + stack_ids_.bytes() +
           (config_stacks_.capacity() + config_starts_.capacity() + config_next_.capacity()) * sizeof(int64_t) +
           config_ids_.bytes() + firsts_.size() * (sizeof(ByteSet) + 32) + guards_.memory_bytes();
}

}  // namespace structgen
