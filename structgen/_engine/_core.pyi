"""Type stubs of structgen._engine._core (made by ``python -m nanobind.stubgen -m structgen._engine._core``, then
the generic types filled in by hand)."""


from collections.abc import Callable, Iterable, Sequence, Set as AbstractSet
from typing import Annotated, Any, overload

import numpy
from numpy.typing import NDArray


class EmbeddedDfa:
    """
    An eager automaton as the pool reads it (see structgen.automata.embedded).
    """

    def __init__(self, rows: Annotated[NDArray[numpy.int32], dict(shape=(None, None), order='C', writable=False)], finals: Annotated[NDArray[numpy.uint8], dict(shape=(None,), order='C', writable=False)], symbols: dict[int, tuple[tuple[int, int], ...]], column_classes: Sequence[int] | None = None) -> None: ...

    @property
    def num_states(self) -> int: ...

    @property
    def rows(self) -> Annotated[NDArray[numpy.int32], dict(shape=(None, None), writable=False)]: ...

    @property
    def finals(self) -> list[bool]: ...

    @property
    def symbols(self) -> dict[int, tuple[tuple[int, int], ...]]: ...

    @property
    def column_classes(self) -> list[int]: ...

    @property
    def regex(self) -> str | None: ...

    @regex.setter
    def regex(self, value: str | None) -> None: ...

    def is_dead(self, arg: int, /) -> bool: ...

    def classes(self, arg: int, /) -> tuple[int, ...]: ...

    def min_lengths(self, arg: dict[int, int], /) -> list[int]: ...

    def readable_bytes(self) -> int: ...

class SubstitutionMemo:
    """
    What substitutions with one mapping made of each sub-term (see structgen.automata.expr_rewrite.substitute).
    """

    def __init__(self) -> None: ...

    def __len__(self) -> int: ...

    @property
    def memory_bytes(self) -> int: ...

class Pool:
    """
    Hash-consed byte terms and their derivatives (see structgen.automata.expr).
    """

    def __init__(self) -> None: ...

    def __len__(self) -> int: ...

    def bytes_of(self, arg: int, /) -> int: ...

    def byte_range(self, arg0: int, arg1: int, /) -> int: ...

    def literal(self, arg: bytes, /) -> int: ...

    def literals(self, arg0: Iterable[bytes], /) -> list[int]: ...

    def chain(self, arg0: Iterable[int], arg1: int, /) -> int: ...

    def seq(self, arg0: int, arg1: int, /) -> int: ...

    def concat(self, arg: Iterable[int], /) -> int: ...

    def alt(self, arg: Iterable[int], /) -> int: ...

    def optional(self, arg: int, /) -> int: ...

    def repeat(self, x: int, lo: int, hi: int | None) -> int: ...

    def star(self, arg: int, /) -> int: ...

    def symbol(self, arg: int, /) -> int: ...

    def both(self, parts: Iterable[int], *, checked: bool = True) -> int: ...

    def negate(self, x: int, *, checked: bool = True) -> int: ...

    def minus(self, arg0: int, arg1: int, /) -> int: ...

    def add_embedded(self, arg: EmbeddedDfa, /) -> int: ...

    def embed_state(self, arg0: int, arg1: int, /) -> int: ...

    @property
    def anything(self) -> int: ...

    @property
    def num_embedded(self) -> int: ...

    def node(self, arg: int, /) -> tuple[Any, ...]: ...

    def embedded(self, arg: int, /) -> EmbeddedDfa: ...

    def nullable(self, arg: int, /) -> bool: ...

    def derive(self, arg0: int, arg1: int, /) -> int: ...

    def derive_symbol(self, arg0: int, arg1: int, /) -> int: ...

    def symbols_in(self, arg: int, /) -> frozenset[int]: ...

    def size(self, arg: int, /) -> int: ...

    def lower_bound(self, arg: int, /) -> int: ...

    def largest_counter(self, arg: int, /) -> int: ...

    def is_algebraic(self, arg: int, /) -> bool: ...

    def is_live(self, arg: int, /) -> bool: ...

    def liveness(self, e: int, limit: int = 20000) -> bool | None: ...

    def witness_length(self, e: int, limit: int = 20000) -> int: ...

    def byte_classes(self, arg: int, /) -> tuple[int, ...]: ...

    def first_bytes(self, arg: int, /) -> int: ...
    def readable_bytes(self, arg: int, /) -> int: ...

    def first_symbols(self, arg: int, /) -> frozenset[int]: ...

    @property
    def memory_bytes(self) -> int: ...

    def mark_string_length(self, arg0: int, arg1: int, /) -> None: ...

    def note_restricted(self, arg0: int, arg1: int, /) -> None: ...

    @property
    def string_length_quote(self) -> int | None: ...

    @property
    def string_length_units(self) -> list[int]: ...

    def string_with_length(self, members: Iterable[int], opened: bool = True) -> tuple[int, int, int] | None: ...

    def string_length_verdict(self, arg: int, /) -> bool | None: ...

    def fewest_units(self, arg0: int, arg1: int, /) -> int | None: ...

    def min_length(self, arg: int, /) -> int: ...

    def substitute(self, e: int, mapping: dict[int, int], memo: SubstitutionMemo | None, *, symbols: bool = False) -> int: ...

    def clamp(self, arg0: int, arg1: int, /) -> int: ...

    def factored(self, arg0: Iterable[int], /) -> int: ...

    def code_points_term(self, arg0: Sequence[tuple[int, int]], /) -> int: ...

    def longest_shortest(self, arg: int, /) -> int: ...

    def clampable_string(self, arg0: Iterable[int], arg1: int, /) -> int | None: ...

    def in_length_bounded_string(self, arg: int, /) -> bool: ...

    def uniform_successor(self, e: int, k: int = 0) -> int: ...

    def counted_body(self, arg0: int, arg1: int, /) -> tuple[int, int, int, int] | None: ...

class MinLength:
    """
    The fewest bytes of a string of each term of a pool, a symbol k weighing weights.get(k, 0).
    """

    def __init__(self, pool: Pool, weights: dict[int, int]) -> None: ...

    def of(self, arg: int, /) -> int: ...

UNBUILT: int = -2

class FlatView:
    """
    A live view of a lazy automaton's per-state data (it grows as states are met).
    """

    def __len__(self, /) -> int:
        """Return len(self)."""

    @overload
    def __getitem__(self, key: int, /) -> int:
        """Return self[key]."""
    @overload
    def __getitem__(self, key: slice, /) -> list[int]: ...

class FinalsView:
    """
    A live view of a lazy automaton's per-state data (it grows as states are met).
    """

    def __len__(self, /) -> int:
        """Return len(self)."""

    @overload
    def __getitem__(self, key: int, /) -> bool:
        """Return self[key]."""
    @overload
    def __getitem__(self, key: slice, /) -> list[bool]: ...

class ExprsView:
    """
    A live view of a lazy automaton's per-state data (it grows as states are met).
    """

    def __len__(self, /) -> int:
        """Return len(self)."""

    @overload
    def __getitem__(self, key: int, /) -> int:
        """Return self[key]."""
    @overload
    def __getitem__(self, key: slice, /) -> list[int]: ...

class LazyAutomaton:
    """The automaton of a term, built lazily (see structgen.automata.lazy)."""

    def __init__(self, pool: Pool, root: int) -> None: ...

    @property
    def pool(self) -> Any: ...

    @property
    def root(self) -> int: ...

    @property
    def num_states(self) -> int: ...

    @property
    def memory_bytes(self) -> int: ...

    @property
    def flat(self) -> FlatView: ...

    @property
    def finals(self) -> FinalsView: ...

    @property
    def exprs(self) -> ExprsView: ...

    def state_of(self, arg: int, /) -> int: ...

    def build(self, arg: int, /) -> None: ...

    def fill(self, arg0: int, arg1: int, /) -> None: ...

    def is_final(self, arg: int, /) -> bool: ...

    def is_built(self, arg: int, /) -> bool: ...

    def step(self, arg0: int, arg1: int, /) -> int: ...

    def walk(self, arg0: int, arg1: bytes, /) -> int: ...

    def accepts(self, arg: bytes, /) -> bool: ...

    def row(self, arg: int, /) -> list[int]: ...

    def symbols_of(self, arg: int, /) -> tuple[tuple[int, int], ...]: ...

    def edges(self, arg: int, /) -> dict[int, int]: ...

    @property
    def table(self) -> Annotated[NDArray[numpy.int32], dict(shape=(None, None))]: ...

    def clamped(self, arg0: int, arg1: int, /) -> int: ...

    def clamped_head(self, q: int, n: int, rounded: bool = False) -> int: ...

    def clamped_below(self, arg0: int, arg1: Sequence[int], /) -> tuple[int, int]: ...

    def head_cut(self, arg0: int, arg1: Sequence[int], /) -> tuple[int, int]: ...

    def in_bounded_string(self, arg: int, /) -> bool: ...

    def char_successor(self, q: int, k: int = 0) -> int: ...

    def counted_run(self, arg0: int, arg1: int, arg2: int, /) -> tuple[int, bool] | None: ...

    def slice_chain(self, arg0: int, arg1: int, arg2: int, /) -> list[int] | None: ...

    def table_for(self, arg: Iterable[int], /) -> Annotated[NDArray[numpy.int32], dict(shape=(None, None))]: ...

NOTHING: int = 0

EPSILON: int = 1

INF: int = 1152921504606846976

class TokenTrie:
    """A vocabulary's token trie, breadth first (see structgen.vocab.trie)."""

    @staticmethod
    def build(arg0: Sequence[bytes | None], arg1: Sequence[int], /) -> TokenTrie: ...

    def restrict(self, arg: Sequence[int], /) -> TokenTrie: ...

    @property
    def num_nodes(self) -> int: ...

    @property
    def byte(self) -> Annotated[NDArray[numpy.uint8], dict(shape=(None,), writable=False)]: ...

    @property
    def parent(self) -> Annotated[NDArray[numpy.int32], dict(shape=(None,), writable=False)]: ...

    @property
    def first_child(self) -> Annotated[NDArray[numpy.int32], dict(shape=(None,), writable=False)]: ...

    @property
    def num_children(self) -> Annotated[NDArray[numpy.int32], dict(shape=(None,), writable=False)]: ...

    @property
    def token_ids(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def token_nodes(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def origin(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)] | None: ...

    @property
    def tok_first(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def tok_count(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def tok_ids(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def node_token(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)] | None: ...

    @property
    def depth_starts(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def height(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def memory_bytes(self) -> int: ...

    def child(self, arg0: int, arg1: int, /) -> int: ...

    def node_of(self, arg: bytes, /) -> int: ...

    def bytes_between(self, arg0: int, arg1: int, /) -> bytes: ...

class StringSlice:
    """The slice tokens of one vocabulary (see structgen.vocab.slices)."""

    @property
    def k(self) -> int: ...

    @property
    def is_slice(self) -> Annotated[NDArray[numpy.uint8], dict(shape=(None,), writable=False)]: ...

    @property
    def by_length(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def lengths(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def length_starts(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def rest(self) -> TokenTrie: ...

    @property
    def longest(self) -> int: ...

    def count_up_to(self, arg: int, /) -> int: ...

    def rest_cut(self, arg: int, /) -> tuple[TokenTrie, TokenTrie]: ...

class TokenIndex:
    """The per-tokenizer data of one vocabulary (see structgen.vocab.index)."""

    def __init__(self, tokens: Sequence[bytes | None], eos: Sequence[int]) -> None: ...

    @property
    def size(self) -> int: ...

    @property
    def trie(self) -> TokenTrie: ...

    def slice(self, arg: int, /) -> StringSlice: ...

    def long_tokens(self, arg: int, /) -> TokenTrie: ...

    @property
    def single_bytes(self) -> int: ...

    @property
    def longest_token(self) -> int: ...

    @property
    def token_lengths(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def short_token_cuts(self) -> list[int]: ...

    def prepare(self) -> None: ...

    @property
    def memory_bytes(self) -> int: ...

def walk_trie(automaton: LazyAutomaton, trie: TokenTrie, node: int | Sequence[int], state: int, clamp: bool = False) -> tuple[NDArray[numpy.int64], NDArray[numpy.int32]]:
    """
    (nodes, states): every trie node below node (an int, or several none below another) that the automaton reads from state, depth first, and the state each reaches
    """

def walk_tokens(automaton: LazyAutomaton, trie: TokenTrie, node: int | Sequence[int], state: int, clamp: bool = False) -> tuple[NDArray[numpy.int64], NDArray[numpy.int32]]:
    """
    (token ids, states): the tokens that end at the nodes walk_trie reaches, each with its node's state
    """

def walk_frame(automaton: LazyAutomaton, trie: TokenTrie, node: int | Sequence[int], state: int, clamp: bool = False, full: TokenTrie | None = None) -> tuple[NDArray[numpy.int64], NDArray[numpy.int32], NDArray[numpy.int64], NDArray[numpy.int32]]:
    """
    (token ids, states, branch nodes, branch states): the tokens walk_tokens reads and the nodes reached that have children and whose state may return, call or pass a guard (full: t's nodes as full's, through its origin)
    """

def slice_characters(arg0: int, arg1: bytes, /) -> int | None: ...

def code_points_rows(intervals: Sequence[tuple[int, int]]) -> tuple[NDArray[numpy.int32], NDArray[numpy.bool_]]:
    """
    (rows [states, 256] int32, finals [states] bool): the minimal automaton (start 0) of one character whose code point is in intervals (inclusive), as UTF-8 bytes
    """

def canonical_dfa(table: Annotated[NDArray[numpy.int32], dict(shape=(None, None), order='C', writable=False)], finals: Annotated[NDArray[numpy.bool_], dict(shape=(None,), order='C', writable=False)], start: int, class_of: Annotated[NDArray[numpy.int32], dict(shape=(None,), order='C', writable=False)]) -> tuple[NDArray[numpy.int32], NDArray[numpy.bool_], NDArray[numpy.int32]]:
    """
    (transitions, finals, byte_classes): the table renumbered breadth first from start (bytes in order), byte classes by their first byte, unreachable states and equal columns dropped
    """

MIXED: int = -2

NUM_SLICES: int = 5

class SpelledDistances:
    """
    Tokens to finish from each state of one automaton, along one shortest byte path (see structgen.guides.distances).
    """

    def __init__(self, automaton: LazyAutomaton, trie: TokenTrie, *, calls: bool = False, byte_weights: dict[int, int] | None = None, token_weights: dict[int, int] | None = None, guard_first: int = 1099511627776) -> None: ...

    def bytes_to_end(self, arg: int, /) -> int: ...

    def tokens_to_end(self, arg: int, /) -> int: ...

    @property
    def memory_bytes(self) -> int: ...

class DfaGuideCore:
    """The native core of a DfaGuide (see structgen.guides.dfa_guide)."""

    def __init__(self, automaton: LazyAutomaton, index: TokenIndex, mask_cache_bytes: int, description: str, vocab_repr: str) -> None: ...

    def packed(self, arg: int, /) -> Annotated[NDArray[numpy.int32], dict(shape=(None,))]:
        """the tokens allowed in state q as packed int32 words (a new array)"""

    def bools(self, arg: int, /) -> Annotated[NDArray[numpy.uint8], dict(shape=(None,))]:
        """the tokens allowed in state q as one byte per token (a new array)"""

    def slice_mask(self, arg: int, /) -> Annotated[NDArray[numpy.uint8], dict(shape=(None,))] | None:
        """
        the slice part of q's mask (one byte per token, EOS left out), or None where no slice applies
        """

    def is_cached(self, arg: int, /) -> bool: ...

    def next_state(self, arg0: int, arg1: int, /) -> int: ...

    def forced_bytes(self, arg: int, /) -> bytes: ...

    def walk_tokens(self, arg: int, /) -> tuple[NDArray[numpy.int64], NDArray[numpy.int32]]: ...

    @property
    def num_masks(self) -> int: ...

    @property
    def max_masks(self) -> int: ...

    @property
    def memory_bytes(self) -> int: ...


def set_token_bits(words: NDArray[numpy.int32], ids: NDArray[numpy.int64]) -> None:
    """
    Set the bits of token ids in a packed mask (int32 words, bit t % 32 of word t // 32), in place; an id outside the mask is IndexError and nothing is written
    """

def or_token_bits(words: NDArray[numpy.int32], other: NDArray[numpy.int32]) -> None:
    """
    words |= other, in place (two packed masks of one width)
    """

def count_token_bits(words: NDArray[numpy.int32]) -> int:
    """
    The tokens a packed mask allows
    """

GUARD_FIRST: int

class NeedsFrameData(ValueError):
    """A frame the native solver refuses: it needs frame data (the guide makes it)"""

class FrameSolver:
    """A pushdown guide's frames that need no frame data, and where no frame carries any, its stacks and states' masks (see structgen.guides.frame_masks)"""

    def __init__(self, automata: list[object], index: TokenIndex, max_entries: int, max_depth: int = 128, mask_cache_bytes: int = 67108864) -> None:
        """The frames of a network's automata (None: not made yet) over the index's vocabulary, its stacks (stack 0 is automaton 0 at its start, state 0 is {stack 0}; calls nest at most max_depth frames) and its states' masks (cached up to mask_cache_bytes)"""
    def frame(self, automaton: int, state: int, node: int) -> tuple[NDArray[numpy.int64], NDArray[numpy.int64], NDArray[numpy.int32] | None, int]:
        """(token ids, return nodes, words, size) of the frame of automaton in state from trie node: where the frame reads a string slice, its tokens as packed int32 words (ids then empty), else words None; NeedsFrameData where the frame needs frame data"""
    def data_frame(self, automaton: int, state: int, node: int, data: int) -> tuple[NDArray[numpy.int64], NDArray[numpy.int64], NDArray[numpy.int32] | None, int]:
        """As frame, of a frame with its frame data (share_data: an item id, a set id, the keys written; 0 for none): where the guide keeps the stacks (unique arrays nested in items), the frames it does not make itself; NeedsFrameData for those it does (an item with an array nested in it, its array, a frame that enters one)"""
    def blocking_guards(self, automaton: int, state: int) -> int | None:
        """The key guards (bit g: key g) that state of automaton meets first on every way on, where none of them closes the object; None where it can always finish (a final state or a close guard ahead). The state is dead once every one of them is written (KeyGuards; the automaton handed over first)"""
    def expand(self, automaton: int, pops: Sequence[int], nodes: Sequence[int], callees: Sequence[int], rets: Sequence[int]) -> tuple[NDArray[numpy.int64], NDArray[numpy.int64]]:
        """(token ids, return nodes): the callees' frames at nodes (> 0) and the automaton's frames after each of their returns, united; the pops given, then theirs, each once (a frame whose own walk was made in Python); NeedsFrameData where one of them needs frame data"""
    def stack(self, automaton: int, state: int, parent: int, data: int = 0) -> int:
        """The stack (automaton, state, data) on top of stack parent (-1: none), made if new"""
    def collect_data(self, stacks: Sequence[int], words: NDArray[numpy.int32]) -> None:
        """OR the masks of the stacks into words where they carry frame data (share_data): the frames of the objects with key guards, the unique arrays and their items made natively with their data. NeedsFrameData where the guide makes the mask (words may hold part of it); KeyError(k) as collect"""
    @property
    def data_counts(self) -> tuple[int, int]:
        """(frames with data cached, string items' returns shared as the array's frames of no item written)"""
    def share_data(self, kinds: Sequence[int], required: Sequence[int] = (), unique: UniqueData | None = None) -> None:
        """The stacks carry frame data (kinds[k]: 0 plain, 1 a unique array, 2 its item, which need unique; 3 an object with key guards, whose required keys are required[k], bit i for key i; 4 held: an item with a unique array nested in it, or its array, whose frames and stacks the guide keeps): stack, step, next_state and collect_data work with it, or with a held automaton data_frame only"""
    def config(self, stacks: Sequence[int]) -> int:
        """The state that is this set of stacks, made if new"""
    def step(self, stacks: Sequence[int], byte: int) -> list[int]:
        """The stacks after reading byte from stacks (calls and returns taken as needed; a stack may come twice). KeyError(k) for an automaton not given yet: hand it over and ask again"""
    def next_state(self, state: int, token: bytes) -> int:
        """The state after the token's bytes from state (-1: refused). KeyError(k) as step"""
    def stacks_from(self, n: int) -> tuple[list[tuple[int, int, int, int]], list[int], list[bool]]:
        """([(automaton, state, parent, 0), ...], [depth, ...]) of stacks n, n + 1, ..."""
    def configs_from(self, n: int) -> list[tuple[int, ...]]:
        """The stacks of states n, n + 1, ... (each a sorted tuple)"""
    @property
    def num_stacks(self) -> int: ...
    @property
    def num_configs(self) -> int: ...
    def state_mask(self, state: int) -> NDArray[numpy.int32] | None:
        """The state's whole mask as packed int32 words (a new array; EOS where a stack may end), cached; None where the guide makes it (a stack near the nesting bound, a mask with frame data the solver leaves to the guide, a dead end). ValueError where the stacks are the guide's. KeyError(k) for an automaton not given yet"""
    def keep_mask(self, state: int, words: NDArray[numpy.int32]) -> None:
        """Keep words (the vocabulary's width) as the state's whole mask"""
    @property
    def num_masks(self) -> int: ...
    def collect(self, stacks: Sequence[int], words: NDArray[numpy.int32]) -> None:
        """OR the masks of the stacks (from the root: each top frame's tokens and its callers' from where it returns) into words (int32, one bit per token). KeyError(k) for an automaton not given yet: hand it over and ask again (what was OR-ed stays OR-ed)"""
    @property
    def memory_bytes(self) -> int: ...
    def mark_frame_data(self, k: int, own_plain: bool = False) -> None:
        """Mark automaton k as carrying frame data: frame and expand raise NeedsFrameData for a frame that enters it or passes a guard, and for a frame of it unless own_plain (an item that calls nothing: its frames need no data; the guide narrows them); the guide makes the refused frames; the stacks and states are then the guide's (stack, step, state_mask, collect and fill_rows raise ValueError)"""
    @property
    def has_frame_data(self) -> bool:
        """Whether an automaton was marked as carrying frame data (mark_frame_data)"""
    @property
    def frames_only(self) -> bool:
        """Whether the frame data was shared for data_frame only (share_data with a held automaton: the guide keeps the stacks)"""
    def set_automaton(self, k: int, automaton: LazyAutomaton) -> None:
        """Hand automaton k over (frame and expand raise KeyError(k) where they need one not given yet)"""
    @property
    def num_frames(self) -> int: ...
    @property
    def walk_counts(self) -> tuple[int, int, int]:
        """The walks cached, (plain, cut, short): a cut walk is the root of a string's position near its length bound, its short tokens (a short walk) shared by the positions that clamp alike"""

    @property
    def closure_slices(self) -> int:
        """How many root walks took a string slice's tokens where its characters lead different ways (every state they lead to reads every slice token: a key's first characters in an open object)"""

def prefetch(frames: list[tuple[FrameSolver, int, int, int]], masks: list[tuple[DfaGuideCore, int]], threads: int) -> None:
    """
    Compute frames [(FrameSolver, automaton, state, node)] and DFA masks [(DfaGuideCore, state)] on up to threads native threads, the work of one expression pool on one thread, the GIL held throughout; errors are left to the serial pass that follows (it finds the work cached)
    """

def fill_rows(rows: list[tuple[FrameSolver | DfaGuideCore, int, int]], bitmask: NDArray[numpy.int32], threads: int) -> list[tuple[int, int]]:
    """
    Fill bitmask rows [(guide core, state, row)] (a pushdown guide's FrameSolver or a DfaGuideCore) with their states' whole masks (cached, else made on up to threads native threads, the work of one expression pool on one thread, the GIL held throughout; the words past a vocabulary's are zeroed). Answers [(position, missing)] of the rows left to the caller: a mask the guide makes itself, an error (the caller's fill raises it), or an automaton not given yet (missing: hand it over and ask again; else -1)
    """

class JsonTexts:
    """
    A value's JSON text and the texts of its dicts (see structgen.json_schema.ops).
    """

    @property
    def text(self) -> str:
        """The value's text, as json.JSONEncoder(ensure_ascii=False) writes it."""
    def text_of(self, d: object) -> str | None:
        """The text of a dict inside the value (this very object), else None."""
    def __len__(self) -> int: ...

def json_texts(value: object) -> JsonTexts | None:
    """
    The JSON text of ``value`` with its dicts' texts (JsonTexts), or None where json.JSONEncoder must write it.
    """

def walk_schemas(schema: object, tokens: tuple[object, ...], place: dict[str, int], maps: AbstractSet[str], lists: AbstractSet[str]) -> list[tuple[dict[str, Any], tuple[str | int, ...]]]:
    """
    [(sub-schema, path)]: every dict under the keywords in place (keyword -> its place in the walk), depth first, a schema before its sub-schemas; maps and lists name the keywords holding maps and lists of schemas (see structgen.json_schema.ops.walk)
    """

class MetaschemaCheck:
    """
    A metaschema as a table of native checks (see structgen.json_schema.metaschema_check).
    """

    def __init__(self, nodes: list[list[tuple[Any, ...]]], is_object: tuple[int, Callable[[Any], bool]] | Callable[[Any], bool], is_array: tuple[int, Callable[[Any], bool]] | Callable[[Any], bool], is_number: tuple[int, Callable[[Any], bool]] | Callable[[Any], bool], is_string: tuple[int, Callable[[Any], bool]] | Callable[[Any], bool]) -> None:
        """nodes[0] is the root; each node a list of checks (kind, args...); a type test (code, function) or a function"""
    def __call__(self, schema: object) -> bool:
        """Whether the schema is valid (else: ask jsonschema)"""

def json_value_key(text: bytes, exponents: bool = True) -> bytes | None:
    """
    A key (bytes) equal for the JSON values JSON Schema calls equal, of one JSON text; None where the text is not one JSON value (or, exponents=False, a number of it has an exponent).
    """

def json_value_texts(pool: Pool, text: bytes) -> int:
    """Every JSON text of the value of one JSON text, as a term of pool."""

class UniqueData:
    """
    The frame data of unique arrays and their items (see structgen.guides.unique_items).
    """

    def __init__(self, pool: Pool) -> None: ...
    def item_start(self, written: int) -> int: ...
    def read(self, item: int, b: int) -> int: ...
    def item_key(self, written: int, left: int) -> int: ...
    def mask_key(self, item: int) -> int: ...
    def in_danger(self, item: int) -> bool: ...
    def left(self, item: int) -> int: ...
    def written(self, item: int) -> int: ...
    def text(self, item: int) -> bytes: ...
    def taken(self, written: int) -> int: ...
    def after_item(self, written: int, text: bytes) -> int: ...
    def has_key(self, written: int, key: bytes) -> bool: ...
    def alive(self, expr: int, left: int) -> bool: ...
    def dead_tokens(self, item: LazyAutomaton, trie: TokenTrie, q: int, node: int, left: int) -> NDArray[numpy.int64]:
        """The tokens from trie node node that an item in state q of automaton item (which calls nothing), with spellings left of written values ahead, must not take (see cpp/engine/unique_data.h)"""
    @property
    def num_items(self) -> int: ...
    @property
    def num_sets(self) -> int: ...
    @property
    def memory_bytes(self) -> int: ...
