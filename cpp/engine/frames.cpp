#include "frames.h"

#include <algorithm>
#include <string>

#include "errors.h"
#include "flat_map.h"
#include "frame_walk.h"

namespace structgen {

// a union of this many ids or more goes through a bitmap over the vocabulary, not a sort
constexpr size_t UNION_BY_BITMAP = 2048;

size_t FrameSolver::KeyHash::operator()(const Key& k) const noexcept {
    return static_cast<size_t>(mix64(static_cast<uint64_t>(k.a) * 0x9E3779B97F4A7C15ull ^ mix64(static_cast<uint64_t>(k.q) << 32 ^ static_cast<uint64_t>(k.node))));
}

FrameSolver::FrameSolver(std::vector<LazyAutomaton*> autos, std::shared_ptr<const TokenTrie> trie, int64_t vocab_size,
                         int64_t longest_token, size_t max_entries)
    : autos_(std::move(autos)), trie_(std::move(trie)), vocab_size_(vocab_size), longest_(longest_token),
      max_entries_(std::max<size_t>(max_entries, 1)) {
    if (!trie_) throw InvalidArgument("FrameSolver: no trie");
    if (vocab_size_ < 0) throw InvalidArgument("FrameSolver: a negative vocabulary size");
    for (int64_t id : trie_->token_ids)
        if (id < 0 || id >= vocab_size_) throw InvalidArgument("FrameSolver: a token id of the trie is outside the vocabulary");
}

LazyAutomaton& FrameSolver::automaton(int64_t a) const {
    if (a < 0 || a >= static_cast<int64_t>(autos_.size()) || !autos_[static_cast<size_t>(a)])
        throw OutOfRange("FrameSolver: no automaton " + std::to_string(a));
    return *autos_[static_cast<size_t>(a)];
}

std::shared_ptr<const Frame> FrameSolver::frame(int64_t a, int64_t q, int64_t node) {
    LazyAutomaton& auto_ = automaton(a);
    auto_.check(q);
    if (node <= 0 || node >= trie_->num_nodes()) throw OutOfRange("FrameSolver: no trie node " + std::to_string(node) + " below the root");
    return solve(a, static_cast<int32_t>(q), static_cast<int32_t>(node));
}

void FrameSolver::keep(size_t bytes) {
    if (frames_.size() + walks_.size() >= max_entries_) {  // (held parts stay alive through their shared_ptr)
        frames_.clear();
        walks_.clear();
        bytes_ = 0;
    }
    bytes_ += bytes;
}

std::shared_ptr<const FrameSolver::Walk> FrameSolver::walk(int64_t a, int32_t q, int32_t node) {
    LazyAutomaton& auto_ = automaton(a);
    const TokenTrie& t = *trie_;
    q = auto_.clamped_head(q, t.height[static_cast<size_t>(node)]);
    const Key key{a, q, node};
    if (auto found = walks_.find(key); found != walks_.end()) return found->second;
    FrameWalk raw;
    const int32_t roots[1] = {node};
    walk_frame(auto_, t, roots, q, false, nullptr, stack_, raw);
    auto out = std::make_shared<Walk>();
    out->ids = std::move(raw.ids);
    // the branch points: the root's (where its state may branch off), then the walk's, in walk order
    auto sort_out = [&](int64_t m, int32_t p) {
        if (auto_.is_final(p)) out->pops.push_back(m);
        for (const auto& [k, r] : auto_.symbols_of(p)) {
            if (k >= GUARD_FIRST) throw InvalidArgument("FrameSolver: automaton " + std::to_string(a) + " passes a guard (its frames need frame data)");
            out->calls.push_back({m, k, r});
        }
    };
    if (t.num_children[static_cast<size_t>(node)] > 0 && may_branch(auto_, q)) sort_out(node, q);
    for (size_t i = 0; i < raw.branch_nodes.size(); ++i) sort_out(raw.branch_nodes[i], raw.branch_states[i]);
    keep(out->ids.size() * 8 + out->pops.size() * 8 + out->calls.size() * sizeof(Call) + 64);
    walks_.emplace(key, out);
    return out;
}

std::shared_ptr<const Frame> FrameSolver::solve(int64_t a, int32_t q, int32_t node) {
    q = automaton(a).clamped(q, longest_);
    const Key key{a, q, node};
    if (auto found = frames_.find(key); found != frames_.end()) return found->second;
    if (active_.count(key)) return empty_;  // a call cycle that reads no byte: nothing new down this way
    DepthGuard guard(depth_);
    active_.insert(key);
    struct Leave {
        std::unordered_set<Key, KeyHash>& active;
        Key key;
        ~Leave() { active.erase(key); }
    } leave{active_, key};

    const std::shared_ptr<const Walk> own = walk(a, q, node);
    auto out = std::make_shared<Frame>();
    gather(a, own->ids, own->pops, own->calls, *out);
    keep(out->ids.size() * 8 + out->pops.size() * 8 + 64);
    frames_.emplace(key, out);
    return out;
}

Frame FrameSolver::expand(int64_t a, std::span<const int64_t> pops, std::span<const Call> calls) {
    automaton(a);
    const int64_t num_nodes = trie_->num_nodes();
    for (const int64_t m : pops)
        if (m < 0 || m >= num_nodes) throw OutOfRange("FrameSolver: no trie node " + std::to_string(m));
    for (const Call& c : calls) {
        if (c.node <= 0 || c.node >= num_nodes) throw OutOfRange("FrameSolver: a call at no trie node below the root (" + std::to_string(c.node) + ")");
        automaton(c.callee);
        automaton(a).check(c.ret);
    }
    Frame out;
    gather(a, {}, pops, calls, out);
    return out;
}

void FrameSolver::gather(int64_t a, std::span<const int64_t> ids, std::span<const int64_t> own_pops, std::span<const Call> calls,
                         Frame& out) {
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
    unite(parts, ids, out.ids);
    // the pops, each once, first seen first
    if (seen_nodes_.size() != static_cast<size_t>(trie_->num_nodes())) seen_nodes_.assign(static_cast<size_t>(trie_->num_nodes()), 0);
    if (++stamp_ == 0) {
        std::fill(seen_nodes_.begin(), seen_nodes_.end(), 0);
        stamp_ = 1;
    }
    for (const int64_t m : pops) {
        uint32_t& s = seen_nodes_[static_cast<size_t>(m)];
        if (s != stamp_) s = stamp_, out.pops.push_back(m);
    }
}

void FrameSolver::unite(std::span<const std::shared_ptr<const Frame>> parts, std::span<const int64_t> own,
                        std::vector<int64_t>& out) {
    size_t nonempty = own.empty() ? 0 : 1, total = own.size();
    std::span<const int64_t> only = own;
    for (const auto& p : parts)
        if (!p->ids.empty()) ++nonempty, total += p->ids.size(), only = p->ids;
    if (nonempty == 0) return;
    if (nonempty == 1) {  // (one part: as it is)
        out.assign(only.begin(), only.end());
        return;
    }
    out.reserve(total);
    if (total < UNION_BY_BITMAP) {
        out.insert(out.end(), own.begin(), own.end());
        for (const auto& p : parts) out.insert(out.end(), p->ids.begin(), p->ids.end());
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
        return;
    }
    const size_t words = static_cast<size_t>((vocab_size_ + 63) / 64);
    if (seen_tokens_.size() != words) seen_tokens_.assign(words, 0);
    auto mark = [&](const std::vector<int64_t>& ids) {
        for (const int64_t t : ids) seen_tokens_[static_cast<size_t>(t) >> 6] |= uint64_t{1} << (t & 63);
    };
    for (const int64_t t : own) seen_tokens_[static_cast<size_t>(t) >> 6] |= uint64_t{1} << (t & 63);
    for (const auto& p : parts) mark(p->ids);
    for (size_t w = 0; w < words; ++w) {
        uint64_t x = seen_tokens_[w];
        if (!x) continue;
        seen_tokens_[w] = 0;
        while (x) {
            out.push_back(static_cast<int64_t>(w * 64 + static_cast<size_t>(__builtin_ctzll(x))));
            x &= x - 1;
        }
    }
}

}  // namespace structgen
