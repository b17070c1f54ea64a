"""The frames of unique arrays and their items: what of a pushdown guide's masks depends on the
item values written so far (:class:`~.unique_items.UniqueItems`), for :class:`~.frame_masks.FrameMasks`.

* An item frame whose text may still spell a written value drops the tokens after which only
  such values could finish it (:meth:`ItemFrames.item_in_danger`); below other frames, the tokens
  along which it may (:meth:`ItemFrames.tokens_in_danger`) are checked one by one by the guide.
* A unique array's frame drops the tokens that end where another item is needed and every item it
  may call spells only written values (:meth:`ItemFrames.no_item_left`); where none can, and its
  walk enters no item, it is the frame of no item written, shared by the sets
  (:meth:`ItemFrames._free_of_items`).
* Where a string item out of danger may return at many trie nodes, its value at each is new: the
  array's tokens from those nodes are one cached frame (:meth:`ItemFrames._new_values_return`).

Example:
    >>> import structgen
    >>> vocab = structgen.Vocabulary.from_bytes([b"[", b"]", b",", b'"a"', b'"b"', b""], eos_token_ids=[5])
    >>> guide = structgen.compile_json_schema({"type": "array", "items": {"type": "string"}, "uniqueItems": True}, vocab)
    >>> s = guide.advance(guide.initial_state, [0, 3, 2])   # ["a",
    >>> [vocab.tokens[t] for t in guide.allowed_token_ids(s).tolist()]   # (not "a" again)
    [b'"b"']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..automata.expr import NOTHING
from .distances import NetworkDistances
from .frame_tokens import FrameTokens
from .network_view import AutomatonView, NetworkView
from .stacks import StackTable

if TYPE_CHECKING:
    from ..vocab.index import VocabularyIndex
    from ..vocab.trie import TokenTrie
    from .token_walks import TokenWalk

__all__ = ["ItemFrames"]

#: Whether an item that calls nothing has its danger walk made natively (``UniqueData.dead_tokens``);
#: off, the Python walk below makes it (the differential tests only).
NATIVE_DANGER = True
#: Cached walks of unique arrays read per (automaton, state, node) before the cache is cleared.
NEEDING_CACHE = 200_000
_UNKNOWN: tuple[int, ...] = (-1,)
#: Pops split by one walk (:meth:`ItemFrames._pops_split`): those entering no item, the others, the items needed.
PopSplit = tuple[list[int], list[int], set[int]]
_NO_SPLIT: PopSplit = ([], [], set())
_QUOTE = 1 << ord('"')


class ItemFrames:
    """The item-value part of :class:`~.frame_masks.FrameMasks` (its base: the same caches and
    lock; see the module docstring)."""

    __slots__ = ()
    view: NetworkView
    stacks: StackTable
    distances: NetworkDistances
    index: VocabularyIndex
    _needing: dict[tuple[int, int, int], tuple[int, ...] | None]
    _pop_splits: dict[tuple[int, int, tuple[int, ...]], PopSplit | None]
    _strings: dict[int, bool]

    if TYPE_CHECKING:
        @property
        def trie(self) -> TokenTrie: ...
        def walk(self, a: int, q: int, node: int, exact: bool = True) -> TokenWalk: ...
        def trie_walk(self, auto: AutomatonView, q: int, node: int | tuple[int, ...]) -> TokenWalk: ...
        def frame(self, a: int, q: int, node: int | tuple[int, ...], data: int = 0, bounded: bool = False) -> FrameTokens: ...
        def returns(self, parent: int, pops: tuple[int, ...]) -> FrameTokens: ...

    def _free_of_items(self, a: int, q: int, node: int, written: int) -> bool:
        """Whether the frame of unique array ``a`` in state ``q`` from ``node`` with set ``written``
        is its frame with no item written: its walk enters no item, and where a token ends with
        another item needed, an item outside the set can still be written."""
        needing = self._needing_of(a, q, node)
        return needing is not None and not any(self.no_item_left(a, e, written) for e in needing)

    def _needing_of(self, a: int, q: int, node: int) -> tuple[int, ...] | None:
        """Where the walk of unique array ``a`` from ``(q, node)`` ends with another item needed
        (the states, each once), or ``None`` where it enters an item (cached)."""
        key = (a, q, node)
        needing = self._needing.get(key, _UNKNOWN)
        if needing is _UNKNOWN:
            view = self.view
            walk = self.walk(a, q, node, exact=False)
            needing = None if walk.split(view.auto(a)).calls else tuple(
                e for e in dict.fromkeys(walk.ends.tolist()) if view.items_needed(a, e))
            if len(self._needing) >= NEEDING_CACHE:
                self._needing.clear()
            self._needing[key] = needing
        return needing

    def _new_values_return(self, sid: int, pops: tuple[int, ...], least: int) -> tuple[FrameTokens, list[int]] | None:
        """The tokens of the caller of item frame ``sid`` from the ``pops`` where the array's walk
        enters no item, as one frame (:meth:`returns`), and the other pops (each the caller's
        own), where the value the item ends with at any of them is surely new and changes none of
        the array's frames from the first ones (at least ``least`` of them); else ``None``. So where the item is a
        string (every spelling of a string is among those the danger tracks: :func:`.value_texts`)
        out of danger, the array's walk from each pop enters no item, and every item it may need
        next has two values outside the set (one more written leaves one: :meth:`.UniqueItems.spare`).
        Then the array's frames from the pops are those of no item written, whatever the value."""
        a, _, parent, data = self.stacks.stacks[sid]
        view, unique, stacks = self.view, self.view.unique, self.stacks
        assert unique is not None
        if unique.mask_key(data) or not (unique.text(data)[:1] == b'"' or self._spells_strings(a)):
            return None
        pa, pq, grand, written = stacks.stacks[parent]
        if stacks.nested and grand >= 0 and stacks.records[grand]:
            return None  # (an item below the array reads the bytes too)
        split = self._pops_split(pa, pq, pops)
        if split is not None:
            free, rest, needed = split
        else:
            needed = set()
            free, rest = [], []
            for m in pops:
                needing = self._needing_of(pa, pq, m)
                if needing is None:
                    rest.append(m)
                    continue
                free.append(m)
                for e in needing:
                    needed |= view.items_needed(pa, e)
        if len(free) < least or not all(unique.spare(k, written, view.auto) for k in needed):
            return None
        return self.returns(self.stacks.stack(pa, pq, grand, 0), tuple(free)), rest

    def _pops_split(self, a: int, q: int, pops: tuple[int, ...]) -> PopSplit | None:
        """``pops`` (trie nodes) split by one walk of unique array ``a`` from ``q`` at all of them
        (cached): those whose walk enters no item, the others, and the items needed where any of
        the walk's tokens ends (a superset of the first ones'). ``None`` where one pop is below
        another (one walk would read a subtree twice): then each is walked on its own."""
        key = (a, q, pops)
        got = self._pop_splits.get(key, _NO_SPLIT)
        if got is not _NO_SPLIT:
            return got
        parent = self.trie.parent
        roots = set(pops)
        up = parent[np.asarray(pops, dtype=np.int64)]
        while True:  # (climbs as deep as the deepest pop: a token's length)
            up = up[up > 0]
            if not up.size:
                break
            if not roots.isdisjoint(up.tolist()):
                self._pop_splits[key] = None
                return None
            up = parent[up]
        view = self.view
        auto = view.auto(a)
        walk = self.trie_walk(auto, q, pops)
        entering: set[int] = set()
        for m, _, _ in walk.split(auto).calls:
            while m > 0 and m not in roots:  # (the pop the call is below)
                m = int(parent[m])
            entering.add(m)
        needed: set[int] = set()
        for e in set(walk.ends.tolist()):
            needed |= view.items_needed(a, e)
        got = ([m for m in pops if m not in entering], [m for m in pops if m in entering], needed)
        if len(self._pop_splits) >= NEEDING_CACHE // 100:
            self._pop_splits.clear()
        self._pop_splits[key] = got
        return got

    def _spells_strings(self, a: int) -> bool:
        """Whether item automaton ``a`` spells only JSON strings (it calls nothing and starts with ``"``)."""
        got = self._strings.get(a)
        if got is None:
            pool, root = self.view.network.pool, self.view.roots[a]
            got = self._strings[a] = not pool.symbols_in(root) and pool.firsts.first_bytes(root) == _QUOTE
        return got

    def no_item_left(self, a: int, q: int, written: int) -> bool:
        """Whether state ``q`` of unique array ``a`` needs another item and every item automaton it
        may call can spell only values of set ``written``."""
        view = self.view
        needed = view.items_needed(a, q)
        return bool(needed) and all(view.unique.exhausted(k, written, view.auto) for k in needed)  # type: ignore[union-attr]

    def item_in_danger(self, a: int, q: int, node: int, key: int, bounded: bool) -> FrameTokens:
        """The tokens of an item frame whose text may still spell a value written before (mask key
        ``key``: what of those values' spellings may follow it): the item automaton's own tokens, less those
        after which only such values could finish the item. Only tokens whose bytes go on spelling
        a written value are looked at: a walk of the trie in the item automaton and down the
        spellings' derivatives side by side; where the item's bytes go into a nested array (a call),
        down the derivatives of the item's rest with the calls inlined (:meth:`.UniqueItems.flat`)."""
        unique = self.view.unique
        assert unique is not None
        plain = self.frame(a, q, node, 0, bounded)
        left = unique.left(key)
        pool = unique.pool
        auto = self.view.auto(a)
        trie = self.trie
        if NATIVE_DANGER and not bounded and not pool.symbols_in(auto.auto.root):  # (an item that calls nothing: the walk is native)
            dead_ids = unique.data.dead_tokens(auto.auto, trie.native, q, node, left)
            return plain.without(dead_ids, len(self.index.tokens), plain.umax) if dead_ids.size else plain
        nchild, first_key = trie.num_children_list, trie.first_key
        keys, tok_first, tok_count, tok_ids = trie.lookup
        dead: list[int] = []
        umax = plain.umax
        written = unique.written(key)
        # (s: the item automaton's state; where its way goes into a nested array (a call, not bounded),
        # s is -1 and e the item's rest as a term with the calls inlined: UniqueItems.flat)
        stack = [(node, q, left, NOTHING)]
        while stack:
            n, s, d, e = stack.pop()
            if not nchild[n]:
                continue
            lo = first_key[n]
            for j in range(lo, lo + nchild[n]):
                b = keys[j] & 255
                d2 = pool.derive(d, b)
                if d2 == NOTHING:
                    continue  # (this way spells no written value: the plain tokens stand)
                s2, e2 = (auto.step(s, b), NOTHING) if s >= 0 else (-1, pool.derive(e, b))
                if s2 < 0 and s >= 0 and not bounded and auto.calls(s):
                    e2 = pool.derive(unique.flat(auto.auto.exprs[s]), b)
                if s2 < 0 and e2 == NOTHING:
                    continue
                child = j + 1
                if tok_count[child]:
                    if not unique.alive(auto.auto.exprs[s2] if s2 >= 0 else e2, d2):
                        first = int(tok_first[child])
                        dead.extend(tok_ids[first:first + int(tok_count[child])].tolist())
                    elif bounded:  # (these tokens leave the item in danger: its distance without the set's values)
                        umax = max(umax, self.distances.dist(a, s2, unique.item_key(written, d2)))
                stack.append((child, s2, d2, e2))
        if not dead and umax == plain.umax:
            return plain
        return plain.without(dead, len(self.index.tokens), umax) if dead else plain.with_umax(umax)

    def tokens_in_danger(self, stacks: tuple[int, ...]) -> list[int]:
        """The tokens read from the root along which some item frame of ``stacks`` (below the
        top or not) may go on spelling a value written before, at every byte: the only tokens
        after which it may be left where only such values finish it (the others leave it out of
        danger). A walk of the trie down the spellings' derivatives."""
        unique = self.view.unique
        assert unique is not None
        table = self.stacks
        lefts = set()
        for sid in stacks:
            while sid >= 0 and table.records[sid]:
                a, _, parent, data = table.stacks[sid]
                if data and a in self.view.recording and unique.in_danger(data):
                    lefts.add(unique.left(data))
                sid = parent
        trie, pool = self.trie, unique.pool
        nchild, first_key = trie.num_children_list, trie.first_key
        keys, tok_first, tok_count, tok_ids = trie.lookup
        out: list[int] = []
        seen: set[tuple[int, int]] = set()
        stack = [(0, d) for d in lefts]
        while stack:
            n, d = stack.pop()
            lo = first_key[n]
            for j in range(lo, lo + nchild[n]):
                d2 = pool.derive(d, keys[j] & 255)
                child = j + 1
                if d2 == NOTHING or (child, d2) in seen:
                    continue
                seen.add((child, d2))
                if tok_count[child]:
                    first = int(tok_first[child])
                    out.extend(tok_ids[first:first + int(tok_count[child])].tolist())
                stack.append((child, d2))
        return out
