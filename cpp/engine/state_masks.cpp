#include "state_masks.h"

#include <string>

#include "errors.h"
#include "token_bits.h"

namespace structgen {

std::shared_ptr<const TokenSet> StateMasks::mask(int64_t state) {
    const std::span<const int64_t> stacks = stacks_.stacks_of(state);
    if (auto got = cache_.find(state)) return got;
    const int64_t half = stacks_.max_depth() / 2;
    bool final = false;
    for (const int64_t sid : stacks) {
        if (stacks_.entry(sid).depth > half) return nullptr;  // (near the bound: the guide checks each token)
        final = final || stacks_.is_final(sid);
    }
    thread_local Bits union_;  // (reused: a fresh mask's pages are not touched until it is kept)
    union_.assign(index_->words(), 0);
    if (stacks_.carries_data()) {
        if (!data_) return nullptr;
        try {
            data_->collect(stacks, union_);
        } catch (const NeedsFrameData&) {
            return nullptr;  // (the guide's: a liveness search past its limit)
        }
    } else {
        masks_.collect(stacks, union_);
    }
    if (final) set_token_bits(union_, index_->eos());
    auto got = std::make_shared<const TokenSet>(TokenSet::of(union_));
    if (got->empty()) return nullptr;  // (a dead end: the guide names it)
    cache_.keep(state, got);
    return got;
}

void StateMasks::keep(int64_t state, std::span<const uint32_t> m) {
    stacks_.stacks_of(state);
    if (m.size() != index_->words())
        throw InvalidArgument("StateMasks: a mask of " + std::to_string(m.size()) + " words, not " +
                              std::to_string(index_->words()) + " (the vocabulary's)");
    cache_.keep(state, std::make_shared<const TokenSet>(TokenSet::of(m)));
}

}  // namespace structgen
