// Tokens that surely finish an output from a state, along one shortest byte path (Python face:
// structgen/guides/distances.py's SpelledDistances): when every byte the automaton reads is a
// single-byte token, D(q) is the fewest tokens that spell a prefix of the shortest path from q
// followed by D of where the prefix ends (consistent: the path's first token is the witness). A
// call k (a symbol below guard_first, where calls are followed) weighs byte_weights[k] bytes and
// token_weights[k] tokens. Memoised per state.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

#include "flat_map.h"
#include "lazy.h"
#include "min_length.h"
#include "trie.h"

namespace structgen {

constexpr int64_t DIST_INF = int64_t(1) << 40;  // "cannot finish" (small enough to add)

class SpelledDistances {
public:
    SpelledDistances(LazyAutomaton& a, std::shared_ptr<const TokenTrie> trie, bool calls,
                     std::map<int64_t, int64_t> byte_weights, std::map<int64_t, int64_t> token_weights,
                     int64_t guard_first);
    int64_t bytes_to_end(int32_t q);
    int64_t tokens_to_end(int32_t q);
    size_t memory_bytes() const { return tokens_.bytes() + steps_.size() * 32; }

private:
    struct Step {
        int byte;  // -1: a call
        int32_t next;
        int64_t callee;
    };
    Step step(int32_t q);
    int64_t weight(const std::map<int64_t, int64_t>& w, int64_t k) const {
        auto it = w.find(k);
        return it == w.end() ? DIST_INF : it->second;
    }
    LazyAutomaton& a_;
    std::shared_ptr<const TokenTrie> trie_;
    bool calls_;
    std::map<int64_t, int64_t> byte_weights_, token_weights_;
    int64_t guard_first_;
    MinLength minlen_;
    FlatMap<int64_t> tokens_;
    std::unordered_map<int32_t, Step> steps_;
};

}  // namespace structgen
