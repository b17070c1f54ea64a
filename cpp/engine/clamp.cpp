#include "clamp.h"

#include <algorithm>
#include <vector>

#include "min_length.h"
#include "string_length.h"

namespace structgen {

namespace {
constexpr int64_t KEYED = int64_t(1) << 24;  // clamps for more bytes than this are not memoised
}

Id Clamps::cut_repeat(Id x, int64_t lo, int64_t hi, int64_t n) {
    // within n bytes at most n repetitions complete: a lower bound above n + 1 and an upper bound
    // above n are indistinguishable from n + 1 and "unbounded"
    return pool_.repeat(x, std::min(lo, n + 1), (hi < 0 || hi > n) ? -1 : hi);
}

Id Clamps::clamp(Id e, int64_t n) {
    if (n < 0) throw InvalidArgument("a clamp is for a number of bytes, not " + std::to_string(n));
    Pool& pool = pool_;
    if (pool.counter(e) <= n) return e;
    const bool keyed = n < KEYED;
    auto key = [&](Id x) { return (uint64_t(x) << 24) | uint64_t(n); };
    if (keyed)
        if (const Id* got = clamped_.find(key(e))) return *got;
    // (the direct forms first: a string body x{lo,hi}, alone or before the rest of the string)
    const Node top = pool.node(e);
    if (top.kind == Kind::Rep && pool.counter(top.a) <= n) {
        Id got = cut_repeat(top.a, top.c, top.d, n);
        if (keyed) clamped_.put(key(e), got);
        return got;
    }
    if (top.kind == Kind::Seq && pool.counter(top.b) <= n) {
        const Node head = pool.node(top.a);
        if (head.kind == Kind::Rep && pool.counter(head.a) <= n) {
            Id got = pool.seq(cut_repeat(head.a, head.c, head.d, n), top.b);
            if (keyed) clamped_.put(key(e), got);
            return got;
        }
    }
    // children first, without recursion (a term may nest hundreds of levels)
    FlatMap<Id> local;  // (clamps for huge n: not memoised across calls)
    auto find = [&](Id x) -> const Id* { return keyed ? clamped_.find(key(x)) : local.find(x); };
    auto put = [&](Id x, Id v) {
        if (keyed)
            clamped_.put(key(x), v);
        else
            local.put(x, v);
    };
    FlatMap<int64_t> strings;  // an intersection -> its string far from its length bound (+1; 0: none)
    auto string_of = [&](Id x) -> std::optional<Id> {
        if (const int64_t* got = strings.find(x)) return *got ? std::optional<Id>(static_cast<Id>(*got - 1)) : std::nullopt;
        auto s = clampable_string(pool.members(x), n);
        strings.put(x, s ? int64_t(*s) + 1 : 0);
        return s;
    };
    std::vector<Id> stack{e};
    std::vector<Id> parts;
    while (!stack.empty()) {
        const Id x = stack.back();
        if (find(x)) {
            stack.pop_back();
            continue;
        }
        parts.clear();
        const Node node = pool.node(x);
        if (pool.counter(x) > n) {
            switch (node.kind) {
                case Kind::Seq:
                    parts = {node.a, node.b};
                    break;
                case Kind::Alt: {
                    auto ms = pool.members(x);
                    parts.assign(ms.begin(), ms.end());
                    break;
                }
                case Kind::Rep:
                    parts = {node.a};
                    break;
                case Kind::And:
                    if (auto s = string_of(x)) parts = {*s};
                    break;
                default:
                    break;
            }
        }
        bool pending = false;
        for (Id p : parts)
            if (!find(p)) {
                stack.push_back(p);
                pending = true;
            }
        if (pending) continue;
        stack.pop_back();
        auto done = [&](Id p) { return *find(p); };
        Id got = x;
        if (pool.counter(x) > n) {
            switch (node.kind) {
                case Kind::Seq:
                    got = pool.seq(done(node.a), done(node.b));
                    break;
                case Kind::Alt: {
                    std::vector<Id> ms;
                    for (Id p : pool.members(x)) ms.push_back(done(p));
                    got = pool.alt(ms);
                    break;
                }
                case Kind::Rep:
                    got = cut_repeat(done(node.a), node.c, node.d, n);
                    break;
                case Kind::And:
                    if (auto s = string_of(x)) got = done(*s);
                    break;
                default:
                    break;
            }
        }
        put(x, got);
    }
    return *find(e);
}

int64_t Clamps::longest_shortest(Id e) {
    if (const int64_t* got = longest_.find(e)) return *got;
    DepthGuard guard(pool_.depth);
    Pool& pool = pool_;
    MinLength& shortest = pool.string_lengths().min_length();
    const Node node = pool.node(e);
    int64_t got = 0;
    switch (node.kind) {
        case Kind::Seq: {  // (a chain of concatenations is read in a loop: a long literal is a deep one)
            std::vector<Id> parts;
            Id rest = e;
            while (pool.kind(rest) == Kind::Seq) {
                parts.push_back(pool.node(rest).a);
                rest = pool.node(rest).b;
            }
            got = longest_shortest(rest);
            int64_t after = shortest.of(rest);
            for (size_t i = parts.size(); i-- > 0;) {
                got = std::max(got, sat_add(longest_shortest(parts[i]), after, INF));
                after = sat_add(after, shortest.of(parts[i]), INF);
            }
            break;
        }
        case Kind::Alt:
            for (Id p : pool.members(e)) got = std::max(got, longest_shortest(p));
            break;
        case Kind::Rep: {
            const int64_t unit = shortest.of(node.a);
            got = std::max(sat_mul(node.c, unit, INF),
                           sat_add(longest_shortest(node.a), sat_mul(std::max<int64_t>(node.c - 1, 0), unit, INF), INF));
            break;
        }
        case Kind::Dfa:
            for (int64_t m : pool.embedded(node.a).min_lengths({}))
                if (m < INF) got = std::max(got, m);
            break;
        case Kind::And:
        case Kind::Not:
        case Kind::Sym:
            got = INF;
            break;
        default:  // (bytes, the empty string, nothing)
            got = std::min<int64_t>(1, shortest.of(e));
    }
    got = std::min(got, INF);
    longest_.put(e, got);
    return got;
}

std::optional<Id> Clamps::clampable_string(std::span<const Id> members, int64_t n) {
    auto found = pool_.string_lengths().string_with_length(members);
    if (!found) return std::nullopt;
    if (found->hi < 0 || found->hi >= sat_add(n, longest_shortest(found->string), BIG)) return found->string;
    return std::nullopt;
}

bool Clamps::in_length_bounded_string(Id e) {
    while (pool_.kind(e) == Kind::Seq) e = pool_.node(e).a;
    return pool_.kind(e) == Kind::And && pool_.string_lengths().string_with_length(pool_.members(e)).has_value();
}

}  // namespace structgen
