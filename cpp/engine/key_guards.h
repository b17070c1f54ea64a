// Objects whose keys come in any order (structgen/json_schema/objects.py's guarded_object): such an
// object is an automaton of its own whose frame data is the set of its keys written so far (bit i:
// key i), and whose key guards are zero-width steps checked against it: key guard i passes where key i
// is not written yet and writes it; the close guard passes once every required key is written.
// (Python face: structgen/guides/network_view.py's NetworkView.pass_guard and is_dead.)
//
// A state can no longer finish where it cannot end before its next guard and every next guard is the
// key guard of a key written already (a key half spelled that only written keys complete). That is
// exact for the objects the compiler writes: past a key's guard the required keys not written yet can
// always be written and the object closed, so only the next guards can block the way.
#pragma once
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "frames.h"

namespace structgen {

class KeyGuards {
public:
    // the guard that closes an object (structgen.automata.markers.CLOSE_GUARD); key guards are 0..62
    static constexpr int64_t CLOSE = 63;

    // frames: the solver whose automata the guards are read from (it outlives this)
    explicit KeyGuards(FrameSolver& frames) : frames_(frames) {}

    // required[a]: the keys automaton a must have written before it closes (bit i: key i)
    void set_required(std::vector<uint64_t> required);
    // the frame data after guard g of automaton a with keys `written` (-1: it does not pass)
    int64_t pass(int64_t a, int64_t g, int64_t written) const;
    // whether state q of automaton a can no longer finish with keys `written`
    bool is_dead(int64_t a, int32_t q, int64_t written);
    // the guards state q of automaton a meets first where they are key guards only (bit g; then q is
    // dead once they are all written), or none where q can always finish (a final state or a close
    // guard ahead)
    std::optional<uint64_t> blocking_guards(int64_t a, int32_t q);
    // the same for term e of automaton a (a state's tail, say)
    std::optional<uint64_t> term_blocking_guards(int64_t a, Id e);

    size_t memory_bytes() const { return (frontiers_.size() + term_frontiers_.size()) * 64 + required_.capacity() * 8; }

private:
    // whether q reaches a final state through no guard, and the guards first met on the other ways
    // (bit g; CLOSE included): a search over bytes and calls' returns that stops at guards, and
    // stops whole once it meets a final state or a close guard (no keys written can then block q)
    struct Frontier {
        bool free = false;
        uint64_t guards = 0;
    };
    Frontier frontier(int64_t a, int32_t q);
    // the frontier of term e of automaton a, read off its structure where it can be: an
    // alternation's is its members' merged, and so is an alternation's followed by a tail (each
    // member with the tail); a head that calls nothing and can end, followed by a tail, has the
    // tail's (a string inline in an object, at any of its positions: the object's way on after it,
    // searched once); else searched from e's state
    Frontier term_frontier(int64_t a, Id e);
    Frontier search(int64_t a, int32_t q);

    FrameSolver& frames_;
    std::vector<uint64_t> required_;
    std::unordered_map<uint64_t, Frontier> frontiers_;                  // a << 32 | q
    std::unordered_map<uint64_t, Frontier> term_frontiers_;             // a << 32 | term
    int depth_ = 0;  // (term_frontier's alternations nested)
};

}  // namespace structgen
