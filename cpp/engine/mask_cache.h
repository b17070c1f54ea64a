// Packed masks kept per state under a bound on their bytes: past it, the oldest is dropped first.
// (The DFA guide's masks and a pushdown guide's states' masks: dfa_guide.h, state_masks.h.)
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>

#include "vocab.h"

namespace structgen {

class MaskCache {
public:
    // mask_words: the words of one mask; cache_bytes: the bound (at least 16 masks are kept)
    MaskCache(size_t mask_words, int64_t cache_bytes)
        : max_masks_(std::max<size_t>(16, static_cast<size_t>(std::max<int64_t>(cache_bytes, 0)) /
                                              std::max<size_t>(mask_words * 4, 1))) {}

    // the mask of state, or null
    std::shared_ptr<const Bits> find(int64_t state) const {
        auto it = masks_.find(state);
        return it == masks_.end() ? nullptr : it->second;
    }
    // keep m as state's mask (a state kept already keeps its mask)
    void keep(int64_t state, std::shared_ptr<const Bits> m) {
        if (masks_.count(state)) return;
        while (masks_.size() >= max_masks_ && !order_.empty()) {
            bytes_ -= masks_.at(order_.front())->size() * 4;
            masks_.erase(order_.front());
            order_.pop_front();
        }
        bytes_ += m->size() * 4;
        masks_.emplace(state, std::move(m));
        order_.push_back(state);
    }
    size_t size() const { return masks_.size(); }
    size_t max_masks() const { return max_masks_; }
    size_t memory_bytes() const { return bytes_ + masks_.size() * 64; }

private:
    size_t max_masks_;
    std::unordered_map<int64_t, std::shared_ptr<const Bits>> masks_;
    std::deque<int64_t> order_;  // (oldest first)
    size_t bytes_ = 0;
};

}  // namespace structgen
