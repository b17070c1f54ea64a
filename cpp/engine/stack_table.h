// A pushdown guide's states, natively, where the network needs no frame data (the FrameSolver's
// networks) or only that of objects in any key order and of unique arrays over items that call
// nothing (share_data): hash-consed
// stacks of frames (automaton, state, parent stack, frame data), sets of stacks hash-consed again
// into the guide's states, and the step of one byte. (Python face: structgen/guides/stacks.py's
// StackTable, whose NativeStackTable mirrors this table.)
//
// The same step as the Python table's: the top frame reads the byte with its own edges, enters a
// callee that can start with it (a push, below max_depth frames), or returns to its caller from a
// final state (a pop); each stack of a state is followed once. Stacks and states are numbered in
// the order they are made, so a mirror reads the new ones from where it stopped. With unique
// items: an item frame's data is its item id (each byte it reads is read into it), a unique
// array's its set id (a callee item starts as a new item of the set; an item that returns adds
// its value, or is refused where the value is written already: UniqueData), and a token's step
// drops the stacks whose item only written values could finish. With key guards: an object in any
// key order's data is its keys written (KeyGuards), a guard is a zero-width step that passes or not
// on it (followed at any depth), and a token's step drops the stacks whose object can no longer finish.
// Where unique arrays nest in items (HELD automata: such items and their arrays), the stacks are the
// guide's (an item's text there is also every byte the frames above it read): the table only says
// what each automaton is to DataMasks' frames, and steps nothing.
#pragma once
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "byteset.h"
#include "flat_map.h"
#include "frames.h"
#include "key_guards.h"
#include "unique_data.h"

namespace structgen {

class StackTable {
public:
    struct Entry {
        int64_t a;
        int32_t q;
        int32_t depth;  // the stack's frames
        int64_t parent;
        int64_t data;   // the frame data: an item id (an item), a set id (a unique array), the keys written (an object with key guards), else 0
        bool records;   // whether one of its frames is an item's
    };
    // what automaton k is to the frame data (share_data)
    // (HELD: an item that calls a unique array nested in it, or a unique array over such items: its
    // frames are the guide's, and so are the stacks)
    enum Kind : uint8_t { PLAIN = 0, ARRAY = 1, ITEM = 2, GUARDED = 3, HELD = 4 };

    // frames: the solver whose automata the stacks step through (it outlives this); stack 0 is
    // (0, 0) alone and state 0 is {stack 0}
    StackTable(FrameSolver& frames, int64_t max_depth);

    // The stacks carry frame data, before any step: kinds[k] says what automaton k is. A unique
    // array's or item's needs unique (unique arrays over items that call nothing, nested in no item;
    // it must outlive the table: the guide's); an object with key guards (GUARDED) closes once the
    // keys required[k] are written.
    // With HELD automata, the frame data is shared for DataMasks::frame_of only (frames_only).
    void share_data(UniqueData* unique, std::vector<uint8_t> kinds, std::vector<uint64_t> required);
    bool carries_data() const { return carries_; }
    // whether the data is shared for frames only: the guide keeps the stacks (HELD automata); then
    // step, next_state and DataMasks::collect throw InvalidArgument
    bool frames_only() const { return frames_only_; }
    // OutOfRange unless data is frame data automaton a can carry (0 for a plain one; InvalidArgument
    // for data on a frame that carries none)
    void check_data(int64_t a, int64_t data) const;
    UniqueData& unique() const;
    KeyGuards& guards() { return guards_; }
    Kind kind(int64_t a) const { return carries_ && static_cast<size_t>(a) < kinds_.size() ? static_cast<Kind>(kinds_[static_cast<size_t>(a)]) : PLAIN; }
    // the caller stack parent once item frame `item` returns after reading more too: the array with
    // the item's value added (-1: written already, or not one JSON value)
    int64_t returned(int64_t parent, int64_t item, std::string_view more = {});

    // the stack (a, q, data) on top of stack parent (-1: none), made if new (OutOfRange for an
    // automaton the network has not, a negative state, a parent not made yet, or data that is no
    // item or set of the unique data; InvalidArgument for data on a frame that carries none)
    int64_t stack(int64_t a, int64_t q, int64_t parent, int64_t data = 0);
    // the state that is this set of stacks (each made before), made if new
    int64_t config(std::span<const int64_t> stacks);

    const Entry& entry(int64_t sid) const;
    std::span<const int64_t> stacks_of(int64_t state) const;
    int64_t num_stacks() const { return static_cast<int64_t>(stacks_.size()); }
    int64_t num_configs() const { return static_cast<int64_t>(config_starts_.size()) - 1; }
    int64_t max_depth() const { return max_depth_; }

    // the stacks after byte b from stacks (calls and returns taken as needed), in out; MissingAutomaton
    // for an automaton not given to the solver yet (the stacks made on the way stay made)
    void step(std::span<const int64_t> stacks, int b, std::vector<int64_t>& out);
    // the state after the bytes of a token from state (-1: refused), less the stacks whose item
    // only written values could finish or whose object can no longer finish
    int64_t next_state(int64_t state, std::span<const uint8_t> token);
    // whether every frame of stack sid may end
    bool is_final(int64_t sid) const;

    size_t memory_bytes() const;

private:
    const ByteSet& first_bytes(int64_t k);
    bool stuck(int64_t sid);

    FrameSolver& frames_;
    int64_t max_depth_;
    bool carries_ = false;
    bool frames_only_ = false;
    UniqueData* unique_ = nullptr;
    KeyGuards guards_;
    std::vector<uint8_t> kinds_;
    std::vector<Entry> stacks_;
    FlatMap<int64_t> stack_ids_;  // hash of (a, q, parent) -> first stack in its chain
    std::vector<int64_t> stack_next_;  // stack -> the next stack with the same hash (-1: none)
    std::vector<int64_t> config_stacks_, config_starts_{0};  // state i: config_stacks_[starts[i], starts[i + 1])
    FlatMap<int64_t> config_ids_;
    std::vector<int64_t> config_next_;
    std::unordered_map<int64_t, ByteSet> firsts_;
    // (scratch of step and next_state: the table is used by one thread at a time)
    std::vector<uint32_t> stamps_;  // stack -> the step that followed it last
    uint32_t stamp_ = 0;
    std::vector<int64_t> todo_, here_, there_, sorted_;
};

}  // namespace structgen
