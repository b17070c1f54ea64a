"""The house: every module imports only from its own subpackage or from a lower floor, and no
import cycle exists (imports read with ``ast``, function-local ones included).

Floors, bottom up (docs/architecture.md draws them)::

    0 errors · _engine (the native engine)
    1 automata          text -> byte automata
    2 vocab             one per tokenizer
    3 guides | json_schema   (siblings: neither imports the other)
    4 formats | cfg     what a constraint is (the format values) | grammars (Lark, GBNF) -> networks
    5 compose           composed formats -> one network; reasoning, tool calls
    6 compiler          the door: compile(format, vocabulary) and its caches
    7 the structgen facade (__init__: the public API; torch names served lazily)
    8 hf                torch + transformers
    9 server | integrations
    10 cli
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import structgen

PACKAGE = Path(structgen.__file__).parent

#: room (a subpackage, or a top-level module) -> floor
FLOORS = {
    "structgen.errors": 0,
    # the native engine (C++): its Python package imports nothing of structgen; the extension
    # imports structgen.errors at init, to raise the error tree's exceptions
    "structgen._engine": 0,
    "structgen.automata": 1,
    "structgen.vocab": 2,
    "structgen.guides": 3,
    "structgen.json_schema": 3,
    "structgen.formats": 4,
    "structgen.cfg": 4,
    "structgen.compose": 5,
    "structgen.compiler": 6,
    "structgen": 7,
    "structgen.hf": 8,
    "structgen.server": 9,
    "structgen.integrations": 9,
    "structgen.cli": 10,
}
#: The most lines a module may have (LAYOUT.md: ~600), and the modules allowed more, with why
#: (each says so in its docstring too).
MAX_LINES = 650
LONG_MODULES: dict[str, str] = {}


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def room(module: str) -> str:
    """The subpackage (or top-level module) a module belongs to."""
    parts = module.split(".")
    if len(parts) >= 2 and f"structgen.{parts[1]}" in FLOORS:
        return f"structgen.{parts[1]}"
    return "structgen"


def imports_of(module: str) -> set[str]:
    """The structgen modules ``module`` imports (at the top or inside functions)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # "from . import x" imports the module x when there is one
            names = [f"{target}.{a.name}" if f"{target}.{a.name}" in MODULES else target for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name.startswith("structgen") and name != module:
                found.add(name)
    return found


GRAPH = {m: imports_of(m) for m in MODULES}


def test_every_room_has_a_floor() -> None:
    assert {room(m) for m in MODULES} <= set(FLOORS)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module: str) -> None:
    here = room(module)
    for target in sorted(GRAPH[module]):
        there = room(target)
        if there == here:
            continue
        assert FLOORS[there] < FLOORS[here], f"{module} (floor {FLOORS[here]}) imports {target} (floor {FLOORS[there]})"


def test_no_import_cycle() -> None:
    from structgen.automata.graphs import strongly_connected

    # (every module's parent package is left out: the facade is checked by its floor)
    groups = strongly_connected(sorted(MODULES), lambda v: [w for w in GRAPH[v] if w != "structgen"])
    cycles = [sorted(group) for group in groups if len(group) > 1]
    assert not cycles, f"import cycles: {cycles}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_modules_stay_small(module: str) -> None:
    lines = MODULES[module].read_text().count("\n")
    limit = MAX_LINES if module not in LONG_MODULES else 10**9
    assert lines <= limit, f"{module} has {lines} lines (over {MAX_LINES}): split it by idea"


def test_import_structgen_loads_no_heavy_dependency() -> None:
    code = (
        "import sys, structgen, structgen.compiler, structgen.json_schema;"
        "heavy = [m for m in ('torch', 'transformers', 'pydantic', 'fastapi', 'uvicorn', 'starlette') if m in sys.modules];"
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
