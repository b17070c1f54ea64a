"""The Hugging Face transformers integration (imports torch and transformers).

- :mod:`.steps`: one decoding step's pieces (masks on the logits' device, sampling, forced
  tokens, the end of the output), shared by the processor, the decode loop and the server.
- :mod:`.logits_processor`: the ``LogitsProcessor`` for ``model.generate``.
- :mod:`.decoding`: structgen's own decode loop, with fast-forward.
- :mod:`.generation`: the ``generate_*`` helpers (text, JSON, pydantic).
- :mod:`.models`: the embedded default model and cached vocabularies.
"""
