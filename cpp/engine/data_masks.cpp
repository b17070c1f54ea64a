#include "data_masks.h"

#include <algorithm>
#include <string>

#include "errors.h"
#include "flat_map.h"
#include "token_bits.h"

namespace structgen {

namespace {
// the tokens of DataMasks' own walks with their end states and branch points: one buffer per
// thread, shared by the guides of the thread and kept warm across them, as FrameSolver's (a string's
// walk lists tens of thousands of tokens; a guide's own buffer was grown and faulted in anew)
thread_local FrameWalk data_walk;
}  // namespace

FrameWalk& DataMasks::raw() { return data_walk; }

namespace {
// a state that may read more first bytes than this may be a string's body (FrameSolver's WIDE_FROM)
constexpr int WIDE_FROM = 17;

uint64_t pair_key(int64_t a, int64_t b) { return static_cast<uint64_t>(a) << 32 | static_cast<uint32_t>(b); }

// the pops, each once, first seen first
void first_seen(std::vector<int64_t>& pops) {
    std::vector<int64_t> out;
    out.reserve(pops.size());
    std::unordered_set<int64_t> seen;
    for (const int64_t m : pops)
        if (seen.insert(m).second) out.push_back(m);
    pops.swap(out);
}
}  // namespace

size_t DataMasks::KeyHash::operator()(const Key& k) const noexcept {
    uint64_t h = mix64(static_cast<uint64_t>(k.a) * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(k.q));
    h = mix64(h ^ static_cast<uint64_t>(k.node));
    return static_cast<size_t>(mix64(h ^ static_cast<uint64_t>(k.data)));
}

void DataMasks::keep(size_t bytes) {
    if (frames_made_.size() + free_of_items_.size() + end_groups_.size() >= max_entries_) {  // (held frames stay alive through their shared_ptr)
        frames_made_.clear();
        end_groups_.clear();
        free_of_items_.clear();
        bytes_ = 0;
    }
    bytes_ += bytes;
}

// -- frames ----------------------------------------------------------------------------------------

std::shared_ptr<const Frame> DataMasks::frame_of(int64_t a, int64_t q, int64_t node, int64_t data) {
    if (!stacks_.carries_data()) throw InvalidArgument("DataMasks: the stacks carry no frame data");
    frames_.automaton(a).check(q);
    if (node < 0 || node >= frames_.trie().num_nodes()) throw OutOfRange("DataMasks: no trie node " + std::to_string(node));
    stacks_.check_data(a, data);
    return frame(a, static_cast<int32_t>(q), static_cast<int32_t>(node), data);
}

std::shared_ptr<const Frame> DataMasks::frame(int64_t a, int32_t q, int32_t node, int64_t data) {
    const StackTable::Kind kind = stacks_.kind(a);
    if (kind == StackTable::HELD) throw NeedsFrameData(a);  // (an item with a unique array nested in it, or its array: the guide's)
    if (kind == StackTable::ITEM) {
        const int64_t key = data ? stacks_.unique().mask_key(static_cast<int32_t>(data)) : 0;
        if (!key) return frames_.frame(a, q, node);  // (out of danger: its plain frame, made by the solver)
        data = key;
    } else if (kind == StackTable::PLAIN) {  // (an array's and an object's frame with no data are theirs too: refused by the solver)
        try {
            return frames_.frame(a, q, node);
        } catch (const NeedsFrameData&) {  // (it enters an automaton with frame data: made here)
        }
    }
    // (a frame's state clamped to what the longest token can tell apart: an object's keys written
    // change which guards pass and which states are dead, never what a counter tells apart)
    if (!data || kind == StackTable::GUARDED) q = frames_.automaton(a).clamped(q, frames_.longest());
    const Key key{a, q, node, data};
    if (auto found = frames_made_.find(key); found != frames_made_.end()) return found->second;
    if (active_.count(key)) return std::make_shared<Frame>();  // a call cycle that reads no byte: nothing new down this way
    DepthGuard guard(depth_);
    Computing computing(active_, key);
    std::shared_ptr<const Frame> out = make(a, q, node, data);
    keep(out->ids.size() * 8 + out->pops.size() * 8 + (out->bits ? out->bits->size() * 4 : 0) + 96);
    frames_made_.emplace(key, out);
    return out;
}

std::shared_ptr<const Frame> DataMasks::make(int64_t a, int32_t q, int32_t node, int64_t data) {
    const StackTable::Kind kind = stacks_.kind(a);
    if (kind == StackTable::ITEM) return item_in_danger(a, q, node, data);
    auto out = std::make_shared<Frame>();
    if (kind == StackTable::ARRAY) {
        array_frame(a, q, node, data, *out);
    } else if (kind == StackTable::GUARDED) {
        guarded_frame(a, q, node, data, *out);
    } else {
        const std::shared_ptr<const FrameSolver::Walk> own = frames_.own_walk(a, q, node);
        gather(a, 0, own->ids, own->bits, own->pops, own->calls, *out);
    }
    return out;
}

std::shared_ptr<const Frame> DataMasks::item_in_danger(int64_t a, int32_t q, int32_t node, int64_t key) {
    const std::shared_ptr<const Frame> plain = frames_.frame(a, q, node);
    UniqueData& unique = stacks_.unique();
    std::vector<int64_t> dead;
    unique.dead_tokens(frames_.automaton(a), frames_.trie(), q, node, unique.item(static_cast<int32_t>(key)).left, dead);
    if (dead.empty()) return plain;
    auto out = std::make_shared<Frame>();
    out->pops = plain->pops;
    if (plain->bits) {
        auto bits = std::make_shared<std::vector<uint32_t>>(*plain->bits);
        for (const int64_t t : dead) (*bits)[static_cast<size_t>(t) >> 5] &= ~(uint32_t{1} << (t & 31));
        out->bits = std::move(bits);
    } else {
        std::sort(dead.begin(), dead.end());
        for (const int64_t t : plain->ids)
            if (!std::binary_search(dead.begin(), dead.end(), t)) out->ids.push_back(t);
    }
    return out;
}

void DataMasks::raw_walk(int64_t a, int32_t q, int32_t node, std::vector<int64_t>& pops, std::vector<FrameSolver::Call>& calls) {
    LazyAutomaton& au = frames_.automaton(a);
    const TokenTrie& trie = frames_.trie();
    if (!node && au.pool().first_bytes(au.expr(q)).count() >= WIDE_FROM) throw NeedsFrameData(a);  // (a slice's walk: the guide's)
    const int32_t s = node ? au.clamped_head(q, trie.height[static_cast<size_t>(node)]) : q;
    raw().ids.clear(), raw().ends.clear(), raw().branch_nodes.clear(), raw().branch_states.clear();
    const int32_t roots[1] = {node};
    walk_frame(au, trie, roots, s, false, nullptr, stack_, raw(), true);
    branch_points(au, node, s, pops, calls);
}

void DataMasks::branch_points(LazyAutomaton& au, int32_t node, int32_t s, std::vector<int64_t>& pops, std::vector<FrameSolver::Call>& calls) {
    auto one = [&](int64_t m, int32_t p) {
        if (au.is_final(p)) pops.push_back(m);
        for (const auto& [k, r] : au.symbols_of(p)) calls.push_back({m, k, r});
    };
    if (frames_.trie().num_children[static_cast<size_t>(node)] > 0 && au.may_branch(s)) one(node, s);
    const std::vector<int64_t> nodes = raw().branch_nodes;  // (copies: symbols_of may build states, never walks)
    const std::vector<int32_t> states = raw().branch_states;
    for (size_t i = 0; i < nodes.size(); ++i) one(nodes[i], states[i]);
}

std::shared_ptr<const DataMasks::EndGroups> DataMasks::end_groups(int64_t a, int32_t q, int32_t node) {
    const Key key{a, q, node, 0};
    if (auto found = end_groups_.find(key); found != end_groups_.end()) return found->second;
    LazyAutomaton& au = frames_.automaton(a);
    auto out = std::make_shared<EndGroups>();
    const int32_t roots[1] = {0};
    auto walk_again = [&](const TokenTrie& t, const TokenTrie* full) {  // (raw(): tokens with their end states)
        raw().ids.clear(), raw().ends.clear(), raw().branch_nodes.clear(), raw().branch_states.clear();
        walk_frame(au, t, roots, q, false, full, stack_, raw(), true);
    };
    // (a root in a string under a length bound is cut where a cut changes its head; near the bound,
    // where none does, the solver walks it whole, and so its walk with ends is the own walk, below)
    const auto [n, clamped] = node ? std::pair<int64_t, int32_t>{0, q} : au.head_cut(q, frames_.short_token_cuts());
    if (n) {
        KeyGuards& guards = stacks_.guards();
        const bool shared = guards.blocking_guards(a, clamped) == guards.blocking_guards(a, q);
        // (the clamped state's groups before q's own walk: their walk with ends is then the one the
        // solver's cut walk reads the short tokens from, walked once, not again without ends)
        const std::shared_ptr<const EndGroups> near = shared ? end_groups(a, clamped, 0) : nullptr;
        out->own = frames_.own_walk(a, q, 0);
        if (shared) {
            // the solver's walk is cut for the positions of q's head: a token of at most n bytes ends in
            // a state of the clamped head that meets the guards q's would (inside the head, which calls
            // nothing, the tail's first; past it, the same state), so the clamped state's groups, those
            // tokens alone, are shared by the positions; the longer tokens are walked from q for theirs
            raw().ids.clear(), raw().ends.clear(), raw().branch_nodes.clear(), raw().branch_states.clear();
            walk_frame(au, *frames_.long_tokens(n), roots, q, false, &frames_.trie(), stack_, raw(), true);
            group_ends(a, q, *out);
            const std::shared_ptr<const Bits> shorts = frames_.short_tokens(n);
            const Bits& short_bits = *shorts;
            for (const EndGroups::Group& g : near->groups) {
                EndGroups::Group kept{g.guards, {}};
                for (const int64_t t : g.ids)
                    if (short_bits[static_cast<size_t>(t) >> 5] >> (t & 31) & 1) kept.ids.push_back(t);
                if (!kept.ids.empty()) out->groups.push_back(std::move(kept));
            }
        } else {
            // a cut whose clamped state meets other guards: walked again for its end states, where only
            // the tokens that are not slice 0's can leave the string, those alone
            if (body_tokens_safe(a, q)) walk_again(*frames_.slice(0).rest, &frames_.trie());
            else walk_again(frames_.trie(), nullptr);
            group_ends(a, q, *out);
        }
    } else {
        out->own = frames_.own_walk(a, q, node, raw());
        const std::optional<FrameSolver::RootSlice> sliced = node ? std::nullopt : frames_.root_slice(a, q);
        if (sliced) {
            // (its slice tokens were not walked: where one may end in a state that may die other than
            // with q, the whole trie is; one that dies with q needs no group, see group_ends)
            const std::vector<int32_t> ends = sliced->ends.empty() ? slice_states(au, q, sliced->k, sliced->m) : sliced->ends;
            KeyGuards& guards = stacks_.guards();
            const std::optional<uint64_t> own = guards.blocking_guards(a, q);
            bool risky = false;
            for (size_t i = 0; i < ends.size() && !risky; ++i) {
                const std::optional<uint64_t> g = guards.blocking_guards(a, ends[i]);
                risky = g.has_value() && g != own;
            }
            if (risky) walk_again(frames_.trie(), nullptr);
        }
        group_ends(a, q, *out);
    }
    size_t bytes = 96;
    for (const EndGroups::Group& g : out->groups) bytes += g.ids.size() * 8 + 48;
    keep(bytes);
    end_groups_.emplace(key, out);
    return out;
}

bool DataMasks::body_tokens_safe(int64_t a, int32_t q) {
    LazyAutomaton& au = frames_.automaton(a);
    Pool& pool = au.pool();
    const Id e = au.expr(q);
    if (pool.kind(e) != Kind::Seq) return false;
    const Node n = pool.node(e);  // (body · tail: a slice-0 byte the tail cannot read first keeps a token in the body)
    if (pool.symbols_id(n.a) || !(pool.first_bytes(n.b) & slice_bytes(0)).empty()) return false;
    return !stacks_.guards().term_blocking_guards(a, n.b).has_value();
}

void DataMasks::group_ends(int64_t a, int32_t q, EndGroups& out) {
    KeyGuards& guards = stacks_.guards();
    // (read in place through plain pointers: blocking_guards may build states, never walks; a
    // reference into the thread's buffers has its address looked up again at every read)
    const FrameWalk& walked = raw();
    const int64_t* const ids = walked.ids.data();
    const int32_t* const ends = walked.ends.data();
    const size_t count = walked.ids.size();
    const std::optional<uint64_t> own = guards.blocking_guards(a, q);
    // per end state its group, or -1: it never dies, or only with q (UNSEEN: not asked yet); the
    // states of a counted string's walk change from token to token (one per length)
    constexpr int64_t UNSEEN = -2;
    std::vector<int64_t> group(static_cast<size_t>(frames_.automaton(a).num_states()), UNSEEN);
    int32_t last = -1;  // (tokens in a row mostly end in one state: the last one's group, without a lookup)
    int64_t last_group = -1;
    for (size_t i = 0; i < count; ++i) {
        const int32_t e = ends[i];
        if (e != last) {
            int64_t& g = group[static_cast<size_t>(e)];
            if (g == UNSEEN) {
                g = -1;
                if (const std::optional<uint64_t> b = guards.blocking_guards(a, e); b && b != own) {
                    g = static_cast<int64_t>(out.groups.size());
                    out.groups.push_back({*b, {}});
                }
            }
            last = e, last_group = g;
        }
        if (last_group >= 0) out.groups[static_cast<size_t>(last_group)].ids.push_back(ids[i]);
    }
}

void DataMasks::array_frame(int64_t a, int32_t q, int32_t node, int64_t written, Frame& out) {
    std::vector<int64_t> pops;
    std::vector<FrameSolver::Call> calls;
    raw_walk(a, q, node, pops, calls);
    std::vector<int64_t> ids = raw().ids;
    if (written && !ids.empty()) {  // (a token may not end where only items written before could go on)
        const std::vector<int32_t> ends = raw().ends;
        std::unordered_map<int32_t, bool> dead;
        size_t kept = 0;
        for (size_t i = 0; i < ids.size(); ++i) {
            auto [it, fresh] = dead.try_emplace(ends[i], false);
            if (fresh) it->second = no_item_left(a, ends[i], written);
            if (!it->second) ids[kept++] = ids[i];
        }
        ids.resize(kept);
    }
    gather(a, written, ids, nullptr, std::move(pops), calls, out);
}

void DataMasks::guarded_frame(int64_t a, int32_t q, int32_t node, int64_t written, Frame& out) {
    // (where q can no longer finish, no token read from it can: each would be a way on; so the end
    // groups leave out the tokens whose end state dies exactly when q does)
    if (stacks_.guards().is_dead(a, q, written)) return;
    // the own walk less the tokens that end dead
    const std::shared_ptr<const EndGroups> groups = end_groups(a, q, node);
    std::vector<int64_t> dead;
    const auto w = static_cast<uint64_t>(written);
    for (const EndGroups::Group& g : groups->groups) {
        if (g.guards & ~w) continue;
        dead.insert(dead.end(), g.ids.begin(), g.ids.end());
    }
    const FrameSolver::Walk& own = *groups->own;
    if (dead.empty()) return gather(a, written, own.ids, own.bits, own.pops, own.calls, out);
    std::sort(dead.begin(), dead.end());
    std::vector<int64_t> ids;
    ids.reserve(own.ids.size());
    for (const int64_t t : own.ids)
        if (!std::binary_search(dead.begin(), dead.end(), t)) ids.push_back(t);
    std::shared_ptr<const std::vector<uint32_t>> bits;
    if (own.bits) {
        auto cut = std::make_shared<std::vector<uint32_t>>(*own.bits);
        for (const int64_t t : dead) (*cut)[static_cast<size_t>(t) >> 5] &= ~(uint32_t{1} << (t & 31));
        bits = std::move(cut);
    }
    gather(a, written, ids, bits, own.pops, own.calls, out);
}

void DataMasks::gather(int64_t a, int64_t data, std::span<const int64_t> own, const std::shared_ptr<const std::vector<uint32_t>>& own_bits,
                       std::vector<int64_t> pops, std::span<const FrameSolver::Call> calls, Frame& out) {
    const StackTable::Kind kind = stacks_.kind(a);
    const bool array = kind == StackTable::ARRAY;
    const TokenTrie& trie = frames_.trie();
    std::vector<std::shared_ptr<const Frame>> parts;
    for (const FrameSolver::Call& c : calls) {
        if (c.callee >= GUARD_FIRST) {  // (a guard: zero-width, the same frame goes on with its new keys)
            if (kind != StackTable::GUARDED) throw NeedsFrameData(a);
            const int64_t passed = stacks_.guards().pass(a, c.callee - GUARD_FIRST, data);
            if (passed < 0) continue;
            std::shared_ptr<const Frame> rest = frame(a, c.ret, static_cast<int32_t>(c.node), passed);
            pops.insert(pops.end(), rest->pops.begin(), rest->pops.end());
            parts.push_back(std::move(rest));
            continue;
        }
        const int64_t callee_data = array ? stacks_.unique().item_start(static_cast<int32_t>(data)) : 0;  // (a new item of the set)
        std::shared_ptr<const Frame> callee = frame(c.callee, 0, static_cast<int32_t>(c.node), callee_data);
        parts.push_back(callee);
        for (const int64_t m2 : callee->pops) {
            int64_t after = data;
            if (array) {  // (the item read from the call on: its value joins the set, or it was written already)
                const std::string text = trie.bytes_between(static_cast<int32_t>(c.node), static_cast<int32_t>(m2));
                after = stacks_.unique().after_item(static_cast<int32_t>(data), {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
                if (after < 0) continue;
            }
            std::shared_ptr<const Frame> rest = frame(a, c.ret, static_cast<int32_t>(m2), after);
            pops.insert(pops.end(), rest->pops.begin(), rest->pops.end());
            parts.push_back(std::move(rest));
        }
    }
    frames_.unite(parts, own, own_bits, out);
    first_seen(pops);
    out.pops = std::move(pops);
}

// -- what the items written leave -------------------------------------------------------------------

const std::vector<int64_t>& DataMasks::items_needed(int64_t a, int32_t q) {
    const uint64_t key = pair_key(a, q);
    if (auto found = needed_.find(key); found != needed_.end()) return found->second;
    LazyAutomaton& au = frames_.automaton(a);
    std::vector<int64_t> calls;
    std::vector<int32_t> todo{q};
    std::unordered_set<int32_t> seen{q};
    while (!todo.empty()) {
        const int32_t s = todo.back();
        todo.pop_back();
        if (au.is_final(s)) {  // (it may close without another item)
            calls.clear();
            break;
        }
        for (const auto& [k, r] : au.symbols_of(s))
            if (k < GUARD_FIRST && std::find(calls.begin(), calls.end(), k) == calls.end()) calls.push_back(k);
        au.build(s);
        for (int b = 0; b < 256; ++b) {
            const int32_t t = au.at(static_cast<int64_t>(s) * 256 + b);
            if (t >= 0 && seen.insert(t).second) todo.push_back(t);
        }
    }
    return needed_.emplace(key, std::move(calls)).first->second;
}

bool DataMasks::exhausted(int64_t k, int64_t written) {
    if (!written) return false;
    const uint64_t key = pair_key(k, written);
    if (auto found = exhausted_.find(key); found != exhausted_.end()) return found->second;
    LazyAutomaton& au = frames_.automaton(k);
    Pool& pool = au.pool();
    bool live = false;
    try {
        const Id rest = pool.minus(au.root(), stacks_.unique().taken(static_cast<int32_t>(written)));
        live = rest != NOTHING && pool.is_live(rest);
    } catch (const BudgetExceeded&) {  // (past the search's limit: the guide's witnesses may tell)
        throw NeedsFrameData(k);
    }
    return exhausted_.emplace(key, !live).first->second;
}

bool DataMasks::no_item_left(int64_t a, int32_t q, int64_t written) {
    const std::vector<int64_t> needed = items_needed(a, q);
    if (needed.empty()) return false;
    for (const int64_t k : needed)
        if (!exhausted(k, written)) return false;
    return true;
}

bool DataMasks::spells_strings(int64_t k) {
    LazyAutomaton& au = frames_.automaton(k);
    ByteSet quote;
    quote.set('"');
    return !au.pool().symbols_id(au.root()) && au.pool().first_bytes(au.root()) == quote;
}

bool DataMasks::endless_strings(int64_t k) {
    if (auto found = endless_.find(k); found != endless_.end()) return found->second;
    LazyAutomaton& au = frames_.automaton(k);
    const Pool& pool = au.pool();
    const Id root = au.root();
    bool endless = false;
    if (spells_strings(k)) {
        // a plain expression (no intersection, complement or embedded automaton: every term of it
        // that is not NOTHING spells something) with an unbounded loop over a non-empty body
        std::vector<Id> todo{root};
        std::unordered_set<Id> seen{root};
        bool plain = true;
        while (!todo.empty() && plain) {
            const Id e = todo.back();
            todo.pop_back();
            const Node& n = pool.node(e);
            auto push = [&](Id x) {
                if (seen.insert(x).second) todo.push_back(x);
            };
            switch (n.kind) {
                case Kind::Seq: push(n.a), push(n.b); break;
                case Kind::Alt:
                    for (const Id m : pool.members(e)) push(m);
                    break;
                case Kind::Rep:
                    if (n.d < 0 && n.a != EPSILON && n.a != NOTHING) endless = true;
                    push(n.a);
                    break;
                case Kind::Nothing: case Kind::Epsilon: case Kind::Bytes: break;
                default: plain = false;  // (Sym, Dfa, And, Not: not read here)
            }
        }
        endless = endless && plain;
    }
    return endless_.emplace(k, endless).first->second;
}

bool DataMasks::enters_no_item(int64_t a, int32_t q, int64_t m, std::vector<int64_t>& needed) {
    const uint64_t key = mix64(pair_key(a, q) ^ mix64(static_cast<uint64_t>(m)));
    auto found = free_of_items_.find(key);
    if (found == free_of_items_.end()) {
        std::vector<int64_t> pops;
        std::vector<FrameSolver::Call> calls;
        raw_walk(a, q, static_cast<int32_t>(m), pops, calls);
        std::vector<int64_t> items;
        if (!calls.empty()) {
            items.push_back(-1);
        } else {
            const std::vector<int32_t> ends = raw().ends;
            std::unordered_set<int32_t> done;
            for (const int32_t e : ends) {
                if (!done.insert(e).second) continue;
                for (const int64_t k : items_needed(a, e))
                    if (std::find(items.begin(), items.end(), k) == items.end()) items.push_back(k);
            }
        }
        keep(items.size() * 8 + 64);
        found = free_of_items_.emplace(key, std::move(items)).first;
    }
    const std::vector<int64_t>& items = found->second;
    if (!items.empty() && items[0] == -1) return false;
    for (const int64_t k : items)
        if (std::find(needed.begin(), needed.end(), k) == needed.end()) needed.push_back(k);
    return true;
}

// -- masks ------------------------------------------------------------------------------------------

void DataMasks::collect(std::span<const int64_t> sids, std::span<uint32_t> words) {
    if (!stacks_.carries_data()) throw InvalidArgument("DataMasks: the stacks carry no frame data");
    if (stacks_.frames_only()) throw InvalidArgument("DataMasks: unique arrays nest in items here, the stacks are the guide's");
    for (const int64_t sid : sids) stacks_.entry(sid);  // (all checked before anything is written)
    StackNodes seen;
    for (const int64_t sid : sids) collect_from(sid, 0, words, seen);
}

void DataMasks::collect_from(int64_t sid, int64_t node, std::span<uint32_t> words, StackNodes& seen) {
    const TokenTrie& trie = frames_.trie();
    std::vector<std::pair<int64_t, int64_t>> todo{{sid, node}};
    std::vector<int64_t> rest;
    while (!todo.empty()) {
        const auto [s, n] = todo.back();
        todo.pop_back();
        if (!seen.first(s, n)) continue;
        const StackTable::Entry e = stacks_.entry(s);
        const std::shared_ptr<const Frame> f = frame(e.a, e.q, static_cast<int32_t>(n), e.data);
        or_frame(*f, words);
        if (e.parent < 0 || f->pops.empty()) continue;
        const bool item = stacks_.kind(e.a) == StackTable::ITEM;
        const std::vector<int64_t>* pops = &f->pops;
        if (f->pops.size() >= RETURNS_FROM) {
            if (!item) {
                returns(e.parent, f->pops).or_into(words);
                continue;
            }
            rest.clear();
            if (new_values_return(s, f->pops, words, rest)) pops = &rest;
        }
        for (const int64_t m : *pops) {
            const int64_t caller = item ? stacks_.returned(e.parent, e.data, trie.bytes_between(static_cast<int32_t>(n), static_cast<int32_t>(m)))
                                        : e.parent;
            if (caller >= 0) todo.emplace_back(caller, m);
        }
    }
}

const TokenSet& DataMasks::returns(int64_t parent, const std::vector<int64_t>& pops) {
    return callers_.get(parent, pops, frames_.words(), [&](int64_t m, std::span<uint32_t> out, StackNodes& in) {
        collect_from(parent, m, out, in);
    });
}

bool DataMasks::new_values_return(int64_t sid, const std::vector<int64_t>& pops, std::span<uint32_t> words, std::vector<int64_t>& rest) {
    const StackTable::Entry e = stacks_.entry(sid);
    UniqueData& unique = stacks_.unique();
    if (unique.mask_key(static_cast<int32_t>(e.data))) return false;  // (in danger: the value may be one written)
    if (!(unique.text(static_cast<int32_t>(e.data)).starts_with('"') || spells_strings(e.a)))
        return false;  // (a string item: every spelling of a string is among those its danger reads)
    const StackTable::Entry p = stacks_.entry(e.parent);
    std::vector<int64_t> free, needed;
    for (const int64_t m : pops) (enters_no_item(p.a, p.q, m, needed) ? free : rest).push_back(m);
    if (free.size() < RETURNS_FROM) return false;
    for (const int64_t k : needed)
        if (!endless_strings(k)) return false;  // (one more value written may leave it none: each pop's own set decides)
    const int64_t shared = stacks_.stack(p.a, p.q, p.parent, 0);  // (the array with no item written: its frames are every set's here)
    returns(shared, free).or_into(words);
    ++shared_returns_;
    return true;
}

}  // namespace structgen
