// A pushdown state's mask from its stacks, natively, where the stacks carry frame data
// (StackTable::share_data: objects in any key order, unique arrays over items that call nothing): the
// frames FrameSolver refuses (NeedsFrameData), made here with their data. (Python face:
// structgen/guides/frame_masks.py's FrameMasks.frame and collect with frame data, and
// structgen/guides/item_frames.py, the same algorithm step for step; the differential tests compare
// them.)
//
// * An item's frame: its plain frame (FrameSolver's: an item that calls nothing needs no data for
//   it) where its text can no longer spell a written value; else the plain frame less the tokens
//   after which only written values could finish it (UniqueData::dead_tokens).
// * A unique array's frame with set w: its walk's tokens, less those that end where another item is
//   needed and every item that may come next can spell only values of w; each item it enters
//   starts as a new item of w, and where the item returns inside the token, the array goes on with
//   the item's value added to w (or not at all, where the value is in w).
// * An object's frame with keys w written: its walk's tokens, less those that end where the object
//   can no longer finish (a key half spelled that only written keys complete: KeyGuards::is_dead);
//   where a guard passes inside a token, the frame goes on from there with its new keys. The walk
//   is FrameSolver's (a string's slice included), walked once with each token's end state; the
//   tokens whose end state may die are kept by the key guards that state meets first (EndGroups),
//   so the frame of each new w is the walk less the groups whose guards are all written. At a root
//   whose walk the solver cuts for the positions of its head (a string under a length bound, a
//   counted repetition: LazyAutomaton::head_cut), the groups of the tokens of at most n bytes are
//   the clamped state's, shared (their end states meet the guards q's would), and the longer
//   tokens are walked from q; where the solver does not cut it (a string near its length bound),
//   its end states are walked again.
// * A frame of another automaton that enters one of those: its walk, its callees with their data.
// * A stack's mask: its top frame's from the root, and its caller's from each node where the top
//   may return (for an item, the array with the item's value added). Where a string item out of
//   danger returns at many nodes, its value at each is new: the array's tokens from the nodes
//   where its walk enters no item are one frame of no item written, shared, where every item the
//   array may need next has infinitely many values (a string automaton with an unbounded loop);
//   elsewhere each node's caller is collected on its own.
//
// Where the native answer would need what only the guide knows (a liveness search past its limit),
// collect throws NeedsFrameData and the guide makes the whole mask.
//
// Where unique arrays nest in items, the guide keeps the stacks (an item's text is every byte the
// frames above it read) and makes the frames of those items and their arrays (HELD); it asks here
// for every other frame with its data (frame_of): an object's in any key order, a unique array's
// over items that call nothing (the nested ones), an item's, and those that enter them.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "frame_walk.h"
#include "frames.h"
#include "stack_table.h"
#include "stack_union.h"
#include "unique_data.h"

namespace structgen {

class DataMasks {
public:
    // frames: the solver of the guide's plain frames; stacks: the guide's stacks, which carry the
    // frame data (both outlive this)
    DataMasks(FrameSolver& frames, StackTable& stacks, size_t max_entries)
        : frames_(frames), stacks_(stacks), max_entries_(max_entries < 1 ? 1 : max_entries), callers_(max_entries) {}

    // OR the masks of stacks sids (from the root) into words (NeedsFrameData: the guide makes it;
    // words may hold part of the mask then)
    void collect(std::span<const int64_t> sids, std::span<uint32_t> words);
    // The frame of automaton a in state q from trie node node with frame data data (as a stack
    // carries it), for a guide that keeps the stacks itself (StackTable::frames_only: unique arrays
    // nested in items). NeedsFrameData where the frame is HELD's or enters one, or needs what only
    // the guide knows; OutOfRange for an automaton, state, node or data that does not exist.
    std::shared_ptr<const Frame> frame_of(int64_t a, int64_t q, int64_t node, int64_t data);

    size_t memory_bytes() const { return bytes_ + callers_.bytes(); }
    size_t num_frames() const { return frames_made_.size(); }
    // how many times a string item's returns were shared as the array's frames of no item written
    size_t shared_returns() const { return shared_returns_; }

private:
    struct Key {
        int64_t a, q, node, data;
        bool operator==(const Key&) const = default;
    };
    struct KeyHash {
        size_t operator()(const Key& k) const noexcept;
    };

    // the frame (a, q, data) from node: FrameSolver's where it needs no data
    std::shared_ptr<const Frame> frame(int64_t a, int32_t q, int32_t node, int64_t data);
    std::shared_ptr<const Frame> make(int64_t a, int32_t q, int32_t node, int64_t data);
    std::shared_ptr<const Frame> item_in_danger(int64_t a, int32_t q, int32_t node, int64_t key);
    void array_frame(int64_t a, int32_t q, int32_t node, int64_t written, Frame& out);
    void guarded_frame(int64_t a, int32_t q, int32_t node, int64_t written, Frame& out);
    // A frame's own walk (the solver's) and its tokens that may end dead with some keys written, by
    // the guards their end state meets first (KeyGuards::blocking_guards): the frame with keys w is
    // the own walk less the groups whose guards are all in w. Made once per (a, q, node), for every w.
    struct EndGroups {
        struct Group {
            uint64_t guards = 0;
            std::vector<int64_t> ids;
        };
        std::shared_ptr<const FrameSolver::Walk> own;
        std::vector<Group> groups;
    };
    std::shared_ptr<const EndGroups> end_groups(int64_t a, int32_t q, int32_t node);
    // the groups of raw()'s tokens by their end states (raw().ends), those that may end dead other than
    // with q (an end state that meets q's blocking guards is dead exactly where q is, and a dead q's
    // frame is empty: guarded_frame)
    void group_ends(int64_t a, int32_t q, EndGroups& out);
    // at the root q of a string under a length bound (body · tail), whether every token of slice 0
    // read from q ends inside the body, where the object cannot be dead: the body calls nothing, the
    // tail reads none of slice 0's bytes first, and the tail has a way out (no blocking guards);
    // then only the rest of slice 0's trie is walked for the end states of the tokens that may die
    bool body_tokens_safe(int64_t a, int32_t q);
    // the pops and calls at the branch points of raw() (and at node, in state s, where it branches)
    void branch_points(LazyAutomaton& au, int32_t node, int32_t s, std::vector<int64_t>& pops, std::vector<FrameSolver::Call>& calls);
    // the callees' frames at their nodes and a's frames after their returns, united with own
    void gather(int64_t a, int64_t data, std::span<const int64_t> own, const std::shared_ptr<const std::vector<uint32_t>>& own_bits,
                std::vector<int64_t> pops, std::span<const FrameSolver::Call> calls, Frame& out);
    // the raw walk of a from (q, node) (q clamped to the node's height) into raw(): its own tokens
    // with the state each ends in, its pops and calls (guards as calls of GUARD_FIRST + g); at the
    // root of a string body (a slice's walk) NeedsFrameData
    void raw_walk(int64_t a, int32_t q, int32_t node, std::vector<int64_t>& pops, std::vector<FrameSolver::Call>& calls);

    // state q of unique array a needs another item, and every item automaton it may call can spell
    // only values of set written
    bool no_item_left(int64_t a, int32_t q, int64_t written);
    // the item automata state q of unique array a may call next where it cannot close without one
    const std::vector<int64_t>& items_needed(int64_t a, int32_t q);
    // whether item automaton k can spell no value outside set written
    bool exhausted(int64_t k, int64_t written);
    // whether automaton k spells only JSON strings (it calls nothing and starts with a quote)
    bool spells_strings(int64_t k);
    // whether item automaton k is a string automaton with infinitely many values (then one more
    // value written leaves values outside any set)
    bool endless_strings(int64_t k);
    // whether the walk of array a from (q, m) enters no item (then the items it may need next are added to needed)
    bool enters_no_item(int64_t a, int32_t q, int64_t m, std::vector<int64_t>& needed);

    void collect_from(int64_t sid, int64_t node, std::span<uint32_t> words, StackNodes& seen);
    // the union of stack parent's masks from each of pops (kept)
    const TokenSet& returns(int64_t parent, const std::vector<int64_t>& pops);
    // the stack's item (out of danger, a string) returns at pops with a new value at each: the
    // caller's frames from the pops where the array enters no item, as one (shared), and the other
    // pops in rest; false where that does not hold
    bool new_values_return(int64_t sid, const std::vector<int64_t>& pops, std::span<uint32_t> words, std::vector<int64_t>& rest);
    void keep(size_t bytes);

    FrameSolver& frames_;
    StackTable& stacks_;
    size_t max_entries_;
    std::unordered_map<Key, std::shared_ptr<const Frame>, KeyHash> frames_made_;
    std::unordered_map<Key, std::shared_ptr<const EndGroups>, KeyHash> end_groups_;  // (data 0)
    std::unordered_set<Key, KeyHash> active_;
    std::unordered_map<uint64_t, std::vector<int64_t>> needed_;   // a << 32 | q -> items needed
    std::unordered_map<uint64_t, bool> exhausted_;                 // k << 32 | set
    std::unordered_map<int64_t, bool> endless_;                    // item automaton -> endless_strings
    std::unordered_map<uint64_t, std::vector<int64_t>> free_of_items_;  // (a, q, m) hash -> needed, or {-1}: enters an item
    CallerUnions callers_;
    // the walk buffers (per thread: a DataMasks walk never runs inside another)
    static FrameWalk& raw();
    WalkStack stack_;
    size_t bytes_ = 0;
    size_t shared_returns_ = 0;
    int depth_ = 0;
};

}  // namespace structgen
