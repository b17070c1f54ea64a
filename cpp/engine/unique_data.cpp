#include "unique_data.h"

#include <algorithm>
#include <limits>

#include "errors.h"

namespace structgen {

namespace {
constexpr Id NO_TERM = std::numeric_limits<Id>::max();
}

UniqueData::UniqueData(Pool& pool) : pool_(pool) {}

const UniqueData::Item& UniqueData::item(int32_t i) const {
    if (i < 0 || static_cast<size_t>(i) >= items_.size()) throw OutOfRange("no item " + std::to_string(i));
    return items_[static_cast<size_t>(i)];
}

void UniqueData::check_set(int32_t s) const {
    if (s < 0 || static_cast<size_t>(s) >= sets_.size()) throw OutOfRange("no set " + std::to_string(s));
}

int32_t UniqueData::intern(const Item& key) {
    auto [it, fresh] = item_ids_.try_emplace(key, static_cast<int32_t>(items_.size()));
    if (fresh) items_.push_back(key);
    return it->second;
}

int32_t UniqueData::item_start(int32_t written) { return intern(Item{0, written, taken(written)}); }

int32_t UniqueData::item_key(int32_t written, Id left) {
    check_set(written);
    pool_.check(left);
    return intern(Item{0, written, left});
}

int32_t UniqueData::mask_key(int32_t i) {
    const Item got = item(i);
    return got.left == NOTHING ? 0 : intern(Item{0, got.set, got.left});
}

int32_t UniqueData::read(int32_t i, int b) {
    if (b < 0 || b > 255) throw InvalidArgument("a byte is 0..255");
    Item got = item(i);
    uint64_t key = static_cast<uint64_t>(got.text) << 8 | static_cast<uint64_t>(b);
    auto [it, fresh] = text_after_.try_emplace(key, static_cast<int32_t>(texts_.size()));
    if (fresh) {
        std::string next = texts_[static_cast<size_t>(got.text)];
        next.push_back(static_cast<char>(b));
        text_bytes_ += next.size();
        texts_.push_back(std::move(next));
    }
    got.text = it->second;
    if (got.left != NOTHING) got.left = pool_.derive(got.left, b);
    return intern(got);
}

Id UniqueData::taken(int32_t written) {
    check_set(written);
    const auto w = static_cast<size_t>(written);
    if (taken_[w] == NO_TERM) {
        std::vector<Id> parts;
        for (int32_t v : sets_[w]) {
            const auto i = static_cast<size_t>(v);
            if (value_terms_[i] == NO_TERM) value_terms_[i] = value_texts(pool_, values_[i], chars_);
            parts.push_back(value_terms_[i]);
        }
        taken_[w] = pool_.alt(parts);
    }
    return taken_[w];
}

int32_t UniqueData::after_item(int32_t written, std::span<const uint8_t> text) {
    check_set(written);
    std::string key(4 + text.size(), '\0');
    for (int i = 0; i < 4; ++i) key[static_cast<size_t>(i)] = static_cast<char>(static_cast<uint32_t>(written) >> (8 * i) & 0xFF);
    std::copy(text.begin(), text.end(), key.begin() + 4);
    auto found = after_.find(key);
    if (found != after_.end()) return found->second;
    int32_t got = -1;
    std::optional<ParsedJson> parsed = parse_json(text);
    std::string vkey;
    if (parsed) {
        try {
            vkey = value_key(parsed->value);
        } catch (const BudgetExceeded&) {  // (too deep to key near the stack's end: refused, as one too deep to read)
            parsed.reset();
        }
    }
    if (parsed) {
        auto [vit, fresh] = value_ids_.try_emplace(std::move(vkey), static_cast<int32_t>(values_.size()));
        if (fresh) {
            values_.push_back(std::move(parsed->value));
            value_terms_.push_back(NO_TERM);
        }
        int32_t v = vit->second;
        const auto& members = sets_[static_cast<size_t>(written)];
        if (!std::binary_search(members.begin(), members.end(), v)) {
            std::vector<int32_t> now = members;
            now.insert(std::upper_bound(now.begin(), now.end(), v), v);
            std::string ids(reinterpret_cast<const char*>(now.data()), now.size() * sizeof(int32_t));
            auto [sit, new_set] = set_ids_.try_emplace(std::move(ids), static_cast<int32_t>(sets_.size()));
            if (new_set) {
                sets_.push_back(std::move(now));
                taken_.push_back(NO_TERM);
            }
            got = sit->second;
        }
    }
    after_bytes_ += key.size();
    after_.emplace(std::move(key), got);
    return got;
}

bool UniqueData::has_key(int32_t written, std::string_view key) const {
    check_set(written);
    auto it = value_ids_.find(std::string(key));
    if (it == value_ids_.end()) return false;
    const auto& members = sets_[static_cast<size_t>(written)];
    return std::binary_search(members.begin(), members.end(), it->second);
}

bool UniqueData::alive(Id expr, Id left) {
    pool_.check(expr);
    pool_.check(left);
    if (left == NOTHING) return true;
    const uint64_t key = static_cast<uint64_t>(expr) << 32 | left;
    if (const uint8_t* got = alive_.find(key)) return *got == 2;
    const bool live = pool_.is_live(pool_.minus(expr, left));
    alive_.put(key, live ? 2 : 1);
    return live;
}

void UniqueData::dead_tokens(LazyAutomaton& item, const TokenTrie& trie, int32_t q, int32_t node, Id left,
                             std::vector<int64_t>& dead) {
    if (&item.pool() != &pool_) throw InvalidArgument("the item automaton is of another pool");
    item.check(q);
    if (!trie.valid(node)) throw OutOfRange("no trie node " + std::to_string(node));
    pool_.check(left);
    todo_.clear();
    todo_.push_back({node, q, left});
    while (!todo_.empty()) {
        const Walk w = todo_.back();
        todo_.pop_back();
        const int32_t first = trie.first_child[w.node], count = trie.num_children[w.node];
        for (int32_t child = first; child < first + count; ++child) {
            const int b = trie.byte[child];
            const Id d = pool_.derive(w.left, b);
            if (d == NOTHING) continue;  // (this way spells no written value: the plain tokens stand)
            const int32_t s = item.step(w.state, b);
            if (s < 0) continue;
            if (trie.tok_count[child] && !alive(item.expr(s), d)) {
                auto ids = trie.tokens_at(child);
                dead.insert(dead.end(), ids.begin(), ids.end());
            }
            todo_.push_back({child, s, d});
        }
    }
}

size_t UniqueData::bytes() const {
    size_t sets = 0;
    for (const auto& s : sets_) sets += s.size() * sizeof(int32_t) + 64;
    return text_bytes_ + 48 * texts_.size() + 24 * text_after_.size() + 40 * items_.size() + sets +
           after_bytes_ + 48 * after_.size() + 96 * values_.size() + 16 * chars_.size() + alive_.bytes();
}

}  // namespace structgen
