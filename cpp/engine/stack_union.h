// What a state's mask from its stacks is made with, shared by StackMasks (networks without frame
// data) and DataMasks (stacks that carry unique items' data): a frame OR-ed into words, the
// (stack, node) pairs one union has collected, the callers' unions from many return nodes kept per
// (caller, nodes), and a frame marked as under computation for the length of a scope.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

#include "errors.h"
#include "flat_map.h"
#include "frames.h"
#include "token_bits.h"
#include "token_set.h"

namespace structgen {

// a frame that may return at this many nodes or more has its caller's union kept whole
// (structgen.guides.frame_masks.RETURNS_FROM)
constexpr size_t RETURNS_FROM = 8;

inline void or_frame(const Frame& f, std::span<uint32_t> words) {
    set_token_bits(words, f.ids);
    if (f.bits) or_token_bits(words, *f.bits);
}

// the (stack, node) pairs collected so far in one union
class StackNodes {
public:
    // whether (sid, node) is new (it is marked seen)
    bool first(int64_t sid, int64_t node) {
        const uint64_t key = (static_cast<uint64_t>(sid) << 32) | static_cast<uint32_t>(node);
        if (seen_.contains(key)) return false;
        seen_.put(key, 1);
        return true;
    }

private:
    FlatMap<char> seen_;
};

// The caller's union from a frame's return nodes: its tokens as ids, or packed where many; kept
// per (caller, nodes), cleared whole past max_entries.
class CallerUnions {
public:
    explicit CallerUnions(size_t max_entries) : max_entries_(max_entries < 1 ? 1 : max_entries) {}

    // the union of stack parent's masks from each of pops, made by collect(node, words) where new
    const TokenSet& get(int64_t parent, const std::vector<int64_t>& pops, size_t words,
                        const std::function<void(int64_t, std::span<uint32_t>, StackNodes&)>& collect) {
        uint64_t h = mix64(static_cast<uint64_t>(parent) + 0x9E3779B97F4A7C15ull);
        for (const int64_t m : pops) h = mix64(h ^ static_cast<uint64_t>(m));
        auto [lo, hi] = unions_.equal_range(h);
        for (auto it = lo; it != hi; ++it)
            if (it->second.parent == parent && it->second.pops == pops) return it->second.tokens;
        DepthGuard guard(depth_);  // (a caller's union may need its own caller's: as deep as the stack)
        std::vector<uint32_t> union_words(words, 0);
        StackNodes seen;
        for (const int64_t m : pops) collect(m, union_words, seen);
        Union u{parent, pops, TokenSet::of(union_words)};
        if (unions_.size() >= max_entries_) {
            unions_.clear();
            bytes_ = 0;
        }
        bytes_ += u.tokens.memory_bytes() + u.pops.size() * 8 + 96;
        return unions_.emplace(h, std::move(u))->second.tokens;
    }
    size_t bytes() const { return bytes_; }

private:
    struct Union {
        int64_t parent;
        std::vector<int64_t> pops;
        TokenSet tokens;
    };
    std::unordered_multimap<uint64_t, Union> unions_;  // by a hash of (caller, nodes)
    size_t max_entries_;
    size_t bytes_ = 0;
    int depth_ = 0;
};

// key marked in set (frames under computation) until the scope ends
template <class Set>
class Computing {
public:
    Computing(Set& set, typename Set::key_type key) : set_(set), key_(std::move(key)) { set_.insert(key_); }
    ~Computing() { set_.erase(key_); }
    Computing(const Computing&) = delete;
    Computing& operator=(const Computing&) = delete;

private:
    Set& set_;
    typename Set::key_type key_;
};

}  // namespace structgen
