#include "stack_masks.h"

namespace structgen {

void StackMasks::collect(std::span<const int64_t> sids, std::span<uint32_t> words) {
    for (const int64_t sid : sids) stacks_.entry(sid);  // (all checked before anything is written)
    StackNodes seen;
    for (const int64_t sid : sids) collect_from(sid, 0, words, seen);
}

void StackMasks::collect_from(int64_t sid, int64_t node, std::span<uint32_t> words, StackNodes& seen) {
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
            const int64_t parent = e.parent;
            callers_.get(parent, f->pops, frames_.words(), [&](int64_t m, std::span<uint32_t> out, StackNodes& in) {
                collect_from(parent, m, out, in);
            }).or_into(words);
            continue;
        }
        for (const int64_t m : f->pops) todo.emplace_back(e.parent, m);
    }
}

}  // namespace structgen
