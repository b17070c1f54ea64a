"""UTF-8 lowering: the automaton of a code-point class built minimal from its code points is the
one its expression's derivatives give, minimised."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from structgen.automata.dfa import canonical_dfa
from structgen.automata.expr import ExprPool
from structgen.automata.expr_dfa import lazy_to_dfa
from structgen.automata.utf8 import MAX_CODE_POINT, code_points_rows, merge_intervals

_STARTS = st.sampled_from([0, 0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x10FFFF]) | st.integers(0, MAX_CODE_POINT)
_INTERVALS = st.lists(st.tuples(_STARTS, st.sampled_from([0, 1, 63, 64, 2000, 70000])), min_size=1, max_size=40).map(
    lambda pairs: merge_intervals([(a, min(a + w, MAX_CODE_POINT)) for a, w in pairs])
)


@settings(max_examples=80, deadline=None)
@given(_INTERVALS)
def test_the_class_automaton_built_minimal_is_the_one_of_its_expression(intervals: list[tuple[int, int]]) -> None:
    pool = ExprPool()
    derived = lazy_to_dfa(pool, pool.code_points(intervals))  # (minimised)
    rows, finals = code_points_rows(intervals)
    direct = canonical_dfa(np.array(rows, dtype=np.int32), np.array(finals, dtype=bool), 0, np.arange(256))  # (only renumbered)
    assert direct.num_states == derived.num_states
    assert (direct.transitions[:, direct.byte_classes] == derived.transitions[:, derived.byte_classes]).all()
    assert (direct.finals == derived.finals).all()
    for lo, hi in intervals[:5]:
        for cp in (lo, hi):
            if not 0xD800 <= cp <= 0xDFFF:
                assert direct.accepts(chr(cp).encode())


def test_warm_up_reads_the_unicode_tables_that_patterns_use() -> None:
    """The first ``\\p{..}`` or ``\\s`` in a process read the Unicode database (90 + 18 ms): the
    server's warm-up does it instead, so no request pays for it."""
    from structgen.automata import unicode_props
    from structgen.compiler import warm_up
    from structgen.integrations.constraints import byte_vocabulary
    from structgen.json_schema import charsets

    for cached in (unicode_props._categories, unicode_props._assigned, unicode_props.property_set, charsets.python_category):
        cached.cache_clear()
    warm_up(byte_vocabulary())
    assert unicode_props._categories.cache_info().currsize == unicode_props._assigned.cache_info().currsize == 1
    assert charsets.python_category.cache_info().currsize == 3
    assert unicode_props.property_set("Lu")[:1] == ((65, 90),)
