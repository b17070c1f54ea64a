// The native guides as the bindings hold them (the engine's object plus the Python objects it
// keeps alive): shared by their own binding files and the batch's parallel prefetch
// (bind_batch.cpp).
#pragma once
#include <nanobind/nanobind.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../engine/data_masks.h"
#include "../engine/dfa_guide.h"
#include "../engine/frames.h"
#include "../engine/stack_masks.h"
#include "../engine/stack_table.h"
#include "../engine/state_masks.h"
#include "py_lazy.h"

namespace structgen::py {

struct PyFrameSolver {
    std::vector<nb::object> autos;  // the Python automata (kept alive while the solver lives)
    FrameSolver core;
    StackTable stacks;              // the guide's stacks and states (their steps read core's automata)
    StackMasks masks;               // the stacks' masks, made of core's frames
    DataMasks data_masks;           // the stacks' masks where they carry frame data (share_data)
    StateMasks states;              // the states' whole masks, cached
    Pool* pool = nullptr;           // the pool of every automaton given (one network, one pool)
    nb::object unique;              // the UniqueData the stacks carry (share_data; kept alive while the solver lives)
    PyFrameSolver(std::vector<nb::object> objs, std::vector<LazyAutomaton*> ptrs, const std::shared_ptr<TokenIndex>& index,
                  size_t max_entries, int64_t max_depth, int64_t mask_cache_bytes)
        : autos(std::move(objs)), core(ptrs, index, max_entries), stacks(core, max_depth),
          masks(core, stacks, max_entries), data_masks(core, stacks, max_entries),
          states(stacks, masks, index, mask_cache_bytes, &data_masks) {
        for (LazyAutomaton* a : ptrs)
            if (a) same_pool(*a);
    }
    // the stacks, their masks and the states' masks: only where no automaton carries frame data (else
    // the stacks carry it, and they are the guide's), the stacks also where they carry the unique
    // data (share_data; their masks are then data_masks')
    // (where the frame data is shared for the frames only, the stacks are the guide's too)
    StackTable& own_stacks() {
        if (!stacks.carries_data() || stacks.frames_only()) check_no_data();
        return stacks;
    }
    StackMasks& own_masks() { return check_no_data(), masks; }
    StateMasks& own_states() {
        if (!stacks.carries_data() || stacks.frames_only()) check_no_data();
        return states;
    }
    void check_no_data() const {
        if (core.any_frame_data()) throw InvalidArgument("FrameSolver: the network has frame data: its stacks and states are the guide's");
    }
    // (every automaton of a solver shares one pool: a batch's threads are kept apart by pool)
    void same_pool(LazyAutomaton& a) {
        if (pool && pool != &a.pool()) throw InvalidArgument("FrameSolver: automata of different pools");
        pool = &a.pool();
    }
};

struct PyDfaGuide {
    nb::object auto_obj;  // the Python automaton (kept alive while the guide lives)
    DfaGuideCore core;
    PyDfaGuide(nb::object a, PyLazy& lazy, std::shared_ptr<TokenIndex> index, int64_t cache_bytes, std::string description,
               std::string vocab_repr)
        : auto_obj(std::move(a)), core(lazy.core, std::move(index), cache_bytes, std::move(description), std::move(vocab_repr)) {}
    int32_t state(int64_t q) {
        core.automaton().check(q);
        return static_cast<int32_t>(q);
    }
};

}  // namespace structgen::py
