#include "embedded.h"

#include <algorithm>
#include <map>
#include <queue>

#include "errors.h"
#include "pool.h"  // INF

namespace structgen {

EmbeddedDfa::EmbeddedDfa(std::vector<int32_t> rows, std::vector<uint8_t> finals,
                         std::vector<std::vector<SymbolEdge>> symbols, std::vector<ByteSet> column_classes)
    : rows_(std::move(rows)), finals_(std::move(finals)), symbols_(std::move(symbols)) {
    const size_t n = finals_.size();
    if (rows_.size() != n * 256) throw InvalidArgument("an embedded automaton's rows must have 256 transitions each");
    if (symbols_.size() < n) symbols_.resize(n);
    if (symbols_.size() > n) throw InvalidArgument("symbols of a state the embedded automaton does not have");
    for (int32_t t : rows_)
        if (t < -1 || t >= static_cast<int64_t>(n)) throw InvalidArgument("a transition to a state the embedded automaton does not have");
    for (auto& es : symbols_)
        for (auto& e : es) {
            if (e.target < 0 || e.target >= static_cast<int64_t>(n))
                throw InvalidArgument("a symbol edge to a state the embedded automaton does not have");
            all_symbols_.push_back(e.symbol);
            has_symbols_ = true;
        }
    std::sort(all_symbols_.begin(), all_symbols_.end());
    all_symbols_.erase(std::unique(all_symbols_.begin(), all_symbols_.end()), all_symbols_.end());
    if (column_classes.empty()) {  // bytes whose columns are equal in every state, in byte order
        std::map<std::vector<int32_t>, size_t> seen;
        for (int b = 0; b < 256; ++b) {
            std::vector<int32_t> column(n);
            for (size_t q = 0; q < n; ++q) column[q] = rows_[q * 256 + b];
            auto [it, added] = seen.emplace(std::move(column), columns_.size());
            if (added) columns_.emplace_back();
            columns_[it->second].set(b);
        }
    } else {
        ByteSet covered;
        for (const ByteSet& m : column_classes) {
            if (m.empty() || !(covered & m).empty()) throw InvalidArgument("column classes must be disjoint and non-empty");
            covered |= m;
        }
        if (!covered.is_all()) throw InvalidArgument("column classes must cover every byte");
        columns_ = std::move(column_classes);
    }
    for (const ByteSet& m : columns_) column_reps_.push_back(m.lowest());
    dead_.resize(n);
    for (size_t q = 0; q < n; ++q) {
        bool any = false;
        for (int b = 0; b < 256 && !any; ++b) any = rows_[q * 256 + b] >= 0;
        dead_[q] = !finals_[q] && symbols_[q].empty() && !any;
    }
    for (size_t c = 0; c < columns_.size(); ++c) {
        int b = column_reps_[c];
        for (size_t q = 0; q < n; ++q)
            if (rows_[q * 256 + b] >= 0) {
                readable_ |= columns_[c];
                break;
            }
    }
    classes_.resize(n);
}

const std::vector<ByteSet>& EmbeddedDfa::classes(int32_t q) {
    std::lock_guard<std::mutex> hold(*memo_lock_);  // (an entry once made never moves: read after the lock)
    auto& got = classes_[q];
    if (!got) {
        std::vector<int32_t> targets;
        std::vector<ByteSet> out;
        for (size_t c = 0; c < columns_.size(); ++c) {
            int32_t t = at(q, column_reps_[c]);
            auto it = std::find(targets.begin(), targets.end(), t);
            if (it == targets.end()) {
                targets.push_back(t);
                out.push_back(columns_[c]);
            } else {
                out[it - targets.begin()] |= columns_[c];
            }
        }
        got = std::move(out);
    }
    return *got;
}

const std::vector<int64_t>& EmbeddedDfa::min_lengths(const std::map<int64_t, int64_t>& weights) {
    std::lock_guard<std::mutex> hold(*memo_lock_);
    std::vector<std::pair<int64_t, int64_t>> key;
    for (int64_t k : all_symbols_) {
        auto it = weights.find(k);
        key.emplace_back(k, it == weights.end() ? 0 : it->second);
    }
    auto found = minlen_.find(key);
    if (found != minlen_.end()) return found->second;
    const size_t n = finals_.size();
    std::vector<std::vector<std::pair<int32_t, int64_t>>> preds(n);
    for (size_t q = 0; q < n; ++q) {
        int32_t last = -2;
        for (int b = 0; b < 256; ++b) {  // (one edge per distinct target is enough)
            int32_t t = rows_[q * 256 + b];
            if (t >= 0 && t != last) preds[t].emplace_back(static_cast<int32_t>(q), 1);
            last = t;
        }
        for (const SymbolEdge& e : symbols_[q]) {
            auto it = weights.find(e.symbol);
            preds[e.target].emplace_back(static_cast<int32_t>(q), it == weights.end() ? 0 : it->second);
        }
    }
    std::vector<int64_t> dist(n, INF);
    using Item = std::pair<int64_t, int32_t>;
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
    for (size_t q = 0; q < n; ++q)
        if (finals_[q]) {
            dist[q] = 0;
            heap.emplace(0, static_cast<int32_t>(q));
        }
    while (!heap.empty()) {
        auto [d, t] = heap.top();
        heap.pop();
        if (d > dist[t]) continue;
        for (auto [q, w] : preds[t]) {
            int64_t nd = std::min(INF, d + w);
            if (nd < dist[q]) {
                dist[q] = nd;
                heap.emplace(nd, q);
            }
        }
    }
    return minlen_.emplace(std::move(key), std::move(dist)).first->second;
}

}  // namespace structgen
