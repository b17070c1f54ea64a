// The per-tokenizer data of one vocabulary (Python face: structgen/vocab/index.py's
// VocabularyIndex): the token bytes, EOS, the token trie, the string slices, the tries of long
// tokens and the per-length token masks, each built once on first use (thread-safely) and shared by
// every guide over the vocabulary.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "byteset.h"
#include "slices.h"
#include "trie.h"

namespace structgen {

// a packed token mask: bit t % 32 of word t / 32 (the layout serving engines apply to logits)
using Bits = std::vector<uint32_t>;
inline void set_bit(uint32_t* words, int64_t t) { words[t >> 5] |= 1u << (t & 31); }
inline bool has_bit(const uint32_t* words, int64_t t) { return (words[t >> 5] >> (t & 31)) & 1u; }

class TokenIndex {
public:
    // tokens[i]: the bytes of token i; walkable[i]: 0 for a token without bytes to walk (special
    // tokens, EOS: None on the Python side)
    TokenIndex(std::vector<std::string> tokens, std::vector<uint8_t> walkable, std::vector<int64_t> eos);

    size_t size() const { return tokens_.size(); }
    size_t words() const { return (tokens_.size() + 31) / 32; }
    const std::string& token(int64_t i) const { return tokens_[i]; }
    bool walkable(int64_t i) const { return walkable_[i]; }
    const std::vector<int64_t>& eos() const { return eos_; }
    bool is_eos(int64_t i) const { return i >= 0 && static_cast<size_t>(i) < is_eos_.size() && is_eos_[i]; }
    const ByteSet& single_bytes() const { return single_; }
    int64_t longest_token() const { return longest_; }
    const std::vector<int64_t>& token_lengths() const { return lengths_; }
    // the SHORT_TOKEN_CUTS below the longest token (longest first)
    const std::vector<int64_t>& short_token_cuts() const { return cuts_; }

    const TokenTrie& trie();
    std::shared_ptr<TokenTrie> trie_ptr();
    StringSlice& slice(int k);
    // the trie of the tokens of more than n bytes, cut out of trie()
    std::shared_ptr<TokenTrie> long_tokens(int64_t n);
    // the tokens of at most n bytes (tokens without bytes included) as a packed mask
    std::shared_ptr<const Bits> short_tokens(int64_t n);
    // build every part now
    void prepare();
    size_t memory_bytes();

private:
    std::vector<std::string> tokens_;
    std::vector<uint8_t> walkable_, is_eos_;
    std::vector<int64_t> eos_, lengths_, cuts_;
    ByteSet single_;
    int64_t longest_ = 0;
    std::mutex lock_;
    std::shared_ptr<TokenTrie> trie_;
    std::array<std::unique_ptr<StringSlice>, NUM_SLICES> slices_;
    std::map<int64_t, std::shared_ptr<TokenTrie>> long_;
    std::map<int64_t, std::shared_ptr<const Bits>> short_;
};

}  // namespace structgen
