#include "min_length.h"

#include <algorithm>

#include "liveness.h"

namespace structgen {

int64_t MinLength::of(Id e) {
    if (e == NOTHING) return INF;
    if (e == EPSILON) return 0;
    if (const int64_t* got = memo_.find(e)) return *got;
    if (pool_.kind(e) != Kind::Seq) return one(e);
    std::vector<Id> links;  // (a chain in a loop: a long literal is a deep one)
    Id x = e;
    while (pool_.kind(x) == Kind::Seq && !memo_.contains(x)) {
        links.push_back(x);
        x = pool_.node(x).b;
    }
    std::vector<int64_t> heads;  // (read first to last, as a recursion would)
    for (Id link : links) heads.push_back(of(pool_.node(link).a));
    int64_t got = of(x);
    for (size_t i = links.size(); i-- > 0;) {
        got = std::min(INF, sat_add(heads[i], got, INF));
        memo_.put(links[i], got);
    }
    return got;
}

int64_t MinLength::one(Id e) {
    DepthGuard guard(pool_.depth);
    const Node n = pool_.node(e);
    int64_t got = 0;
    switch (n.kind) {
        case Kind::Bytes:
            got = 1;
            break;
        case Kind::Alt: {
            got = INF;
            auto ms = pool_.members(e);
            std::vector<Id> parts(ms.begin(), ms.end());
            for (Id p : parts) got = std::min(got, of(p));
            break;
        }
        case Kind::Rep:
            got = n.c == 0 ? 0 : sat_mul(n.c, of(n.a), INF);
            break;
        case Kind::Sym: {
            auto it = weights_.find(n.c);
            got = it == weights_.end() ? 0 : it->second;
            break;
        }
        case Kind::And:
        case Kind::Not:
            got = std::min(INF, pool_.search().witness_length(e));
            break;
        case Kind::Dfa:
            got = pool_.embedded(n.a).min_lengths(weights_)[n.b];
            break;
        default:
            got = e == NOTHING ? INF : 0;
    }
    memo_.put(e, got);
    return got;
}

}  // namespace structgen
