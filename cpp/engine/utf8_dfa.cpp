#include "utf8_dfa.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <string>
#include <string_view>
#include <unordered_map>

#include "errors.h"

namespace structgen {

namespace {

using Span = std::pair<int64_t, int64_t>;  // inclusive
using Values = std::vector<Span>;

class RowsBuilder {
public:
    DfaTable out;

    RowsBuilder() { add_state(false); }

    int32_t state_of(int j, const Values& values) {
        auto [it, fresh] = ids_.try_emplace({j, values}, out.states());
        if (fresh) {
            add_state(j == 0);
            todo_.push_back(it->second);
            keys_.push_back(&it->first);
        }
        return it->second;
    }

    // byte first + c of state s reads block c of values (blocks of 64**j values; a block one
    // interval covers whole leads to the state of every value)
    void fill(int32_t s, int first, int j, const Values& values) {
        const int shift = 6 * j;
        const int64_t size = int64_t(1) << shift;
        std::map<int64_t, Values> blocks;
        for (auto [a, b] : values) {
            const int64_t ca = a >> shift, cb = b >> shift;
            if (ca == cb) {
                blocks[ca].push_back({a - (ca << shift), b - (ca << shift)});
                continue;
            }
            blocks[ca].push_back({a - (ca << shift), size - 1});
            if (cb > ca + 1) {
                const int32_t whole = state_of(j, Values{{0, size - 1}});
                for (int64_t c = ca + 1; c < cb; ++c) set(s, first + c, whole);
            }
            blocks[cb].push_back({0, b - (cb << shift)});
        }
        for (const auto& [c, part] : blocks) {
            const int32_t t = state_of(j, part);
            set(s, first + c, t);
        }
    }

    bool next(int32_t& s, int& j, const Values*& values) {
        if (todo_.empty()) return false;
        s = todo_.back();
        todo_.pop_back();
        j = keys_[static_cast<size_t>(s) - 1]->first;
        values = &keys_[static_cast<size_t>(s) - 1]->second;
        return true;
    }

private:
    void add_state(bool final) {
        out.rows.resize(out.rows.size() + 256, -1);
        out.finals.push_back(final);
    }
    void set(int32_t s, int64_t byte, int32_t t) { out.rows[static_cast<size_t>(s) * 256 + static_cast<size_t>(byte)] = t; }

    std::map<std::pair<int, Values>, int32_t> ids_;  // (node-stable: keys_ points into it)
    std::vector<const std::pair<int, Values>*> keys_;  // by state - 1
    std::vector<int32_t> todo_;
};

}  // namespace

DfaTable code_points_rows(std::span<const std::pair<int64_t, int64_t>> intervals) {
    Values points;
    for (auto [a, b] : intervals) {
        if (a < 0) throw InvalidArgument("a code point range starts below 0: " + std::to_string(a));
        if (a <= b && a <= MAX_CODE_POINT) points.push_back({a, std::min(b, MAX_CODE_POINT)});
    }
    std::sort(points.begin(), points.end());
    Values merged;  // (overlapping or touching ranges joined)
    for (auto [a, b] : points) {
        if (!merged.empty() && a <= merged.back().second + 1) {
            merged.back().second = std::max(merged.back().second, b);
        } else {
            merged.push_back({a, b});
        }
    }
    RowsBuilder r;
    constexpr Span bands[4] = {{0, 0x7F}, {0x80, 0x7FF}, {0x800, 0xFFFF}, {0x10000, MAX_CODE_POINT}};
    constexpr int leads[4] = {0x00, 0xC0, 0xE0, 0xF0};
    for (int n = 0; n < 4; ++n) {
        const auto [lo, hi] = bands[n];
        Values band;
        for (auto [a, b] : merged) {
            if (a > hi || b < lo) continue;
            const int64_t x = std::max(a, lo), y = std::min(b, hi);
            if (n == 2) {  // (no surrogates)
                if (x <= std::min<int64_t>(y, 0xD7FF)) band.push_back({x, std::min<int64_t>(y, 0xD7FF)});
                if (std::max<int64_t>(x, 0xE000) <= y) band.push_back({std::max<int64_t>(x, 0xE000), y});
            } else {
                band.push_back({x, y});
            }
        }
        if (!band.empty()) r.fill(0, leads[n], n, band);
    }
    int32_t s = 0;
    int j = 0;
    const Values* values = nullptr;
    while (r.next(s, j, values)) {
        if (j) r.fill(s, 0x80, j - 1, *values);
    }
    return std::move(r.out);
}

DfaTable canonical_dfa(const DfaTable& t, int32_t start) {
    const int32_t n = t.states(), k = t.width;
    if (k <= 0 || t.rows.size() != static_cast<size_t>(n) * static_cast<size_t>(k))
        throw InvalidArgument("a table of " + std::to_string(t.rows.size()) + " cells is not " + std::to_string(n) + " states of " + std::to_string(k) + " columns");
    if (start < 0 || start >= n) throw InvalidArgument("start state " + std::to_string(start) + " is not in a table of " + std::to_string(n) + " states");
    for (int32_t c : t.class_of)
        if (c < 0 || c >= k) throw InvalidArgument("byte class " + std::to_string(c) + " is not a column of the table");
    for (int32_t x : t.rows)
        if (x < -1 || x >= n) throw InvalidArgument("transition to " + std::to_string(x) + " in a table of " + std::to_string(n) + " states");
    // the columns some byte reads, in the order of their first byte (a column no byte reads is no move)
    std::vector<int32_t> read;
    std::vector<uint8_t> is_read(k, 0);
    for (int b = 0; b < 256; ++b)
        if (!is_read[t.class_of[b]]) is_read[t.class_of[b]] = 1, read.push_back(t.class_of[b]);
    auto target = [&](int32_t s, int32_t c) { return t.rows[static_cast<size_t>(s) * k + c]; };
    // breadth first from the start, a state's targets in byte order
    std::vector<int32_t> order{start}, new_id(n, -1);
    new_id[start] = 0;
    for (size_t q = 0; q < order.size(); ++q) {
        for (int32_t c : read) {
            const int32_t x = target(order[q], c);
            if (x >= 0 && new_id[x] < 0) {
                new_id[x] = static_cast<int32_t>(order.size());
                order.push_back(x);
            }
        }
    }
    // the columns as the states reached read them, equal ones made one (numbered by first byte)
    const size_t m = order.size();
    std::vector<int32_t> cols(read.size() * m);
    for (size_t i = 0; i < read.size(); ++i)
        for (size_t q = 0; q < m; ++q) {
            const int32_t x = target(order[q], read[i]);
            cols[i * m + q] = x >= 0 ? new_id[x] : -1;
        }
    std::unordered_map<std::string_view, int32_t> seen;
    std::vector<int32_t> class_of_column(k, -1), kept;  // original column -> its class; class -> a column of cols
    for (size_t i = 0; i < read.size(); ++i) {
        std::string_view bytes(reinterpret_cast<const char*>(cols.data() + i * m), m * 4);
        auto [it, fresh] = seen.try_emplace(bytes, static_cast<int32_t>(kept.size()));
        if (fresh) kept.push_back(static_cast<int32_t>(i));
        class_of_column[read[i]] = it->second;
    }
    DfaTable out;
    out.width = static_cast<int32_t>(kept.size());
    out.rows.resize(m * kept.size());
    out.finals.resize(m);
    for (size_t q = 0; q < m; ++q) {
        out.finals[q] = t.finals[order[q]];
        for (size_t i = 0; i < kept.size(); ++i) out.rows[q * kept.size() + i] = cols[static_cast<size_t>(kept[i]) * m + q];
    }
    for (int b = 0; b < 256; ++b) out.class_of[b] = class_of_column[t.class_of[b]];
    return out;
}

}  // namespace structgen
