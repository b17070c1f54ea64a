"""Writes the peers' grammar test vectors (transcribed from their test files) as JSON.

Run once: ``python tests/cfg/peers/make_vectors.py``. Each vector: ``source`` (file::test),
``syntax``, ``grammar``, optional ``start``, and either ``accept`` / ``reject`` lists (a reject
prefixed ``FINAL_REJECT:`` is a string that is not complete but may still be continued, as
llguidance's tests write it) or ``error`` (the peer refuses the grammar, with its message) or
``ok`` (the peer compiles it).
"""

import json
from pathlib import Path

HERE = Path(__file__).parent
LLG = "llguidance sample_parser/tests/test_lark.rs"
XG = "xgrammar tests/python/test_grammar_matcher_ebnf.py"


def llg(test, grammar, accept=None, reject=None, error=None, ok=None):
    v = {"source": f"{LLG}::{test}", "syntax": "lark", "grammar": grammar}
    if error is not None:
        v["error"] = error
    elif ok:
        v["ok"] = True
    else:
        v["accept"], v["reject"] = accept, reject
    return v


LLGUIDANCE = [
    llg("test_dot_unicode", 'start: /.../ "abc" /.../',
        ["abcabcabc", "aaaabcccc", "🔵🟠✅abc❌🟠🔵"],
        ["aaabcccc", "aaaaabcccc", "FINAL_REJECT:aaaabccc", "aaaabccccc", "🔵🟠✅❌abc❌✅🟠🔵", "🔵🟠abc🟠🔵"]),
    llg("test_lark_syntax_general", 'root: "abc" "def"', error="no start"),
    llg("test_lark_syntax_general", 'start: foo{7,6}\nfoo: "a" | "b"', error="range end must be >= start"),
    llg("test_lark_syntax_general", 'start: foo{-1,}\nfoo: "a" | "b"', error="range start must be >= 0"),
    llg("test_lark_syntax_general", 'start: foo{0,-1}\nfoo: "a" | "b"', error="range end must be >= start"),
    llg("test_lark_syntax_general", 'start: FOO\nFOO: ("a" | "b"){7,6}', error="range end must be >= start"),
    llg("test_lark_syntax_general", 'start: FOO\nFOO: ("a" | "b"){-1,}', error="range start must be >= 0"),
    llg("test_lark_syntax_general", 'start: FOO\nFOO: ("a" | "b"){0,-1}', error="range end must be >= start"),
    llg("test_lark_syntax_general", 'start: FOO\nFOO: "a" | BAR\nBAR: "b" FOO', error="circular reference in token"),
    llg("test_lark_syntax_general", 'start: foo\nfoo: "a" | bar\nbar: "b" foo', ok=True),
    llg("test_lark_syntax_general", 'start: FOO\nBAR: "b"', error="unknown name"),
    llg("test_lark_syntax_general", 'start: foo\nbar: "b"', error="unknown name"),
    llg("test_lark_syntax_general", 'start: BAR\nBAR: BAZ "a"', error='unknown name: "BAZ"'),
    llg("test_lark_syntax_general", "%import common.INT\nstart: INT", ok=True),
    llg("test_lark_syntax_general", "%import common.BLAH\nstart: BLAH", error="Unknown common"),
    llg("test_lark_syntax_general", " start: /[abc/ ", error="invalid regex"),
    llg("test_lark_syntax_general", " start: /[abc]/ ", ok=True),
    llg("test_lark_syntax_general", " start: /[abc]/l ", error="l-flag is not supported"),
    llg("test_lark_syntax_general", "start: FOO\nFOO: @qux", error="cannot be used in terminals"),
    llg("test_lark_syntax_general", "start: FOO\nFOO: %json { }", error="cannot be used in terminals"),
    llg("test_lark_syntax_general", "start: FOO\nFOO: <[1234]>", error="cannot be used in terminals"),
    llg("test_lark_syntax_general", "start: FOO\nFOO: <|assistant|>", error="cannot be used in terminals"),
    llg("test_lark_syntax_general", 'start: "A" | <|foobarbaz|>', error="unknown special token"),
    llg("test_lark_syntax_general", ' start: "ab".."c" ', error="range start must be a single character"),
    llg("test_lark_syntax_general", ' start: "a".."cd" ', error="range end must be a single character"),
    llg("test_lark_syntax_general", '  start: "d".."a" ', error="invalid range order"),
    llg("test_lark_syntax_general", "start: <[100-200-300]>", error="invalid token range"),
    llg("test_lark_syntax_general", "start: <[100-200,300-4002]>", ok=True),
    llg("test_lark_syntax_general", "start: <[*]>", ok=True),
    llg("test_lark_syntax_general", "start: <[^100,200-300]>", ok=True),
    llg("test_lark_syntax_general", 'start: foo\nfoo: "a" | "b"\nfoo: "c"', error="duplicate rule"),
    llg("test_lark_syntax_general", 'start: FOO\nFOO: "a" | "b"\nFOO: "c"', error="duplicate token"),
    llg("test_lark_syntax_general", 'start: / "test"\nblah: "xyz"', error="lexer error"),
    llg("test_lark_syntax_general", 'start: "test\nblah: "xyz"', error="lexer error"),
    llg("test_lark_syntax_perc", "start: %json {", error="EOF while parsing an object"),
    llg("test_lark_syntax_perc", "start: %json { foo", error="key must be a string"),
    llg("test_lark_syntax_perc", "start: %json []", error="failed to compile JSON schema"),
    llg("test_lark_syntax_perc", 'start: %json { "if": {} }', error="failed to compile JSON schema"),
    llg("test_lark_syntax_perc", '%llguidance { "no_forcing": "yadda-dada"}\nstart: "a" | "b"',
        error="failed to parse %llguidance declaration"),
    llg("test_lark_syntax_perc", ' start: %regex { "substring_words": "foo bar" } ', ok=True),
    llg("test_lark_syntax_attributes", ' start: foo\nfoo[stop=""]: /.*/ ', ok=True),
    llg("test_lark_syntax_attributes", ' start: foo\nfoo[capture,stop=""]: /.*/ ', ok=True),
    llg("test_lark_syntax_attributes", ' start: foo\nfoo[foobar=12]: /.*/ ', error="Unknown attribute"),
    llg("test_repeat", 'start:  ab{3,5}\nab:  "a" | "b"', ["aba", "abaa", "aaaaa", "aabaa"],
        ["FINAL_REJECT:aa", "FINAL_REJECT:ab", "aaaaaa"]),
    llg("test_repeat", 'start:  ab{3,}\nab:  "a" | "b"', ["aba", "abaa", "aaaaa", "aabaa", "aaaaaa"],
        ["FINAL_REJECT:aa", "FINAL_REJECT:ab"]),
    llg("test_repeat", 'start:  ab{,5}\nab:  "a" | "b"', ["", "aa", "b", "aba", "abaa", "aaaaa", "aabaa"], ["aaaaaa"]),
    llg("test_lexer_amb", "start: \"'foo'\" /a+/ | STRING /b+/\nSTRING: /'[^']*'/",
        ["'foo'a", "'foo'aaa", "'bar'b", "'bar'bbb", "'foo'bb"], ["'bar'a", "'bar'c"]),
    llg("test_json_dw_pattern", 'start: %json { "type": "string", "pattern": "^\\\\d$" }',
        ['"1"', '"2"'], ["1", '"12"', '"a"', '""', '"১"']),
    llg("test_json_dw_pattern", 'start: %json { "type": "string", "pattern": "^\\\\w$" }',
        ['"1"', '"2"', '"a"', '"A"'], ["1", '"12"', '""', '"১"', '"ł"']),
    llg("test_json_dw_pattern", 'start: %json { "type": "string", "pattern": "^\\\\s$" }',
        ['" "', '"\\t"', '"\\n"', '"\\r"', '"\\u0009"', '"\\u000A"', '"\\u000B"', '"\\u000C"', '"\u00a0"', '"\u2000"',
         '"\u2008"'],
        ["1", '"12"', '""', '"১"', '"ł"', '"\\u00A0"']),
    llg("test_json_anchoring", 'start: %json { "type": "string", "pattern": "[ab]" }',
        ['"a"', '"foobar"', '"\\nb\\n\\n"'], ["1", '"12"', '""', '"১"', '"ł"']),
    llg("test_json_anchoring", 'start: %json { "type": "string", "pattern": "^foo" }',
        ['"foo"', '"foobar"'], ["1", '"afoo"', '"afooa"']),
    llg("test_json_anchoring", 'start: %json { "type": "string", "pattern": "foo$" }',
        ['"foo"', '"barfoo"'], ["1", '"fooa"', '"afooa"']),
    llg("test_json_anchoring", 'start: %json { "type": "string", "pattern": "^foo$" }',
        ['"foo"'], ["1", '"fooa"', '"afoo"', '"afooa"']),
    llg("test_nested_lark", 'start: /[ab]+/ foobar\nfoobar: %lark {\n    start: "foo" | "Bar"\n}',
        ["afoo", "abfoo", "aaaaaaBar"], ["FINAL_REJECT:a", "afooa"]),
    llg("test_regex_and", "start: ST\nST: LOWER & ABC\nLOWER: /[a-z]+/\nABC: /[abcABC]+/", ["abc", "a", "bbb"], ["A", "d", "1"]),
    llg("test_regex_not", "start: ST\nST: /[abcd]+/ & ~/(.*)[ab](.*)/", ["cd", "c"], ["x", "aa", "ca", "b"]),
    llg("test_regex_and", "start: LOWER & ABC\nLOWER: /[a-z]+/\nABC: /[abcABC]+/",
        error="& is only supported for tokens, not rules"),
    llg("test_regex_and", "start: ST\nST: /[a-z]+/ & /[abcABC]+/", ["abc", "a", "bbb"], ["A", "d", "1"]),
    llg("test_regex_and", "start: ST\nST: /[ab]+/ | /[cd]+/ & /[def]+/", ["ab", "dd"], ["c", "e", "f"]),
    llg("test_regex_and", "start: ST\nST: /[ab]+/ | ( /[cd]+/ & /[def]+/ )", ["ab", "dd"], ["c", "e", "f"]),
    llg("test_regex_and", "start: ST\nST: ( /[abf]+/ | /[cd]+/ ) & /[def]+/", ["d", "f"], ["a", "b"]),
    llg("test_regex_and", "start: ST\nST: /[ab]/+ | /[cd]/+ & /[def]/+", ["ab", "dd"], ["c", "e", "f"]),
    llg("test_regex_and", "start: ST\nST: /[abc]/ & /[bcd]/ & /[cde]/", ["c"], ["a", "b", "d", "e"]),
    llg("test_regex_and", "start: ST\nST: /a*/ & /a+/", ["a", "aa"], ["FINAL_REJECT:", "b"]),
    llg("test_regex_and", 'start: "foo" | ST\nST: /a/? & /a{2}/', ["foo"], ["FINAL_REJECT:", "a", "aa"]),
    llg("test_regex_and", 'start: "foo" | ST\nST: /a/ /b/ & /b/', ["foo"], ["b", "a", "abb", "ab"]),
    llg("test_regex_and", 'start: "foo" | ST\nST: /ab/ & /b/', ["foo"], ["ab", "b", "a"]),
    llg("test_regex_not", "start: ASCII_LINES\nASCII_LINES: /[a-zA-Z \\n]*/ & ~/(?s:.*)\\n\\n(?s:.*)/",
        ["foo", "bar\nbaz", "hello world\n", "aaa\nbbb\nccc"], [".", "a\n\na"]),
    llg("test_parametric_1",
        'start  : aa::0 "X"\naa::_  : a aa::incr(_)    %if lt(_, 6)\n       | bb::_\nbb::_  : b bb::incr(_)    %if lt(_, 6)\n'
        '       | ""\na: "a"\nb: "b"',
        ["X", "aX", "bX", "abX", "aabX", "aaabX", "aaaabbX", "aaabbbX", "aaaaaaX", "bbbbbbX"],
        ["z", "ba", "aaaaaaa", "bbbbbbb", "aaabbbbb"]),
]

JSON_EBNF = r'''
root ::= basic_array | basic_object
basic_any ::= basic_number | basic_string | basic_boolean | basic_null | basic_array | basic_object
basic_integer ::= ("0" | "-"? [1-9] [0-9]*) ".0"?
basic_number ::= ("0" | "-"? [1-9] [0-9]*) ("." [0-9]+)? ([eE] [+-]? [0-9]+)?
basic_string ::= (([\"] basic_string_1 [\"]))
basic_string_1 ::= "" | [^"\\\x00-\x1F] basic_string_1 | "\\" escape basic_string_1
escape ::= ["\\/bfnrt] | "u" [A-Fa-f0-9] [A-Fa-f0-9] [A-Fa-f0-9] [A-Fa-f0-9]
basic_boolean ::= "true" | "false"
basic_null ::= "null"
basic_array ::= "[" ("" | ws basic_any (ws "," ws basic_any)*) ws "]"
basic_object ::= "{" ("" | ws basic_string ws ":" ws basic_any ( ws "," ws basic_string ws ":" ws basic_any)*) ws "}"
ws ::= [ \n\t]*
'''

JSON_SIMPLE_EBNF = r'''
root ::= basic_object
basic_any ::= basic_string | basic_object
basic_string ::= (([\"] basic_string_1 [\"]))
basic_string_1 ::= "" | [^"\\\r\n] basic_string_1 | "\\" escape basic_string_1
escape ::= ["\\/bfnrt] | "u" [A-Fa-f0-9] [A-Fa-f0-9] [A-Fa-f0-9] [A-Fa-f0-9]
basic_object ::= "{" ("" | ws basic_string ws ":" ws basic_any ( ws "," ws basic_string ws ":" ws basic_any)*) ws "}"
ws ::= [ \n\t]*
'''


def xg(test, grammar, accept, reject, start=None):
    v = {"source": f"{XG}::{test}", "syntax": "gbnf", "grammar": grammar, "accept": accept, "reject": reject}
    if start:
        v["start"] = start
    return v


XGRAMMAR = [
    xg("test_simple", 'root ::= rule1 rule2\nrule1 ::= (rule2 | rule3) "a"\nrule2 ::= "b"\nrule3 ::= "c"\n',
       ["bab", "cab"], ["abb"]),
    xg("test_repetition", '\n        root ::= rule {2, 3}\n        rule ::= ("a" | [bc] {4,})\n    ',
       ["aaa", "abcbc", "bcbcbcbcbc", "bcbcbcbcbcbcbcb"], ["d", "aaaa"]),
    xg("test_utf8", "root ::= [，]+", ["，", "，，，", "，" * 22], []),
    xg("test_custom_root_rule", JSON_SIMPLE_EBNF, [r'"abc\r\n"'], [r'{"name": "John" }'], start="basic_string"),
    xg("test_json_accept/test_json_refuse", JSON_EBNF, [
        '{"name": "John"}', '{ "name" : "John" }', "{}", "[]", '{"name": "Alice", "age": 30, "city": "New York"}',
        '{"name": "Mike", "hobbies": ["reading", "cycling", "hiking"]}',
        '{"name": "Emma", "address": {"street": "Maple Street", "city": "Boston"}}',
        '[{"name": "David"}, {"name": "Sophia"}]',
        '{"name": "William", "age": null, "married": true, "children": ["Liam", "Olivia"], "hasPets": false}',
        '{"name": "Olivia", "contact": {"email": "olivia@example.com", "address": {"city": "Chicago", "zipcode": "60601"}}}',
        '{"name": "Liam", "skills": ["Java", "Python"], "experience": [{"company": "CompanyA", "years": 5}, '
        '{"company": "CompanyB", "years": 3}]}',
        '{"person": {"name": "Ethan", "age": 40}, "education": {"degree": "Masters", "university": "XYZ University"}, '
        '"work": [{"company": "ABC Corp", "position": "Manager"}, {"company": "DEF Corp", "position": "Senior Manager"}]}',
        '{"name": "Charlotte", "details": {"personal": {"age": 35, "hobbies": ["gardening", "painting"]}, "professional": '
        '{"occupation": "Engineer", "skills": ["CAD", "Project Management"], "projects": [{"name": "Project A", '
        '"status": "Completed"}, {"name": "Project B", "status": "In Progress"}]}}}',
    ], [
        r'{ name: "John" }',
        r'{ "name": "John" } ',
        r'{ "name": "John", "age": 30, }',
        r'{ "name": "John", "address": { "street": "123 Main St", "city": "New York" }',
        r'{ "name": "John", "age": 30, "hobbies": ["reading", "traveling",], }',
        r'{ "name": "John", "age": 30.5.7 }',
        r'{ "name": "John, "age": 30, "hobbies": ["reading", "traveling"] }',
        r'{ "name": "John", "age": 30, "hobbies": ["reading", { "type": "outdoor", "list": ["hiking", "swimming",]}] }',
        r'{ "name": "John", "age": 30, "status": "\P\J" }',
        r'{ "name": "John", "age": 30, "hobbies": ["reading", "traveling"], "address": { "street": "123 Main St", '
        r'"city": "New York", "coordinates": { "latitude": 40.7128, "longitude": -74.0060 }}}, "work": { "company": '
        r'"Acme", "position": "developer" }}',
    ]),
]

if __name__ == "__main__":
    for name, vectors in (("llguidance", LLGUIDANCE), ("xgrammar", XGRAMMAR)):
        (HERE / f"{name}.json").write_text(json.dumps(vectors, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(name, len(vectors))
