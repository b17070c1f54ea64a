// A walk of the token trie inside one automaton, as a pushdown guide's frame reads it (Python face:
// structgen/vocab/trie.py's walk_frame, read by structgen/guides/frame_masks.py): one pass of the
// trie walk (walk.h) keeping only what a frame needs, the tokens read with the state each ends in,
// and the branch points, the nodes reached that have children and whose state may branch off (a
// return from a final state, a call, a key guard), where the frame goes on in other frames. The
// nodes and states of every step are never gathered (a string's walk reaches 200,000 nodes in a
// handful of states); whether a state may branch is read off the automaton (LazyAutomaton::may_branch).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "lazy.h"
#include "trie.h"
#include "walk.h"

namespace structgen {

struct FrameWalk {
    std::vector<int64_t> ids;            // the tokens read, in walk order (a node's tokens as the trie keeps them)
    std::vector<int32_t> ends;           // the state each of ids ends in
    std::vector<int64_t> branch_nodes;   // the branch points, in walk order
    std::vector<int32_t> branch_states;  // the state at each branch point
};

// The frame walk of trie t from roots (none below another) in state (clamp: see walk_trie). full:
// where t was cut out of full (t's origin), the branch points are full's nodes with their children
// counted in full; null: t's own nodes. Throws InvalidArgument where t has no origin in full.
// with_ends false: out.ends is left as it is (the caller reads only the tokens and branch points).
void walk_frame(LazyAutomaton& a, const TokenTrie& t, std::span<const int32_t> roots, int32_t state, bool clamp,
                const TokenTrie* full, WalkStack& stack, FrameWalk& out, bool with_ends = true);

}  // namespace structgen
