// The frame data of unique arrays and their items in one pushdown guide (uniqueItems over items with
// infinitely many values): each item's text so far and what of the written values' spellings may
// still follow it, interned as item ids; the sets of item values written so far, interned as set
// ids; and each set's spellings as a term. (Python face: structgen/guides/unique_items.py's
// UniqueItems, which keeps the searches over the item automata.) Not thread-safe: the guide calls it
// with the GIL held, and a batch's native threads never read it.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "flat_map.h"
#include "json_values.h"
#include "lazy.h"
#include "pool.h"
#include "trie.h"

namespace structgen {

class UniqueData {
public:
    // An item id's data: its text so far, the set of its array, and what of the set's spellings
    // may still follow the text (NOTHING once the text spells none of them: out of danger).
    struct Item {
        int32_t text = 0;
        int32_t set = 0;
        Id left = NOTHING;
    };

    explicit UniqueData(Pool& pool);
    Pool& pool() const { return pool_; }

    // -- items (item 0: the empty text of the empty set) ------------------------------------------
    int32_t item_start(int32_t written);              // a new item of an array with set `written`
    int32_t read(int32_t item, int b);                // the item after it read byte b
    int32_t item_key(int32_t written, Id left);       // the empty text of set `written` with `left` ahead
    int32_t mask_key(int32_t item);                   // item_key of its set and left, 0 out of danger
    const Item& item(int32_t i) const;
    const std::string& text(int32_t item) const { return texts_[this->item(item).text]; }

    // -- sets (set 0: none written) ----------------------------------------------------------------
    Id taken(int32_t written);                         // every spelling of the set's values
    // the set after an item spelled `text` joins set `written`; -1 where its value is in the set
    // already, or the text is not one JSON value
    int32_t after_item(int32_t written, std::span<const uint8_t> text);
    bool has_key(int32_t written, std::string_view key) const;  // whether a value of key (value_key) is in the set

    // -- danger (an item whose text may still spell a written value) --------------------------------
    // whether a term `expr` with spellings `left` still ahead can be finished with a value outside
    // them: expr minus left is live (kept per pair; the caller inlines calls in expr first)
    bool alive(Id expr, Id left);
    // The tokens from trie node `node` that an item in state q of automaton `item` (one that calls
    // nothing), with spellings `left` of written values ahead, must not take: those after which only
    // written values could finish it. Only tokens whose bytes go on spelling a written value are
    // looked at: the trie walked in the item automaton and down left's derivatives side by side.
    // Appended to dead, in no order. InvalidArgument where item is another pool's.
    void dead_tokens(LazyAutomaton& item, const TokenTrie& trie, int32_t q, int32_t node, Id left, std::vector<int64_t>& dead);

    size_t num_items() const { return items_.size(); }
    size_t num_sets() const { return sets_.size(); }
    size_t bytes() const;

private:
    struct ItemHash {
        size_t operator()(const Item& i) const {
            uint64_t h = (static_cast<uint64_t>(static_cast<uint32_t>(i.text)) << 32 | static_cast<uint32_t>(i.set)) * 0x9E3779B97F4A7C15ull;
            return static_cast<size_t>(h ^ (h >> 29) ^ (static_cast<uint64_t>(i.left) * 0xC2B2AE3D27D4EB4Full));
        }
    };
    struct ItemEq {
        bool operator()(const Item& a, const Item& b) const { return a.text == b.text && a.set == b.set && a.left == b.left; }
    };
    int32_t intern(const Item& key);
    void check_set(int32_t s) const;

    Pool& pool_;
    std::vector<std::string> texts_{std::string()};
    size_t text_bytes_ = 0;
    std::unordered_map<uint64_t, int32_t> text_after_;  // text << 8 | byte -> text
    std::vector<Item> items_{Item{}};
    std::unordered_map<Item, int32_t, ItemHash, ItemEq> item_ids_{{Item{}, 0}};
    std::vector<JsonValue> values_;                     // value id -> the first value of its key
    std::vector<Id> value_terms_;                       // value id -> its spellings (NO_TERM until made)
    std::unordered_map<std::string, int32_t> value_ids_;  // value_key -> value id
    std::vector<std::vector<int32_t>> sets_{{}};        // set id -> its value ids, sorted
    std::unordered_map<std::string, int32_t> set_ids_{{std::string(), 0}};  // the ids' bytes -> set id
    std::vector<Id> taken_{NOTHING};                    // set id -> taken (NO_TERM until made)
    std::unordered_map<std::string, int32_t> after_;    // set id's 4 bytes + text -> after_item
    size_t after_bytes_ = 0;
    CharTexts chars_;
    FlatMap<uint8_t> alive_;  // expr << 32 | left -> 1 + alive
    struct Walk {
        int32_t node, state;
        Id left;
    };
    std::vector<Walk> todo_;  // (the danger walk's stack, kept between calls)
};

}  // namespace structgen
