// A pushdown state's whole mask, natively, cached as a TokenSet (its ids where few) (Python face:
// PushdownGuide._packed, which asks here first and keeps here what it made itself): the union of
// its stacks' masks (StackMasks; DataMasks where the stacks carry frame data), with EOS where one
// of its stacks may end. Null where the guide makes the mask itself: a stack near the nesting
// bound (each token is checked there), a mask DataMasks leaves to the guide (NeedsFrameData), or
// no token at all in a state that cannot end (the guide raises its dead end).
#pragma once
#include <cstdint>
#include <memory>
#include <span>

#include "data_masks.h"
#include "mask_cache.h"
#include "token_set.h"
#include "stack_masks.h"
#include "stack_table.h"
#include "vocab.h"

namespace structgen {

class StateMasks {
public:
    // stacks, masks, index, data: the guide's (they outlive this; data: the masks where the stacks
    // carry frame data); cache_bytes: the bound of the cache
    StateMasks(const StackTable& stacks, StackMasks& masks, std::shared_ptr<const TokenIndex> index, int64_t cache_bytes,
               DataMasks* data = nullptr)
        : stacks_(stacks), masks_(masks), data_(data), index_(std::move(index)), cache_(index_->words(), cache_bytes) {}

    // the mask of state, made if not cached (null: the guide's to make); MissingAutomaton where a
    // frame needs an automaton not given yet
    std::shared_ptr<const TokenSet> mask(int64_t state);
    // the cached mask of state, or null
    std::shared_ptr<const TokenSet> find(int64_t state) const {
        stacks_.stacks_of(state);
        return cache_.find(state);
    }
    // keep m (the vocabulary's words) as state's mask
    void keep(int64_t state, std::span<const uint32_t> m);
    size_t memory_bytes() const { return cache_.memory_bytes(); }
    size_t num_masks() const { return cache_.size(); }

private:
    const StackTable& stacks_;
    StackMasks& masks_;
    DataMasks* data_;
    std::shared_ptr<const TokenIndex> index_;
    MaskCache<TokenSet> cache_;
};

}  // namespace structgen
