// String slices: the free-text tokens of a vocabulary, sorted out once instead of walked per state
// (XGrammar's context-independent tokens, llguidance's slicer; Python face: structgen/vocab/slices.py).
//
// A slice k is a class of characters (slice_tables.h: any character of a JSON string but ", \ and
// C0 controls; then identifier classes). Per vocabulary (StringSlice): the slice tokens (whole UTF-8
// characters of the class), their lengths in characters, and the trie of the rest. Per term
// (uniform_successor, memoised in the pool's SliceMemo): where every character of the slice leads
// (one term), NOTHING if every one dies, or MIXED if they disagree. Per state of a lazy automaton:
// the chain of states along slice characters, read off a string body's counters where it is one.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "flat_map.h"
#include "lazy.h"
#include "pool.h"
#include "slice_tables.h"
#include "trie.h"

namespace structgen {

constexpr int64_t MIXED = -2;
constexpr int NUM_SLICES = slice_tables::NUM_SLICES;

// the per-pool memo of uniform_successor
class SliceMemo {
public:
    explicit SliceMemo(Pool& pool) : pool_(pool) {}
    // the term every character of slice k leads to from e, NOTHING if every one dies, or MIXED
    int64_t uniform_successor(Id e, int k);
    struct Counted {
        Id x;
        int64_t lo, hi;  // hi -1: unbounded
        Id rest;
    };
    // e as x{lo,hi}·rest, x reading every character of slice k whole, rest none of them
    std::optional<Counted> counted_body(Id e, int k);
    size_t entries() const { return memo_.size(); }

private:
    Pool& pool_;
    FlatMap<int64_t> memo_;  // e << 3 | k
};

// per state q of an automaton: where every character of slice k leads (a state), -1 if every one
// dies, or MIXED
int64_t char_successor(LazyAutomaton& a, int32_t q, int k);
// a string body's run without its states: (m, branches) or none where q is not a counted body
std::optional<std::pair<int64_t, bool>> counted_run(LazyAutomaton& a, int32_t q, int k, int64_t longest);
// the states after 0, 1, ... longest characters of slice k from q, read off the counters of a
// counted body (the last state twice when every further length leads there); none otherwise
std::optional<std::vector<int32_t>> slice_chain(LazyAutomaton& a, int32_t q, int k, int64_t longest);
// the states after 0, 1, ... characters of slice k from q, where every slice character leads one
// way for m characters (a root walk's slice run: FrameSolver::root_slice): the state after j
// characters is out[min(j, out.size() - 1)]
std::vector<int32_t> slice_states(LazyAutomaton& a, int32_t q, int k, int64_t m);

// the states up to longest slice-k characters lead to from q (q itself where they lead back), where
// every character from each of them (but those longest characters away) leads to a live one and
// none may branch: every slice token of at most longest characters is then read from q whole, passes
// no branch point and ends in one of them (a string body whose characters lead different ways: a
// key's first characters in an object with other keys allowed); none where that does not hold, past
// max_states, or past max_derives derivatives taken (a term's byte classes each derived once per term)
std::optional<std::vector<int32_t>> slice_closure(LazyAutomaton& a, int32_t q, int k, int64_t longest, size_t max_states,
                                                  size_t max_derives);

// every byte a character of slice k may hold
ByteSet slice_bytes(int k);

// whether token bytes are whole characters of slice k, and how many
std::optional<int64_t> slice_characters(int k, std::string_view token);

// the slice tokens of one vocabulary
class StringSlice {
public:
    StringSlice(int k, const std::vector<std::string>& tokens, const std::vector<uint8_t>& walkable,
                const TokenTrie& trie);
    int k;
    std::vector<uint8_t> is_slice;     // per token
    std::vector<int64_t> by_length;    // slice token ids, sorted by their length in characters (stably)
    std::vector<int64_t> lengths;      // the sorted lengths
    std::vector<int64_t> length_starts;  // [L]: how many slice tokens have fewer than L characters
    std::shared_ptr<TokenTrie> rest;   // the walkable tokens that are not slice tokens (origin: the vocabulary's trie)
    int64_t longest() const { return lengths.empty() ? 0 : lengths.back(); }
    // how many slice tokens have at most m characters
    int64_t count_up_to(int64_t m) const;
    // the rest trie's tokens of at most n bytes, and of more (origins: the vocabulary's trie), cached
    std::pair<std::shared_ptr<TokenTrie>, std::shared_ptr<TokenTrie>> rest_cut(int64_t n);
    // the slice tokens of at most m characters as a packed mask of `words` words (cached)
    std::shared_ptr<const std::vector<uint32_t>> up_to_bits(int64_t m, size_t words);
    size_t memory_bytes() const;

private:
    mutable std::mutex lock_;
    std::map<int64_t, std::pair<std::shared_ptr<TokenTrie>, std::shared_ptr<TokenTrie>>> cuts_;
    std::map<int64_t, std::shared_ptr<const std::vector<uint32_t>>> bits_;
    size_t bits_bytes_ = 0;
};

}  // namespace structgen
