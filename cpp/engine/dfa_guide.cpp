#include "dfa_guide.h"

#include <algorithm>

#include "errors.h"

namespace structgen {

DfaGuideCore::DfaGuideCore(LazyAutomaton& automaton, std::shared_ptr<TokenIndex> index, int64_t mask_cache_bytes,
                           std::string description, std::string vocab_repr)
    : a_(automaton),
      index_(std::move(index)),
      description_(std::move(description)),
      vocab_repr_(std::move(vocab_repr)),
      masks_(index_->words(), mask_cache_bytes) {}

std::shared_ptr<const Bits> DfaGuideCore::cached(int32_t q) const { return masks_.find(q); }

std::shared_ptr<const Bits> DfaGuideCore::mask(int32_t q) {
    a_.check(q);
    if (auto got = cached(q)) return got;
    auto got = compute(q);
    masks_.keep(q, got);
    return got;
}

void DfaGuideCore::add_walk(const TokenTrie& trie, int32_t q, Bits& out) {
    const int32_t root = 0;
    uint32_t* words = out.data();
    walk_trie(a_, trie, {&root, 1}, q, false, stack_, [&](int32_t, int32_t, int32_t p) {
        for (int64_t id : trie.tokens_at_pre(p)) set_bit(words, id);
    });
}

std::shared_ptr<const Bits> DfaGuideCore::compute(int32_t q) {
    TokenIndex& index = *index_;
    const int32_t clamped = a_.clamped(q, index.longest_token());
    if (clamped != q) return mask(clamped);  // (the same tokens, EOS included: finality is kept)
    const auto& cuts = index.short_token_cuts();
    auto [n, below] = a_.clamped_below(q, cuts);
    if (n) {  // the tokens of at most n bytes as from the clamped state, the longer ones walked
        auto shorter = mask(below);
        auto allowed = index.short_tokens(n);
        auto out = std::make_shared<Bits>(index.words());
        for (size_t w = 0; w < out->size(); ++w) (*out)[w] = (*shorter)[w] & (*allowed)[w];
        add_walk(*index.long_tokens(n), q, *out);
        return out;
    }
    auto out = std::make_shared<Bits>(index.words(), 0);
    if (!slice_mask(q, *out)) add_walk(index.trie(), q, *out);
    if (a_.is_final(q)) {
        for (int64_t e : index.eos()) set_bit(out->data(), e);
    } else if (std::all_of(out->begin(), out->end(), [](uint32_t w) { return w == 0; })) {
        throw DeadEnd(dead_end(q));
    }
    return out;
}

std::string DfaGuideCore::dead_end(int32_t q) const {
    const std::string what = description_.empty() ? "" : " " + description_;
    return "no token of " + vocab_repr_ + " can continue from state " + std::to_string(q) + " of <Guide" + what + ": " +
           std::to_string(a_.num_states()) + " states so far over " + vocab_repr_ +
           ">: the vocabulary cannot spell the bytes the constraint needs next";
}

int64_t DfaGuideCore::successor(int32_t q, int k) {
    const uint64_t key = (uint64_t(q) << 3) | uint64_t(k);
    if (const int64_t* got = succ_.find(key)) return *got;
    const int64_t got = char_successor(a_, q, k);
    succ_.put(key, got);
    return got;
}

int64_t DfaGuideCore::run(int32_t q, int k, int64_t longest) {
    // how many slice-k characters in a row survive from q (up to longest), or -1 where a state
    // along the way does not lead one way on them
    const uint64_t key = (uint64_t(q) << 3) | uint64_t(k);
    if (const int64_t* got = runs_.find(key)) return *got;
    if (auto chain = slice_chain(a_, q, k, longest)) {  // (read off a string body's counters)
        const bool looping = chain->size() > 1 && chain->back() == (*chain)[chain->size() - 2];
        const int64_t got = looping ? longest : static_cast<int64_t>(chain->size()) - 1;
        runs_.put(key, got);
        return got;
    }
    int32_t last = q;
    int64_t m = 0;
    while (m < longest) {
        const int64_t next = successor(last, k);
        if (next == MIXED) {
            m = -1;
            break;
        }
        if (next < 0) break;
        ++m;
        if (next == last) {  // a loop on every slice character: any number of them
            m = longest;
            break;
        }
        if (const int64_t* known = runs_.find((uint64_t(next) << 3) | uint64_t(k))) {
            m = *known < 0 ? -1 : std::min(longest, m + *known);
            break;
        }
        last = static_cast<int32_t>(next);
    }
    runs_.put(key, m);
    return m;
}

bool DfaGuideCore::slice_mask(int32_t q, Bits& out) {
    // (the first slice, a JSON string's characters, applies whenever its characters agree, even if
    // they all die: its rest trie is small; a narrower one only where they lead on)
    int32_t probe[4];
    const uint8_t probes[4] = {'a', '0', ' ', '{'};
    for (int i = 0; i < 4; ++i) probe[i] = a_.step(q, probes[i]);
    const bool agree = probe[0] == probe[1] && probe[0] == probe[2] && probe[0] == probe[3];
    TokenIndex& index = *index_;
    for (int k = 0; k < NUM_SLICES; ++k) {
        if ((k == 0 && !agree) || (k && probe[0] < 0)) continue;  // (cheaper than the successors: they cannot agree)
        const int64_t first = successor(q, k);
        if (first == MIXED || (k && first < 0)) continue;
        StringSlice& sl = index.slice(k);
        const int64_t m = run(q, k, sl.longest());
        if (m < 0) continue;
        if (m) {
            auto bits = sl.up_to_bits(m, index.words());
            std::copy(bits->begin(), bits->end(), out.begin());
        }
        add_walk(*sl.rest, q, out);
        return true;
    }
    return false;
}

int32_t DfaGuideCore::next_state(int32_t q, int64_t t) {
    if (!a_.valid(q)) return -1;
    TokenIndex& index = *index_;
    if (t < 0 || static_cast<size_t>(t) >= index.size() || !index.walkable(t))
        return index.is_eos(t) && a_.is_final(q) ? q : -1;
    for (char c : index.token(t)) {
        q = a_.step(q, static_cast<uint8_t>(c));
        if (q < 0) return -1;
    }
    return q;
}

std::string DfaGuideCore::forced_bytes(int32_t q) {
    a_.check(q);
    // every state can reach a final state, so a chain of single-byte, non-final states cannot
    // loop; the bound is only a guard
    std::vector<int32_t> chain;
    std::string out;
    int32_t s = q;
    for (int i = 0; i < (1 << 20); ++i) {
        auto known = forced_.find(s);
        if (known != forced_.end()) {
            out += known->second;
            break;
        }
        if (a_.is_final(s)) break;
        a_.build(s);
        const int32_t* row = a_.table() + static_cast<size_t>(s) * 256;
        int alive = -1, count = 0;
        for (int b = 0; b < 256 && count < 2; ++b)
            if (row[b] >= 0) alive = b, ++count;
        if (count != 1) break;
        chain.push_back(s);
        out.push_back(static_cast<char>(alive));
        s = row[alive];
    }
    for (size_t i = 0; i < chain.size(); ++i) forced_.emplace(chain[i], out.substr(i));
    if (chain.empty()) return forced_.emplace(q, std::string()).first->second;
    return out;
}

void DfaGuideCore::walk_tokens(int32_t q, std::vector<int64_t>& ids, std::vector<int32_t>& ends) {
    a_.check(q);
    const TokenTrie& trie = index_->trie();
    const int32_t root = 0;
    walk_trie(a_, trie, {&root, 1}, q, false, stack_, [&](int32_t, int32_t state, int32_t p) {
        for (int64_t id : trie.tokens_at_pre(p)) {
            ids.push_back(id);
            ends.push_back(state);
        }
    });
}

size_t DfaGuideCore::memory_bytes() const {
    return masks_.memory_bytes() + succ_.bytes() + runs_.bytes() + forced_.size() * 64;
}

}  // namespace structgen
