// The token trie walked from one automaton state (llguidance's toktrie walk): depth first with an
// explicit stack of (trie node, state) pairs, no recursion and no allocation per node; a dead byte
// prunes its whole subtree. The automaton is lazy: where the children of a node need transitions
// not built yet, the state's row is filled for their bytes (one derivative per byte class) and the
// walk goes on. (Python face: structgen/vocab/trie.py's walk_trie.)
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "lazy.h"
#include "trie.h"

namespace structgen {

// The scratch stack of a walk (kept per thread by callers that walk often).
struct WalkStack {
    std::vector<int32_t> nodes, states;
};

// Calls sink(node, state) for every trie node below the roots (none below another) whose bytes the
// automaton reads from state, in depth-first order (children by byte, the last pushed first).
// clamp (a trie of long tokens: few, deep paths): a state met at a node whose children need
// transitions not built yet is first replaced by its head clamped to the node's height (rounded up
// to a power of two), where that changes it; which tokens are read is exact.
template <class Sink>
void walk_trie(LazyAutomaton& a, const TokenTrie& t, std::span<const int32_t> roots, int32_t state, bool clamp,
               WalkStack& stack, Sink&& sink) {
    const size_t need = t.byte.size() + roots.size() + 1;
    if (stack.nodes.size() < need) {
        stack.nodes.resize(need);
        stack.states.resize(need);
    }
    int32_t* sn = stack.nodes.data();
    int32_t* ss = stack.states.data();
    const uint8_t* byte = t.byte.data();
    const int32_t* first = t.first_child.data();
    const int32_t* count = t.num_children.data();
    size_t top = 0;
    for (int32_t r : roots)
        if (count[r] > 0) sn[top] = r, ss[top] = state, ++top;
    while (top > 0) {
        const int32_t node = sn[top - 1];
        int32_t s = ss[top - 1];
        const int32_t c0 = first[node], c1 = c0 + count[node];
        const int32_t* row = a.table() + static_cast<size_t>(s) * 256;
        bool unbuilt = false;
        if (!a.is_built(s))  // (a whole row built: no child can need a transition)
            for (int32_t j = c0; j < c1; ++j)
                if (row[byte[j]] == UNBUILT) {
                    unbuilt = true;
                    break;
                }
        if (unbuilt) {
            if (clamp) {
                const int32_t cut = a.clamped_head(s, t.height[node], true);
                if (cut != s) {
                    ss[top - 1] = cut;
                    continue;
                }
            }
            ByteSet kids;
            for (int32_t j = c0; j < c1; ++j) kids.set(byte[j]);
            a.fill(s, kids);
            row = a.table() + static_cast<size_t>(s) * 256;  // (the table may have grown)
        }
        --top;
        for (int32_t j = c0; j < c1; ++j) {
            const int32_t next = row[byte[j]];
            if (next >= 0) {
                sink(j, next);
                if (count[j] > 0) sn[top] = j, ss[top] = next, ++top;
            }
        }
    }
}

}  // namespace structgen
