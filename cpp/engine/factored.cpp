#include "factored.h"

#include <unordered_map>
#include <vector>

namespace structgen {

Id factored(Pool& pool, std::span<const Id> parts, int depth) {
    std::vector<Id> out;
    std::vector<Id> heads;                  // in the order first met
    std::vector<std::vector<Id>> tails;     // by head
    std::unordered_map<Id, size_t> at;      // head -> its index
    for (Id p : parts) {
        const Node n = pool.node(p);  // (a copy: the constructors below may move the nodes)
        Id head = 0, tail = 0;
        if (n.kind == Kind::Seq && pool.kind(n.a) == Kind::Bytes) {
            head = n.a, tail = n.b;
        } else if (n.kind == Kind::Bytes) {  // (the last byte of a word: b = b·ε)
            head = p, tail = EPSILON;
        } else {
            out.push_back(p);
            continue;
        }
        auto [it, fresh] = at.try_emplace(head, heads.size());
        if (fresh) heads.push_back(head), tails.emplace_back();
        tails[it->second].push_back(tail);
    }
    for (size_t i = 0; i < heads.size(); ++i) {
        const std::vector<Id>& ts = tails[i];
        const Id rest = ts.size() > 1 && depth < FACTOR_DEPTH ? factored(pool, ts, depth + 1) : pool.alt(ts);
        out.push_back(pool.seq(heads[i], rest));
    }
    return pool.alt(out);
}

}  // namespace structgen
