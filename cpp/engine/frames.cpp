#include "frames.h"

#include <algorithm>
#include <string>

#include "errors.h"
#include "flat_map.h"
#include "frame_walk.h"
#include "slices.h"
#include "stack_union.h"
#include "token_bits.h"

namespace structgen {

// a union of this many ids or more goes through a bitmap over the vocabulary, not a sort
constexpr size_t UNION_BY_BITMAP = 256;
// a short walk (cut_walk) listing more tokens than this keeps them packed
constexpr size_t PACK_SHORT_FROM = 256;

namespace {

// Scratch per thread, shared by every solver of the thread (sized by the largest trie and
// vocabulary met): the walk's stack, a bitmap over token ids (all zero between unions), and a
// stamp per trie node (a node is seen in this frame where its stamp is the current one).
thread_local WalkStack scratch_stack;
thread_local std::vector<uint64_t> scratch_tokens;
thread_local std::vector<uint32_t> scratch_nodes;
thread_local uint32_t scratch_stamp = 0;
// the raw result of a frame walk (a string's walk reads tens of thousands of tokens: its buffers,
// grown once per thread, are not allocated, grown and faulted in again for every walk)
thread_local FrameWalk scratch_walk;

}  // namespace
// a state that may read more first bytes than this may be a string's body (a slice may apply)
constexpr int WIDE_FROM = 17;
// the states a root slice's closure may hold (slice_closure): a key's first characters, past them the
// rest is walked (at most 64 states in every real-world schema sampled). A string whose characters
// lead different ways under a pending lower bound (an ARN, `arn:.*` with minLength 20) reaches new
// states at every character and level: its closures held 254 states or failed past 1,024, costing
// more than the whole walk they would save
constexpr size_t MAX_CLOSURE = 128;
// and the derivatives it may take: the closures taken along the benchmark's instances and walks took
// at most 1,647 (a median of 245). A key string beside a pattern that counts (`[\p{L}\p{N}…]*|…resource-groups:Name`,
// at most 163 characters) reads a new state at every character and level, each with hundreds of
// Unicode byte classes: its closures failed past the state cap after 53,000-61,000 derivatives, 10-18 ms
constexpr size_t MAX_CLOSURE_DERIVES = 4096;

int64_t Frame::size() const {
    if (!bits) return static_cast<int64_t>(ids.size());
    return popcount_words(*bits);
}

size_t FrameSolver::KeyHash::operator()(const Key& k) const noexcept {
    return static_cast<size_t>(mix64(static_cast<uint64_t>(k.a) * 0x9E3779B97F4A7C15ull ^ mix64(static_cast<uint64_t>(k.q) << 32 ^ static_cast<uint64_t>(k.node))));
}

FrameSolver::FrameSolver(std::vector<LazyAutomaton*> autos, std::shared_ptr<TokenIndex> index, size_t max_entries)
    : autos_(std::move(autos)), index_(std::move(index)), max_entries_(std::max<size_t>(max_entries, 1)) {
    if (!index_) throw InvalidArgument("FrameSolver: no token index");
    trie_ = index_->trie_ptr();
    vocab_size_ = static_cast<int64_t>(index_->size());
    longest_ = index_->longest_token();
    data_.assign(autos_.size(), 0);
}

void FrameSolver::mark_frame_data(int64_t k, bool own_plain) {
    if (k < 0 || k >= static_cast<int64_t>(autos_.size())) throw OutOfRange("FrameSolver: no automaton " + std::to_string(k));
    data_[static_cast<size_t>(k)] = own_plain ? OWN_PLAIN : 1;
    any_data_ = true;
}

LazyAutomaton& FrameSolver::automaton(int64_t a) const {
    if (a < 0 || a >= static_cast<int64_t>(autos_.size())) throw OutOfRange("FrameSolver: no automaton " + std::to_string(a));
    if (!autos_[static_cast<size_t>(a)]) throw MissingAutomaton(a);
    return *autos_[static_cast<size_t>(a)];
}

void FrameSolver::set_automaton(int64_t k, LazyAutomaton* a) {
    if (k < 0 || k >= static_cast<int64_t>(autos_.size())) throw OutOfRange("FrameSolver: no automaton " + std::to_string(k));
    if (!a) throw InvalidArgument("FrameSolver: no automaton given");
    LazyAutomaton*& slot = autos_[static_cast<size_t>(k)];
    if (slot && slot != a) throw InvalidArgument("FrameSolver: automaton " + std::to_string(k) + " was given already");
    slot = a;
}

std::shared_ptr<const Frame> FrameSolver::frame(int64_t a, int64_t q, int64_t node) {
    LazyAutomaton& auto_ = automaton(a);
    auto_.check(q);
    if (node < 0 || node >= trie_->num_nodes()) throw OutOfRange("FrameSolver: no trie node " + std::to_string(node));
    if (refuses_own(a)) throw NeedsFrameData(a);
    return solve(a, static_cast<int32_t>(q), static_cast<int32_t>(node));
}

void FrameSolver::keep(size_t bytes) {
    if (frames_.size() + walks_.size() + refused_.size() + root_slices_.size() >= max_entries_) {  // (held parts stay alive through their shared_ptr)
        frames_.clear();
        walks_.clear();
        root_slices_.clear();
        refused_.clear();
        bytes_ = 0;
    }
    bytes_ += bytes;
}

void FrameSolver::sort_out(int64_t a, LazyAutomaton& auto_, const FrameWalk& raw, int64_t root, int32_t q, Walk& out) {
    // the branch points: the root's (where its state may branch off), then the walk's, in walk order
    auto one = [&](int64_t m, int32_t p) {
        if (auto_.is_final(p)) out.pops.push_back(m);
        for (const auto& [k, r] : auto_.symbols_of(p)) {
            if (k >= GUARD_FIRST || has_frame_data(k)) out.needs_data = true;  // (the frame is refused: solve)
            out.calls.push_back({m, k, r});
        }
    };
    if (root >= 0 && trie_->num_children[static_cast<size_t>(root)] > 0 && auto_.may_branch(q)) one(root, q);
    for (size_t i = 0; i < raw.branch_nodes.size(); ++i) one(raw.branch_nodes[i], raw.branch_states[i]);
}

int64_t FrameSolver::slice_run(LazyAutomaton& a, int32_t q, int k) {
    const int64_t first = char_successor(a, q, k);
    if (first == MIXED || first < 0) return -1;
    const int64_t longest = index_->slice(k).longest();
    if (auto run = counted_run(a, q, k, longest)) return run->second ? -1 : run->first;  // (a string body: its counters)
    // one character at a time: every slice character must lead one way, and no state on the way may branch off
    std::vector<int32_t> chain{q};
    while (static_cast<int64_t>(chain.size()) <= longest) {
        const int64_t next = char_successor(a, chain.back(), k);
        if (next == MIXED) return -1;
        if (next < 0) break;
        if (a.may_branch(static_cast<int32_t>(next))) return -1;
        chain.push_back(static_cast<int32_t>(next));
        if (chain.back() == chain[chain.size() - 2]) break;  // a loop: every length leads here
    }
    const size_t n = chain.size();
    return n > 1 && chain[n - 1] == chain[n - 2] ? longest : static_cast<int64_t>(n) - 1;
}

std::optional<FrameSolver::RootSlice> FrameSolver::root_slice(int64_t a, int32_t q) {
    LazyAutomaton& auto_ = automaton(a);
    if (auto_.pool().first_bytes(auto_.expr(q)).count() < WIDE_FROM) return std::nullopt;
    const Key key{a, q, 0};
    if (auto found = root_slices_.find(key); found != root_slices_.end()) return found->second;
    std::optional<RootSlice> out;
    for (int k = 0; k < NUM_SLICES && !out; ++k) {
        if (const int64_t m = slice_run(auto_, q, k); m >= 0) {
            out = RootSlice{k, m, {}};
            break;
        }
        if (!slice_tables::tables[k].closure || char_successor(auto_, q, k) != MIXED) continue;
        // (its characters lead different ways: the states they lead to, where all of them read every slice token)
        const int64_t longest = index_->slice(k).longest();
        if (auto ends = slice_closure(auto_, q, k, longest, MAX_CLOSURE, MAX_CLOSURE_DERIVES)) out = RootSlice{k, longest, std::move(*ends)};
    }
    // (counted, not kept through keep(): a caller may hold an iterator into walks_; the next keep() clears it with them)
    bytes_ += out ? out->ends.size() * 4 + 64 : 64;
    root_slices_.emplace(key, out);
    return out;
}

std::shared_ptr<const FrameSolver::Walk> FrameSolver::walk(int64_t a, int32_t q, int32_t node) {
    LazyAutomaton& auto_ = automaton(a);
    if (!node) {
        const auto [n, clamped] = auto_.head_cut(q, index_->short_token_cuts());
        if (n) return cut_walk(a, auto_, q, n, clamped);
    }
    return plain_walk(a, auto_, q, node);
}

std::shared_ptr<const FrameSolver::Walk> FrameSolver::own_walk(int64_t a, int32_t q, int32_t node, FrameWalk& ends) {
    LazyAutomaton& auto_ = automaton(a);
    if (!node && auto_.head_cut(q, index_->short_token_cuts()).first != 0)
        throw InvalidArgument("FrameSolver: own_walk with ends at a root whose walk is cut");
    return plain_walk(a, auto_, q, node, &ends);
}

std::shared_ptr<const FrameSolver::Walk> FrameSolver::plain_walk(int64_t a, LazyAutomaton& auto_, int32_t q, int32_t node, FrameWalk* ends) {
    const TokenTrie& t = *trie_;
    if (node) q = auto_.clamped_head(q, t.height[static_cast<size_t>(node)]);
    const Key key{a, q, node};
    const auto found = walks_.find(key);
    if (found != walks_.end() && !ends) return found->second;
    auto out = std::make_shared<Walk>();
    // (a walk makes no walk inside it: the buffers are free here; with ends, the caller's own, not a copy)
    FrameWalk& raw = ends ? *ends : scratch_walk;
    raw.ids.clear(), raw.ends.clear(), raw.branch_nodes.clear(), raw.branch_states.clear();
    const int32_t roots[1] = {node};
    const std::optional<RootSlice> sliced = node ? std::nullopt : root_slice(a, q);
    if (sliced) {  // a string body: the slice tokens from the vocabulary's slice, the rest walked in its own trie
        StringSlice& sl = index_->slice(sliced->k);
        if (sl.count_up_to(sliced->m) > 0) out->bits = sl.up_to_bits(sliced->m, index_->words());
        if (!sliced->ends.empty() && found == walks_.end()) ++closure_slices_;
        walk_frame(auto_, *sl.rest, roots, q, false, &t, scratch_stack, raw, ends != nullptr);
    } else {
        walk_frame(auto_, t, roots, q, false, nullptr, scratch_stack, raw, ends != nullptr);
    }
    if (ends && found != walks_.end()) return found->second;  // (walked again for its ends)
    const size_t words = index_->words();
    if (!out->bits && raw.ids.size() * 2 > words) {  // (packed where the words take less room than the ids)
        auto bits = std::make_shared<std::vector<uint32_t>>(words, 0);
        set_token_bits(*bits, raw.ids);
        out->bits = std::move(bits);
    } else {
        out->ids.assign(raw.ids.begin(), raw.ids.end());
    }
    sort_out(a, auto_, raw, node, q, *out);
    keep(out->ids.size() * 8 + (out->bits && !sliced ? words * 4 : 0) + out->pops.size() * 8 + out->calls.size() * sizeof(Call) + 64);
    walks_.emplace(key, out);
    return out;
}

std::shared_ptr<const FrameSolver::Walk> FrameSolver::short_walk(int64_t a, LazyAutomaton& auto_, int32_t clamped, int64_t n) {
    const Key key{a, clamped, -2 - n};
    if (auto found = walks_.find(key); found != walks_.end()) return found->second;
    const TokenTrie& t = *trie_;
    const std::shared_ptr<const Walk> whole = plain_walk(a, auto_, clamped, 0);
    auto out = std::make_shared<Walk>();
    const std::shared_ptr<const Bits> shorts = index_->short_tokens(n);  // (a bit per token: read in cache, a length per token is not)
    const Bits& short_bits = *shorts;
    for (const int64_t id : whole->ids)
        if (short_bits[static_cast<size_t>(id) >> 5] >> (id & 31) & 1) out->ids.push_back(id);
    if (whole->bits || out->ids.size() > PACK_SHORT_FROM) {
        // (a string slice's tokens filtered by one AND, never listed; and the listed ones packed in
        // with them where many: every position's frame shares these words, not a copy of the ids)
        auto bits = std::make_shared<std::vector<uint32_t>>(index_->words(), 0);
        if (whole->bits)
            for (size_t i = 0; i < bits->size(); ++i) (*bits)[i] = (*whole->bits)[i] & short_bits[i];
        set_token_bits(*bits, out->ids);
        out->ids.clear();
        out->bits = std::move(bits);
    }
    // the branch points within n bytes (past the string, the clamped state goes on as the position's own)
    for (const int64_t m : whole->pops)
        if (t.depth_of(static_cast<int32_t>(m)) <= n) out->pops.push_back(m);
    for (const Call& c : whole->calls) {
        if (t.depth_of(static_cast<int32_t>(c.node)) > n) continue;
        if (c.callee >= GUARD_FIRST || has_frame_data(c.callee)) out->needs_data = true;
        out->calls.push_back(c);
    }
    keep(out->ids.size() * 8 + (out->bits ? out->bits->size() * 4 : 0) + out->pops.size() * 8 + out->calls.size() * sizeof(Call) + 64);
    walks_.emplace(key, out);
    return out;
}

std::shared_ptr<const FrameSolver::Walk> FrameSolver::cut_walk(int64_t a, LazyAutomaton& auto_, int32_t q, int64_t n, int32_t clamped) {
    const Key key{a, q, CUT_WALK};
    if (auto found = walks_.find(key); found != walks_.end()) return found->second;
    const std::shared_ptr<const Walk> near = short_walk(a, auto_, clamped, n);
    auto out = std::make_shared<Walk>(*near);  // (the short tokens' bits shared, not copied)
    // the tokens of more than n bytes from q itself, in their own trie; their branch points past n bytes
    FrameWalk& raw = scratch_walk;
    raw.ids.clear(), raw.branch_nodes.clear(), raw.branch_states.clear();
    const int32_t roots[1] = {0};
    const TokenTrie& t = *trie_;
    walk_frame(auto_, *index_->long_tokens(n), roots, q, true, &t, scratch_stack, raw, false);
    out->ids.insert(out->ids.end(), raw.ids.begin(), raw.ids.end());
    size_t kept = 0;
    for (size_t i = 0; i < raw.branch_nodes.size(); ++i) {
        if (t.depth_of(static_cast<int32_t>(raw.branch_nodes[i])) <= n) continue;
        raw.branch_nodes[kept] = raw.branch_nodes[i];
        raw.branch_states[kept++] = raw.branch_states[i];
    }
    raw.branch_nodes.resize(kept), raw.branch_states.resize(kept);
    sort_out(a, auto_, raw, -1, q, *out);
    keep(out->ids.size() * 8 + out->pops.size() * 8 + out->calls.size() * sizeof(Call) + 64);
    walks_.emplace(key, out);
    return out;
}

FrameSolver::WalkCounts FrameSolver::walk_counts() const {
    WalkCounts out;
    for (const auto& [key, walk] : walks_) ++(key.node >= 0 ? out.plain : key.node == CUT_WALK ? out.cut : out.short_);
    return out;
}

std::shared_ptr<const Frame> FrameSolver::solve(int64_t a, int32_t q, int32_t node) {
    q = automaton(a).clamped(q, longest_);
    const Key key{a, q, node};
    if (auto found = frames_.find(key); found != frames_.end()) return found->second;
    if (active_.count(key)) return empty_;  // a call cycle that reads no byte: nothing new down this way
    if (refused_.count(key) || refuses_own(a)) throw NeedsFrameData(a);
    DepthGuard guard(depth_);
    Computing computing(active_, key);

    auto out = std::make_shared<Frame>();
    try {
        const std::shared_ptr<const Walk> own = walk(a, q, node);
        if (own->needs_data) throw NeedsFrameData(a);
        gather(a, own->ids, own->bits, own->pops, own->calls, *out);
    } catch (const NeedsFrameData&) {
        keep(64);
        refused_.insert(key);
        throw;
    }
    keep(out->ids.size() * 8 + out->pops.size() * 8 + (out->bits ? out->bits->size() * 4 : 0) + 64);
    frames_.emplace(key, out);
    return out;
}

Frame FrameSolver::expand(int64_t a, std::span<const int64_t> pops, std::span<const Call> calls) {
    automaton(a);
    const int64_t num_nodes = trie_->num_nodes();
    for (const int64_t m : pops)
        if (m < 0 || m >= num_nodes) throw OutOfRange("FrameSolver: no trie node " + std::to_string(m));
    for (const Call& c : calls) {
        if (c.node < 0 || c.node >= num_nodes) throw OutOfRange("FrameSolver: a call at no trie node (" + std::to_string(c.node) + ")");
        automaton(c.callee);
        automaton(a).check(c.ret);
    }
    Frame out;
    gather(a, {}, nullptr, pops, calls, out);
    return out;
}

void FrameSolver::gather(int64_t a, std::span<const int64_t> ids, const std::shared_ptr<const std::vector<uint32_t>>& bits,
                         std::span<const int64_t> own_pops, std::span<const Call> calls, Frame& out) {
    std::vector<std::shared_ptr<const Frame>> parts;
    std::vector<int64_t> pops(own_pops.begin(), own_pops.end());
    for (const Call& c : calls) {
        std::shared_ptr<const Frame> callee = solve(c.callee, 0, static_cast<int32_t>(c.node));
        parts.push_back(callee);
        for (const int64_t m2 : callee->pops) {
            std::shared_ptr<const Frame> rest = solve(a, c.ret, static_cast<int32_t>(m2));
            pops.insert(pops.end(), rest->pops.begin(), rest->pops.end());
            parts.push_back(std::move(rest));
        }
    }
    unite(parts, ids, bits, out);
    // the pops, each once, first seen first
    if (pops.size() <= 1) {
        out.pops = std::move(pops);
        return;
    }
    const size_t nodes = static_cast<size_t>(trie_->num_nodes());
    if (scratch_nodes.size() < nodes) scratch_nodes.resize(nodes, 0);
    if (++scratch_stamp == 0) {
        std::fill(scratch_nodes.begin(), scratch_nodes.end(), 0);
        scratch_stamp = 1;
    }
    const uint32_t stamp = scratch_stamp;
    uint32_t* const seen = scratch_nodes.data();  // (a pointer: a thread_local's address is looked up again at every use)
    for (const int64_t m : pops) {
        uint32_t& s = seen[static_cast<size_t>(m)];
        if (s != stamp) s = stamp, out.pops.push_back(m);
    }
}

void FrameSolver::unite(std::span<const std::shared_ptr<const Frame>> parts, std::span<const int64_t> own,
                        const std::shared_ptr<const std::vector<uint32_t>>& own_bits, Frame& out) {
    bool packed = own_bits != nullptr;
    for (const auto& p : parts) packed = packed || p->bits != nullptr;
    if (packed) {  // (a slice's or a large walk's tokens among them: the union as a packed mask)
        size_t contributors = (own.empty() ? 0 : 1) + (own_bits ? 1 : 0);
        const std::shared_ptr<const std::vector<uint32_t>>* alone = own_bits ? &own_bits : nullptr;
        for (const auto& p : parts) {
            contributors += (p->ids.empty() ? 0 : 1) + (p->bits ? 1 : 0);
            if (p->bits) alone = &p->bits;
        }
        if (contributors == 1) {  // (one packed part and nothing else: shared, not copied)
            out.bits = *alone;
            return;
        }
        auto bits = std::make_shared<std::vector<uint32_t>>(index_->words(), 0);
        auto add = [&](std::span<const int64_t> ids, const std::shared_ptr<const std::vector<uint32_t>>& b) {
            for (const int64_t t : ids) (*bits)[static_cast<size_t>(t) >> 5] |= uint32_t{1} << (t & 31);
            if (b) or_token_bits(*bits, *b);
        };
        add(own, own_bits);
        for (const auto& p : parts) add(p->ids, p->bits);
        out.bits = std::move(bits);
        return;
    }
    size_t nonempty = own.empty() ? 0 : 1, total = own.size();
    std::span<const int64_t> only = own;
    for (const auto& p : parts)
        if (!p->ids.empty()) ++nonempty, total += p->ids.size(), only = p->ids;
    if (nonempty == 0) return;
    if (nonempty == 1) {  // (one part: as it is)
        out.ids.assign(only.begin(), only.end());
        return;
    }
    out.ids.reserve(total);
    if (total < UNION_BY_BITMAP) {
        out.ids.insert(out.ids.end(), own.begin(), own.end());
        for (const auto& p : parts) out.ids.insert(out.ids.end(), p->ids.begin(), p->ids.end());
        std::sort(out.ids.begin(), out.ids.end());
        out.ids.erase(std::unique(out.ids.begin(), out.ids.end()), out.ids.end());
        return;
    }
    const size_t words = static_cast<size_t>((vocab_size_ + 63) / 64);
    if (scratch_tokens.size() < words) scratch_tokens.resize(words, 0);  // (all zero: every union clears what it set)
    uint64_t* const marks = scratch_tokens.data();  // (a pointer: a thread_local's address is looked up again at every use)
    auto mark = [&](std::span<const int64_t> ids) {
        for (const int64_t t : ids) marks[static_cast<size_t>(t) >> 6] |= uint64_t{1} << (t & 63);
    };
    mark(own);
    for (const auto& p : parts) mark(p->ids);
    for (size_t w = 0; w < words; ++w) {
        uint64_t x = marks[w];
        if (!x) continue;
        marks[w] = 0;
        while (x) {
            out.ids.push_back(static_cast<int64_t>(w * 64 + static_cast<size_t>(__builtin_ctzll(x))));
            x &= x - 1;
        }
    }
}

}  // namespace structgen
