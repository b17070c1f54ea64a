#include "vocab.h"

#include <algorithm>

#include "errors.h"

namespace structgen {

namespace {
// Cuts of the vocabulary by token length, longest first: a state that clamps for tokens of n bytes
// takes their mask from its clamped state and walks only the longer tokens itself.
constexpr int64_t SHORT_TOKEN_CUTS[] = {96, 64, 48, 32, 24, 16};
}  // namespace

TokenIndex::TokenIndex(std::vector<std::string> tokens, std::vector<uint8_t> walkable, std::vector<int64_t> eos)
    : tokens_(std::move(tokens)), walkable_(std::move(walkable)), eos_(std::move(eos)) {
    if (walkable_.size() != tokens_.size()) throw InvalidArgument("a walkable flag per token");
    is_eos_.assign(tokens_.size(), 0);
    for (int64_t e : eos_) {
        if (e < 0 || static_cast<size_t>(e) >= tokens_.size()) throw OutOfRange("EOS id " + std::to_string(e) + " outside the vocabulary");
        is_eos_[e] = 1;
    }
    lengths_.assign(tokens_.size(), 0);
    for (size_t i = 0; i < tokens_.size(); ++i) {
        if (!walkable_[i]) {
            tokens_[i].clear();
            continue;
        }
        lengths_[i] = static_cast<int64_t>(tokens_[i].size());
        longest_ = std::max(longest_, lengths_[i]);
        if (tokens_[i].size() == 1) single_.set(static_cast<uint8_t>(tokens_[i][0]));
    }
    for (int64_t n : SHORT_TOKEN_CUTS)
        if (n < longest_) cuts_.push_back(n);
}

std::shared_ptr<TokenTrie> TokenIndex::trie_ptr() {
    std::lock_guard<std::mutex> hold(lock_);
    if (!trie_) {
        std::vector<int64_t> ids;
        for (size_t i = 0; i < tokens_.size(); ++i)
            if (walkable_[i] && !tokens_[i].empty()) ids.push_back(static_cast<int64_t>(i));
        trie_ = TokenTrie::build(tokens_, ids);
    }
    return trie_;
}

const TokenTrie& TokenIndex::trie() { return *trie_ptr(); }

StringSlice& TokenIndex::slice(int k) {
    if (k < 0 || k >= NUM_SLICES) throw OutOfRange("no slice " + std::to_string(k));
    auto full = trie_ptr();
    std::lock_guard<std::mutex> hold(lock_);
    if (!slices_[k]) slices_[k] = std::make_unique<StringSlice>(k, tokens_, walkable_, *full);
    return *slices_[k];
}

std::shared_ptr<TokenTrie> TokenIndex::long_tokens(int64_t n) {
    auto full = trie_ptr();
    {
        std::lock_guard<std::mutex> hold(lock_);
        auto it = long_.find(n);
        if (it != long_.end()) return it->second;
    }
    std::vector<int64_t> ids;
    for (size_t i = 0; i < tokens_.size(); ++i)
        if (lengths_[i] > n) ids.push_back(static_cast<int64_t>(i));
    auto got = full->restrict(ids);
    std::lock_guard<std::mutex> hold(lock_);
    return long_.emplace(n, std::move(got)).first->second;
}

std::shared_ptr<const Bits> TokenIndex::short_tokens(int64_t n) {
    {
        std::lock_guard<std::mutex> hold(lock_);
        auto it = short_.find(n);
        if (it != short_.end()) return it->second;
    }
    auto bits = std::make_shared<Bits>(words(), 0);
    for (size_t i = 0; i < tokens_.size(); ++i)
        if (lengths_[i] <= n) set_bit(bits->data(), static_cast<int64_t>(i));
    std::lock_guard<std::mutex> hold(lock_);
    return short_.emplace(n, std::move(bits)).first->second;
}

void TokenIndex::prepare() {
    trie();
    for (int64_t n : cuts_) {
        long_tokens(n);
        short_tokens(n);
    }
    for (int k = 0; k < NUM_SLICES; ++k) slice(k);
}

size_t TokenIndex::memory_bytes() {
    std::lock_guard<std::mutex> hold(lock_);
    size_t out = tokens_.size() * (sizeof(std::string) + 2 + 8);
    for (const auto& t : tokens_) out += t.capacity() > 15 ? t.capacity() : 0;
    if (trie_) out += trie_->memory_bytes();
    for (const auto& s : slices_)
        if (s) out += s->memory_bytes();
    for (const auto& [n, t] : long_) out += t->memory_bytes();
    out += short_.size() * words() * 4;
    return out;
}

}  // namespace structgen
