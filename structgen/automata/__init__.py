"""Text → byte automata. Knows no vocabulary, no tokenizer and no torch.

- :mod:`.expr`: :class:`~.expr.ExprPool`, hash-consed byte terms and their derivatives (native:
  :mod:`structgen._engine`, see docs/engine.md), with :mod:`.liveness` (the search's face),
  :mod:`.embedded` (eager tables inside terms), :mod:`.string_length`, :mod:`.expr_text` (printing,
  shortest lengths) and :mod:`.expr_rewrite` (restrict, clamp, substitute, copies; memo tables in
  :class:`~.pool_memo.PoolMemo`).
- :mod:`.lazy`: :class:`~.lazy.LazyAutomaton`, an automaton built state by state (native rows).
- :mod:`.utf8`: code points → UTF-8 byte paths (the one place characters become bytes).
- :mod:`.dfa`: :class:`~.dfa.ByteDFA`, numpy tables; trim, minimise, canonical numbering.
- :mod:`.markers`: slot / call / guard characters of structgen-written regexes.
- :mod:`.nfa` + :mod:`.lookaround`: parse tree → Thompson NFA → subset construction (look-arounds exact).
- :mod:`.regex`: a user's regex (read and checked by Python's own parser) → byte DFA or expression;
  :mod:`.regex_classes`: the code points of a class of that parse.
- :mod:`.unicode_props`: ``\\p{..}`` classes as code-point ranges.
- :mod:`.algebra`: ∩, ∪, − of byte DFAs.
- :mod:`.network`: automata that call one another (compiled into a pushdown guide).
- :mod:`.spans`: the suffix automaton of documents (verbatim spans).
"""
