// Derivatives (Brzozowski) by a byte and by a symbol, memoised per (term, byte) and (term, symbol).
#include <algorithm>

#include "pool.h"

namespace structgen {

Id Pool::derive(Id e, int b) {
    const uint64_t key = uint64_t(e) << 8 | static_cast<uint64_t>(b);
    if (const Id* got = derived_.find(key)) return *got;
    DepthGuard guard(depth);
    const Node n = nodes_[e];  // (a copy: interning below may move the arena)
    Id got = NOTHING;
    switch (n.kind) {
        case Kind::Bytes:
            got = masks_[n.a].has(b) ? EPSILON : NOTHING;
            break;
        case Kind::Seq: {
            Id head = derive(n.a, b);
            got = seq(head, n.b);
            if (nullable_[n.a]) {
                Id tail = derive(n.b, b);
                Id parts[2] = {got, tail};
                got = alt(parts);
            }
            break;
        }
        case Kind::Alt: {
            std::vector<Id> parts;
            if (n.b > 8) {  // (a trie's node, a long enumeration: only the parts that read b)
                auto ps = parts_by_byte(e, b);
                parts.assign(ps.begin(), ps.end());
            } else {
                auto ms = members(e);
                parts.assign(ms.begin(), ms.end());
            }
            for (Id& p : parts) p = derive(p, b);
            got = alt(parts);
            break;
        }
        case Kind::Rep: {
            Id dx = derive(n.a, b);
            if (dx != NOTHING) got = seq(dx, repeat(n.a, std::max<int64_t>(n.c - 1, 0), n.d < 0 ? -1 : n.d - 1));
            break;
        }
        case Kind::Dfa:
            got = dfa_node(n.a, embedded_[n.a]->at(static_cast<int32_t>(n.b), b));
            break;
        case Kind::And: {
            auto ms = members(e);
            std::vector<Id> parts(ms.begin(), ms.end());
            for (Id& p : parts) p = derive(p, b);
            got = both(parts, false);
            break;
        }
        case Kind::Not:
            got = negate(derive(n.a, b), false);
            break;
        default:  // nothing, the empty string, a symbol
            break;
    }
    derived_.put(key, got);
    return got;
}

Id Pool::derive_symbol(Id e, int64_t k) {
    const uint64_t key = uint64_t(e) << 32 | static_cast<uint32_t>(k);
    if (const Id* got = derived_sym_.find(key)) return *got;
    DepthGuard guard(depth);
    const Node n = nodes_[e];
    Id got = NOTHING;
    switch (n.kind) {
        case Kind::Sym:
            got = n.c == k ? EPSILON : NOTHING;
            break;
        case Kind::Seq: {
            Id head = derive_symbol(n.a, k);
            got = seq(head, n.b);
            if (nullable_[n.a]) {
                Id tail = derive_symbol(n.b, k);
                Id parts[2] = {got, tail};
                got = alt(parts);
            }
            break;
        }
        case Kind::Alt: {
            auto ms = members(e);
            std::vector<Id> parts(ms.begin(), ms.end());
            for (Id& p : parts) p = derive_symbol(p, k);
            got = alt(parts);
            break;
        }
        case Kind::Rep: {
            Id dx = derive_symbol(n.a, k);
            if (dx != NOTHING) got = seq(dx, repeat(n.a, std::max<int64_t>(n.c - 1, 0), n.d < 0 ? -1 : n.d - 1));
            break;
        }
        case Kind::Dfa:
            for (const SymbolEdge& edge : embedded_[n.a]->symbols(static_cast<int32_t>(n.b)))
                if (edge.symbol == k) got = dfa_node(n.a, edge.target);
            break;
        default:
            break;
    }
    derived_sym_.put(key, got);
    return got;
}

}  // namespace structgen
