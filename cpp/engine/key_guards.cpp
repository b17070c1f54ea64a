#include "key_guards.h"

#include <string>
#include <unordered_set>

#include "errors.h"

namespace structgen {

namespace {
uint64_t pair_key(int64_t a, int32_t q) { return static_cast<uint64_t>(a) << 32 | static_cast<uint32_t>(q); }
constexpr uint64_t CLOSE_BIT = uint64_t{1} << KeyGuards::CLOSE;
// the alternations inside alternations read off their structure, at most (deeper: searched)
constexpr int MAX_NESTING = 32;
}  // namespace

void KeyGuards::set_required(std::vector<uint64_t> required) {
    for (const uint64_t r : required)
        if (r & CLOSE_BIT) throw InvalidArgument("KeyGuards: required keys go up to 62");
    required_ = std::move(required);
}

int64_t KeyGuards::pass(int64_t a, int64_t g, int64_t written) const {
    if (g < 0 || g > CLOSE) throw InvalidArgument("KeyGuards: no guard " + std::to_string(g));
    if (written < 0) throw InvalidArgument("KeyGuards: no key set " + std::to_string(written));
    const auto w = static_cast<uint64_t>(written);
    if (g == CLOSE) {
        const uint64_t need = a >= 0 && static_cast<size_t>(a) < required_.size() ? required_[static_cast<size_t>(a)] : 0;
        return need & ~w ? -1 : written;
    }
    return w >> g & 1 ? -1 : static_cast<int64_t>(w | uint64_t{1} << g);
}

KeyGuards::Frontier KeyGuards::frontier(int64_t a, int32_t q) {
    const uint64_t key = pair_key(a, q);
    if (auto found = frontiers_.find(key); found != frontiers_.end()) return found->second;
    const Frontier out = term_frontier(a, frames_.automaton(a).expr(q));
    frontiers_.emplace(key, out);
    return out;
}

KeyGuards::Frontier KeyGuards::term_frontier(int64_t a, Id e) {
    LazyAutomaton& au = frames_.automaton(a);
    Pool& pool = au.pool();
    for (Node n = pool.node(e); n.kind == Kind::Seq && !pool.symbols_id(n.a) && pool.is_live(n.a); n = pool.node(e))
        e = n.b;  // (every way from it reads the head to its end, guard-free, then the tail)
    const uint64_t key = static_cast<uint64_t>(a) << 32 | e;
    if (auto found = term_frontiers_.find(key); found != term_frontiers_.end()) return found->second;
    Frontier out;
    auto merge = [&](const Frontier& f) {
        out.free |= f.free;
        out.guards |= f.guards;
        return out.free || (out.guards & CLOSE_BIT);  // (done: no keys written can block it)
    };
    const Node top = pool.node(e);
    if (top.kind == Kind::Alt && depth_ < MAX_NESTING) {  // (a way from the alternation is a way from one of its members)
        const std::vector<Id> members(pool.members(e).begin(), pool.members(e).end());
        ++depth_;
        for (const Id m : members)
            if (merge(term_frontier(a, m))) break;
        --depth_;
    } else if (top.kind == Kind::Seq && pool.kind(top.a) == Kind::Alt && depth_ < MAX_NESTING) {
        // (an alternation followed by a tail, (x|y)·t, is x·t | y·t: an object's keys, each with its
        // guard, then the object's way on; each member's way is read off its own structure, and the
        // members' tails past their guard-free heads are shared by the states along each key)
        const std::vector<Id> members(pool.members(top.a).begin(), pool.members(top.a).end());
        ++depth_;
        for (const Id m : members)
            if (merge(term_frontier(a, pool.seq(m, top.b)))) break;
        --depth_;
    } else {
        out = search(a, au.state_of(e));
    }
    term_frontiers_.emplace(key, out);
    return out;
}

KeyGuards::Frontier KeyGuards::search(int64_t a, int32_t q) {
    LazyAutomaton& au = frames_.automaton(a);
    Frontier out;
    // breadth first, and done at a final state or a close guard (then no keys written can block
    // the way): a value's string is left by its closing quote within a few bytes, never walked
    // to its length bound
    std::vector<int32_t> todo{q};
    std::unordered_set<int32_t> seen{q};
    auto visit = [&](int32_t t) {
        if (t >= 0 && seen.insert(t).second) todo.push_back(t);
    };
    for (size_t i = 0; i < todo.size() && !out.free && !(out.guards & CLOSE_BIT); ++i) {
        const int32_t s = todo[i];
        if (au.is_final(s)) {
            out.free = true;
            break;
        }
        const std::vector<std::pair<int64_t, int32_t>> symbols = au.symbols_of(s);  // (a copy: build may grow the automaton)
        for (const auto& [k, r] : symbols) {
            if (k >= GUARD_FIRST) out.guards |= uint64_t{1} << (k - GUARD_FIRST);
            else visit(r);
        }
        au.build(s);
        int32_t last = -2;  // (a row is runs of one target, a byte class each: a run's target seen once)
        for (int b = 0; b < 256; ++b) {
            const int32_t t = au.at(static_cast<int64_t>(s) * 256 + b);
            if (t != last) visit(t), last = t;
        }
    }
    return out;
}

bool KeyGuards::is_dead(int64_t a, int32_t q, int64_t written) {
    const std::optional<uint64_t> g = blocking_guards(a, q);
    return g && !(*g & ~static_cast<uint64_t>(written));
}

std::optional<uint64_t> KeyGuards::blocking_guards(int64_t a, int32_t q) {
    const Frontier f = frontier(a, q);
    if (f.free || (f.guards & CLOSE_BIT)) return std::nullopt;
    return f.guards;
}

std::optional<uint64_t> KeyGuards::term_blocking_guards(int64_t a, Id e) {
    const Frontier f = term_frontier(a, e);
    if (f.free || (f.guards & CLOSE_BIT)) return std::nullopt;
    return f.guards;
}

}  // namespace structgen
