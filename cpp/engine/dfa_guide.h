// The guide over one lazy automaton (Python face: structgen/guides/dfa_guide.py's DfaGuide):
// packed token masks per state, cached with a byte bound; the state after a token (one call, the
// token's bytes stepped through the automaton); forced bytes.
//
// A mask is a walk of the vocabulary's token trie from the state: through a string slice where
// every slice character leads one way (a string body), else depth first through the whole trie.
// A mask is computed for the state with its counters clamped to what the longest token can tell
// apart, so a long string's positions share one mask; nearer a length bound, the tokens short
// enough not to reach it take their mask from a clamped state and only the long tokens are walked.
//
// Not locked by itself: the binding serialises calls (the GIL, or the guide's mutex where a batch
// fill runs on native threads).
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "flat_map.h"
#include "mask_cache.h"
#include "lazy.h"
#include "vocab.h"
#include "walk.h"

namespace structgen {

class DfaGuideCore {
public:
    DfaGuideCore(LazyAutomaton& automaton, std::shared_ptr<TokenIndex> index, int64_t mask_cache_bytes,
                 std::string description, std::string vocab_repr);

    LazyAutomaton& automaton() { return a_; }
    TokenIndex& index() { return *index_; }
    // the tokens allowed in state q (EOS exactly where q is final), packed; DeadEnd where a
    // non-final state allows nothing
    std::shared_ptr<const Bits> mask(int32_t q);
    // the cached mask of q, or null
    std::shared_ptr<const Bits> cached(int32_t q) const;
    // the state after token t from q, or -1 (EOS in a final state: q)
    int32_t next_state(int32_t q, int64_t t);
    // the longest byte string every accepted continuation of q starts with (cached)
    std::string forced_bytes(int32_t q);
    // every token allowed from q (EOS aside) and the state it leads to
    void walk_tokens(int32_t q, std::vector<int64_t>& ids, std::vector<int32_t>& ends);
    // the slice part of q's mask (EOS left out) where a slice applies (see slice_mask); false else
    bool slice_only(int32_t q, Bits& out) {
        a_.check(q);
        return slice_mask(q, out);
    }
    size_t num_masks() const { return masks_.size(); }
    size_t memory_bytes() const;
    size_t max_masks() const { return masks_.max_bytes() / std::max<size_t>(index_->words() * 4, 1); }

private:
    std::shared_ptr<const Bits> compute(int32_t q);
    bool slice_mask(int32_t q, Bits& out);
    int64_t successor(int32_t q, int k);
    int64_t run(int32_t q, int k, int64_t longest);
    void add_walk(const TokenTrie& trie, int32_t q, Bits& out);
    std::string dead_end(int32_t q) const;

    LazyAutomaton& a_;
    std::shared_ptr<TokenIndex> index_;
    std::string description_, vocab_repr_;
    MaskCache<Bits> masks_;
    FlatMap<int64_t> succ_, runs_;  // q << 3 | k
    std::unordered_map<int32_t, std::string> forced_;
    WalkStack stack_;
};

}  // namespace structgen
