#include "frame_walk.h"

#include <algorithm>

#include "errors.h"
#include "token_out.h"

namespace structgen {

void walk_frame(LazyAutomaton& a, const TokenTrie& t, std::span<const int32_t> roots, int32_t state, bool clamp,
                const TokenTrie* full, WalkStack& stack, FrameWalk& out, bool with_ends) {
    if (full && t.origin.size() != t.byte.size()) throw InvalidArgument("walk_frame: the trie is not cut out of full");
    const TokenTrie& kids = full ? *full : t;
    const int64_t num_kids = kids.num_nodes();
    TokenOut tokens(out.ids, with_ends ? &out.ends : nullptr);
    walk_trie(a, t, roots, state, clamp, stack, [&](int32_t n, int32_t s, int32_t p) {
        tokens.add(t, p, s);
        if (!a.may_branch(s)) [[likely]]
            return;
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
