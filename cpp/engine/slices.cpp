#include "slices.h"

#include <algorithm>
#include <array>
#include <unordered_set>

#include "errors.h"

namespace structgen {

namespace {

// one slice's one-character automaton, read out of the generated tables
struct SliceAutomaton {
    int n = 0;
    std::vector<int8_t> next;  // state * 256 + byte -> state (-1: dead)
    std::vector<uint8_t> finals;
    std::vector<int8_t> order;  // topological
    std::vector<std::vector<std::pair<ByteSet, int8_t>>> edges;  // per state: (bytes, target)
};

const SliceAutomaton& slice_automaton(int k) {
    static const std::array<SliceAutomaton, NUM_SLICES> all = [] {
        std::array<SliceAutomaton, NUM_SLICES> out;
        for (int k = 0; k < NUM_SLICES; ++k) {
            const slice_tables::Table& t = slice_tables::tables[k];
            SliceAutomaton& a = out[k];
            a.n = t.num_states;
            a.next.assign(static_cast<size_t>(a.n) * 256, -1);
            a.finals.assign(t.finals, t.finals + a.n);
            a.order.assign(t.order, t.order + a.n);
            a.edges.resize(a.n);
            for (int i = 0; i < t.num_edges; ++i) {
                const slice_tables::Edge& e = t.edges[i];
                ByteSet m{{e.mask[0], e.mask[1], e.mask[2], e.mask[3]}};
                a.edges[e.state].emplace_back(m, e.target);
                m.each([&](int b) { a.next[static_cast<size_t>(e.state) * 256 + b] = e.target; });
            }
        }
        return out;
    }();
    return all[k];
}

void check_slice(int k) {
    if (k < 0 || k >= NUM_SLICES) throw OutOfRange("no slice " + std::to_string(k));
}

Id counted(Pool& pool, Id x, int64_t lo, int64_t hi, Id rest) {
    return pool.seq(pool.repeat(x, lo, hi), rest);
}

}  // namespace

ByteSet slice_bytes(int k) {
    check_slice(k);
    ByteSet out;
    for (const auto& edges : slice_automaton(k).edges)
        for (const auto& [mask, t] : edges) out = out | mask;
    return out;
}

std::optional<int64_t> slice_characters(int k, std::string_view token) {
    check_slice(k);
    const SliceAutomaton& a = slice_automaton(k);
    int s = 0;
    int64_t chars = 0;
    for (char c : token) {
        s = a.next[static_cast<size_t>(s) * 256 + static_cast<uint8_t>(c)];
        if (s < 0) return std::nullopt;
        if (a.finals[s]) {  // (a whole character: the final state reads nothing further)
            ++chars;
            s = 0;
        }
    }
    if (s != 0 || chars == 0) return std::nullopt;
    return chars;
}

std::optional<SliceMemo::Counted> SliceMemo::counted_body(Id e, int k) {
    const Node node = pool_.node(e);
    Counted got{};
    if (node.kind == Kind::Seq && pool_.kind(node.a) == Kind::Rep) {
        const Node rep = pool_.node(node.a);
        got = Counted{rep.a, rep.c, rep.d, node.b};
    } else if (node.kind == Kind::Rep) {
        got = Counted{node.a, node.c, node.d, EPSILON};
    } else {
        return std::nullopt;
    }
    if (uniform_successor(got.x, k) != EPSILON || uniform_successor(got.rest, k) != NOTHING) return std::nullopt;
    return got;
}

int64_t SliceMemo::uniform_successor(Id e, int k) {
    check_slice(k);
    const uint64_t key = (uint64_t(e) << 3) | uint64_t(k);
    if (const int64_t* got = memo_.find(key)) return *got;
    DepthGuard guard(pool_.depth);
    if (e > EPSILON) {
        if (auto form = counted_body(e, k)) {  // (a string body: one character fewer, read off the counters)
            const int64_t got = form->hi == 0 ? int64_t(NOTHING)
                                              : int64_t(counted(pool_, form->x, std::max<int64_t>(form->lo - 1, 0),
                                                                form->hi > 0 ? form->hi - 1 : -1, form->rest));
            memo_.put(key, got);
            return got;
        }
    }
    // the automaton's states in topological order, each carrying the term reached so far; an edge
    // keeps one term only if all its bytes agree there (read off the term's byte classes)
    const SliceAutomaton& a = slice_automaton(k);
    constexpr int64_t UNSET = -3;
    std::vector<int64_t> value(a.n, UNSET);
    value[0] = e;
    int64_t final = MIXED;
    for (int8_t s : a.order) {
        const int64_t v = value[s];
        if (v == UNSET) continue;
        if (a.finals[s]) final = v;
        for (const auto& [mask, t] : a.edges[s]) {
            int64_t got;
            if (v == int64_t(NOTHING) || v == MIXED) {
                got = v;
            } else {
                got = UNSET;
                const Id term = static_cast<Id>(v);
                for (const ByteSet& part : pool_.byte_classes(term)) {
                    const ByteSet both = part & mask;
                    if (both.empty()) continue;
                    const int64_t d = pool_.derive(term, both.lowest());
                    if (got == UNSET) {
                        got = d;
                    } else if (got != d) {
                        got = MIXED;
                        break;
                    }
                }
            }
            const int64_t old = value[t];
            value[t] = (old == UNSET || old == got) ? got : MIXED;
        }
    }
    memo_.put(key, final);
    return final;
}

int64_t char_successor(LazyAutomaton& a, int32_t q, int k) {
    Pool& pool = a.pool();
    const int64_t got = pool.slices().uniform_successor(a.expr(q), k);
    if (got == MIXED) return MIXED;
    const Id term = static_cast<Id>(got);
    if (term == NOTHING || (pool.algebraic(term) && !pool.is_live(term))) return -1;
    return a.state_of(term);
}

std::optional<std::pair<int64_t, bool>> counted_run(LazyAutomaton& a, int32_t q, int k, int64_t longest) {
    Pool& pool = a.pool();
    auto form = pool.slices().counted_body(a.expr(q), k);
    if (!form) return std::nullopt;
    if (pool.first_symbols(form->x)) return std::nullopt;  // (a call inside the repeated part: step the chain)
    const int64_t m = form->hi < 0 ? longest : std::min(form->hi, longest);
    const bool branches =
        m >= std::max<int64_t>(form->lo, 1) && (pool.nullable(form->rest) || pool.first_symbols(form->rest) != 0);
    return std::make_pair(m, branches);
}

std::optional<std::vector<int32_t>> slice_chain(LazyAutomaton& a, int32_t q, int k, int64_t longest) {
    Pool& pool = a.pool();
    auto form = pool.slices().counted_body(a.expr(q), k);
    if (!form) return std::nullopt;
    std::vector<int32_t> chain{q};
    for (int64_t j = 1; j <= longest; ++j) {
        if (form->hi >= 0 && form->hi < j) break;
        const int64_t lo_j = std::max<int64_t>(form->lo - j, 0);
        chain.push_back(a.state_of(counted(pool, form->x, lo_j, form->hi < 0 ? -1 : form->hi - j, form->rest)));
        if (form->hi < 0 && lo_j == 0) {  // unbounded: from here every length leads to the same state
            chain.push_back(chain.back());
            break;
        }
    }
    return chain;
}

std::vector<int32_t> slice_states(LazyAutomaton& a, int32_t q, int k, int64_t m) {
    if (auto chain = slice_chain(a, q, k, m)) return *chain;  // (read off a string body's counters)
    std::vector<int32_t> out{q};
    while (static_cast<int64_t>(out.size()) <= m) {
        const int64_t next = char_successor(a, out.back(), k);
        if (next < 0 || next == out.back()) break;  // (a loop: every further length leads here)
        out.push_back(static_cast<int32_t>(next));
    }
    return out;
}

std::optional<std::vector<int32_t>> slice_closure(LazyAutomaton& a, int32_t q, int k, int64_t longest, size_t max_states,
                                                  size_t max_derives) {
    check_slice(k);
    Pool& pool = a.pool();
    const SliceAutomaton& sa = slice_automaton(k);
    std::vector<Id> todo{a.expr(q)};       // the terms whose characters are read, first seen first
    std::vector<int64_t> level{0};         // (how many characters first led to each)
    std::unordered_set<Id> seen{todo[0]};
    std::vector<int32_t> out;              // the states reached after whole characters
    std::vector<std::vector<Id>> at(static_cast<size_t>(sa.n));
    std::vector<Id> derived;               // (per byte class of the term read: its derivative, once)
    size_t derives = 0;
    for (size_t i = 0; i < todo.size(); ++i) {
        if (level[i] >= longest) continue;  // (no slice token reads further: past it a character may die)
        // the terms each character of the slice leads to from todo[i], one state of the slice's
        // character automaton at a time (topological order: a state's terms are all in when read)
        for (auto& v : at) v.clear();
        at[0].push_back(todo[i]);
        for (const int8_t s : sa.order) {
            for (size_t j = 0; j < at[static_cast<size_t>(s)].size(); ++j) {
                const Id v = at[static_cast<size_t>(s)][j];
                if (sa.finals[static_cast<size_t>(s)]) {  // (a whole character read)
                    if (v == NOTHING || (pool.algebraic(v) && !pool.is_live(v))) return std::nullopt;
                    const int32_t state = a.state_of(v);
                    if (a.may_branch(state)) return std::nullopt;
                    if (std::find(out.begin(), out.end(), state) == out.end()) out.push_back(state);
                    if (seen.insert(v).second) {
                        if (seen.size() > max_states) return std::nullopt;
                        todo.push_back(v);
                        level.push_back(level[i] + 1);
                    }
                    continue;
                }
                const std::vector<ByteSet> classes = pool.byte_classes(v);  // (a copy: derive interns terms)
                // (one derivative per class, by its lowest byte as the automaton's rows take it: a
                // class's bytes all lead alike, on whichever of the character's edges they are)
                derived.assign(classes.size(), NOTHING);
                for (const auto& [mask, t] : sa.edges[static_cast<size_t>(s)]) {
                    for (size_t c = 0; c < classes.size(); ++c) {
                        if ((classes[c] & mask).empty()) continue;
                        if (derived[c] == NOTHING) {
                            if (++derives > max_derives) return std::nullopt;
                            derived[c] = pool.derive(v, classes[c].lowest());
                        }
                        const Id d = derived[c];
                        if (d == NOTHING) return std::nullopt;  // (a character of the slice dies)
                        std::vector<Id>& next = at[static_cast<size_t>(t)];
                        if (std::find(next.begin(), next.end(), d) == next.end()) next.push_back(d);
                    }
                }
            }
        }
    }
    return out;
}

StringSlice::StringSlice(int k_, const std::vector<std::string>& tokens, const std::vector<uint8_t>& walkable,
                         const TokenTrie& trie)
    : k(k_) {
    check_slice(k);
    const size_t v = tokens.size();
    is_slice.assign(v, 0);
    std::vector<int64_t> chars(v, 0), rest_ids;
    for (size_t i = 0; i < v; ++i) {
        if (!walkable[i] || tokens[i].empty()) continue;
        if (auto c = slice_characters(k, tokens[i])) {
            is_slice[i] = 1;
            chars[i] = *c;
            by_length.push_back(static_cast<int64_t>(i));
        } else {
            rest_ids.push_back(static_cast<int64_t>(i));
        }
    }
    std::stable_sort(by_length.begin(), by_length.end(), [&](int64_t a, int64_t b) { return chars[a] < chars[b]; });
    for (int64_t id : by_length) lengths.push_back(chars[id]);
    for (int64_t len = 0; len <= longest() + 1; ++len)
        length_starts.push_back(std::lower_bound(lengths.begin(), lengths.end(), len) - lengths.begin());
    rest = trie.restrict(rest_ids);
}

int64_t StringSlice::count_up_to(int64_t m) const {
    return std::upper_bound(lengths.begin(), lengths.end(), m) - lengths.begin();
}

std::pair<std::shared_ptr<TokenTrie>, std::shared_ptr<TokenTrie>> StringSlice::rest_cut(int64_t n) {
    {
        std::lock_guard<std::mutex> hold(lock_);
        auto it = cuts_.find(n);
        if (it != cuts_.end()) return it->second;
    }
    std::vector<int64_t> near, far;
    for (size_t j = 0; j < rest->token_ids.size(); ++j)
        (rest->depth_of(static_cast<int32_t>(rest->token_nodes[j])) <= n ? near : far).push_back(rest->token_ids[j]);
    auto cut = [&](const std::vector<int64_t>& ids) {
        auto part = rest->restrict(ids);
        for (int64_t& o : part->origin) o = rest->origin[o];
        return part;
    };
    auto got = std::make_pair(cut(near), cut(far));
    std::lock_guard<std::mutex> hold(lock_);
    return cuts_.emplace(n, std::move(got)).first->second;
}

std::shared_ptr<const std::vector<uint32_t>> StringSlice::up_to_bits(int64_t m, size_t words) {
    if (m > longest()) m = longest();
    {
        std::lock_guard<std::mutex> hold(lock_);
        auto it = bits_.find(m);
        if (it != bits_.end() && it->second->size() == words) return it->second;
    }
    auto out = std::make_shared<std::vector<uint32_t>>(words, 0);
    const int64_t count = count_up_to(m);
    for (int64_t j = 0; j < count; ++j) {
        const int64_t t = by_length[j];
        if (static_cast<size_t>(t >> 5) < words) (*out)[t >> 5] |= 1u << (t & 31);
    }
    std::lock_guard<std::mutex> hold(lock_);
    if (bits_.size() >= 256) {  // bounded: a few hundred masks
        bits_.clear();
        bits_bytes_ = 0;
    }
    bits_bytes_ += words * 4;
    bits_[m] = out;
    return out;
}

size_t StringSlice::memory_bytes() const {
    std::lock_guard<std::mutex> hold(lock_);
    return is_slice.size() + (by_length.size() + lengths.size()) * 8 + rest->memory_bytes() + bits_bytes_;
}

}  // namespace structgen
