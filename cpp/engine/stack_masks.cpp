#include "stack_masks.h"

#include "errors.h"
#include "flat_map.h"
#include "token_bits.h"

namespace structgen {

namespace {
// a frame that may return at this many nodes or more has its caller's union kept whole
// (structgen.guides.frame_masks.RETURNS_FROM)
constexpr size_t RETURNS_FROM = 8;

void or_frame(const Frame& f, std::span<uint32_t> words) {
    set_token_bits(words, f.ids);
    if (f.bits) or_token_bits(words, *f.bits);
}

uint64_t returns_hash(int64_t parent, const std::vector<int64_t>& pops) {
    uint64_t h = mix64(static_cast<uint64_t>(parent) + 0x9E3779B97F4A7C15ull);
    for (const int64_t m : pops) h = mix64(h ^ static_cast<uint64_t>(m));
    return h;
}
}  // namespace

// the (stack, node) pairs collected so far in one union
class StackMasks::Seen {
public:
    // whether (sid, node) is new (it is marked seen)
    bool first(int64_t sid, int64_t node) {
        const uint64_t key = (static_cast<uint64_t>(sid) << 32) | static_cast<uint64_t>(node);
        if (seen_.contains(key)) return false;
        seen_.put(key, 1);
        return true;
    }

private:
    FlatMap<char> seen_;
};

void StackMasks::collect(std::span<const int64_t> sids, std::span<uint32_t> words) {
    for (const int64_t sid : sids) stacks_.entry(sid);  // (all checked before anything is written)
    Seen seen;
    for (const int64_t sid : sids) collect_from(sid, 0, words, seen);
}

void StackMasks::collect_from(int64_t sid, int64_t node, std::span<uint32_t> words, Seen& seen) {
    std::vector<std::pair<int64_t, int64_t>> todo{{sid, node}};
    while (!todo.empty()) {
        const auto [s, n] = todo.back();
        todo.pop_back();
        if (!seen.first(s, n)) continue;
        const StackTable::Entry e = stacks_.entry(s);
        const std::shared_ptr<const Frame> f = frames_.frame(e.a, e.q, n);
        or_frame(*f, words);
        if (e.parent < 0 || f->pops.empty()) continue;
        if (f->pops.size() >= RETURNS_FROM) {
            returns(e.parent, f->pops).tokens.or_into(words);
            continue;
        }
        for (const int64_t m : f->pops) todo.emplace_back(e.parent, m);
    }
}

const StackMasks::Returns& StackMasks::returns(int64_t parent, const std::vector<int64_t>& pops) {
    const uint64_t h = returns_hash(parent, pops);
    auto [lo, hi] = returns_.equal_range(h);
    for (auto it = lo; it != hi; ++it)
        if (it->second.parent == parent && it->second.pops == pops) return it->second;
    DepthGuard guard(depth_);  // (a caller's union may need its own caller's: as deep as the stack)
    std::vector<uint32_t> union_words(frames_.words(), 0);
    Seen seen;
    for (const int64_t m : pops) collect_from(parent, m, union_words, seen);
    Returns r{parent, pops, TokenSet::of(union_words)};
    if (returns_.size() >= max_entries_) {
        returns_.clear();
        bytes_ = 0;
    }
    bytes_ += r.tokens.memory_bytes() + r.pops.size() * 8 + 96;
    return returns_.emplace(h, std::move(r))->second;
}

}  // namespace structgen
