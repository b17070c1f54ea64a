// The token trie walked from one automaton state (llguidance's toktrie walk): a forward scan of the
// trie's preorder (trie.h), the state and node of each depth on a small stack; a dead byte skips
// its whole subtree in one step, and no node is pushed or popped. The automaton is lazy: where a
// byte's transition is not built yet, the state's row is filled for the bytes of all the node's
// children at once (one derivative per byte class). (Python face: structgen/vocab/trie.py's
// walk_trie.)
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "lazy.h"
#include "trie.h"

namespace structgen {

// The scratch stack of a walk (kept per thread by callers that walk often).
struct WalkStack {
    std::vector<int32_t> states, nodes;  // per depth below the root walked
};

// Calls sink(node, state, pre) for every trie node below the roots (none below another) whose
// bytes the automaton reads from state, in preorder (pre: the node's preorder position, for
// TokenTrie::tokens_at_pre). clamp (a trie of long tokens: few, deep paths): a state met at a node
// whose children need transitions not built yet is first replaced by its head clamped to the node's
// height (rounded up to a power of two), where that changes it; which tokens are read is exact.
template <class Sink>
void walk_trie(LazyAutomaton& a, const TokenTrie& t, std::span<const int32_t> roots, int32_t state, bool clamp,
               WalkStack& stack, Sink&& sink) {
    const size_t need = static_cast<size_t>(t.max_depth) + 2;
    if (stack.states.size() < need) stack.states.resize(need), stack.nodes.resize(need);
    int32_t* st = stack.states.data();
    int32_t* nd = stack.nodes.data();
    const uint8_t* byte = t.byte.data();
    const int32_t* first = t.first_child.data();
    const int32_t* count = t.num_children.data();
    // the state to walk node's children from: s, its row filled for their bytes (or clamped first)
    auto ready = [&](int32_t node, int32_t s) {
        if (a.is_built(s)) return s;  // (a whole row built: no child can need a transition)
        const int32_t c0 = first[node], c1 = c0 + count[node];
        for (;;) {
            const int32_t* row = a.table() + static_cast<size_t>(s) * 256;
            int32_t j = c0;
            while (j < c1 && row[byte[j]] != UNBUILT) ++j;
            if (j == c1) return s;
            if (clamp) {
                const int32_t cut = a.clamped_head(s, t.height[node], true);
                if (cut != s) {
                    s = cut;
                    if (a.is_built(s)) return s;
                    continue;
                }
            }
            ByteSet kids;
            for (j = c0; j < c1; ++j) kids.set(byte[j]);
            a.fill(s, kids);
            return s;
        }
    };
    const TokenTrie::PreNode* pre = t.pre.data();
    for (int32_t r : roots) {
        if (count[r] == 0) continue;
        const int32_t p0 = t.pre_of[r], end = pre[p0].end, base = pre[p0].depth;
        st[0] = ready(r, state);
        nd[0] = r;
        int32_t p = p0 + 1;
        while (p < end) {
            const TokenTrie::PreNode& x = pre[p];
            const int32_t d = x.depth - base;
            const int32_t next = a.table()[static_cast<size_t>(st[d - 1]) * 256 + x.byte];
            if (next < 0) {
                if (next == UNBUILT) {  // (only without a clamp: with one, ready() ran on the way down)
                    st[d - 1] = ready(nd[d - 1], st[d - 1]);
                    continue;
                }
                p = x.end;  // dead: the whole subtree
                continue;
            }
            sink(x.node, next, p);
            if (x.end > p + 1) {  // (children: the state and node they are read from)
                st[d] = clamp ? ready(x.node, next) : next;
                nd[d] = x.node;
            }
            ++p;
        }
    }
}

}  // namespace structgen
