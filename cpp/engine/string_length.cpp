#include "string_length.h"

#include <deque>
#include <map>

namespace structgen {

void StringLengths::mark(Id unit, Id quote) {
    if (pool_.kind(quote) != Kind::Bytes) throw InvalidArgument("a string length's quote must be one byte set");
    if (!quote_) quote_ = quote;
    units_.insert(unit);
}

void StringLengths::note_restricted(Id e, Id restricted) {
    if (quote_ && units_.count(e)) units_.insert(restricted);
}

std::optional<StringWithLength> StringLengths::string_with_length(std::span<const Id> members, bool opened) {
    if (!quote_ || members.size() != 2) return std::nullopt;
    const Id q = *quote_;
    for (int order = 0; order < 2; ++order) {
        Id length = members[order], string = members[1 - order];
        Node n = pool_.node(length);
        if (!opened && n.kind == Kind::Seq && n.a == q) {
            string = pool_.derive(string, pool_.mask(q).lowest());
            n = pool_.node(n.b);
        }
        if (n.kind != Kind::Seq || n.b != q || pool_.algebraic(string) || pool_.symbols_id(string)) continue;
        const Node rep = pool_.node(n.a);
        if (rep.kind == Kind::Rep && units_.count(rep.a) && rep.c == 0) return StringWithLength{string, rep.a, rep.d};
    }
    return std::nullopt;
}

MinLength& StringLengths::min_length() {
    if (!min_length_) min_length_ = std::make_unique<MinLength>(pool_, std::map<int64_t, int64_t>{});
    return *min_length_;
}

std::optional<bool> StringLengths::verdict(Id e) {
    if (!quote_ || pool_.kind(e) != Kind::And) return std::nullopt;
    auto ms = pool_.members(e);
    std::vector<Id> members(ms.begin(), ms.end());
    auto found = string_with_length(members, false);
    if (!found) return inside_a_unit(members);
    // (a unit is a byte or more: the shortest string will do)
    if (found->hi < 0 || min_length().of(found->string) - 1 <= found->hi) return true;
    auto fewest = fewest_units(found->string, found->unit);
    if (!fewest) return std::nullopt;
    return *fewest <= found->hi;
}

std::optional<bool> StringLengths::inside_a_unit(std::span<const Id> members) {
    // the length's term is x·unit{0,hi}·quote, x the rest of the character read so far (a byte or
    // more). The string's completions are characters too, the first finishing the one read: a
    // shortest completion of n bytes before its quote holds at most n - 1 units after x (only with
    // no third part: a format beside the pattern may leave none of their strings)
    if (members.size() != 2) return std::nullopt;
    const Id q = *quote_;
    for (int order = 0; order < 2; ++order) {
        const Id length = members[order], string = members[1 - order];
        const Node n = pool_.node(length);
        if (n.kind != Kind::Seq || pool_.nullable(n.a) || pool_.kind(n.b) != Kind::Seq) continue;
        const Node rest = pool_.node(n.b);
        if (rest.b != q || pool_.algebraic(string) || pool_.symbols_id(string)) continue;
        const Node rep = pool_.node(rest.a);
        if (rep.kind != Kind::Rep || !units_.count(rep.a) || rep.c != 0) continue;
        const int64_t shortest = min_length().of(string);  // (bytes, the quote included)
        if (shortest >= 2 && shortest < INF && (rep.d < 0 || shortest - 2 <= rep.d)) return true;
        return std::nullopt;  // (near the bound: searched)
    }
    return std::nullopt;
}

std::optional<int64_t> StringLengths::fewest_units(Id string, Id unit) {
    const uint64_t key = uint64_t(string) << 32 | unit;
    if (auto it = fewest_.find(key); it != fewest_.end()) return it->second;
    constexpr Id BETWEEN = ~Id(0);  // between two units, not inside one
    const int quote_byte = pool_.mask(*quote_).lowest();
    std::map<std::pair<Id, Id>, int64_t> cost{{{string, BETWEEN}, 0}};
    std::deque<std::tuple<int64_t, Id, Id>> todo{{0, string, BETWEEN}};
    std::optional<int64_t> got = INF;
    while (!todo.empty()) {
        auto [d, x, u] = todo.front();
        todo.pop_front();
        if (d > cost[{x, u}]) continue;
        if (d >= *got) break;
        const Id inside = u == BETWEEN ? unit : u;
        std::vector<ByteSet> joint;
        const std::vector<ByteSet> cx = pool_.byte_classes(x);
        const std::vector<ByteSet> ci = pool_.byte_classes(inside);
        for (const ByteSet& a : cx)
            for (const ByteSet& b : ci)
                if (ByteSet m = a & b; !m.empty()) joint.push_back(m);
        for (const ByteSet& m : joint) {
            if (u == BETWEEN && m.has(quote_byte)) {  // (the closing quote: the string may end)
                if (pool_.nullable(pool_.derive(x, quote_byte))) got = std::min(*got, d);
                continue;
            }
            const int b = m.lowest();
            const Id x2 = pool_.derive(x, b);
            if (x2 == NOTHING) continue;
            const Id u2 = pool_.derive(inside, b);
            if (u2 == NOTHING) continue;
            const int64_t d2 = d + (u == BETWEEN ? 1 : 0);
            std::pair<Id, Id> nexts[2] = {{x2, u2}, {x2, BETWEEN}};
            for (int i = 0; i < (pool_.nullable(u2) ? 2 : 1); ++i) {
                auto it = cost.find(nexts[i]);
                if (it == cost.end() || d2 < it->second) {
                    cost[nexts[i]] = d2;
                    if (d2 > d)
                        todo.emplace_back(d2, nexts[i].first, nexts[i].second);
                    else
                        todo.emplace_front(d2, nexts[i].first, nexts[i].second);
                }
            }
        }
        if (cost.size() > REACH_LIMIT) {
            got = std::nullopt;
            break;
        }
    }
    fewest_[key] = got;
    return got;
}

}  // namespace structgen
