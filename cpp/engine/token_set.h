// A token set as a cache keeps it: its ids where few (the median mask of a JSON state is a
// handful of tokens, of Llama-3's 128,256), else the packed words (a string body's hundred
// thousand). A set of ids costs its ids and writes a bitmask row by zeroing it and setting them;
// the words cost a vocabulary's bits and are copied. A value type.
#pragma once
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "vocab.h"

namespace structgen {

class TokenSet {
public:
    // the set of the tokens set in words: ids where at most one in eight words' worth. One pass:
    // runs of eight zero words skipped at once (a JSON state's mask is a handful of tokens in
    // 4,008 words), the ids gathered until there are too many for ids, then the words copied.
    static TokenSet of(std::span<const uint32_t> words) {
        TokenSet out;
        out.words_ = words.size();
        const size_t n = words.size(), most = n / 8;
        thread_local std::vector<uint32_t> scratch;
        if (scratch.size() < most) scratch.resize(most);
        uint32_t* const ids = scratch.data();  // (a pointer: a thread_local's address is looked up again at every use)
        size_t count = 0;
        for (size_t w = 0; w < n; ++w) {
            if ((w & 7) == 0 && w + 8 <= n) {
                const uint32_t* b = words.data() + w;
                if (!(b[0] | b[1] | b[2] | b[3] | b[4] | b[5] | b[6] | b[7])) {
                    w += 7;
                    continue;
                }
            }
            for (uint32_t x = words[w]; x; x &= x - 1) {
                if (count == most) {
                    out.bits_.assign(words.begin(), words.end());
                    return out;
                }
                ids[count++] = static_cast<uint32_t>(w * 32 + static_cast<size_t>(__builtin_ctz(x)));
            }
        }
        out.ids_.assign(ids, ids + count);
        return out;
    }

    size_t words() const { return words_; }
    bool empty() const { return ids_.empty() && bits_.empty(); }
    bool packed() const { return !bits_.empty() || words_ == 0; }
    // write the set into row (the vocabulary's words, then zeroes to the row's end)
    void write(std::span<uint32_t> row) const {
        if (packed()) {
            std::memcpy(row.data(), bits_.data(), words_ * 4);
            std::memset(row.data() + words_, 0, (row.size() - words_) * 4);
        } else {
            std::memset(row.data(), 0, row.size() * 4);
            for (const uint32_t t : ids_) row[t >> 5] |= uint32_t{1} << (t & 31);
        }
    }
    // words |= the set (words: at least the vocabulary's)
    void or_into(std::span<uint32_t> words) const {
        if (packed())
            for (size_t i = 0; i < words_; ++i) words[i] |= bits_[i];
        else
            for (const uint32_t t : ids_) words[t >> 5] |= uint32_t{1} << (t & 31);
    }
    Bits bits() const {
        Bits out(words_, 0);
        write(out);
        return out;
    }
    size_t memory_bytes() const { return ids_.capacity() * 4 + bits_.capacity() * 4 + sizeof(TokenSet); }

private:
    std::vector<uint32_t> ids_;
    Bits bits_;
    size_t words_ = 0;
};

}  // namespace structgen
