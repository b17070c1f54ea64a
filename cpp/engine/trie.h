// The token trie: the prefix trie of a vocabulary's token byte strings as flat breadth-first
// arrays (llguidance's toktrie, XGrammar's token table). Node 0 is the root (the empty prefix);
// the nodes of one depth are contiguous and sorted by their bytes, so a node's children are
// contiguous (first_child .. first_child + num_children) and sorted by byte, and node i > 0 is
// the i-th key of the sorted (parent << 8 | byte) keys. Built once per vocabulary; a trie cut out
// of a larger one (restrict) knows where each of its nodes came from (origin). Beside the
// breadth-first arrays, the same nodes in preorder (depth first, children by byte: llguidance's
// toktrie layout): a node's subtree is the contiguous run p .. pre[p].end - 1, so a walk scans
// memory forward and skips a dead subtree in one step (walk.h).
//
// Immutable once built: a trie is read by many threads at once. (Python: structgen/vocab/trie.py.)
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace structgen {

class TokenTrie {
public:
    // the trie of tokens[i] for the ids (each with non-empty bytes)
    static std::shared_ptr<TokenTrie> build(const std::vector<std::string>& tokens, std::span<const int64_t> ids);
    // the trie of only the tokens ids (a subset of this trie's), its nodes' origins in this one
    std::shared_ptr<TokenTrie> restrict(std::span<const int64_t> ids) const;

    int64_t num_nodes() const { return static_cast<int64_t>(byte.size()); }
    bool valid(int64_t n) const { return n >= 0 && n < num_nodes(); }
    // the child of node n by byte b (-1: none)
    int32_t child(int32_t n, int b) const;
    // the node of a prefix (-1: no token starts with it)
    int32_t node_of(std::string_view data) const;
    // the bytes from node top down to node n (top is n or above it)
    std::string bytes_between(int32_t top, int32_t n) const;
    // the tokens that end at node n
    std::span<const int64_t> tokens_at(int32_t n) const {
        return {tok_ids.data() + tok_first[n], static_cast<size_t>(tok_count[n])};
    }
    // the tokens that end at the node of preorder position p
    std::span<const int64_t> tokens_at_pre(int32_t p) const {
        return {pre_tok_ids.data() + pre[p].tok_first, static_cast<size_t>(pre[p + 1].tok_first - pre[p].tok_first)};
    }
    int32_t depth_of(int32_t n) const;
    size_t memory_bytes() const;

    // the nodes (breadth first)
    std::vector<uint8_t> byte;
    std::vector<int32_t> parent, first_child, num_children;
    // the walkable tokens: their ids (as given) and the node each ends at
    std::vector<int64_t> token_ids, token_nodes;
    // node of the larger trie (restrict); empty for a trie built from token bytes
    std::vector<int64_t> origin;
    // derived at build: per node, where its tokens start in tok_ids and how many end there
    std::vector<int64_t> tok_first, tok_count, tok_ids;
    // per node the one token ending there (-1: none); empty where some node ends several
    std::vector<int64_t> node_token;
    // where each depth's nodes begin (one more entry than depths), and per node the most bytes
    // a token below it has after the node's own
    std::vector<int64_t> depth_starts, height;
    // preorder: one record per position (a walk reads one cache line for a node, and one for a
    // subtree it skips), one more at the end whose tok_first closes the last node's tokens;
    // pre_of: the position of each node
    struct PreNode {
        int32_t end;        // one past the node's subtree
        int32_t node;       // the node (breadth-first number)
        int32_t tok_first;  // where its tokens start in pre_tok_ids (they end where the next's start)
        uint16_t depth;
        uint8_t byte;
    };
    std::vector<PreNode> pre;
    std::vector<int32_t> pre_of;
    std::vector<int64_t> pre_tok_ids;  // (one sentinel past the last: pre_tok_ids[pre[p].tok_first] is always readable)
    int32_t max_depth = 0;

private:
    static std::shared_ptr<TokenTrie> assemble(std::vector<uint8_t> byte, std::vector<int32_t> parent,
                                               std::vector<int64_t> token_ids, std::vector<int64_t> token_nodes,
                                               std::vector<int64_t> origin);
    void derive();
};

}  // namespace structgen
