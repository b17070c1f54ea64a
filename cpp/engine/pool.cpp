// The pool's arena: interning and the constructors (each simplifies as it builds).
#include "pool.h"

#include <algorithm>
#include <cstring>
#include <tuple>

#include "clamp.h"
#include "liveness.h"
#include "slices.h"
#include "string_length.h"

namespace structgen {

Pool::Pool()
    : search_(std::make_unique<Liveness>(*this)),
      lengths_(std::make_unique<StringLengths>(*this)),
      clamps_(std::make_unique<Clamps>(*this)),
      slices_(std::make_unique<SliceMemo>(*this)) {
    one_byte_.fill(-1);
    table_.assign(1024, 0);
    find_or_add(Node{Kind::Nothing}, nullptr, {}, false, false);
    find_or_add(Node{Kind::Epsilon}, nullptr, {}, true, false);
    anything_ = repeat(bytes_of(ByteSet::all()), 0, -1);
}

Pool::~Pool() = default;

void Pool::fork_from(const Pool& t) {
    nodes_ = t.nodes_;
    masks_ = t.masks_;
    members_ = t.members_;
    table_ = t.table_;
    nullable_ = t.nullable_;
    algebraic_ = t.algebraic_;
    size_ = t.size_;
    counter_ = t.counter_;
    lower_ = t.lower_;
    symbols_ = t.symbols_;
    symsets_ = t.symsets_;
    embedded_ = t.embedded_;
    one_byte_ = t.one_byte_;
    anything_ = t.anything_;
    derived_.clear();
    derived_sym_.clear();
    class_of_.clear();
    class_lists_.clear();
    class_list_ids_.clear();
    first_bytes_.clear();
    readable_.clear();
    first_symbols_.clear();
    by_byte_.clear();
    search_ = std::make_unique<Liveness>(*this);
    lengths_ = std::make_unique<StringLengths>(*this);
    clamps_ = std::make_unique<Clamps>(*this);
    slices_ = std::make_unique<SliceMemo>(*this);
}

// -- interning -------------------------------------------------------------------------------------

uint64_t Pool::hash_of(const Node& n, const ByteSet* mask, std::span<const Id> members) const {
    uint64_t h = mix64(static_cast<uint64_t>(n.kind) + 0x1234567ull);
    switch (n.kind) {
        case Kind::Bytes:
            h = mix64(h ^ mask->hash());
            break;
        case Kind::Alt:
        case Kind::And:
            for (Id m : members) h = mix64(h ^ m);
            break;
        default:
            h = mix64(h ^ n.a);
            h = mix64(h ^ (uint64_t(n.b) << 1));
            h = mix64(h ^ static_cast<uint64_t>(n.c));
            h = mix64(h ^ (static_cast<uint64_t>(n.d) * 3));
    }
    return h;
}

bool Pool::same(Id e, const Node& n, const ByteSet* mask, std::span<const Id> members) const {
    const Node& m = nodes_[e];
    if (m.kind != n.kind) return false;
    switch (n.kind) {
        case Kind::Bytes:
            return masks_[m.a] == *mask;
        case Kind::Alt:
        case Kind::And:
            return m.b == members.size() && std::equal(members.begin(), members.end(), members_.begin() + m.a);
        default:
            return m.a == n.a && m.b == n.b && m.c == n.c && m.d == n.d;
    }
}

void Pool::rehash() {
    std::vector<Id> table(table_.size() * 2, 0);
    size_t mask = table.size() - 1;
    for (Id e = 0; e < nodes_.size(); ++e) {
        const Node& n = nodes_[e];
        const ByteSet* m = n.kind == Kind::Bytes ? &masks_[n.a] : nullptr;
        size_t i = hash_of(n, m, members(e)) & mask;
        while (table[i]) i = (i + 1) & mask;
        table[i] = e + 1;
    }
    table_.swap(table);
}

Id Pool::find_or_add(const Node& key, const ByteSet* mask, std::span<const Id> parts, bool nullable, bool algebraic) {
    size_t slot_mask = table_.size() - 1;
    size_t i = hash_of(key, mask, parts) & slot_mask;
    for (; table_[i]; i = (i + 1) & slot_mask)
        if (same(table_[i] - 1, key, mask, parts)) return table_[i] - 1;
    if (nodes_.size() >= MAX_TERMS) throw BudgetExceeded("terms in one expression pool", static_cast<int64_t>(MAX_TERMS));
    Id e = static_cast<Id>(nodes_.size());
    Node n = key;
    if (key.kind == Kind::Bytes) {
        n.a = static_cast<uint32_t>(masks_.size());
        masks_.push_back(*mask);
    } else if (key.kind == Kind::Alt || key.kind == Kind::And) {
        n.a = static_cast<uint32_t>(members_.size());
        n.b = static_cast<uint32_t>(parts.size());
        members_.insert(members_.end(), parts.begin(), parts.end());
    }
    nodes_.push_back(n);
    nullable_.push_back(nullable);
    algebraic_.push_back(algebraic);
    note(e);
    table_[i] = e + 1;
    if (2 * nodes_.size() > table_.size()) rehash();
    return e;
}

void Pool::note(Id e) {
    const Node n = nodes_[e];
    int64_t sz = 0, c = 0, low = 0;
    uint32_t syms = 0;
    switch (n.kind) {
        case Kind::Seq:
            low = std::min(INF, lower_[n.a] + lower_[n.b]);
            sz = sat_add(size_[n.a], size_[n.b], BIG);
            c = std::max(counter_[n.a], counter_[n.b]);
            syms = symsets_.unite(symbols_[n.a], symbols_[n.b]);
            break;
        case Kind::Alt: {
            low = INF;
            for (Id p : members(e)) {
                sz = sat_add(sz, size_[p], BIG);
                c = std::max(c, counter_[p]);
                syms = symsets_.unite(syms, symbols_[p]);
                low = std::min(low, lower_[p]);
            }
            break;
        }
        case Kind::Rep: {
            const Id x = n.a;
            const int64_t lo = n.c, hi = n.d;
            int64_t times = std::max<int64_t>(hi >= 0 ? hi : lo >= 2 ? lo + 1 : 1, 1);
            sz = sat_mul(size_[x], times, BIG);
            c = std::max({counter_[x], lo, hi});
            syms = symbols_[x];
            low = lo == 0 ? 0 : sat_mul(lo, lower_[x], INF);
            break;
        }
        case Kind::Sym:
            sz = 1;
            syms = symsets_.single(n.c);
            break;
        case Kind::Dfa: {
            EmbeddedDfa& emb = *embedded_[n.a];
            sz = emb.num_states();
            low = emb.min_lengths({})[n.b];
            syms = symsets_.intern(emb.all_symbols());
            break;
        }
        case Kind::Bytes:
            sz = 1;
            low = 1;
            break;
        case Kind::Nothing:
            low = INF;
            break;
        case Kind::And:
            c = BIG;
            for (Id p : members(e)) low = std::max(low, lower_[p]);
            break;
        default:  // the empty string, a complement (it hides its operand's counters and symbols)
            break;
    }
    size_.push_back(sz);
    counter_.push_back(c);
    lower_.push_back(low);
    symbols_.push_back(syms);
}

// -- constructors ------------------------------------------------------------------------------------

Id Pool::bytes_of(const ByteSet& m) {
    if (m.empty()) return NOTHING;
    return find_or_add(Node{Kind::Bytes}, &m, {}, false, false);
}

Id Pool::new_seq(Id a, Id b) {
    return find_or_add(Node{Kind::Seq, a, b}, nullptr, {}, nullable_[a] && nullable_[b], algebraic_[a] || algebraic_[b]);
}

Id Pool::literal(std::span<const uint8_t> data) {
    std::vector<Id> heads;
    heads.reserve(data.size());
    for (uint8_t b : data) {
        if (one_byte_[b] < 0) one_byte_[b] = static_cast<int32_t>(bytes_of(ByteSet::one(b)));
        heads.push_back(static_cast<Id>(one_byte_[b]));
    }
    return chain(heads, EPSILON);
}

Id Pool::chain(std::span<const Id> heads, Id tail) {
    if (tail == NOTHING) return NOTHING;
    for (Id h : heads)
        if (h == NOTHING) return NOTHING;
    Id out = tail;
    for (size_t i = heads.size(); i-- > 0;) {
        Id h = heads[i];
        if (h == EPSILON) continue;
        if (out == EPSILON) {
            out = h;
            continue;
        }
        out = new_seq(h, out);
    }
    return out;
}

Id Pool::seq(Id a, Id b) {
    if (a == NOTHING || b == NOTHING) return NOTHING;
    if (a == EPSILON) return b;
    if (b == EPSILON) return a;
    if (nodes_[a].kind == Kind::Seq) {  // kept right-nested: (x·y)·b = x·(y·b), without recursion
        std::vector<Id> heads;
        while (nodes_[a].kind == Kind::Seq) {
            heads.push_back(nodes_[a].a);
            a = nodes_[a].b;
        }
        return chain(heads, seq(a, b));
    }
    return new_seq(a, b);
}

Id Pool::concat(std::span<const Id> parts) {
    Id out = EPSILON;
    for (size_t i = parts.size(); i-- > 0;) out = seq(parts[i], out);
    return out;
}

Id Pool::alt(std::span<const Id> parts) {
    std::vector<Id> flat;
    flat.reserve(parts.size() + 4);
    for (Id p : parts) {
        if (nodes_[p].kind == Kind::Alt) {
            auto ms = members(p);
            flat.insert(flat.end(), ms.begin(), ms.end());
        } else if (p != NOTHING) {
            flat.push_back(p);
        }
    }
    std::sort(flat.begin(), flat.end());
    flat.erase(std::unique(flat.begin(), flat.end()), flat.end());
    if (flat.empty()) return NOTHING;
    if (flat.size() > 1) {
        size_t byte_sets = 0;
        ByteSet m;
        for (Id p : flat)
            if (nodes_[p].kind == Kind::Bytes) {
                ++byte_sets;
                m |= masks_[nodes_[p].a];
            }
        if (byte_sets > 1) {
            std::erase_if(flat, [&](Id p) { return nodes_[p].kind == Kind::Bytes; });
            Id merged = bytes_of(m);
            flat.insert(std::lower_bound(flat.begin(), flat.end(), merged), merged);
        }
        merge_counts(flat);
        if (flat[0] == EPSILON) {  // (already in a nullable alternative)
            bool other = false;
            for (size_t i = 1; i < flat.size() && !other; ++i) other = nullable_[flat[i]];
            if (other) flat.erase(flat.begin());
        }
    }
    if (flat.size() == 1) return flat[0];
    bool null = false, alg = false;
    for (Id p : flat) {
        null = null || nullable_[p];
        alg = alg || algebraic_[p];
    }
    return find_or_add(Node{Kind::Alt}, nullptr, flat, null, alg);
}

// One counted part of an alternative: head·x{lo,hi}·tail (head NONE: none; tail EPSILON: none).
namespace {
constexpr Id NONE = ~Id(0);
struct Counted {
    Id head, body, tail;
    int64_t lo, hi;  // hi -1: unbounded
    Id part;
};
}  // namespace

std::optional<Id> Pool::find_seq(Id a, Id b) const {
    const Node key{Kind::Seq, a, b};
    const size_t slot_mask = table_.size() - 1;
    for (size_t i = hash_of(key, nullptr, {}) & slot_mask; table_[i]; i = (i + 1) & slot_mask)
        if (same(table_[i] - 1, key, nullptr, {})) return table_[i] - 1;
    return std::nullopt;
}

void Pool::merge_counts(std::vector<Id>& flat) {
    // h·x{a,b}·t | h·x{c,d}·t = h·x{min(a,c),max(b,d)}·t where [a,b] and [c,d] meet or touch: the
    // derivatives of a counted repetition whose body reads one or two bytes (`((.|-+)?[a-z]){0,252}`)
    // would otherwise hold one part per count reached, a state that grows with every byte.
    std::vector<Counted> counted;
    auto as_rep = [&](Id e, Id head, Id tail) {
        const Node& r = nodes_[e];
        if (r.kind == Kind::Rep) counted.push_back({head, r.a, tail, r.c, r.d, NOTHING});
        return r.kind == Kind::Rep;
    };
    for (Id p : flat) {
        const size_t before = counted.size();
        const Node& n = nodes_[p];
        if (n.kind == Kind::Rep) {
            as_rep(p, NONE, EPSILON);
        } else if (n.kind == Kind::Seq && !as_rep(n.a, NONE, n.b)) {
            const Node& rest = nodes_[n.b];
            if (!as_rep(n.b, n.a, EPSILON) && rest.kind == Kind::Seq) as_rep(rest.a, n.a, rest.b);
        }
        if (counted.size() > before) counted.back().part = p;
    }
    if (counted.empty()) return;
    std::sort(counted.begin(), counted.end(), [](const Counted& x, const Counted& y) {
        return std::tie(x.head, x.body, x.tail, x.lo) < std::tie(y.head, y.body, y.tail, y.lo);
    });
    std::vector<Id> gone, made;
    for (size_t i = 0; i < counted.size();) {
        const Counted& c = counted[i];
        int64_t hi = c.hi;
        size_t j = i + 1;
        for (; j < counted.size(); ++j) {
            const Counted& d = counted[j];
            if (d.head != c.head || d.body != c.body || d.tail != c.tail || (hi >= 0 && d.lo > hi + 1)) break;
            hi = hi < 0 || d.hi < 0 ? -1 : std::max(hi, d.hi);
        }
        // h·t is h·x{0,0}·t: it joins a count from 1 (found, never built)
        int64_t lo = c.lo;
        bool absorbed = false;
        if (lo <= 1) {
            const std::optional<Id> zero = c.head == NONE    ? std::optional<Id>(c.tail)
                                           : c.tail == EPSILON ? std::optional<Id>(c.head)
                                                               : find_seq(c.head, c.tail);
            if (zero && std::binary_search(flat.begin(), flat.end(), *zero)) {
                gone.push_back(*zero);
                lo = 0;
                absorbed = true;
            }
        }
        if (j > i + 1 || absorbed) {
            for (size_t k = i; k < j; ++k) gone.push_back(counted[k].part);
            Id e = seq(repeat(c.body, lo, hi), c.tail);
            made.push_back(c.head == NONE ? e : seq(c.head, e));
        }
        i = j;
    }
    if (gone.empty()) return;
    std::sort(gone.begin(), gone.end());
    std::erase_if(flat, [&](Id p) { return std::binary_search(gone.begin(), gone.end(), p); });
    flat.insert(flat.end(), made.begin(), made.end());
    std::sort(flat.begin(), flat.end());
    flat.erase(std::unique(flat.begin(), flat.end()), flat.end());
}

Id Pool::repeat(Id x, int64_t lo, int64_t hi) {
    if (lo < 0 || (hi >= 0 && hi < lo) || hi < -1)
        throw InvalidArgument("a repetition {" + std::to_string(lo) + "," + (hi < 0 ? std::string("None") : std::to_string(hi)) +
                              "} is not a range");
    if (lo > BIG || hi > BIG) throw BudgetExceeded("a repetition's counter", BIG);
    if (hi == 0 || x == EPSILON) return EPSILON;
    if (x == NOTHING) return lo == 0 ? EPSILON : NOTHING;
    if (nullable_[x]) lo = 0;  // x{lo,hi} = x{0,hi} when x matches the empty string
    if (lo == 1 && hi == 1) return x;
    const Node n = nodes_[x];
    if (n.kind == Kind::Rep && n.c == 0 && n.d == -1 && lo <= 1)  // (y*)* = y*
        return lo == 0 ? x : find_or_add(Node{Kind::Rep, n.a, 0, 1, -1}, nullptr, {}, false, algebraic_[x]);
    return find_or_add(Node{Kind::Rep, x, 0, lo, hi}, nullptr, {}, lo == 0, algebraic_[x]);
}

Id Pool::symbol(int64_t k) {
    if (k < 0 || k >= (int64_t(1) << 31)) throw InvalidArgument("a symbol must be in 0 .. 2**31 - 1, not " + std::to_string(k));
    return find_or_add(Node{Kind::Sym, 0, 0, k, 0}, nullptr, {}, false, false);
}

Id Pool::both(std::span<const Id> parts, bool checked) {
    std::vector<Id> flat;
    for (Id p : parts) {
        if (p == NOTHING) return NOTHING;
        if (nodes_[p].kind == Kind::And) {
            auto ms = members(p);
            flat.insert(flat.end(), ms.begin(), ms.end());
        } else if (p != anything_) {
            flat.push_back(p);
        }
    }
    std::sort(flat.begin(), flat.end());
    flat.erase(std::unique(flat.begin(), flat.end()), flat.end());
    if (flat.empty()) return anything_;
    if (flat.size() == 1) return flat[0];
    if (checked)
        for (Id p : flat)
            if (symbols_[p]) throw InvalidArgument("an intersection of terms that call other automata (inline the calls first)");
    bool null = true;
    for (Id p : flat) null = null && nullable_[p];
    return find_or_add(Node{Kind::And}, nullptr, flat, null, true);
}

Id Pool::negate(Id x, bool checked) {
    if (x == NOTHING) return anything_;
    if (x == anything_) return NOTHING;
    if (nodes_[x].kind == Kind::Not) return nodes_[x].a;
    if (checked && symbols_[x]) throw InvalidArgument("the complement of a term that calls other automata (inline the calls first)");
    return find_or_add(Node{Kind::Not, x}, nullptr, {}, !nullable_[x], true);
}

Id Pool::minus(Id a, Id b) {
    if (a == NOTHING) return NOTHING;
    Id parts[2] = {a, negate(b)};
    return both(parts);
}

uint32_t Pool::add_embedded(std::shared_ptr<EmbeddedDfa> dfa) {
    if (embedded_.size() >= (size_t(1) << 31)) throw BudgetExceeded("embedded automata in one pool", int64_t(1) << 31);
    embedded_.push_back(std::move(dfa));
    return static_cast<uint32_t>(embedded_.size() - 1);
}

Id Pool::embed_state(uint32_t index, int64_t state) {
    if (index >= embedded_.size()) throw OutOfRange("no embedded automaton " + std::to_string(index));
    if (state >= embedded_[index]->num_states()) throw OutOfRange("no state " + std::to_string(state) + " in embedded automaton");
    return dfa_node(index, state);
}

Id Pool::dfa_node(uint32_t index, int64_t state) {
    if (state < 0) return NOTHING;
    EmbeddedDfa& emb = *embedded_[index];
    if (emb.is_dead(static_cast<int32_t>(state))) return NOTHING;
    return find_or_add(Node{Kind::Dfa, index, static_cast<uint32_t>(state)}, nullptr, {}, emb.is_final(static_cast<int32_t>(state)), false);
}

size_t Pool::memory_bytes() const {
    size_t terms = nodes_.size() * (sizeof(Node) + 2 + 3 * 8 + 4 + 4 + 4 + 32 + 1 + 4 + 4);
    size_t dfas = 0;
    for (auto& e : embedded_) dfas += e->memory_bytes();
    return terms + masks_.size() * 32 + members_.size() * 4 + table_.size() * 4 + derived_.bytes() + derived_sym_.bytes() +
           class_lists_.size() * 64 + readable_.memory_bytes() + dfas;
}

}  // namespace structgen
