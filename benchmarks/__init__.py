"""Benchmarks: scripts that print Markdown tables (docs/benchmarks.md quotes them).

Run each one from the repository root as a module, ``python -m benchmarks.NAME [options]``
(``--help`` lists the options):

- ``maskbench``: the mask corpus (``benchmarks/corpus/``) through structgen and the peer engines;
- ``realworld``: real-world schemas from PyPI packages, side by side with the peers; ``--census``
  counts compile outcomes only, ``--check`` checks the corpus loaders;
- ``one_schema``: compile and per-token mask times of one schema on Llama-3;
- ``spans``: extract-only spans against document size;
- ``budget``: budget-aware masking on and off (SmolLM2);
- ``fast_forward``: forced tokens against one model call per token (SmolLM2);
- ``server_load``: ``structgen serve`` under concurrent clients;
- ``penalties``: the small model's repetition loops without and with the server's penalties (SmolLM2);
- ``conformance``: the JSON Schema Test Suite (``--write-docs`` rewrites docs/json_schema.md's tables);
- ``make_corpus``: writes ``benchmarks/corpus/``.

:mod:`benchmarks.harness` holds what they share; :mod:`benchmarks.corpora` loads the schema corpora.
Tests never import this package.
"""
