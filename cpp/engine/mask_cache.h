// Masks kept per state under a bound on their bytes: past it, the oldest is dropped first. (The
// DFA guide's packed masks and a pushdown guide's states' token sets: dfa_guide.h, state_masks.h.)
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>

#include "token_set.h"
#include "vocab.h"

namespace structgen {

inline size_t mask_bytes(const Bits& m) { return m.size() * 4; }
inline size_t mask_bytes(const TokenSet& m) { return m.memory_bytes(); }

template <class Mask>
class MaskCache {
public:
    // mask_words: the words of one packed mask; cache_bytes: the bound, as that many packed masks
    // (at least 16); a mask kept smaller counts its own bytes
    MaskCache(size_t mask_words, int64_t cache_bytes)
        : max_bytes_(std::max<size_t>(16, static_cast<size_t>(std::max<int64_t>(cache_bytes, 0)) /
                                              std::max<size_t>(mask_words * 4, 1)) *
                     std::max<size_t>(mask_words * 4, 1)) {}

    // the mask of state, or null
    std::shared_ptr<const Mask> find(int64_t state) const {
        auto it = masks_.find(state);
        return it == masks_.end() ? nullptr : it->second;
    }
    // keep m as state's mask (a state kept already keeps its mask)
    void keep(int64_t state, std::shared_ptr<const Mask> m) {
        if (masks_.count(state)) return;
        const size_t bytes = mask_bytes(*m);
        while (bytes_ + bytes > max_bytes_ && !order_.empty()) {
            bytes_ -= mask_bytes(*masks_.at(order_.front()));
            masks_.erase(order_.front());
            order_.pop_front();
        }
        bytes_ += bytes;
        masks_.emplace(state, std::move(m));
        order_.push_back(state);
    }
    size_t size() const { return masks_.size(); }
    size_t max_bytes() const { return max_bytes_; }
    size_t memory_bytes() const { return bytes_ + masks_.size() * 64; }

private:
    size_t max_bytes_;
    std::unordered_map<int64_t, std::shared_ptr<const Mask>> masks_;
    std::deque<int64_t> order_;  // (oldest first)
    size_t bytes_ = 0;
};

}  // namespace structgen
