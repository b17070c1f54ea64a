#include "state_masks.h"

#include <string>

#include "errors.h"
#include "token_bits.h"

namespace structgen {

std::shared_ptr<const Bits> StateMasks::mask(int64_t state) {
    const std::span<const int64_t> stacks = stacks_.stacks_of(state);
    if (auto got = cache_.find(state)) return got;
    const int64_t half = stacks_.max_depth() / 2;
    bool final = false;
    for (const int64_t sid : stacks) {
        if (stacks_.entry(sid).depth > half) return nullptr;  // (near the bound: the guide checks each token)
        final = final || stacks_.is_final(sid);
    }
    auto bits = std::make_shared<Bits>(index_->words(), 0);
    if (!masks_.collect(stacks, *bits).empty()) return nullptr;
    if (final)
        set_token_bits(*bits, index_->eos());
    else if (count_token_bits(*bits) == 0)
        return nullptr;
    cache_.keep(state, bits);
    return bits;
}

void StateMasks::keep(int64_t state, Bits m) {
    stacks_.stacks_of(state);
    if (m.size() != index_->words())
        throw InvalidArgument("StateMasks: a mask of " + std::to_string(m.size()) + " words, not " +
                              std::to_string(index_->words()) + " (the vocabulary's)");
    cache_.keep(state, std::make_shared<const Bits>(std::move(m)));
}

}  // namespace structgen
