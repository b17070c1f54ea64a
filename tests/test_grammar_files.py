"""Checks for the ready-made constraints in ``grammars/``.

Every grammar ``NAME`` is either ``NAME.regex`` (one line, full-match semantics,
the subset of Python ``re`` syntax that ``interegular`` parses),
``NAME.schema.json`` (JSON Schema draft 2020-12) or a context-free grammar ``NAME.lark`` /
``NAME.gbnf``, with ``NAME.valid.jsonl`` and ``NAME.invalid.jsonl`` beside it.  The tests are parametrized over the folder,
so a new grammar is picked up without touching this file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import interegular
import jsonschema
import pytest
import regex

GRAMMARS_DIR = Path(__file__).resolve().parent.parent / "grammars"
MIN_SAMPLES = 8

REGEX_SUFFIX = ".regex"
SCHEMA_SUFFIX = ".schema.json"
CFG_SUFFIXES = (".lark", ".gbnf")

# Constructs our engine does not support (see grammars/README.md).  Checked on
# the raw pattern text; the escape-aware check is in _forbidden_constructs.
_FORBIDDEN_ESCAPES = {"b", "B", "A", "Z", "z", "G", "1", "2", "3", "4", "5", "6", "7", "8", "9"}
_FORBIDDEN_GROUPS = ("(?=", "(?!", "(?<=", "(?<!", "(?P=", "(?P<", "(?>")

# Keywords kept out of the shipped grammar files: they stay simple and portable to other
# engines (the compiler itself handles most of these, see README "JSON Schema coverage").
_FORBIDDEN_KEYWORDS = {
    "allOf", "not", "if", "then", "else", "uniqueItems", "multipleOf",
    "patternProperties", "dependentSchemas", "dependentRequired",
    "unevaluatedProperties", "unevaluatedItems",
}


def _names(suffix: str) -> list[str]:
    return sorted(p.name[: -len(suffix)] for p in GRAMMARS_DIR.glob("*" + suffix))


REGEX_NAMES = _names(REGEX_SUFFIX)
SCHEMA_NAMES = _names(SCHEMA_SUFFIX)
CFG_NAMES = sorted(_names(".lark") + _names(".gbnf"))
ALL_NAMES = sorted(REGEX_NAMES + SCHEMA_NAMES + CFG_NAMES)


def _cfg_file(name: str) -> Path:
    return next(GRAMMARS_DIR / (name + suffix) for suffix in CFG_SUFFIXES if (GRAMMARS_DIR / (name + suffix)).is_file())


def _read_regex(name: str) -> str:
    return (GRAMMARS_DIR / (name + REGEX_SUFFIX)).read_text(encoding="utf-8").strip()


def _read_schema(name: str) -> dict:
    return json.loads((GRAMMARS_DIR / (name + SCHEMA_SUFFIX)).read_text(encoding="utf-8"))


def _read_samples(name: str, kind: str) -> list:
    path = GRAMMARS_DIR / f"{name}.{kind}.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _forbidden_constructs(pattern: str) -> list[str]:
    """Anchors, look-arounds, back-references, \\b and possessive quantifiers."""
    found = []
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            nxt = pattern[i + 1 : i + 2]
            if not in_class and nxt in _FORBIDDEN_ESCAPES:
                found.append("\\" + nxt)
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
        elif c == "[":
            in_class = True
            # a ']' right after '[' or '[^' is a literal
            if pattern[i + 1 : i + 2] == "^":
                i += 1
            if pattern[i + 1 : i + 2] == "]":
                i += 1
        elif c in "^$":
            found.append(c)
        elif c == "(" and pattern.startswith(_FORBIDDEN_GROUPS, i):
            found.append(pattern[i : i + 4])
        elif c == "+" and i > 0 and pattern[i - 1] in "*+?}" and pattern[i - 2 : i] != "\\" + pattern[i - 1]:
            found.append("possessive " + pattern[i - 1 : i + 1])
        i += 1
    return found


def _schema_keywords(node) -> set[str]:
    """All keys used anywhere in a schema (property names included; that is fine
    for the forbidden-keyword check as long as no property is named like one)."""
    keys: set[str] = set()
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "properties" and isinstance(v, dict):
                for sub in v.values():
                    keys |= _schema_keywords(sub)
                continue
            keys.add(k)
            keys |= _schema_keywords(v)
    elif isinstance(node, list):
        for v in node:
            keys |= _schema_keywords(v)
    return keys


# --------------------------------------------------------------------------
# Folder layout
# --------------------------------------------------------------------------


def test_folder_has_grammars():
    assert GRAMMARS_DIR.is_dir()
    assert len(ALL_NAMES) >= 1
    for required in ("date", "time", "date-time", "email", "uuid", "ipv4", "url",
                     "phone", "us-address", "city"):
        assert required in ALL_NAMES, f"missing grammar {required!r}"


def test_names_are_unique_and_well_formed():
    assert not set(REGEX_NAMES) & set(SCHEMA_NAMES), "a name is both a regex and a schema"
    assert len(ALL_NAMES) == len(set(ALL_NAMES)), "a name is two kinds of grammar"
    assert {"arithmetic", "json", "sql-select", "python-call"} <= set(CFG_NAMES)
    for name in ALL_NAMES:
        assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", name), name


def test_no_orphan_files():
    allowed = {"README.md"}
    for name in ALL_NAMES:
        main = _cfg_file(name).name if name in CFG_NAMES else name + (REGEX_SUFFIX if name in REGEX_NAMES else SCHEMA_SUFFIX)
        allowed |= {main, f"{name}.valid.jsonl", f"{name}.invalid.jsonl"}
    extra = sorted(p.name for p in GRAMMARS_DIR.iterdir() if p.name not in allowed)
    assert not extra, f"files in grammars/ that belong to no grammar: {extra}"


@pytest.mark.parametrize("name", ALL_NAMES)
@pytest.mark.parametrize("kind", ["valid", "invalid"])
def test_sample_file_exists_with_enough_lines(name, kind):
    path = GRAMMARS_DIR / f"{name}.{kind}.jsonl"
    assert path.is_file(), f"missing {path.name}"
    samples = _read_samples(name, kind)
    assert len(samples) >= MIN_SAMPLES, f"{path.name}: {len(samples)} samples, need {MIN_SAMPLES}"


def test_readme_lists_every_grammar():
    text = (GRAMMARS_DIR / "README.md").read_text(encoding="utf-8")
    for name in ALL_NAMES:
        assert f"`{name}`" in text, f"grammars/README.md does not mention `{name}`"


# --------------------------------------------------------------------------
# Regex grammars
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", REGEX_NAMES)
def test_regex_file_is_one_line(name):
    raw = (GRAMMARS_DIR / (name + REGEX_SUFFIX)).read_text(encoding="utf-8")
    assert len(raw.strip().splitlines()) == 1
    assert raw.strip() == raw.strip(" \t\r\n"), "surrounding whitespace"


@pytest.mark.parametrize("name", REGEX_NAMES)
def test_regex_uses_supported_syntax(name):
    pattern = _read_regex(name)
    assert _forbidden_constructs(pattern) == []
    assert pattern.isascii(), "keep patterns ASCII"


@pytest.mark.parametrize("name", REGEX_NAMES)
def test_regex_compiles(name):
    pattern = _read_regex(name)
    regex.compile(pattern)
    interegular.parse_pattern(pattern).to_fsm()


@pytest.mark.parametrize("name", REGEX_NAMES)
def test_regex_samples_are_strings(name):
    for kind in ("valid", "invalid"):
        for sample in _read_samples(name, kind):
            assert isinstance(sample, str), f"{name}.{kind}.jsonl: {sample!r} is not a string"


@pytest.mark.parametrize("name", REGEX_NAMES)
def test_regex_valid_samples_match(name):
    pattern = regex.compile(_read_regex(name))
    bad = [s for s in _read_samples(name, "valid") if not pattern.fullmatch(s)]
    assert bad == []


@pytest.mark.parametrize("name", REGEX_NAMES)
def test_regex_invalid_samples_do_not_match(name):
    pattern = regex.compile(_read_regex(name))
    bad = [s for s in _read_samples(name, "invalid") if pattern.fullmatch(s)]
    assert bad == []


@pytest.mark.parametrize("name", REGEX_NAMES)
def test_interegular_fsm_agrees_with_regex(name):
    """The FSM our engine builds must accept exactly the valid samples, so the
    two parsers read the pattern the same way."""
    fsm = interegular.parse_pattern(_read_regex(name)).to_fsm()
    for s in _read_samples(name, "valid"):
        assert fsm.accepts(s), f"FSM rejects valid {s!r}"
    for s in _read_samples(name, "invalid"):
        assert not fsm.accepts(s), f"FSM accepts invalid {s!r}"


# --------------------------------------------------------------------------
# JSON Schema grammars
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_schema_is_valid_draft_2020_12(name):
    schema = _read_schema(name)
    assert schema.get("$schema") == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_schema_uses_supported_keywords(name):
    used = _schema_keywords(_read_schema(name)) & _FORBIDDEN_KEYWORDS
    assert used == set()


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_schema_patterns_are_anchored(name):
    def patterns(node):
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "pattern" and isinstance(v, str):
                    yield v
                else:
                    yield from patterns(v)
        elif isinstance(node, list):
            for v in node:
                yield from patterns(v)

    for p in patterns(_read_schema(name)):
        assert p.startswith("^") and p.endswith("$"), f"unanchored pattern {p!r}"
        regex.compile(p)


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_schema_valid_samples_validate(name):
    validator = jsonschema.Draft202012Validator(_read_schema(name))
    for sample in _read_samples(name, "valid"):
        errors = [e.message for e in validator.iter_errors(sample)]
        assert errors == [], f"{sample!r}: {errors}"


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_schema_invalid_samples_do_not_validate(name):
    validator = jsonschema.Draft202012Validator(_read_schema(name))
    bad = [s for s in _read_samples(name, "invalid") if validator.is_valid(s)]
    assert bad == []



# --------------------------------------------------------------------------
# Context-free grammars
# --------------------------------------------------------------------------


def _cfg_reference(name: str):
    path = _cfg_file(name)
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".gbnf":
        from .support.earley import GbnfReference

        return GbnfReference(text).accepts
    from .cfg.helpers import lark_reference

    return lark_reference(text)


@pytest.mark.parametrize("name", CFG_NAMES)
def test_cfg_samples_follow_the_reference(name):
    """Valid samples are in the grammar's language and invalid ones are not, as the reference
    reads the grammar (Lark's Earley parser; the Earley reference for GBNF)."""
    accepted = _cfg_reference(name)
    for s in _read_samples(name, "valid"):
        assert isinstance(s, str) and accepted(s), s
    for s in _read_samples(name, "invalid"):
        assert isinstance(s, str) and not accepted(s), s


# ---------------------------------------------------------------------------------------------
# Token level: every sample walked token by token through a guide over a real tokenizer.


@pytest.mark.parametrize("name", ALL_NAMES)
def test_samples_walk_through_the_guide(name, smollm2_tokenizer, smollm2_vocabulary):
    import structgen

    from .support.json_order import in_schema_order

    if name in REGEX_NAMES or name in CFG_NAMES:
        if name in REGEX_NAMES:
            guide = structgen.compile_regex(_read_regex(name), smollm2_vocabulary)
        else:
            from structgen.cfg import compile_grammar

            guide = compile_grammar(_cfg_file(name).read_text(encoding="utf-8"), smollm2_vocabulary)
        texts = {kind: [[s] for s in _read_samples(name, kind)] for kind in ("valid", "invalid")}
    else:
        guide = structgen.compile_json_schema(_read_schema(name), smollm2_vocabulary)
        texts = {
            kind: [
                [json.dumps(x, ensure_ascii=False), json.dumps(x, ensure_ascii=False, separators=(",", ":"))]
                for x in (in_schema_order(y, _read_schema(name)) for y in _read_samples(name, kind))
            ]
            for kind in ("valid", "invalid")
        }

    def accepted(text: str) -> bool:
        state = guide.advance(guide.initial_state, smollm2_tokenizer.encode(text, add_special_tokens=False))
        return state >= 0 and guide.is_final(state)

    for forms in texts["valid"]:
        assert all(accepted(t) for t in forms), forms
    for forms in texts["invalid"]:
        assert not any(accepted(t) for t in forms), forms
