"""structgen: language-model output that follows a regex or a JSON Schema by construction.

>>> import structgen
>>> vocab = structgen.Vocabulary.from_bytes([b"ye", b"s", b"no", b""], eos_token_ids=[3])
>>> guide = structgen.compile_regex("yes|no", vocab)
>>> guide.allowed_token_ids(guide.initial_state).tolist()
[0, 2]

Every constraint is a format value (:mod:`structgen.formats`) and :func:`compile` is the one door:
``compile_regex(p, vocab)`` is ``compile(formats.Regex(p), vocab)``.

The core (this module) needs only numpy, regex and jsonschema; the transformers integration
(`LogitsProcessor`, `generate_*`) imports torch lazily, on first use.
"""

from __future__ import annotations

from typing import Any

from . import formats
from .compiler import (clear_cache, compile, compile_composed, compile_extract, compile_grammar, compile_json_schema,
                       compile_regex)
from .errors import (
    AnnotationWarning,
    CompileBudgetExceeded,
    ConstraintError,
    GrammarNotSupported,
    GrammarSyntaxError,
    IncompleteGeneration,
    PayloadTooLarge,
    RegexNotSupported,
    RegexSyntaxError,
    SchemaError,
    SchemaNotSupported,
    StructgenError,
    TokenRejected,
    UnknownKeywordWarning,
    UnsatisfiableConstraint,
    VocabularyError,
)
from .guides.base import Guide
from .guides.matcher import Matcher
from .vocab.vocabulary import Vocabulary

__version__ = "0.1.0"

# Names served lazily so that `import structgen` does not import torch or transformers.
_LAZY = {
    "LogitsProcessor": "structgen.hf.logits_processor",
    "generate_grammar": "structgen.hf.generation",
    "generate_json": "structgen.hf.generation",
    "generate_pydantic": "structgen.hf.generation",
    "generate_regex": "structgen.hf.generation",
    "generate_tool_call": "structgen.hf.tool_calls",
    "load_default_model": "structgen.hf.models",
}

__all__ = [
    "AnnotationWarning",
    "CompileBudgetExceeded",
    "ConstraintError",
    "GrammarNotSupported",
    "GrammarSyntaxError",
    "Guide",
    "IncompleteGeneration",
    "LogitsProcessor",
    "Matcher",
    "PayloadTooLarge",
    "RegexNotSupported",
    "RegexSyntaxError",
    "SchemaError",
    "SchemaNotSupported",
    "StructgenError",
    "TokenRejected",
    "UnknownKeywordWarning",
    "UnsatisfiableConstraint",
    "Vocabulary",
    "VocabularyError",
    "__version__",
    "clear_cache",
    "compile",
    "compile_composed",
    "compile_extract",
    "compile_grammar",
    "compile_json_schema",
    "compile_regex",
    "formats",
    "generate_grammar",
    "generate_json",
    "generate_pydantic",
    "generate_regex",
    "generate_tool_call",
    "load_default_model",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'structgen' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
