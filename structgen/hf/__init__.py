"""The Hugging Face transformers integration (imports torch and transformers).

- :mod:`.logits_processor`: the ``LogitsProcessor`` for ``model.generate``.
- :mod:`.decoding`: structgen's own decode loop, with fast-forward.
- :mod:`.generation`: the ``generate_*`` helpers (text, JSON, pydantic).
- :mod:`.models`: the embedded default model and cached vocabularies.
"""
