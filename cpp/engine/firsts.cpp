// What a term may read first: its byte classes (a partition of the bytes on each part of which
// the derivative is the same), its first bytes, its first symbols; the parts of a long
// alternation by the byte they start with (a derivative then derives only those). And every byte
// a term may read anywhere.
#include <algorithm>
#include <span>
#include <vector>

#include "pool.h"

namespace structgen {

namespace {
// the parts of p refined by q's, in the order (a of p, b of q)
std::vector<ByteSet> refine(const std::vector<ByteSet>& p, const std::vector<ByteSet>& q) {
    if (p.size() == 1) return q;
    if (q.size() == 1) return p;
    std::vector<ByteSet> out;
    for (const ByteSet& a : p)
        for (const ByteSet& b : q) {
            ByteSet c = a & b;
            if (!c.empty()) out.push_back(c);
        }
    return out;
}

// the union of f over the members (an alternation's), or their intersection (``both``: an
// intersection's); copied first, as f may add terms
template <class F>
ByteSet fold_members(std::span<const Id> members, bool both, F f) {
    std::vector<Id> parts(members.begin(), members.end());
    ByteSet got = both ? ByteSet::all() : ByteSet();
    for (Id p : parts) {
        if (both)
            got &= f(p);
        else
            got |= f(p);
    }
    return got;
}
}  // namespace

const std::vector<ByteSet>& Pool::byte_classes(Id e) {
    if (e < class_of_.size() && class_of_[e]) return class_lists_[class_of_[e] - 1];
    return classes_of(e);
}

const std::vector<ByteSet>& Pool::classes_of(Id e) {
    DepthGuard guard(depth);
    const Node n = nodes_[e];
    std::vector<ByteSet> got;
    switch (n.kind) {
        case Kind::Bytes: {
            const ByteSet m = masks_[n.a];
            if (m.is_all())
                got = {m};
            else
                got = {m, ~m};
            break;
        }
        case Kind::Seq:
            got = byte_classes(n.a);
            if (nullable_[n.a]) got = refine(got, byte_classes(n.b));
            break;
        case Kind::Alt:
        case Kind::And: {
            got = {ByteSet::all()};
            auto ms = members(e);
            std::vector<Id> parts(ms.begin(), ms.end());
            for (Id p : parts) got = refine(got, byte_classes(p));
            break;
        }
        case Kind::Rep:
        case Kind::Not:
            got = byte_classes(n.a);
            break;
        case Kind::Dfa:
            got = embedded_[n.a]->classes(static_cast<int32_t>(n.b));
            break;
        default:
            got = {ByteSet::all()};
    }
    // interned: equal lists share one index (the binding keeps one Python tuple per list)
    uint64_t h = 0x6C15ull;
    for (const ByteSet& m : got) h = mix64(h ^ m.hash());
    h &= ~(1ull << 63);
    uint32_t index = 0;
    for (;; h = (h + 1) & ~(1ull << 63)) {
        const uint32_t* found = class_list_ids_.find(h);
        if (!found) {
            class_lists_.push_back(std::move(got));
            index = static_cast<uint32_t>(class_lists_.size());
            class_list_ids_.put(h, index);
            break;
        }
        if (class_lists_[*found - 1] == got) {
            index = *found;
            break;
        }
    }
    if (class_of_.size() <= e) class_of_.resize(std::max<size_t>(nodes_.size(), e + 1), 0);
    class_of_[e] = index;
    return class_lists_[index - 1];
}

ByteSet Pool::first_bytes(Id e) {
    const ByteSet* got = first_bytes_.find(e);
    return got ? *got : first_bytes_of(e);
}

ByteSet Pool::first_bytes_of(Id e) {
    DepthGuard guard(depth);
    const Node n = nodes_[e];
    ByteSet got;
    switch (n.kind) {
        case Kind::Bytes:
            got = masks_[n.a];
            break;
        case Kind::Seq:
            got = first_bytes(n.a);
            if (nullable_[n.a]) got |= first_bytes(n.b);
            break;
        case Kind::Alt:
        case Kind::And:
            got = fold_members(members(e), n.kind == Kind::And, [this](Id p) { return first_bytes(p); });
            break;
        case Kind::Rep:
            got = first_bytes(n.a);
            break;
        case Kind::Dfa:
        case Kind::Not:
            got = ByteSet::all();
            break;
        default:
            break;
    }
    first_bytes_.put(e, got, nodes_.size());
    return got;
}

ByteSet Pool::readable_bytes(Id e) {
    const ByteSet* got = readable_.find(e);
    return got ? *got : readable_bytes_of(e);
}

ByteSet Pool::readable_bytes_of(Id e) {
    DepthGuard guard(depth);
    const Node n = nodes_[e];
    ByteSet got;
    switch (n.kind) {
        case Kind::Bytes:
            got = masks_[n.a];
            break;
        case Kind::Seq: {  // (a chain read in a loop: a long literal is a deep one)
            Id tail = e;
            while (nodes_[tail].kind == Kind::Seq) {
                got |= readable_bytes(nodes_[tail].a);
                tail = nodes_[tail].b;
            }
            got |= readable_bytes(tail);
            break;
        }
        case Kind::Alt:
        case Kind::And:
            got = fold_members(members(e), n.kind == Kind::And, [this](Id p) { return readable_bytes(p); });
            break;
        case Kind::Rep:
            got = readable_bytes(n.a);
            break;
        case Kind::Dfa:
            got = embedded_[n.a]->readable_bytes();
            break;
        case Kind::Not:
            got = ByteSet::all();
            break;
        default:  // (nothing, the empty string, a symbol: no byte)
            break;
    }
    readable_.put(e, got, nodes_.size());
    return got;
}

std::span<const Id> Pool::parts_by_byte(Id e, int b) {
    auto* got = by_byte_.find(e);
    if (!got) {
        std::vector<std::vector<Id>> lists(256);
        auto ms = members(e);
        std::vector<Id> parts(ms.begin(), ms.end());
        for (Id p : parts) first_bytes(p).each([&](int c) { lists[c].push_back(p); });
        by_byte_.put(e, std::move(lists));
        got = by_byte_.find(e);
    }
    const std::vector<Id>& v = (*got)[b];
    return {v.data(), v.size()};
}

uint32_t Pool::first_symbols(Id e) {
    if (e < first_symbols_.size() && first_symbols_[e]) return first_symbols_[e] - 1;
    return first_symbols_of(e);
}

uint32_t Pool::first_symbols_of(Id e) {
    DepthGuard guard(depth);
    const Node n = nodes_[e];
    uint32_t got = 0;
    switch (n.kind) {
        case Kind::Sym:
            got = symsets_.single(n.c);
            break;
        case Kind::Seq:
            got = first_symbols(n.a);
            if (nullable_[n.a]) got = symsets_.unite(got, first_symbols(n.b));
            break;
        case Kind::Alt: {
            auto ms = members(e);
            std::vector<Id> parts(ms.begin(), ms.end());
            for (Id p : parts) got = symsets_.unite(got, first_symbols(p));
            break;
        }
        case Kind::Rep:
            got = first_symbols(n.a);
            break;
        case Kind::Dfa: {
            std::vector<int64_t> ks;
            for (const SymbolEdge& edge : embedded_[n.a]->symbols(static_cast<int32_t>(n.b))) ks.push_back(edge.symbol);
            std::sort(ks.begin(), ks.end());
            ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
            got = symsets_.intern(std::move(ks));
            break;
        }
        default:
            break;
    }
    if (first_symbols_.size() <= e) first_symbols_.resize(std::max<size_t>(nodes_.size(), e + 1), 0);
    first_symbols_[e] = got + 1;
    return got;
}

}  // namespace structgen
