// Sets of symbols (calls and guards), interned: a term's symbols are one uint32 id, 0 the empty
// set, so the unions kept per term as terms are built cost a lookup, not a set.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "flat_map.h"

namespace structgen {

class SymbolSets {
public:
    SymbolSets() { sets_.emplace_back(); }
    uint32_t intern(std::vector<int64_t> set) {  // set: sorted, distinct
        if (set.empty()) return 0;
        uint64_t h = 0x51ED27ull;
        for (int64_t k : set) h = mix64(h ^ static_cast<uint64_t>(k));
        h &= ~(1ull << 63);  // (never the empty key)
        for (;; h = (h + 1) & ~(1ull << 63)) {  // (probe on: distinct sets with one hash)
            const uint32_t* got = ids_.find(h);
            if (!got) break;
            if (sets_[*got] == set) return *got;
        }
        uint32_t id = static_cast<uint32_t>(sets_.size());
        sets_.push_back(std::move(set));
        ids_.put(h, id);
        return id;
    }
    uint32_t single(int64_t k) { return intern({k}); }
    uint32_t unite(uint32_t a, uint32_t b) {
        if (a == 0 || a == b) return b;
        if (b == 0) return a;
        uint64_t key = a < b ? (uint64_t(a) << 32 | b) : (uint64_t(b) << 32 | a);
        if (const uint32_t* got = unions_.find(key)) return *got;
        std::vector<int64_t> out;
        std::set_union(sets_[a].begin(), sets_[a].end(), sets_[b].begin(), sets_[b].end(), std::back_inserter(out));
        uint32_t id = intern(std::move(out));
        unions_.put(key, id);
        return id;
    }
    const std::vector<int64_t>& get(uint32_t id) const { return sets_[id]; }
    size_t size() const { return sets_.size(); }

private:
    std::vector<std::vector<int64_t>> sets_;
    FlatMap<uint32_t> ids_;
    FlatMap<uint32_t> unions_;
};

}  // namespace structgen
