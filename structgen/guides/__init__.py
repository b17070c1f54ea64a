"""One per constraint × vocabulary: guides answer, state by state, which tokens may come next.

- :mod:`.dfa_guide`: the guide over one byte DFA.
- :mod:`.pushdown`: the guide over a network of automata that call one another.
- :mod:`.distances`: tokens that surely finish an output, for never-truncated budgets.
"""
