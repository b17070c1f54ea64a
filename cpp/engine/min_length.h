// The fewest bytes of a string of each term, a symbol k weighing weights[k] (absent: 0);
// memoised for one set of weights. An intersection or a complement: its shortest witness,
// searched (Liveness::witness_length). Chains of concatenations are read in a loop.
#pragma once
#include <cstdint>
#include <map>

#include "flat_map.h"
#include "pool.h"

namespace structgen {

class MinLength {
public:
    MinLength(Pool& pool, std::map<int64_t, int64_t> weights) : pool_(pool), weights_(std::move(weights)) {}
    int64_t of(Id e);
    const std::map<int64_t, int64_t>& weights() const { return weights_; }
    Pool& pool() const { return pool_; }

private:
    int64_t one(Id e);
    Pool& pool_;
    std::map<int64_t, int64_t> weights_;
    FlatMap<int64_t> memo_;
};

}  // namespace structgen
