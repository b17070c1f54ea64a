// JSON values as JSON Schema compares them (uniqueItems): read from a text as Python's json.loads
// reads it, keyed so that equal values have equal keys (numbers by value, 1 and 1.0 alike, objects
// whatever their key order, true apart from 1), and spelled back as a term of the pool: every JSON
// text of the value. (Python face: structgen/guides/unique_items.py.)
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "pool.h"

namespace structgen {

struct JsonValue {
    enum class Type : uint8_t { Null, False, True, Integer, Float, String, Array, Object };
    Type type = Type::Null;
    bool negative = false;          // Integer: below zero (never for 0)
    std::string digits;             // Integer: its decimal digits, no leading zero ("0" for zero)
    double number = 0;              // Float: as Python's float() reads it (correctly rounded, inf past the range)
    std::u32string chars;           // String: its code points (a lone surrogate escape kept, as Python's json does)
    std::vector<JsonValue> items;   // Array: its elements; Object: its members' values
    std::vector<std::u32string> names;  // Object: its members' names, in text order (a repeated name kept)
};

struct ParsedJson {
    JsonValue value;
    bool exponent = false;  // a number of the text has an exponent
};

// The value of a JSON text, or nullopt where the text is not one JSON value with whitespace around
// it (as Python's json.loads of the text decoded as UTF-8: strict strings, no NaN or Infinity; an
// integer of any length is read, where Python refuses one of over 4,300 digits; nesting past
// MAX_JSON_DEPTH, or near the thread's stack end, is refused, as Python's json refuses a deep value
// with RecursionError).
constexpr int MAX_JSON_DEPTH = 1000;
std::optional<ParsedJson> parse_json(std::span<const uint8_t> text);

// A key equal for the values JSON Schema calls equal, and only for those (a byte string; each
// part is self-delimiting, so an array's key is its elements' keys in a row). BudgetExceeded near
// the thread's stack end (a value read by parse_json is not that deep).
std::string value_key(const JsonValue& v);

// Every JSON text of v as a term of pool (any whitespace, any escape, any key order, any spelling
// of a number with its significant digits; a number's exponent spellings are a superset: any
// exponent). chars keeps each character's spellings (one map per pool). BudgetExceeded near the
// thread's stack end.
using CharTexts = std::unordered_map<char32_t, Id>;
Id value_texts(Pool& pool, const JsonValue& v, CharTexts& chars);

}  // namespace structgen
