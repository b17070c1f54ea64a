#include "json_values.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "errors.h"

namespace structgen {

namespace {

// the nesting of the recursive walks over a value (each level a C++ frame: DepthGuard stops them
// short of the thread's stack end, a sanitizer's larger frames too)
thread_local int json_depth = 0;

bool is_ws(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

int hex_value(uint8_t c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Whether text is valid UTF-8 as Python's strict decoder reads it (no overlong forms, no
// surrogates, nothing past U+10FFFF).
bool valid_utf8(std::span<const uint8_t> text) {
    size_t i = 0, n = text.size();
    while (i < n) {
        uint8_t c = text[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        size_t len = 0;
        uint8_t lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) len = 2;
        else if (c == 0xE0) len = 3, lo = 0xA0;
        else if (c == 0xED) len = 3, hi = 0x9F;
        else if (c >= 0xE1 && c <= 0xEF) len = 3;
        else if (c == 0xF0) len = 4, lo = 0x90;
        else if (c >= 0xF1 && c <= 0xF3) len = 4;
        else if (c == 0xF4) len = 4, hi = 0x8F;
        else return false;
        if (i + len > n || text[i + 1] < lo || text[i + 1] > hi) return false;
        for (size_t j = 2; j < len; ++j)
            if (text[i + j] < 0x80 || text[i + j] > 0xBF) return false;
        i += len;
    }
    return true;
}

class Reader {
public:
    Reader(const uint8_t* p, const uint8_t* end) : p_(p), end_(end) {}

    bool whole(JsonValue& out) {
        ws();
        if (!value(out, 0)) return false;
        ws();
        return p_ == end_;
    }
    bool exponent() const { return exponent_; }

private:
    void ws() {
        while (p_ < end_ && is_ws(*p_)) ++p_;
    }
    bool word(const char* w) {
        size_t n = std::strlen(w);
        if (static_cast<size_t>(end_ - p_) < n || std::memcmp(p_, w, n) != 0) return false;
        p_ += n;
        return true;
    }
    bool value(JsonValue& out, int depth) {
        if (p_ == end_) return false;
        if ((*p_ == '[' || *p_ == '{') && near_stack_end()) return false;  // (too deep to read here: refused, as Python's RecursionError)
        switch (*p_) {
            case 'n': out.type = JsonValue::Type::Null; return word("null");
            case 't': out.type = JsonValue::Type::True; return word("true");
            case 'f': out.type = JsonValue::Type::False; return word("false");
            case '"': out.type = JsonValue::Type::String; return string(out.chars);
            case '[': return array(out, depth);
            case '{': return object(out, depth);
            default: return number(out);
        }
    }
    bool array(JsonValue& out, int depth) {
        if (depth >= MAX_JSON_DEPTH) return false;
        out.type = JsonValue::Type::Array;
        ++p_;
        ws();
        if (p_ < end_ && *p_ == ']') return ++p_, true;
        for (;;) {
            out.items.emplace_back();
            if (!value(out.items.back(), depth + 1)) return false;
            ws();
            if (p_ == end_) return false;
            if (*p_ == ']') return ++p_, true;
            if (*p_ != ',') return false;
            ++p_;
            ws();
        }
    }
    bool object(JsonValue& out, int depth) {
        if (depth >= MAX_JSON_DEPTH) return false;
        out.type = JsonValue::Type::Object;
        ++p_;
        ws();
        if (p_ < end_ && *p_ == '}') return ++p_, true;
        for (;;) {
            if (p_ == end_ || *p_ != '"') return false;
            out.names.emplace_back();
            if (!string(out.names.back())) return false;
            ws();
            if (p_ == end_ || *p_ != ':') return false;
            ++p_;
            ws();
            out.items.emplace_back();
            if (!value(out.items.back(), depth + 1)) return false;
            ws();
            if (p_ == end_) return false;
            if (*p_ == '}') return ++p_, true;
            if (*p_ != ',') return false;
            ++p_;
            ws();
        }
    }
    // four hex digits at p_ (past them on success)
    bool hex4(char32_t& out) {
        if (end_ - p_ < 4) return false;
        char32_t v = 0;
        for (int i = 0; i < 4; ++i) {
            int h = hex_value(p_[i]);
            if (h < 0) return false;
            v = v << 4 | static_cast<char32_t>(h);
        }
        p_ += 4;
        out = v;
        return true;
    }
    bool string(std::u32string& out) {
        ++p_;  // the opening quote
        for (;;) {
            if (p_ == end_) return false;
            uint8_t c = *p_;
            if (c == '"') return ++p_, true;
            if (c < 0x20) return false;  // (a control character: Python's strict strings refuse it)
            if (c == '\\') {
                if (end_ - p_ < 2) return false;
                uint8_t e = p_[1];
                p_ += 2;
                switch (e) {
                    case '"': out += U'"'; break;
                    case '\\': out += U'\\'; break;
                    case '/': out += U'/'; break;
                    case 'b': out += U'\b'; break;
                    case 'f': out += U'\f'; break;
                    case 'n': out += U'\n'; break;
                    case 'r': out += U'\r'; break;
                    case 't': out += U'\t'; break;
                    case 'u': {
                        char32_t u = 0;
                        if (!hex4(u)) return false;
                        // a high surrogate escape then a low one: one character (else each stays alone)
                        if (u >= 0xD800 && u <= 0xDBFF && end_ - p_ >= 6 && p_[0] == '\\' && p_[1] == 'u') {
                            const uint8_t* back = p_;
                            p_ += 2;
                            char32_t low = 0;
                            if (!hex4(low)) return false;
                            if (low >= 0xDC00 && low <= 0xDFFF) u = 0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00);
                            else p_ = back;
                        }
                        out += u;
                        break;
                    }
                    default: return false;
                }
                continue;
            }
            // one UTF-8 character (the whole text was checked first)
            char32_t cp = c;
            int more = 0;
            if (c >= 0xF0) cp = c & 0x07, more = 3;
            else if (c >= 0xE0) cp = c & 0x0F, more = 2;
            else if (c >= 0xC0) cp = c & 0x1F, more = 1;
            ++p_;
            for (int i = 0; i < more; ++i) cp = cp << 6 | (*p_++ & 0x3F);
            out += cp;
        }
    }
    bool number(JsonValue& out) {
        const uint8_t* start = p_;
        bool negative = false;
        if (*p_ == '-') negative = true, ++p_;
        if (p_ == end_ || !is_digit(*p_)) return false;
        const uint8_t* int_start = p_;
        if (*p_ == '0') ++p_;
        else
            while (p_ < end_ && is_digit(*p_)) ++p_;
        const uint8_t* int_end = p_;
        bool fraction = false, exp = false;
        if (p_ < end_ && *p_ == '.') {
            if (end_ - p_ < 2 || !is_digit(p_[1])) return false;
            ++p_;
            while (p_ < end_ && is_digit(*p_)) ++p_;
            fraction = true;
        }
        if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
            const uint8_t* q = p_ + 1;
            if (q < end_ && (*q == '+' || *q == '-')) ++q;
            if (q == end_ || !is_digit(*q)) return false;
            while (q < end_ && is_digit(*q)) ++q;
            p_ = q;
            exp = true;
            exponent_ = true;
        }
        if (!fraction && !exp) {
            out.type = JsonValue::Type::Integer;
            out.digits.assign(int_start, int_end);
            out.negative = negative && out.digits != "0";
            return true;
        }
        out.type = JsonValue::Type::Float;
        auto first = reinterpret_cast<const char*>(start), last = reinterpret_cast<const char*>(p_);
        auto got = std::from_chars(first, last, out.number);
        if (got.ec == std::errc::result_out_of_range) {
            out.number = magnitude_above_one(int_start, p_) ? std::numeric_limits<double>::infinity() : 0.0;
            if (negative) out.number = -out.number;
        } else if (got.ec != std::errc() || got.ptr != last) {
            return false;
        }
        return true;
    }
    // whether the number spelled from `digits` (its integer part on) is at least 1: read where the
    // conversion is out of range (then it is either past the largest double or below the smallest)
    static bool magnitude_above_one(const uint8_t* digits, const uint8_t* end) {
        int64_t place = 0;  // the power of ten of the first nonzero digit, plus one
        bool seen = false, dot = false;
        const uint8_t* p = digits;
        int64_t before = 0;
        for (; p < end && (is_digit(*p) || *p == '.'); ++p) {
            if (*p == '.') {
                dot = true;
                continue;
            }
            if (!seen && *p == '0') {
                if (dot) --before;
                continue;
            }
            if (!seen) seen = true, place = dot ? before : 0;
            if (!dot) ++place;
        }
        int64_t exp = 0;
        if (p < end && (*p == 'e' || *p == 'E')) {
            ++p;
            bool minus = p < end && *p == '-';
            if (p < end && (*p == '+' || *p == '-')) ++p;
            for (; p < end; ++p) exp = std::min<int64_t>(exp * 10 + (*p - '0'), int64_t(1) << 40);
            if (minus) exp = -exp;
        }
        return seen && place + exp > 0;
    }

    static bool near_stack_end() {
        char probe;
        return reinterpret_cast<uintptr_t>(&probe) < stack_floor();
    }

    const uint8_t* p_;
    const uint8_t* end_;
    bool exponent_ = false;
};

// the decimal digits of an integral double d, |d| >= 1 (exact: a bignum in base 1e9 past int64)
std::string integer_digits(double d) {
    d = std::fabs(d);
    if (d < 9.0e18) return std::to_string(static_cast<uint64_t>(d));
    int e = 0;
    double f = std::frexp(d, &e);  // d = f * 2^e, f in [0.5, 1)
    uint64_t m = static_cast<uint64_t>(std::ldexp(f, 53));
    int shift = e - 53;
    std::vector<uint32_t> limbs;  // base 1e9, least significant first
    while (m) limbs.push_back(static_cast<uint32_t>(m % 1000000000u)), m /= 1000000000u;
    while (shift > 0) {
        int s = std::min(shift, 29);
        uint64_t carry = 0;
        for (auto& l : limbs) {
            uint64_t v = (static_cast<uint64_t>(l) << s) + carry;
            l = static_cast<uint32_t>(v % 1000000000u);
            carry = v / 1000000000u;
        }
        while (carry) limbs.push_back(static_cast<uint32_t>(carry % 1000000000u)), carry /= 1000000000u;
        shift -= s;
    }
    std::string out = std::to_string(limbs.back());
    for (size_t i = limbs.size() - 1; i-- > 0;) {
        std::string part = std::to_string(limbs[i]);
        out.append(9 - part.size(), '0');
        out += part;
    }
    return out;
}

void put_u32(std::string& out, uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i) & 0xFF));
}

void put_chars(std::string& out, const std::u32string& s) {
    out.push_back('s');
    put_u32(out, static_cast<uint32_t>(s.size()));
    for (char32_t c : s)
        for (int i = 0; i < 3; ++i) out.push_back(static_cast<char>(c >> (8 * i) & 0xFF));
}

// an object's members, each name once with its last value (as Python's dict), sorted by name
std::vector<std::pair<const std::u32string*, const JsonValue*>> members_of(const JsonValue& v) {
    std::vector<std::pair<const std::u32string*, const JsonValue*>> out;
    for (size_t i = 0; i < v.names.size(); ++i) out.emplace_back(&v.names[i], &v.items[i]);
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return *a.first < *b.first; });
    std::vector<std::pair<const std::u32string*, const JsonValue*>> last;
    for (size_t i = 0; i < out.size(); ++i)
        if (i + 1 == out.size() || *out[i + 1].first != *out[i].first) last.push_back(out[i]);
    return last;
}

void put_key(std::string& out, const JsonValue& v) {
    using T = JsonValue::Type;
    DepthGuard guard(json_depth);
    switch (v.type) {
        case T::Null: out.push_back('n'); return;
        case T::False: out.push_back('f'); return;
        case T::True: out.push_back('t'); return;
        case T::Integer:
            out.push_back('i');
            if (v.negative) out.push_back('-');
            out += v.digits;
            out.push_back(';');
            return;
        case T::Float:
            if (std::isfinite(v.number) && std::trunc(v.number) == v.number) {  // (equal to an integer)
                out.push_back('i');
                if (v.number < 0) out.push_back('-');
                out += v.number == 0 ? std::string("0") : integer_digits(v.number);
                out.push_back(';');
            } else {
                out.push_back('d');
                char bits[sizeof(double)];
                std::memcpy(bits, &v.number, sizeof bits);
                out.append(bits, sizeof bits);
            }
            return;
        case T::String: put_chars(out, v.chars); return;
        case T::Array:
            out.push_back('a');
            put_u32(out, static_cast<uint32_t>(v.items.size()));
            for (const auto& x : v.items) put_key(out, x);
            return;
        case T::Object: {
            auto members = members_of(v);
            out.push_back('o');
            put_u32(out, static_cast<uint32_t>(members.size()));
            for (const auto& [name, x] : members) {
                put_chars(out, *name);
                put_key(out, *x);
            }
            return;
        }
    }
}

// -- spellings ------------------------------------------------------------------------------------

ByteSet bytes_set(std::string_view chars) {
    ByteSet m;
    for (char c : chars) m.set(static_cast<uint8_t>(c));
    return m;
}

Id lit(Pool& pool, std::string_view s) {
    return pool.literal({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
}

Id concat(Pool& pool, std::initializer_list<Id> parts) { return pool.concat(std::span<const Id>(parts.begin(), parts.size())); }
Id alt(Pool& pool, std::initializer_list<Id> parts) { return pool.alt(std::span<const Id>(parts.begin(), parts.size())); }
Id optional(Pool& pool, Id x) { return alt(pool, {x, EPSILON}); }
Id star(Pool& pool, Id x) { return pool.repeat(x, 0, -1); }

void utf8(std::string& out, char32_t c) {
    if (c < 0x80) {
        out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
        out.push_back(static_cast<char>(0xC0 | c >> 6));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | c >> 12));
        out.push_back(static_cast<char>(0x80 | (c >> 6 & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | c >> 18));
        out.push_back(static_cast<char>(0x80 | (c >> 12 & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (c >> 6 & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
}

// the spellings of character c inside a JSON string
Id char_texts(Pool& pool, char32_t c) {
    std::vector<Id> forms;
    bool surrogate = c >= 0xD800 && c < 0xE000;
    if (c >= 0x20 && c != U'"' && c != U'\\' && !surrogate) {
        std::string s;
        utf8(s, c);
        forms.push_back(lit(pool, s));
    }
    const char* shorts = nullptr;
    switch (c) {
        case U'"': shorts = "\\\""; break;
        case U'\\': shorts = "\\\\"; break;
        case U'/': shorts = "\\/"; break;
        case U'\b': shorts = "\\b"; break;
        case U'\f': shorts = "\\f"; break;
        case U'\n': shorts = "\\n"; break;
        case U'\r': shorts = "\\r"; break;
        case U'\t': shorts = "\\t"; break;
        default: break;
    }
    if (shorts) forms.push_back(lit(pool, shorts));
    std::vector<char32_t> units;
    if (c < 0x10000) units.push_back(c);
    else units = {0xD800 + ((c - 0x10000) >> 10), 0xDC00 + ((c - 0x10000) & 0x3FF)};
    std::vector<Id> escaped;
    for (char32_t u : units) {
        escaped.push_back(lit(pool, "\\u"));
        for (int shift = 12; shift >= 0; shift -= 4) {
            int h = static_cast<int>(u >> shift & 0xF);
            char lower = "0123456789abcdef"[h], upper = "0123456789ABCDEF"[h];
            escaped.push_back(pool.bytes_of(bytes_set(std::string{lower, upper})));
        }
    }
    forms.push_back(pool.concat(escaped));
    return pool.alt(forms);
}

// the significant digits of a nonzero finite number and x: the value is digits * 10^x
void decimal_of(const JsonValue& v, std::string& digits, int64_t& x) {
    if (v.type == JsonValue::Type::Integer) {
        digits = v.digits;
        x = 0;
    } else {  // (the shortest digits that read back as the double: Python's repr)
        char buf[64];
        auto got = std::to_chars(buf, buf + sizeof buf, std::fabs(v.number), std::chars_format::scientific);
        std::string_view s(buf, static_cast<size_t>(got.ptr - buf));
        size_t e = s.find('e');
        digits.clear();
        for (char c : s.substr(0, e))
            if (c != '.') digits.push_back(c);
        int64_t sci = 0;
        std::from_chars(s.data() + e + 1 + (s[e + 1] == '+'), s.data() + s.size(), sci);
        x = sci - static_cast<int64_t>(digits.size() - 1);
    }
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back(), ++x;
}

Id number_texts(Pool& pool, const JsonValue& v) {
    Id zeros = star(pool, lit(pool, "0"));
    Id more_zeros = optional(pool, pool.seq(lit(pool, "."), zeros));
    Id digit = pool.bytes_of(ByteSet::range('0', '9'));
    Id exponent = concat(pool, {pool.bytes_of(bytes_set("eE")), optional(pool, pool.bytes_of(bytes_set("+-"))), pool.repeat(digit, 1, -1)});
    bool is_int = v.type == JsonValue::Type::Integer;
    bool negative = is_int ? v.negative : v.number < 0;
    if (is_int ? v.digits == "0" : v.number == 0) {
        Id plain = concat(pool, {pool.repeat(lit(pool, "0"), 1, -1), more_zeros});
        Id with_exponent = concat(pool, {pool.repeat(pool.bytes_of(bytes_set("0.")), 1, -1), exponent});
        return pool.seq(optional(pool, lit(pool, "-")), alt(pool, {plain, with_exponent}));
    }
    if (!is_int && !std::isfinite(v.number)) {  // (a number too large for a float: every long or exponent spelling of its sign)
        Id many = pool.repeat(digit, 1, -1);
        Id long_ = concat(pool, {pool.repeat(digit, 309, -1), optional(pool, pool.seq(lit(pool, "."), many)), optional(pool, exponent)});
        Id spelled = alt(pool, {long_, pool.seq(pool.repeat(pool.bytes_of(bytes_set("0123456789.")), 1, -1), exponent)});
        return negative ? pool.seq(lit(pool, "-"), spelled) : spelled;
    }
    std::string digits;
    int64_t x = 0;
    decimal_of(v, digits, x);
    int64_t k = static_cast<int64_t>(digits.size());
    Id plain;
    if (x >= 0) {
        plain = concat(pool, {zeros, lit(pool, digits + std::string(static_cast<size_t>(x), '0')), more_zeros});
    } else if (k > -x) {
        size_t cut = static_cast<size_t>(k + x);
        plain = concat(pool, {zeros, lit(pool, digits.substr(0, cut)), lit(pool, "."), lit(pool, digits.substr(cut)), zeros});
    } else {
        plain = concat(pool, {zeros, lit(pool, "."), lit(pool, std::string(static_cast<size_t>(-x - k), '0') + digits), zeros});
    }
    std::vector<Id> shapes = {concat(pool, {zeros, lit(pool, digits), zeros, more_zeros}),  // (the dot anywhere)
                              concat(pool, {zeros, lit(pool, "."), zeros, lit(pool, digits), zeros})};
    for (size_t i = 1; i < digits.size(); ++i)
        shapes.push_back(concat(pool, {zeros, lit(pool, digits.substr(0, i)), lit(pool, "."), lit(pool, digits.substr(i)), zeros}));
    Id number = alt(pool, {plain, pool.seq(pool.alt(shapes), exponent)});
    return negative ? pool.seq(lit(pool, "-"), number) : number;
}

Id string_texts(Pool& pool, const std::u32string& s, CharTexts& chars) {
    std::vector<Id> parts{lit(pool, "\"")};
    for (char32_t c : s) {
        auto it = chars.find(c);
        if (it == chars.end()) it = chars.emplace(c, char_texts(pool, c)).first;
        parts.push_back(it->second);
    }
    parts.push_back(lit(pool, "\""));
    return pool.concat(parts);
}

}  // namespace

std::optional<ParsedJson> parse_json(std::span<const uint8_t> text) {
    if (!valid_utf8(text)) return std::nullopt;
    ParsedJson out;
    Reader reader(text.data(), text.data() + text.size());
    if (!reader.whole(out.value)) return std::nullopt;
    out.exponent = reader.exponent();
    return out;
}

std::string value_key(const JsonValue& v) {
    std::string out;
    put_key(out, v);
    return out;
}

Id value_texts(Pool& pool, const JsonValue& v, CharTexts& chars) {
    using T = JsonValue::Type;
    DepthGuard guard(json_depth);
    Id ws = star(pool, pool.bytes_of(bytes_set(" \t\n\r")));
    switch (v.type) {
        case T::Null: return lit(pool, "null");
        case T::False: return lit(pool, "false");
        case T::True: return lit(pool, "true");
        case T::Integer:
        case T::Float: return number_texts(pool, v);
        case T::String: return string_texts(pool, v.chars, chars);
        case T::Array: {
            if (v.items.empty()) return concat(pool, {lit(pool, "["), ws, lit(pool, "]")});
            std::vector<Id> parts{lit(pool, "["), ws, value_texts(pool, v.items[0], chars)};
            for (size_t i = 1; i < v.items.size(); ++i) {
                parts.insert(parts.end(), {ws, lit(pool, ","), ws});
                parts.push_back(value_texts(pool, v.items[i], chars));
            }
            parts.insert(parts.end(), {ws, lit(pool, "]")});
            return pool.concat(parts);
        }
        case T::Object: {
            if (v.items.empty()) return concat(pool, {lit(pool, "{"), ws, lit(pool, "}")});
            // n members, each one of v's (a repeated key makes another value: a superset, never a loss)
            auto members = members_of(v);
            std::vector<Id> each;
            for (const auto& [name, x] : members)
                each.push_back(concat(pool, {string_texts(pool, *name, chars), ws, lit(pool, ":"), ws, value_texts(pool, *x, chars)}));
            Id member = pool.alt(each);
            int64_t more_count = static_cast<int64_t>(members.size()) - 1;
            Id more = pool.repeat(concat(pool, {ws, lit(pool, ","), ws, member}), more_count, more_count);
            return concat(pool, {lit(pool, "{"), ws, member, more, ws, lit(pool, "}")});
        }
    }
    return NOTHING;
}

}  // namespace structgen
