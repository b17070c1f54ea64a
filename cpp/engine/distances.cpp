#include "distances.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "errors.h"

namespace structgen {

SpelledDistances::SpelledDistances(LazyAutomaton& a, std::shared_ptr<const TokenTrie> trie, bool calls,
                                   std::map<int64_t, int64_t> byte_weights, std::map<int64_t, int64_t> token_weights,
                                   int64_t guard_first)
    : a_(a),
      trie_(std::move(trie)),
      calls_(calls),
      byte_weights_(std::move(byte_weights)),
      token_weights_(std::move(token_weights)),
      guard_first_(guard_first),
      minlen_(a.pool(), byte_weights_) {}

int64_t SpelledDistances::bytes_to_end(int32_t q) { return std::min(DIST_INF, minlen_.of(a_.expr(q))); }

SpelledDistances::Step SpelledDistances::step(int32_t q) {
    // the first step of q's shortest path: a byte to a state one byte nearer, else a call
    auto it = steps_.find(q);
    if (it != steps_.end()) return it->second;
    const int64_t here = bytes_to_end(q);
    a_.build(q);
    std::vector<int32_t> seen;
    std::optional<Step> got;
    for (int b = 0; b < 256 && !got; ++b) {
        const int32_t t = a_.table()[static_cast<size_t>(q) * 256 + b];
        if (t < 0 || std::find(seen.begin(), seen.end(), t) != seen.end()) continue;
        seen.push_back(t);
        if (bytes_to_end(t) == here - 1) got = Step{b, t, 0};
    }
    if (!got && calls_)
        for (auto [k, r] : a_.symbols_of(q)) {
            if (k >= guard_first_) continue;
            if (weight(byte_weights_, k) + bytes_to_end(r) == here) {
                got = Step{-1, r, k};
                break;
            }
        }
    if (!got) throw std::logic_error("no shortest step from state " + std::to_string(q));
    steps_.emplace(q, *got);
    return *got;
}

int64_t SpelledDistances::tokens_to_end(int32_t q) {
    if (const int64_t* got = tokens_.find(static_cast<uint64_t>(q))) return *got;
    if (bytes_to_end(q) >= DIST_INF) return DIST_INF;
    DepthGuard guard(a_.pool().depth);
    // the path from q up to a state already known, a final state, or a call
    std::vector<int32_t> path{q};
    while (true) {
        const int32_t s = path.back();
        if (s != q && tokens_.contains(static_cast<uint64_t>(s))) break;
        if (a_.is_final(s)) {
            tokens_.put(static_cast<uint64_t>(s), 0);
            break;
        }
        const Step st = step(s);
        if (st.byte < 0) {
            tokens_.put(static_cast<uint64_t>(s), std::min(DIST_INF, weight(token_weights_, st.callee) + tokens_to_end(st.next)));
            break;
        }
        path.push_back(st.next);
    }
    const TokenTrie& trie = *trie_;
    auto known = [&](int32_t s) { return *tokens_.find(static_cast<uint64_t>(s)); };
    for (size_t i = path.size() - 1; i-- > 0;) {
        const int32_t s = path[i];
        if (tokens_.contains(static_cast<uint64_t>(s))) continue;
        const Step st = step(s);
        int64_t best = 1 + known(st.next);
        int32_t spelled = trie.child(0, st.byte);  // (the trie node of the bytes spelled from s on)
        for (size_t j = i + 1; j + 1 < path.size(); ++j) {
            const Step st2 = step(path[j]);
            spelled = trie.child(spelled, st2.byte);
            if (spelled < 0) break;
            if (trie.tok_count[spelled] && 1 + known(st2.next) < best) best = 1 + known(st2.next);
        }
        tokens_.put(static_cast<uint64_t>(s), best);
    }
    return known(q);
}

}  // namespace structgen
