// The tokens a trie walk reads, appended with the state each ends in. Most nodes end one token or
// none, in no order a branch predictor can learn: so each node stores its first token (or the
// next node's, or the trie's sentinel) and the state unconditionally, and the count moves the end.
// A node that ends several tokens (a vocabulary with duplicate byte strings) goes the slow way.
// Without ends (a frame's tokens, whose end states nobody reads) only the ids are written.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "trie.h"

namespace structgen {

class TokenOut {
public:
    // appends to ids and ends (kept the same length; ends null: ids only); finish() trims them
    TokenOut(std::vector<int64_t>& ids, std::vector<int32_t>* ends) : ids_(ids), ends_(ends), n_(ids.size()) { hold(); }
    TokenOut(const TokenOut&) = delete;
    TokenOut& operator=(const TokenOut&) = delete;
    ~TokenOut() { finish(); }

    // the tokens of the node at preorder position p, each ending in state s
    void add(const TokenTrie& t, int32_t p, int32_t s) {
        const TokenTrie::PreNode* pre = t.pre.data();
        const int32_t first = pre[p].tok_first, count = pre[p + 1].tok_first - first;
        if (n_ + 1 > cap_) [[unlikely]]
            grow();
        if (count <= 1) [[likely]] {
            id_at_[n_] = t.pre_tok_ids[static_cast<size_t>(first)];  // (the sentinel where first is past the last)
            if (end_at_) end_at_[n_] = s;
            n_ += static_cast<size_t>(count);
            return;
        }
        for (int32_t i = 0; i < count; ++i) {
            if (n_ + 1 > cap_) grow();
            id_at_[n_] = t.pre_tok_ids[static_cast<size_t>(first + i)];
            if (end_at_) end_at_[n_] = s;
            ++n_;
        }
    }
    size_t size() const { return n_; }
    void finish() {
        ids_.resize(n_);
        if (ends_) ends_->resize(n_);
    }

private:
    // (the buffers' addresses held here, not read through the vectors per token: the walk's other
    // loads could not be kept in registers across a store the compiler cannot tell apart from them)
    void hold() {
        cap_ = ids_.size();
        id_at_ = ids_.data();
        end_at_ = ends_ ? ends_->data() : nullptr;
    }
    void grow() {
        const size_t cap = std::max<size_t>(ids_.size() * 2, 256);  // (within a reused buffer's room: no allocation, only the new part set)
        ids_.resize(cap);
        if (ends_) ends_->resize(cap);
        hold();
    }
    std::vector<int64_t>& ids_;
    std::vector<int32_t>* ends_;
    size_t n_;
    size_t cap_ = 0;
    int64_t* id_at_ = nullptr;
    int32_t* end_at_ = nullptr;
};

}  // namespace structgen
