#include "code_points.h"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "errors.h"
#include "utf8_dfa.h"

namespace structgen {

namespace {

int utf8_length(int64_t cp) { return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4; }

void encode(int64_t cp, uint8_t out[4]) {
    switch (utf8_length(cp)) {
        case 1: out[0] = static_cast<uint8_t>(cp); break;
        case 2: out[0] = static_cast<uint8_t>(0xC0 | (cp >> 6)), out[1] = static_cast<uint8_t>(0x80 | (cp & 0x3F)); break;
        case 3:
            out[0] = static_cast<uint8_t>(0xE0 | (cp >> 12)), out[1] = static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F));
            out[2] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
            break;
        default:
            out[0] = static_cast<uint8_t>(0xF0 | (cp >> 18)), out[1] = static_cast<uint8_t>(0x80 | ((cp >> 12) & 0x3F));
            out[2] = static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F)), out[3] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
    }
}

// lo..hi, of one length, split where the continuation bytes do not all range fully
void split_same_length(int64_t lo, int64_t hi, std::vector<ByteRanges>& out) {
    const int n = utf8_length(lo);
    for (int i = 1; i < n; ++i) {
        const int64_t m = (int64_t(1) << (6 * i)) - 1;
        if ((lo & ~m) != (hi & ~m)) {
            if (lo & m) {
                split_same_length(lo, lo | m, out);
                split_same_length((lo | m) + 1, hi, out);
                return;
            }
            if ((hi & m) != m) {
                split_same_length(lo, (hi & ~m) - 1, out);
                split_same_length(hi & ~m, hi, out);
                return;
            }
        }
    }
    uint8_t a[4], b[4];
    encode(lo, a), encode(hi, b);
    ByteRanges seq;
    for (int i = 0; i < n; ++i) seq.push_back({a[i], b[i]});
    out.push_back(std::move(seq));
}

}  // namespace

std::vector<ByteRanges> utf8_sequences(int64_t lo, int64_t hi) {
    std::vector<ByteRanges> out;
    const std::pair<int64_t, int64_t> halves[2] = {{lo, std::min<int64_t>(hi, 0xD7FF)}, {std::max<int64_t>(lo, 0xE000), hi}};
    constexpr std::pair<int64_t, int64_t> bands[4] = {{0, 0x7F}, {0x80, 0x7FF}, {0x800, 0xFFFF}, {0x10000, MAX_CODE_POINT}};
    for (auto [a, b] : halves)
        for (auto [start, end] : bands) {
            const int64_t x = std::max(a, start), y = std::min(b, end);
            if (x <= y) split_same_length(x, y, out);
        }
    return out;
}

Id code_points_term(Pool& pool, std::span<const std::pair<int64_t, int64_t>> intervals) {
    // a trie on the leading byte range, so that sequences sharing it share one branch
    std::vector<std::pair<uint8_t, uint8_t>> leads;  // in the order first met
    std::vector<std::vector<ByteRanges>> rests;      // by lead
    std::unordered_map<int, size_t> at;
    for (auto [lo, hi] : intervals) {
        for (ByteRanges& s : utf8_sequences(lo, hi)) {
            auto [it, fresh] = at.try_emplace(s[0].first << 8 | s[0].second, leads.size());
            if (fresh) leads.push_back(s[0]), rests.emplace_back();
            rests[it->second].emplace_back(s.begin() + 1, s.end());
        }
    }
    ByteSet singles;
    std::vector<Id> parts, tails, ranges;
    for (size_t i = 0; i < leads.size(); ++i) {
        const ByteSet head = ByteSet::range(leads[i].first, leads[i].second);
        if (std::all_of(rests[i].begin(), rests[i].end(), [](const ByteRanges& r) { return r.empty(); })) {
            singles = singles | head;
            continue;
        }
        tails.clear();
        for (const ByteRanges& r : rests[i]) {
            ranges.clear();
            for (auto [x, y] : r) ranges.push_back(pool.bytes_of(ByteSet::range(x, y)));
            tails.push_back(pool.concat(ranges));
        }
        const Id tail = pool.alt(tails);
        parts.push_back(pool.seq(pool.bytes_of(head), tail));
    }
    parts.push_back(pool.bytes_of(singles));
    return pool.alt(parts);
}

}  // namespace structgen
