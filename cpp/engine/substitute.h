// Substitution: a term with some of its sub-terms replaced by others, built bottom up through the
// pool's constructors (which simplify again). Its use: the flat twin of a term with calls, each
// call's symbol replaced by its callee's term, which the automata algebra needs (one finite
// automaton); a grammar's rules inlined. Iterative (an explicit stack), so a deep term costs no
// recursion. (Python face: automata/expr_rewrite.py's substitute.)
#pragma once
#include <cstdint>
#include <vector>

#include "flat_map.h"
#include "pool.h"

namespace structgen {

// What substitutions with one mapping (or one that only grew since) made of each sub-term, kept
// across calls; it belongs to the pool of its first use.
class SubstitutionMemo {
public:
    size_t size() const { return done_.size(); }
    size_t bytes() const { return done_.bytes(); }

private:
    friend Id substitute(Pool&, Id, const FlatMap<Id>&, SubstitutionMemo&, bool);
    FlatMap<Id> done_;
    const Pool* pool_ = nullptr;
};

// e with every sub-term that is a key of mapping replaced by its value (mapping's ids: terms of
// pool). Embedded automata are kept as they are. symbols_only: every key is a symbol, so a
// sub-term with no symbol in it is kept unread. InvalidArgument when memo belongs to another pool.
Id substitute(Pool& pool, Id e, const FlatMap<Id>& mapping, SubstitutionMemo& memo, bool symbols_only);

}  // namespace structgen
