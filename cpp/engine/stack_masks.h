// A pushdown state's mask from its stacks, natively, where the network needs no frame data (the
// FrameSolver's networks): the mask of a stack read from trie node n is its top frame's tokens
// from n, and its caller's mask from every node where the top frame may return (a token that ends
// the frame's text and goes on in the caller's). A state's mask is the union over its stacks.
// (Python face: structgen/guides/frame_masks.py's FrameMasks.collect and returns, which this
// replaces for those networks; the stacks are the guide's native StackTable's.)
//
// A frame that may return at many nodes (a string's closing quote inside hundreds of tokens)
// returns at the same nodes from every position of the string: the caller's union from those
// nodes is made once, kept per (caller, nodes) as a token set, and OR-ed in whole.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "frames.h"
#include "stack_table.h"
#include "stack_union.h"

namespace structgen {

class StackMasks {
public:
    // frames: the solver whose frames make up the masks; stacks: the guide's stacks (both outlive this)
    StackMasks(FrameSolver& frames, const StackTable& stacks, size_t max_entries)
        : frames_(frames), stacks_(stacks), callers_(max_entries) {}

    // OR the masks of stacks sids (from the root) into words.
    void collect(std::span<const int64_t> sids, std::span<uint32_t> words);

    size_t memory_bytes() const { return callers_.bytes(); }

private:
    void collect_from(int64_t sid, int64_t node, std::span<uint32_t> words, StackNodes& seen);

    FrameSolver& frames_;
    const StackTable& stacks_;
    CallerUnions callers_;
};

}  // namespace structgen
