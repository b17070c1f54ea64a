#include "substitute.h"

#include "errors.h"

namespace structgen {

namespace {

// the parts of e a substitution goes into (none for a leaf: bytes, a symbol, an automaton)
std::span<const Id> children(const Pool& pool, Id e, Id (&two)[2]) {
    const Node& n = pool.node(e);
    switch (n.kind) {
        case Kind::Seq:
            two[0] = n.a;
            two[1] = n.b;
            return {two, 2};
        case Kind::Rep:
        case Kind::Not:
            two[0] = n.a;
            return {two, 1};
        case Kind::Alt:
        case Kind::And:
            return pool.members(e);
        default:
            return {};
    }
}

Id rebuilt(Pool& pool, Id e, const FlatMap<Id>& done, std::vector<Id>& parts) {
    const Node n = pool.node(e);  // (a copy: the constructors below may grow the node table)
    auto mapped = [&](Id x) { return *done.find(x); };
    switch (n.kind) {
        case Kind::Seq: {
            Id head = mapped(n.a), tail = mapped(n.b);
            if (pool.kind(head) != Kind::Seq) return pool.seq(head, tail);
            Id both[2] = {head, tail};
            return pool.concat(both);  // (a concatenation as head: its chain unrolled, kept right-nested)
        }
        case Kind::Rep:
            return pool.repeat(mapped(n.a), n.c, n.d);
        case Kind::Not:
            return pool.negate(mapped(n.a));
        case Kind::Alt:
        case Kind::And: {
            parts.clear();
            for (Id m : pool.members(e)) parts.push_back(mapped(m));
            return n.kind == Kind::Alt ? pool.alt(parts) : pool.both(parts);
        }
        default:
            return e;
    }
}

}  // namespace

Id substitute(Pool& pool, Id e, const FlatMap<Id>& mapping, SubstitutionMemo& memo, bool symbols_only) {
    if (memo.pool_ == nullptr) memo.pool_ = &pool;
    if (memo.pool_ != &pool) throw InvalidArgument("a substitution's memo belongs to another pool");
    if (mapping.size() == 0) return e;
    FlatMap<Id>& done = memo.done_;
    std::vector<Id> stack{e}, parts;
    Id two[2];
    while (!stack.empty()) {
        Id x = stack.back();
        if (done.contains(x)) {
            stack.pop_back();
            continue;
        }
        if (const Id* to = mapping.find(x)) {
            done.put(x, *to);
            stack.pop_back();
            continue;
        }
        if (symbols_only && pool.symbols_id(x) == 0) {
            done.put(x, x);
            stack.pop_back();
            continue;
        }
        auto kids = children(pool, x, two);
        bool pending = false;
        for (Id k : kids) {
            if (!done.contains(k)) {
                stack.push_back(k);
                pending = true;
            }
        }
        if (pending) continue;
        stack.pop_back();
        done.put(x, kids.empty() ? x : rebuilt(pool, x, done, parts));
    }
    return *done.find(e);
}

}  // namespace structgen
