// A pushdown guide's frames, natively, where they need no frame data: the tokens a frame (a, q)
// accepts from trie node n without leaving automaton a (read by a's own byte edges, or entering
// callees and returning on the way), and the trie nodes where a may return to its caller with
// bytes of the token still unread. (Python face: structgen/guides/frame_masks.py's
// FrameMasks.frame, which hands this solver the frames that need no frame data.)
//
// In a network with frame data (unique items, key guards), the automata that carry it are marked
// (mark_frame_data): a frame that is one of theirs, enters one of them or passes a guard is
// refused with NeedsFrameData (and the refusal kept), and the caller makes that frame itself. An
// automaton marked with its own frames plain (a unique array's item that calls nothing: its data,
// its text so far, only narrows its frames, which the caller does) has its frames made here, and
// only the frames that enter it are refused.
//
// The same algorithm as the Python frames it replaces, step for step (the differential tests
// compare them): a frame's state is first clamped to what the longest token can tell apart; its
// walk starts from the state clamped to the node's height; a callee is entered at its start state
// at the node of the call; a call cycle that reads no byte adds nothing (the frame under
// computation answers empty); frames and walks are cached, and the caches are cleared whole when
// they pass max_entries.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "frame_walk.h"
#include "lazy.h"
#include "trie.h"
#include "vocab.h"
#include "walk.h"

namespace structgen {

// The first symbol of a guard (structgen.automata.markers.GUARD_FIRST): symbols below it are calls.
constexpr int64_t GUARD_FIRST = 0x3C0;

// An automaton the network reaches that the solver was not given yet (its caller makes it, hands
// it over with set_automaton, and asks again: automata are made as frames reach them).
struct MissingAutomaton : std::runtime_error {
    int64_t automaton;
    explicit MissingAutomaton(int64_t k) : std::runtime_error("FrameSolver: automaton not given yet"), automaton(k) {}
};

// A frame that needs frame data: of an automaton marked as carrying it, entering one, or passing a
// guard (the caller makes it; the binding raises structgen._engine.NeedsFrameData).
struct NeedsFrameData : std::runtime_error {
    int64_t automaton;
    explicit NeedsFrameData(int64_t a) : std::runtime_error("FrameSolver: the frame needs frame data"), automaton(a) {}
};

struct Frame {
    std::vector<int64_t> ids;   // the tokens (sorted where made of several parts; a walk's order where of one)
    std::vector<int64_t> pops;  // the trie nodes where the frame may return (first seen first)
    // (or null) the tokens as a packed mask instead, where they are many: a frame at the root that
    // reads a string slice (its hundred thousand slice tokens are never listed), or whose walk reads
    // more tokens than half the mask's words (a list would take more room); ids is then empty
    std::shared_ptr<const std::vector<uint32_t>> bits;
    int64_t size() const;  // the number of tokens
};

class FrameSolver {
public:
    struct Call {
        int64_t node, callee;
        int32_t ret;
    };

    // autos[k]: automaton k of the network (null: not made yet, MissingAutomaton where a frame needs
    // it); index: the vocabulary's tokens, trie and string slices.
    FrameSolver(std::vector<LazyAutomaton*> autos, std::shared_ptr<TokenIndex> index, size_t max_entries);
    // Hand automaton k over (k must be one of the network's; an automaton given stays).
    void set_automaton(int64_t k, LazyAutomaton* a);
    // Mark automaton k as carrying frame data: the frames that enter it are refused, and its own
    // frames too unless own_plain (they need no data: see above).
    void mark_frame_data(int64_t k, bool own_plain = false);
    bool any_frame_data() const { return any_data_; }
    // whether a frame that enters automaton k is refused
    bool has_frame_data(int64_t k) const { return k >= 0 && k < static_cast<int64_t>(data_.size()) && data_[static_cast<size_t>(k)]; }
    // whether automaton k's own frames are refused
    bool refuses_own(int64_t k) const { return has_frame_data(k) && data_[static_cast<size_t>(k)] != OWN_PLAIN; }
    int64_t num_automata() const { return static_cast<int64_t>(autos_.size()); }
    bool has_automaton(int64_t k) const { return k >= 0 && k < static_cast<int64_t>(autos_.size()) && autos_[static_cast<size_t>(k)]; }

    // The frame of automaton a in state q from trie node node (0: the root, where a string body's
    // walk takes the slice tokens from the vocabulary's slice and walks only the rest).
    // Throws OutOfRange for an automaton, state or node that does not exist, NeedsFrameData where
    // the frame needs frame data (see mark_frame_data) or passes a guard.
    std::shared_ptr<const Frame> frame(int64_t a, int64_t q, int64_t node);

    // The part of a frame of automaton a whose own walk was made elsewhere (a frame at the root, whose
    // walk reads string slices: Python): for each call (node > 0, callee, return state), the callee's
    // frame at the node and a's frame after each of the callee's returns. ids: their union (the own
    // walk's tokens not included); pops: the own pops, then theirs, each once, first seen first.
    // NeedsFrameData where one of those frames needs frame data.
    Frame expand(int64_t a, std::span<const int64_t> pops, std::span<const Call> calls);

    size_t memory_bytes() const { return bytes_; }
    size_t num_frames() const { return frames_.size(); }
    // the walks cached: plain ones (from a node, or the root's), cut ones (the roots of a string's
    // positions near its length bound) and short ones (their short tokens, shared by the positions)
    struct WalkCounts {
        size_t plain = 0, cut = 0, short_ = 0;
    };
    WalkCounts walk_counts() const;
    // how many root walks took a slice's tokens where its characters lead different ways (root_slice's ends)
    size_t closure_slices() const { return closure_slices_; }
    // automaton a (OutOfRange where the network has none; MissingAutomaton where not given yet)
    LazyAutomaton& automaton(int64_t a) const;
    // the words of a packed mask over the vocabulary
    size_t words() const { return index_->words(); }

    // A frame's own walk: its tokens, the nodes where it may return, its calls.
    struct Walk {
        std::vector<int64_t> ids, pops;
        std::vector<Call> calls;
        std::shared_ptr<const std::vector<uint32_t>> bits;  // (a root walk through a slice: its slice tokens; else the ids packed, where many)
        bool needs_data = false;  // (it passes a guard or enters an automaton with frame data)
    };
    // the own walk of frame (a, q) from node, q as given (a frame's is clamped first: clamped(q,
    // longest())), cached; for the frames with data that the solver refuses (data_masks.h)
    std::shared_ptr<const Walk> own_walk(int64_t a, int32_t q, int32_t node) { return walk(a, q, node); }
    // the same, and its tokens with the state each ends in into ends (ids, ends: walked once where
    // the walk is new; the walk's buffers, so its branch points are overwritten too); not at a root
    // whose walk is cut (head_cut: a string under a length bound whose head no cut changes, near
    // its bound, is walked whole)
    std::shared_ptr<const Walk> own_walk(int64_t a, int32_t q, int32_t node, FrameWalk& ends);
    // the union of parts and own tokens (own_bits: packed) into out (its tokens; out.pops untouched)
    void unite(std::span<const std::shared_ptr<const Frame>> parts, std::span<const int64_t> own,
               const std::shared_ptr<const std::vector<uint32_t>>& own_bits, Frame& out);
    const TokenTrie& trie() const { return *trie_; }
    int64_t longest() const { return longest_; }
    // the vocabulary's tokens of at most n bytes (a bit each), its cuts for short tokens (longest
    // first) and the trie of its tokens of more than n bytes
    std::shared_ptr<const Bits> short_tokens(int64_t n) const { return index_->short_tokens(n); }
    const std::vector<int64_t>& short_token_cuts() const { return index_->short_token_cuts(); }
    std::shared_ptr<TokenTrie> long_tokens(int64_t n) const { return index_->long_tokens(n); }
    // The string slice a walk of q from the root reads (at a string body's root, plain_walk takes
    // the slice's tokens of at most m characters and walks only the rest of the trie): slice k and m,
    // where every slice character leads one way (slice_run), or else the states its tokens may end
    // in (slice_closure); none where it reads none
    struct RootSlice {
        int k;
        int64_t m;
        std::vector<int32_t> ends;  // (where the slice's characters lead different ways) the states its tokens may end in
    };
    // (kept per state: a root's walk and its end groups both ask, and a closure derives every key prefix)
    std::optional<RootSlice> root_slice(int64_t a, int32_t q);
    StringSlice& slice(int k) const { return index_->slice(k); }

private:
    // the cache keys of walks: node >= 0 a plain walk's, CUT_WALK a cut walk's, -2 - n a short walk's
    static constexpr int64_t CUT_WALK = -1;
    struct Key {
        int64_t a, q, node;
        bool operator==(const Key&) const = default;
    };
    struct KeyHash {
        size_t operator()(const Key& k) const noexcept;
    };

    // the own walk of frame (a, q) from node: at a root whose head (a string under a length bound,
    // a counted repetition) a token of n bytes cannot tell from the next positions' but a longer one
    // can (LazyAutomaton::head_cut), cut_walk; else plain_walk
    std::shared_ptr<const Walk> walk(int64_t a, int32_t q, int32_t node);
    // the walk from node in q clamped to the node's height
    std::shared_ptr<const Walk> plain_walk(int64_t a, LazyAutomaton& auto_, int32_t q, int32_t node, FrameWalk* ends = nullptr);
    // the tokens of at most n bytes from the root in clamped (a string's position with its bound cut
    // for them) with the branch points within n bytes: shared by every position that clamps to it
    std::shared_ptr<const Walk> short_walk(int64_t a, LazyAutomaton& auto_, int32_t clamped, int64_t n);
    // the root walk of q: short_walk of its clamped state, and the longer tokens walked from q itself
    // in the trie of tokens of more than n bytes (Python: FrameMasks.clamped_walk)
    std::shared_ptr<const Walk> cut_walk(int64_t a, LazyAutomaton& auto_, int32_t q, int64_t n, int32_t clamped);
    // the slice tokens a root walk of q takes from slice k's precomputed ones (m: their most
    // characters), or -1 where slice k does not apply (see structgen/vocab/slices.py)
    int64_t slice_run(LazyAutomaton& a, int32_t q, int k);
    void sort_out(int64_t a, LazyAutomaton& auto_, const FrameWalk& raw, int64_t root, int32_t q, Walk& out);
    std::shared_ptr<const Frame> solve(int64_t a, int32_t q, int32_t node);
    void gather(int64_t a, std::span<const int64_t> ids, const std::shared_ptr<const std::vector<uint32_t>>& bits,
                std::span<const int64_t> own_pops, std::span<const Call> calls,
                Frame& out);
    void keep(size_t bytes);

    std::vector<LazyAutomaton*> autos_;
    std::shared_ptr<TokenIndex> index_;
    std::shared_ptr<const TokenTrie> trie_;
    int64_t vocab_size_, longest_;
    size_t max_entries_;
    std::unordered_map<Key, std::shared_ptr<const Frame>, KeyHash> frames_;
    std::unordered_map<Key, std::shared_ptr<const Walk>, KeyHash> walks_;
    std::unordered_map<Key, std::optional<RootSlice>, KeyHash> root_slices_;  // (node 0)
    std::unordered_set<Key, KeyHash> active_;
    std::unordered_set<Key, KeyHash> refused_;  // (frames that need frame data)
    static constexpr char OWN_PLAIN = 2;
    std::vector<char> data_;  // per automaton: 0, or whether it carries frame data (1: refused whole; OWN_PLAIN)
    bool any_data_ = false;
    size_t closure_slices_ = 0;
    std::shared_ptr<const Frame> empty_ = std::make_shared<Frame>();
    // (the walk's stack, the union's bitmap and the pops' stamps are per thread, shared by the
    // solvers: a guide's first mask would otherwise allocate megabytes sized by the trie)
    size_t bytes_ = 0;
    int depth_ = 0;
};

}  // namespace structgen
