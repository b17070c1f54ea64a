#include "frame_walk.h"

#include <algorithm>

#include "errors.h"
#include "token_out.h"

namespace structgen {

void walk_frame(LazyAutomaton& a, const TokenTrie& t, std::span<const int32_t> roots, int32_t state, bool clamp,
                const TokenTrie* full, WalkStack& stack, FrameWalk& out) {
    if (full && t.origin.size() != t.byte.size()) throw InvalidArgument("walk_frame: the trie is not cut out of full");
    const TokenTrie& kids = full ? *full : t;
    const int64_t num_kids = kids.num_nodes();
    std::vector<int8_t> branching;  // per state: -1 not read yet, 0, 1 (states may be made during the walk)
    int32_t last = -1;  // (the last state asked and its answer: a string's nodes mostly share one)
    bool last_branches = false;
    auto branches = [&](int32_t s) {
        if (s == last) return last_branches;
        last = s;
        const size_t i = static_cast<size_t>(s);
        if (i >= branching.size()) branching.resize(std::max(i + 1, branching.size() * 2), int8_t(-1));
        if (branching[i] < 0) branching[i] = may_branch(a, s) ? 1 : 0;
        return last_branches = branching[i] == 1;
    };
    TokenOut tokens(out.ids, out.ends);
    walk_trie(a, t, roots, state, clamp, stack, [&](int32_t n, int32_t s, int32_t p) {
        tokens.add(t, p, s);
        if (!branches(s)) return;
        if (!full) {  // (the node's children: its subtree in preorder)
            if (t.pre[p].end > p + 1) out.branch_nodes.push_back(n), out.branch_states.push_back(s);
            return;
        }
        const int64_t real = t.origin[n];
        if (real < 0 || real >= num_kids) throw InvalidArgument("walk_frame: the trie is not cut out of full");
        if (kids.num_children[real] > 0) {
            out.branch_nodes.push_back(real);
            out.branch_states.push_back(s);
        }
    });
}

}  // namespace structgen
