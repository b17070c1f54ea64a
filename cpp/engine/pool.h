// The expression pool: hash-consed byte terms in one arena, and their derivatives.
//
// A term is a uint32 id; NOTHING (0) is the empty language, EPSILON (1) the empty string.
// Constructors simplify as they build (∅·x = ∅, ε·x = x, alternatives flattened, sorted and
// deduplicated, byte sets merged, counts of one body merged where they meet: h·x{0,3}·t | h·x{2,5}·t
// = h·x{0,5}·t), so two equal terms built twice are one id. Kinds: a byte set,
// a concatenation (kept right-nested), an alternation, a bounded repetition with counters, a
// symbol (a call or a guard of a pushdown guide), an embedded eager automaton at a state, an
// intersection and a complement. Facts kept per term as it is interned: nullable, algebraic
// (holds ∩ or ¬), size, largest counter, symbols, a lower bound of its strings' lengths. Memo
// tables: derivatives by (term, byte) and (term, symbol), byte classes, first bytes and symbols,
// the bytes a term reads anywhere.
//
// The Python face is structgen/automata/expr.py (ExprPool); the semantics are documented there.
// Not thread-safe by itself: the binding holds the GIL for every call into a pool.
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "byteset.h"
#include "embedded.h"
#include "errors.h"
#include "flat_map.h"
#include "symbol_sets.h"

namespace structgen {

using Id = uint32_t;
constexpr Id NOTHING = 0;
constexpr Id EPSILON = 1;
constexpr int64_t INF = int64_t(1) << 60;  // the length of nothing
constexpr int64_t BIG = int64_t(1) << 62;  // sizes and counters stop there
// the most terms one pool holds (ids are uint32; each term costs ~100 bytes)
constexpr size_t MAX_TERMS = size_t(1) << 31;

enum class Kind : uint8_t { Nothing, Epsilon, Bytes, Seq, Alt, Rep, Sym, Dfa, And, Not };

// One term. Bytes: a = index of its mask. Seq: a·b. Alt, And: members_[a .. a+b). Rep: a{c,d}
// (d = -1: unbounded). Sym: c = the symbol. Dfa: automaton a at state b. Not: ¬a.
struct Node {
    Kind kind;
    uint32_t a = 0, b = 0;
    int64_t c = 0, d = 0;
};

// A byte set per term, made on first use (first bytes, readable bytes).
class ByteSetMemo {
public:
    const ByteSet* find(Id e) const { return e < has_.size() && has_[e] ? &value_[e] : nullptr; }
    // (terms: how many the pool holds, so that one resize covers those made since)
    void put(Id e, const ByteSet& m, size_t terms) {
        if (has_.size() <= e) {
            has_.resize(std::max<size_t>(terms, size_t(e) + 1), 0);
            value_.resize(has_.size());
        }
        value_[e] = m;
        has_[e] = 1;
    }
    void clear() {
        value_.clear();
        has_.clear();
    }
    size_t memory_bytes() const { return value_.size() * (sizeof(ByteSet) + 1); }

private:
    std::vector<ByteSet> value_;
    std::vector<uint8_t> has_;
};

class Liveness;
class StringLengths;
class Clamps;
class SliceMemo;

inline int64_t sat_add(int64_t a, int64_t b, int64_t cap) { return a >= cap - b ? cap : a + b; }
inline int64_t sat_mul(int64_t a, int64_t b, int64_t cap) {
    __int128 p = static_cast<__int128>(a) * b;
    return p >= cap ? cap : static_cast<int64_t>(p);
}

class Pool {
public:
    Pool();
    ~Pool();
    Pool(const Pool&) = delete;
    Pool& operator=(const Pool&) = delete;
    // a pool that starts with template's terms under the same ids, its memo tables empty
    void fork_from(const Pool& tmpl);

    size_t size() const { return nodes_.size(); }
    const Node& node(Id e) const { return nodes_[e]; }
    Kind kind(Id e) const { return nodes_[e].kind; }
    bool valid(int64_t e) const { return e >= 0 && static_cast<uint64_t>(e) < nodes_.size(); }
    void check(int64_t e) const {
        if (!valid(e)) throw OutOfRange("no term " + std::to_string(e) + " in this pool");
    }
    const ByteSet& mask(Id e) const { return masks_[nodes_[e].a]; }
    std::span<const Id> members(Id e) const {
        const Node& n = nodes_[e];
        return {members_.data() + n.a, n.b};
    }

    // -- constructors (the semantics of ExprPool's methods of the same names) ----------------------
    Id bytes_of(const ByteSet& m);
    Id literal(std::span<const uint8_t> data);
    Id chain(std::span<const Id> heads, Id tail);
    Id seq(Id a, Id b);
    Id concat(std::span<const Id> parts);
    Id alt(std::span<const Id> parts);
    Id repeat(Id x, int64_t lo, int64_t hi);  // hi -1: unbounded
    Id symbol(int64_t k);
    Id both(std::span<const Id> parts, bool checked = true);
    Id negate(Id x, bool checked = true);
    Id minus(Id a, Id b);
    // registers an embedded automaton; returns its index
    uint32_t add_embedded(std::shared_ptr<EmbeddedDfa> dfa);
    Id embed_state(uint32_t index, int64_t state);
    Id anything() const { return anything_; }

    // -- reading -----------------------------------------------------------------------------------
    bool nullable(Id e) const { return nullable_[e]; }
    bool algebraic(Id e) const { return algebraic_[e]; }
    int64_t term_size(Id e) const { return size_[e]; }
    int64_t counter(Id e) const { return counter_[e]; }
    int64_t lower(Id e) const { return lower_[e]; }
    uint32_t symbols_id(Id e) const { return symbols_[e]; }
    const SymbolSets& symbol_sets() const { return symsets_; }
    SymbolSets& symbol_sets() { return symsets_; }
    size_t num_embedded() const { return embedded_.size(); }
    EmbeddedDfa& embedded(uint32_t i) const { return *embedded_[i]; }
    const std::shared_ptr<EmbeddedDfa>& embedded_ptr(uint32_t i) const { return embedded_[i]; }

    // -- derivatives (derive.cpp) ------------------------------------------------------------------
    Id derive(Id e, int b);
    Id derive_symbol(Id e, int64_t k);

    // -- what a term reads first (firsts.cpp) ----------------------------------------------------
    // a partition of the 256 bytes on each part of which derive() is the same
    const std::vector<ByteSet>& byte_classes(Id e);
    // the index of e's byte classes among the distinct lists made so far (equal lists, one index)
    uint32_t class_index(Id e) {
        byte_classes(e);
        return class_of_[e] - 1;
    }
    const std::vector<ByteSet>& class_list(uint32_t index) const { return class_lists_[index]; }
    // the bytes e may read first (every byte for an embedded automaton or a complement)
    ByteSet first_bytes(Id e);
    // every byte e may read anywhere (every byte for a complement)
    ByteSet readable_bytes(Id e);
    // the symbols that may come first (a symbol set id)
    uint32_t first_symbols(Id e);
    // the members of alternation e that may read byte b first
    std::span<const Id> parts_by_byte(Id e, int b);

    // -- liveness (liveness.cpp) -------------------------------------------------------------------
    Liveness& search() { return *search_; }
    bool is_live(Id e);
    StringLengths& string_lengths() { return *lengths_; }
    // the rewrites' memo tables (clamp.h, slices.h)
    Clamps& clamps() { return *clamps_; }
    SliceMemo& slices() { return *slices_; }

    size_t memory_bytes() const;

    // serialisation: the terms and embedded automata (memo tables are rebuilt on use)
    std::string dump() const;
    void load(const std::string& data);

    int depth = 0;  // the recursion depth of walks over terms (see DepthGuard)

private:
    friend class Liveness;
    Id find_or_add(const Node& key, const ByteSet* mask, std::span<const Id> members, bool nullable, bool algebraic);
    void note(Id e);
    Id new_seq(Id a, Id b);
    // the term a·b if the pool holds it (nothing is added)
    std::optional<Id> find_seq(Id a, Id b) const;
    // merges an alternative's parts h·x{a,b}·t whose counts meet (alt's parts, sorted)
    void merge_counts(std::vector<Id>& flat);
    Id dfa_node(uint32_t index, int64_t state);
    void rehash();
    uint64_t hash_of(const Node& n, const ByteSet* mask, std::span<const Id> members) const;
    bool same(Id e, const Node& n, const ByteSet* mask, std::span<const Id> members) const;
    const std::vector<ByteSet>& classes_of(Id e);
    ByteSet first_bytes_of(Id e);
    ByteSet readable_bytes_of(Id e);
    uint32_t first_symbols_of(Id e);

    std::vector<Node> nodes_;
    std::vector<ByteSet> masks_;
    std::vector<Id> members_;
    std::vector<Id> table_;  // open addressing: slot -> term id + 1 (0: empty)
    std::vector<uint8_t> nullable_, algebraic_;
    std::vector<int64_t> size_, counter_, lower_;
    std::vector<uint32_t> symbols_;
    SymbolSets symsets_;
    std::vector<std::shared_ptr<EmbeddedDfa>> embedded_;
    std::array<int32_t, 256> one_byte_;
    Id anything_ = NOTHING;

    FlatMap<Id> derived_;      // e << 8 | b
    FlatMap<Id> derived_sym_;  // e << 32 | k
    // byte classes: per term an index into class_lists_ (+1; 0: not computed)
    std::vector<uint32_t> class_of_;
    std::deque<std::vector<ByteSet>> class_lists_;  // (a deque: references stay valid as it grows)
    FlatMap<uint32_t> class_list_ids_;  // hash of a list -> first index with that hash (chained by scan)
    ByteSetMemo first_bytes_, readable_;
    std::vector<uint32_t> first_symbols_;  // +1; 0: not computed
    FlatMap<std::vector<std::vector<Id>>> by_byte_;  // alternation -> its parts by first byte

    std::unique_ptr<Liveness> search_;
    std::unique_ptr<StringLengths> lengths_;
    std::unique_ptr<Clamps> clamps_;
    std::unique_ptr<SliceMemo> slices_;
};

}  // namespace structgen
