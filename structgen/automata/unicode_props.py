"""Unicode property classes of ECMA-262 patterns (``u`` flag): ``\\p{L}``, ``\\p{Lu}``,
``\\p{Letter}``, ``\\p{General_Category=Nd}``, ``\\P{...}``, as code point interval sets.

The sets come from the standard library's Unicode database (:mod:`unicodedata`), built once per
process (about half a second) and cached. :func:`expand_properties` rewrites a pattern's property
escapes into plain character classes before :mod:`structgen.json_schema.formats` reads it with Python's
parser (which has no ``\\p``).

Soundness across Unicode versions: a regex engine with a newer database may assign a character
our database leaves unassigned (``Cn``). So both ``\\p{X}`` and ``\\P{X}`` are taken among the
characters *assigned* here (``\\P{L}`` is "assigned and not a letter"): an under-approximation that
stays sound whichever version the validator has (assigned characters keep their general category
in practice). ``\\p{Cn}``/``\\p{Unassigned}`` would need the unassigned ones and is refused. A
negated class with property escapes (``[^\\p{C}]``, ``[^_\\p{Z}]``) is read among the assigned
characters too: the assigned ones outside every item, where its other items are characters,
ranges or ``\\uXXXX``; beside ``\\d``, ``\\s`` or ``\\w`` it is refused, except the sets no
version changes (``\\p{Cc}``, ``\\p{Cs}``, ``\\p{Co}``, ``Any``, ``ASCII``: ``[^\\p{Cc}\\s]`` is exact). Supported: the general categories and their
groups (short and long names), ``Any``, ``ASCII``, ``Assigned``, ``White_Space``, and ``Graph`` and
``Print`` as UTS #18 (and the ``regex`` package) define them; scripts and other binary properties are
refused.
"""

from __future__ import annotations

import functools
import importlib
import re
import unicodedata
import warnings
from typing import Any, Optional

from ..errors import SchemaNotSupported
from .utf8 import subtract_intervals

__all__ = ["expand_properties", "load_tables", "property_set", "spelled_dotall", "unnamed_groups"]

Ranges = tuple[tuple[int, int], ...]  # sorted, disjoint, inclusive

_MAX = 0x10FFFF
_GROUPS = {
    "L": ("Lu", "Ll", "Lt", "Lm", "Lo"), "LC": ("Lu", "Ll", "Lt"), "M": ("Mn", "Mc", "Me"), "N": ("Nd", "Nl", "No"),
    "P": ("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"), "S": ("Sm", "Sc", "Sk", "So"), "Z": ("Zs", "Zl", "Zp"),
    "C": ("Cc", "Cf", "Cs", "Co"),  # (Cn left out: see the module docs)
}
_LONG = {
    "Letter": "L", "Cased_Letter": "LC", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll", "Titlecase_Letter": "Lt",
    "Modifier_Letter": "Lm", "Other_Letter": "Lo", "Mark": "M", "Combining_Mark": "M", "Nonspacing_Mark": "Mn",
    "Spacing_Mark": "Mc", "Enclosing_Mark": "Me", "Number": "N", "Decimal_Number": "Nd", "digit": "Nd",
    "Letter_Number": "Nl", "Other_Number": "No", "Punctuation": "P", "punct": "P", "Connector_Punctuation": "Pc",
    "Dash_Punctuation": "Pd", "Open_Punctuation": "Ps", "Close_Punctuation": "Pe", "Initial_Punctuation": "Pi",
    "Final_Punctuation": "Pf", "Other_Punctuation": "Po", "Symbol": "S", "Math_Symbol": "Sm", "Currency_Symbol": "Sc",
    "Modifier_Symbol": "Sk", "Other_Symbol": "So", "Separator": "Z", "Space_Separator": "Zs", "Line_Separator": "Zl",
    "Paragraph_Separator": "Zp", "Other": "C", "Control": "Cc", "cntrl": "Cc", "Format": "Cf", "Surrogate": "Cs",
    "Private_Use": "Co", "Unassigned": "Cn", "L&": "LC",
}


@functools.lru_cache(maxsize=None)
def _categories() -> dict[str, Ranges]:
    """Every general category's code points, from one pass over the database."""
    ranges: dict[str, list[list[int]]] = {}
    category = unicodedata.category
    last, start = category("\0"), 0
    for cp in range(1, _MAX + 2):
        c = category(chr(cp)) if cp <= _MAX else ""
        if c != last:
            ranges.setdefault(last, []).append([start, cp - 1])
            last, start = c, cp
    return {k: tuple((a, b) for a, b in v) for k, v in ranges.items()}


def load_tables() -> None:
    """Read the Unicode database now (90 ms), not in the first compile of a ``\\p{..}``
    (see :func:`structgen.compiler.warm_up`)."""
    _assigned()


def _union(sets: list[Ranges]) -> Ranges:
    out: list[list[int]] = []
    for a, b in sorted(r for s in sets for r in s):
        if out and a <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return tuple((a, b) for a, b in out)


def _minus(a: Ranges, b: Ranges) -> Ranges:
    return tuple(subtract_intervals(a, b))


@functools.lru_cache(maxsize=None)
def _assigned() -> Ranges:
    return _minus(((0, _MAX),), _categories().get("Cn", ()))


#: White_Space (Unicode's PropList: no character has joined it since 6.3 dropped U+180E).
_WHITE_SPACE: Ranges = ((0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
                        (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000))
#: The properties UTS #18 defines for POSIX compatibility, as the ``regex`` package reads them
#: (CloudFormation's schemas write ``\p{Graph}``; ECMA-262 has only ``White_Space`` of these).
_POSIX = {"White_Space": "White_Space", "whitespace": "White_Space", "space": "White_Space", "Graph": "Graph", "graph": "Graph",
          "Print": "Print", "print": "Print"}


def _posix(value: str) -> Ranges:
    """``White_Space``; ``Graph``: assigned, not White_Space, Cc or Cs; ``Print``: Graph and Zs."""
    name = _POSIX[value]
    if name == "White_Space":
        return _WHITE_SPACE
    cats = _categories()
    graph = _minus(_assigned(), _union([_WHITE_SPACE, cats.get("Cc", ()), cats.get("Cs", ())]))
    return graph if name == "Graph" else _minus(_union([graph, cats.get("Zs", ())]), cats.get("Cc", ()))


@functools.lru_cache(maxsize=None)
def property_set(name: str, negated: bool = False) -> Optional[Ranges]:
    """The code points ``\\p{name}`` (``\\P{name}`` when ``negated``) matches, among the assigned
    ones (see the module docs); None for a property this module does not know or refuses.

    >>> property_set("Lu")[:2]
    ((65, 90), (192, 214))
    """
    value = name
    if "=" in name:
        key, value = name.split("=", 1)
        if key not in ("General_Category", "gc"):
            return None
    value = _LONG.get(value, value)
    if value == "Any":
        return () if negated else ((0, _MAX),)
    if value == "ASCII":
        return _minus(((0, _MAX),), ((0, 0x7F),)) if negated else ((0, 0x7F),)
    cats = _categories()
    if value == "Assigned":
        members = _assigned()
    elif value in _POSIX:
        members = _posix(value)
    elif value in _GROUPS:
        members = _union([cats.get(c, ()) for c in _GROUPS[value]])
    elif value in cats and value != "Cn":
        members = cats[value]
    else:
        return None
    return _minus(_assigned(), members) if negated else members


#: Python's regex parser (``re._parser``; ``sre_parse`` before Python 3.11).
_RE_PARSER: Any = importlib.import_module("re._parser" if hasattr(re, "_parser") else "sre_parse")

_PROPERTY = re.compile(r"\\([pP])\{([A-Za-z_&=]+)\}")

#: Sets that no Unicode version changes (the stability policy fixes the code points of Cc, Cs and
#: Co): only these may stand inside a negated class, where a set that grows must not be subtracted.
_IMMUTABLE = frozenset({"Cc", "Cs", "Co"})


def _exact_in_every_version(name: str, negated: bool) -> bool:
    """Whether ``\\p{name}`` (``\\P`` when ``negated``) is the same set in every Unicode version.

    >>> _exact_in_every_version("Control", False), _exact_in_every_version("L", False), _exact_in_every_version("Cc", True)
    (True, False, False)
    """
    value = name.split("=", 1)[1] if "=" in name else name
    value = _LONG.get(value, value)
    return value in ("Any", "ASCII") or (value in _IMMUTABLE and not negated)


def _escape(cp: int) -> str:
    return f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"


def _class_body(ranges: Ranges) -> str:
    return "".join(_escape(a) if a == b else f"{_escape(a)}-{_escape(b)}" for a, b in ranges)


#: The first of the code points that stand for a property's set in :func:`expand_properties`
#: with ``placeholders`` (plane 15's private use characters).
PLACEHOLDER_FIRST = 0xF0000
_PLACEHOLDER_LAST = 0xFFFFD
#: A set of at most this many ranges is spelled out all the same (a few escapes).
_SPELLED = 16
#: What keeps a pattern's properties spelled out: a character or an escape that may be a
#: placeholder's code point, or a property next to a ``-`` (a range's end, as spelled out).
_NO_PLACEHOLDERS = re.compile(r"[\U000F0000-\U0010FFFF]|\\[UuNx]\{|\\U|-\\[pP]\{|\\[pP]\{[A-Za-z_&=]+\}-")


def expand_properties(pattern: str, path: str = "", placeholders: Optional[list[Ranges]] = None) -> str:
    """``pattern`` with every ``\\p{..}`` / ``\\P{..}`` written as a plain character class (in
    Python syntax, ``\\uXXXX`` escapes); patterns without one come back unchanged.

    ``placeholders`` (a list to fill): each set of more than 16 ranges is written as one code point
    from :data:`PLACEHOLDER_FIRST` instead (its ranges in the list, once): Python's parser then
    reads the pattern without the thousands of escapes of a ``\\p{L}``, and
    :func:`structgen.json_schema.python_regex.fill_placeholders` puts the sets into its items.
    Left empty where the pattern may hold such a code point itself, or a property next to a ``-``.

    >>> expand_properties(r"^\\p{Zl}+$")
    '^[\\\\u2028]+$'
    >>> table = []
    >>> expand_properties(r"[_\\p{Nd}]\\p{Nd}\\p{Zp}", placeholders=table), len(table), table[0][0]
    ('[_\\\\U000f0000][\\\\U000f0000][\\\\u2029]', 1, (48, 57))
    """
    if "\\p" not in pattern and "\\P" not in pattern:
        return pattern
    if placeholders is not None and _NO_PLACEHOLDERS.search(pattern):
        placeholders = None

    def written(ranges: Ranges) -> str:  # (a class's body)
        if placeholders is None or len(ranges) <= _SPELLED or PLACEHOLDER_FIRST + len(placeholders) > _PLACEHOLDER_LAST:
            return _class_body(ranges)
        if ranges not in placeholders:  # (one set, one placeholder: the parser finds equal items equal)
            placeholders.append(ranges)
        return _escape(PLACEHOLDER_FIRST + placeholders.index(ranges))

    out: list[str] = []
    i, in_class, negated = 0, False, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            m = _PROPERTY.match(pattern, i)
            if m:
                ranges = property_set(m.group(2), m.group(1) == "P")
                if ranges is None:
                    raise SchemaNotSupported("pattern", path, f"the Unicode property {m.group(0)!r} (general categories, Any, ASCII, Assigned, White_Space, Graph and Print are supported)")
                if in_class and negated and not _exact_in_every_version(m.group(2), m.group(1) == "P"):
                    raise SchemaNotSupported("pattern", path, f"a Unicode property {m.group(0)!r} inside a negated class")
                body = written(ranges)
                if in_class:
                    out.append(body)
                else:
                    out.append(f"[{body}]" if ranges else f"[^{_class_body(((0, _MAX),))}]")
                i = m.end()
                continue
            if pattern[i + 1 : i + 2] in ("p", "P"):
                raise SchemaNotSupported("pattern", path, "\\p or \\P without a {Property} name")
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
        elif c == "[":
            negated_class = _negated_class(pattern, i, path)
            if negated_class is not None:  # [^_\p{Z}]: the assigned characters outside it (see the module docs)
                ranges, i = negated_class
                out.append(f"[{written(ranges)}]" if ranges else f"[^{_class_body(((0, _MAX),))}]")
                continue
            in_class = True
            negated = pattern[i + 1 : i + 2] == "^"
            if negated:
                out.append("[^")
                i += 2
                continue
        out.append(c)
        i += 1
    return "".join(out)


#: One item of a negated class read with its properties: a property escape, a ``\\uXXXX``
#: escape, an escaped punctuation character, or a plain character (``-`` between two of the last
#: three makes a range).
_CLASS_ITEM = re.compile(r"\\([pP])\{([A-Za-z_&=]+)\}|\\u([0-9A-Fa-f]{4})|\\([^0-9A-Za-z])|([^\\\]\[])")


#: The rest of a class after its ``[^``, through its closing ``]``.
_CLASS_REST = re.compile(r"(?:\\.|[^\\\]])*\]")


def _negated_class(pattern: str, i: int, path: str) -> Optional[tuple[Ranges, int]]:
    """For a negated class at ``pattern[i]`` that holds a Unicode property escape (``[^\\p{C}]``,
    ``[^_\\p{Z}]``): the assigned characters outside all of its items, and where the class ends.
    ``None`` for a class without a property escape, or whose properties no Unicode version changes
    (left as it is: read item by item, exactly). A property with an item this reading does not
    take (``\\d``, ``\\s``, ``\\w``, a nested class) is refused."""
    if not pattern.startswith("[^", i):
        return None
    end = _CLASS_REST.match(pattern, i + 2)
    inside = [] if end is None else list(_PROPERTY.finditer(pattern, i + 2, end.end()))
    if all(_exact_in_every_version(p.group(2), p.group(1) == "P") for p in inside):
        return None  # (no property, or only sets no version changes: read item by item, exactly)
    j, pending_dash = i + 2, False
    items: list[int | Ranges] = []  # code points, and the ranges of properties and of ``a-z``
    while j < len(pattern) and pattern[j] != "]":
        m = _CLASS_ITEM.match(pattern, j)
        if m is None:
            raise SchemaNotSupported("pattern", path, f"a Unicode property inside a negated class with {pattern[j:j + 2]!r}")
        j = m.end()
        if m.group(1):
            if pending_dash:  # (``[^a-\p{L}]``: a range up to a property, a syntax error in ECMA's u mode)
                return None  # (left to the pattern reader to refuse)
            items.append(_property_or_refuse(m.group(2), m.group(1) == "P", m.group(0), path))
            continue
        cp = int(m.group(3), 16) if m.group(3) else ord(m.group(4) or m.group(5))
        if cp == ord("-") and m.group(5) and items and isinstance(items[-1], int) and pattern[j : j + 1] not in ("]", ""):
            pending_dash = True
            continue
        if pending_dash:
            low = items.pop()
            if not isinstance(low, int) or low > cp:  # (``[^a-\p{L}b]`` pops a property)
                return None  # (not a class a validator reads: left to the pattern reader to refuse)
            items.append(((low, cp),))
            pending_dash = False
            continue
        items.append(cp)
    if j >= len(pattern):
        return None
    outside = _union([((x, x),) if isinstance(x, int) else x for x in items])
    return _minus(_assigned(), outside), j + 1


def _property_or_refuse(name: str, negated: bool, spelled: str, path: str) -> Ranges:
    ranges = property_set(name, negated)
    if ranges is None:
        raise SchemaNotSupported("pattern", path, f"the Unicode property {spelled!r} (general categories, Any, ASCII, Assigned, White_Space, Graph and Print are supported)")
    return ranges


def spelled_dotall(pattern: str) -> str:
    """``pattern`` with a leading ``(?s)`` (at the start, or just after a leading ``^``, as
    CloudFormation's schemas write it) spelled out: every ``.`` outside a class becomes
    ``\\p{Any}``, the reading of Python's and the ``regex`` package's ``DOTALL``. ECMA-262 has no
    inline flags; a flag anywhere else is left for the reader to refuse.

    >>> spelled_dotall("(?s).+"), spelled_dotall("^(?s)a\\\\..[.]$"), spelled_dotall("a(?s)")
    ('\\\\p{Any}+', '^a\\\\.\\\\p{Any}[.]$', 'a(?s)')
    """
    lead = "(?s)" if pattern.startswith("(?s)") else "^(?s)" if pattern.startswith("^(?s)") else ""
    if not lead:
        return pattern
    out = ["^" if lead[0] == "^" else ""]
    rest = pattern[len(lead):]
    i, in_class = 0, False
    while i < len(rest):
        c = rest[i]
        if c == "\\":
            out.append(rest[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == ".":
            c = "\\p{Any}"
        out.append(c)
        i += 1
    return "".join(out)


_NAMED_GROUP = re.compile(r"\\.|\[(?:\\.|[^\]\\])*\]|\(\?<[A-Za-z_$][A-Za-z0-9_$]*>", re.S)


def unnamed_groups(pattern: str) -> str:
    r"""``pattern`` with ECMA-262's named groups, ``(?<name>...)``, read as plain groups
    (``(?:...)``: a name changes nothing a match accepts; Python spells it ``(?P<name>``). A
    look-behind, ``(?<=`` or ``(?<!``, and text in a class or after a backslash stay as they are;
    a reference back to a group by name (``\k<name>``) is refused where escapes are read.

    >>> unnamed_groups("(?<year>[0-9]{4})-(?<=a)[(?<x>]")
    '(?:[0-9]{4})-(?<=a)[(?<x>]'
    >>> unnamed_groups(r"a\\(?<y>b)"), unnamed_groups(r"a\(?<y>b)")
    ('a\\\\(?:b)', 'a\\(?<y>b)')
    """
    if "(?<" not in pattern:
        return pattern
    return _NAMED_GROUP.sub(lambda m: "(?:" if m.group().startswith("(?<") else m.group(), pattern)


@functools.lru_cache(maxsize=4096)
def regex_syntax_ok(pattern: str) -> bool:
    """Whether Python reads ``pattern`` once its property escapes are stood in for (a
    metaschema ``format: regex`` check that knows ``\\p``). Kept per pattern: schemas repeat
    theirs (each of a bundle's definitions is checked on its own). Not a string: not a regex
    to check (as ``jsonschema``'s own format checks answer; the metaschema's ``type`` refuses it).

    >>> regex_syntax_ok("^[a-z]+$"), regex_syntax_ok("\\p{L}+"), regex_syntax_ok("(a"), regex_syntax_ok(5)
    (True, True, False, True)
    >>> regex_syntax_ok("^(?<year>[0-9]{4})$"), regex_syntax_ok("(?<1>a)")
    (True, False)
    """
    if not isinstance(pattern, str):
        return True
    read = unnamed_groups(spelled_dotall(pattern))
    if "\\p" in read or "\\P" in read:
        read = _PROPERTY.sub(lambda m: "\\w", read)
    # Python's parser alone: its compiler refuses only a look-behind of varying width (read in
    # full where one may stand); the parse is most of a first compile, the compile the rest.
    read_all: Any = re.compile if "(?<" in read else _RE_PARSER.parse
    try:
        if "[" not in read:
            read_all(read)
        else:
            with warnings.catch_warnings():  # ("possible set operation": ECMA-262 reads [a||b] literally, as Python does today)
                warnings.simplefilter("ignore", FutureWarning)
                read_all(read)
    except re.error:
        return False
    return True
