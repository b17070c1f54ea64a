"""One-call helpers: prompt in, constrained answer out (a string, parsed JSON or a pydantic object).

Each helper compiles the constraint over the model's vocabulary (cached per tokenizer), generates
under it, decodes the generated tokens through the vocabulary's bytes (exactly what the guide
checked; no tokenizer clean-up) and stops at EOS.

Generation runs our own decode loop (:mod:`structgen.hf.decoding`) with *fast-forward*
(``fast_forward=True``, the default): where the constraint leaves only one way on (the next
required key, the rest of an enum value: :meth:`Guide.forced_tokens`), those tokens are appended
without sampling and fed to the model in one forward pass. ``fast_forward=False`` runs the same
loop one sampled token per step.

Each helper takes the options of the format it compiles (:func:`structgen.formats.option_names`:
``generate_regex`` ``max_states``; ``generate_json`` and ``generate_pydantic`` those of
:class:`~structgen.json_schema.options.SchemaOptions`, ``whitespace``, ``key_order``, ``formats``,
..., and ``extract_from``); only the other keyword arguments are generation options. Generation options the loop does not know
(``num_beams``, ``logits_processor``, ... anything but ``do_sample``, ``temperature``, ``top_k``,
``top_p``, ``pad_token_id``, ``eos_token_id``) and encoder-decoder models go to ``model.generate``
with a :class:`~structgen.LogitsProcessor` instead, without fast-forward. Plain ``model.generate`` with a
``LogitsProcessor`` works as before and never fast-forwards.

Fast-forward pays off when the constraint has forced text: JSON keys are forced only when the
whitespace between JSON tokens is fixed (``whitespace=""``); with the default ``[ ]?`` every gap
is a choice, and only the rest of enum values and the like are forced.

Example:
    >>> model, tokenizer = structgen.load_default_model()                          # doctest: +SKIP
    >>> structgen.generate_regex(model, tokenizer, "Is water wet?", r"yes|no")     # doctest: +SKIP
    'yes'
"""

from __future__ import annotations

import json
from typing import Any, Sequence, TypeVar

import torch
from transformers import LogitsProcessorList

from ..compiler import compile
from ..compose.reasoning import Reasoning, split_reasoning
from ..errors import IncompleteGeneration, StructgenError, TokenRejected
from ..formats import Format, Grammar, JsonSchema, Regex, option_names
from ..guides.base import Guide
from ..guides.text_budget import TextBudget
from ..vocab.vocabulary import Vocabulary
from .decoding import LOOP_OPTIONS, decode
from .logits_processor import LogitsProcessor
from .models import eos_token_ids, vocabulary_for

# IncompleteGeneration lives in structgen.errors; it is re-exported here, where it was first defined.
__all__ = [
    "IncompleteGeneration",
    "generate_grammar",
    "generate_json",
    "generate_pydantic",
    "generate_regex",
    "generate_text",
    "model_vocabulary",
]

T = TypeVar("T")


def model_vocabulary(model: Any, tokenizer: Any) -> Vocabulary:
    """The tokenizer's vocabulary with every id the model stops on as EOS (cached per tokenizer)."""
    return vocabulary_for(tokenizer, eos_token_ids=eos_token_ids(model, tokenizer) or None)


def _compile_options(kind: str, options: dict[str, Any]) -> dict[str, Any]:
    """Take the options of a ``kind`` format out of ``options`` (what is left is generation's)."""
    names = option_names(kind)
    return {name: options.pop(name) for name in list(options) if name in names}


def generate_regex(
    model: Any,
    tokenizer: Any,
    prompt: str | Sequence[dict[str, str]],
    pattern: str,
    *,
    max_new_tokens: int = 64,
    chat: bool | None = None,
    budget_aware: bool = True,
    fast_forward: bool = True,
    **generate_kwargs: Any,
) -> str:
    """The model's answer to ``prompt``, constrained to full-match ``pattern``.

    ``chat=None`` applies the tokenizer's chat template when it has one (``True`` requires one,
    ``False`` feeds the prompt as plain text). Greedy unless ``do_sample=True`` is passed. The
    options of :class:`~structgen.formats.Regex` (``max_states``) go to the compile; other keyword
    arguments are generation options (``do_sample``, ``temperature``, ``num_beams``, ...).

    ``budget_aware=True`` (the default) makes the output complete within ``max_new_tokens``: the
    mask only allows tokens after which the text can still be finished in the tokens left (see
    :class:`~structgen.LogitsProcessor`), and :class:`UnsatisfiableConstraint` is raised before
    generating when the shortest match is longer than ``max_new_tokens``. With
    ``budget_aware=False``, :class:`IncompleteGeneration` is raised when ``max_new_tokens`` runs out
    before the text matches.

    ``fast_forward=True`` (the default) appends the tokens the constraint forces without asking
    the model (see the module docstring); forced tokens count against ``max_new_tokens``.

    Example:
        >>> generate_regex(model, tokenizer, "Bob Marley's birth date?", r"\\d{4}-\\d{2}-\\d{2}")  # doctest: +SKIP
        '1945-02-06'
    """
    fmt = Regex(pattern, **_compile_options("regex", generate_kwargs))
    guide = compile(fmt, model_vocabulary(model, tokenizer))
    return generate_text(
        model, tokenizer, prompt, guide, max_new_tokens=max_new_tokens, chat=chat,
        budget_aware=budget_aware, fast_forward=fast_forward, **generate_kwargs
    )


def generate_grammar(
    model: Any,
    tokenizer: Any,
    prompt: str | Sequence[dict[str, str]],
    grammar: str,
    *,
    syntax: str | None = None,
    max_new_tokens: int = 256,
    chat: bool | None = None,
    budget_aware: bool = True,
    fast_forward: bool = True,
    **generate_kwargs: Any,
) -> str:
    """The model's answer to ``prompt``, a string the context-free ``grammar`` derives.

    ``grammar`` is Lark or GBNF text (``syntax``: ``"lark"``, ``"gbnf"``, or ``None`` to read
    GBNF when a line holds ``::=``); the options of :class:`~structgen.formats.Grammar`
    (``start``, ``max_states``, ``max_terms``, ``schema_options``) go to the compile, the other
    keyword arguments are generation options, as in :func:`generate_regex`.

    Example:
        >>> generate_grammar(model, tokenizer, "2 + 2 * 3?", 'root ::= [0-9]+ (" " [+*] " " [0-9]+)*')  # doctest: +SKIP
        '2 + 2 * 3'
    """
    options = _compile_options("grammar", generate_kwargs)
    if "schema_options" in generate_kwargs:  # (Lark's %json: an object, not an option by name)
        options["schema_options"] = generate_kwargs.pop("schema_options")
    guide = compile(Grammar(grammar, syntax, **options), model_vocabulary(model, tokenizer))
    return generate_text(
        model, tokenizer, prompt, guide, max_new_tokens=max_new_tokens, chat=chat,
        budget_aware=budget_aware, fast_forward=fast_forward, **generate_kwargs
    )


def generate_json(
    model: Any,
    tokenizer: Any,
    prompt: str | Sequence[dict[str, str]],
    schema: Any,
    *,
    max_new_tokens: int = 256,
    chat: bool | None = None,
    budget_aware: bool = True,
    fast_forward: bool = True,
    extract_from: str | Sequence[str] | None = None,
    reasoning: Reasoning | None = None,
    with_reasoning: bool = False,
    **generate_kwargs: Any,
) -> Any:
    """The model's answer as a JSON value valid under ``schema`` (a dict, JSON text or pydantic class).

    The options of :class:`~structgen.json_schema.options.SchemaOptions` (``whitespace``, the
    regex allowed between JSON tokens, default ``[ ]?``; ``key_order``, ``extra_properties``,
    ``formats``, ``unknown_formats``, ``unknown_keywords``, ``dialect``, ``max_recursion_depth``,
    ``max_states``) go to the compile; ``extract_from`` (a document or a list of them) makes
    string values verbatim spans of a document; the remaining keyword arguments are generation
    options.
    Returns the parsed value. With ``budget_aware=True`` (the default) the document is always
    complete within ``max_new_tokens``; other options as in :func:`generate_regex`.

    ``reasoning`` (a :class:`~structgen.compose.Reasoning`): the model first thinks freely
    between its start and end strings (``<think>`` ... ``</think>`` by default; at most
    ``reasoning.max_tokens`` tokens, after which the end string is written for it), then answers
    under ``schema``; ``max_new_tokens`` counts both. ``with_reasoning=True`` returns
    ``(value, thinking text)``.

    Example:
        >>> generate_json(model, tokenizer, "A city?", {"type": "object", ...})  # doctest: +SKIP
        {'name': 'Paris', ...}
    """
    fmt: Format = JsonSchema(schema, extract_from=extract_from, **_compile_options("json_schema", generate_kwargs))
    if reasoning is not None:
        fmt = reasoning.format(fmt)
    guide = compile(fmt, model_vocabulary(model, tokenizer))
    budget = reasoning.budget() if reasoning is not None else None
    text = generate_text(
        model, tokenizer, prompt, guide, max_new_tokens=max_new_tokens, chat=chat,
        budget_aware=budget_aware, fast_forward=fast_forward, text_budget=budget, **generate_kwargs
    )
    thinking = None
    if reasoning is not None:
        thinking, text = split_reasoning(text, reasoning)
    value = json.loads(text)
    return (value, thinking) if with_reasoning else value


def generate_pydantic(
    model: Any,
    tokenizer: Any,
    prompt: str | Sequence[dict[str, str]],
    model_class: type[T],
    *,
    max_new_tokens: int = 256,
    chat: bool | None = None,
    budget_aware: bool = True,
    fast_forward: bool = True,
    extract_from: str | Sequence[str] | None = None,
    **generate_kwargs: Any,
) -> T:
    """The model's answer as an instance of the pydantic ``model_class``.

    The output follows ``model_class``'s JSON Schema and is validated with
    ``model_class.model_validate_json``. Options as in :func:`generate_json`, compile options
    (``extract_from``, ``key_order``, ``formats``, ...) included.

    Example:
        >>> class Person(pydantic.BaseModel):
        ...     name: str
        ...     age: int
        >>> generate_pydantic(model, tokenizer, "Describe Ada Lovelace.", Person)  # doctest: +SKIP
        Person(name='Ada Lovelace', age=36)
    """
    fmt = JsonSchema(model_class, extract_from=extract_from, **_compile_options("json_schema", generate_kwargs))
    guide = compile(fmt, model_vocabulary(model, tokenizer))
    text = generate_text(
        model, tokenizer, prompt, guide, max_new_tokens=max_new_tokens, chat=chat,
        budget_aware=budget_aware, fast_forward=fast_forward, **generate_kwargs
    )
    return model_class.model_validate_json(text)  # type: ignore[attr-defined, no-any-return]


def generate_text(
    model: Any,
    tokenizer: Any,
    prompt: str | Sequence[dict[str, str]],
    guide: Guide,
    *,
    max_new_tokens: int,
    chat: bool | None = None,
    budget_aware: bool = True,
    fast_forward: bool = True,
    text_budget: TextBudget | None = None,
    template_kwargs: dict[str, Any] | None = None,
    **generate_kwargs: Any,
) -> str:
    """Generate under ``guide`` and return the complete output text.

    The lower layer of the ``generate_*`` helpers, for a guide compiled by the caller (it must be
    built over ``model_vocabulary(model, tokenizer)`` or a vocabulary with the same EOS ids).
    ``budget_aware`` and ``fast_forward`` as in :func:`generate_regex`; ``text_budget`` bounds
    a thinking block in tokens (:class:`~structgen.guides.text_budget.TextBudget`);
    ``template_kwargs`` go to the chat template (``tools=...``).
    """
    if budget_aware:
        guide.check_budget(max_new_tokens)
    input_ids, attention_mask = _encode_prompt(tokenizer, prompt, chat, **(template_kwargs or {}))
    device = _model_device(model)
    input_ids, attention_mask = input_ids.to(device), attention_mask.to(device)

    if set(generate_kwargs) <= LOOP_OPTIONS and not getattr(model.config, "is_encoder_decoder", False):
        generated = decode(
            model, tokenizer, guide, input_ids, max_new_tokens=max_new_tokens,
            budget_aware=budget_aware, fast_forward=fast_forward, options=generate_kwargs, text_budget=text_budget,
        )
        return _complete_text(guide, generated, max_new_tokens)

    eos = sorted(guide.vocabulary.eos_token_ids)
    processors = LogitsProcessorList(
        [LogitsProcessor(guide, max_new_tokens=max_new_tokens if budget_aware else None, text_budget=text_budget)]
    )
    extra = generate_kwargs.pop("logits_processor", None)
    if extra:
        processors.extend(extra)  # ours first: later ones see only allowed tokens
    generate_kwargs.setdefault("do_sample", False)
    pad = getattr(tokenizer, "pad_token_id", None)
    generate_kwargs.setdefault("pad_token_id", pad if pad is not None else eos[0])
    generate_kwargs.setdefault("eos_token_id", eos)

    with torch.inference_mode():
        out = model.generate(
            input_ids=input_ids,
            attention_mask=attention_mask,
            max_new_tokens=max_new_tokens,
            logits_processor=processors,
            **generate_kwargs,
        )
    # The first (best) sequence; a decoder-only model echoes the prompt, an encoder-decoder model
    # starts with its decoder start token.
    start = 1 if getattr(model.config, "is_encoder_decoder", False) else input_ids.shape[1]
    generated = out[0, start:].tolist()
    return _complete_text(guide, generated, max_new_tokens)


def _complete_text(guide: Guide, generated: list[int], max_new_tokens: int) -> str:
    """Decode up to EOS; raise unless the guide accepts the result."""
    eos = guide.vocabulary.eos_token_ids
    state = guide.initial_state
    end = len(generated)
    for i, token in enumerate(generated):
        if token in eos and guide.is_final(state):
            end = i
            break
        before, state = state, guide.next_state(state, token)
        if state < 0:  # cannot happen with our processor first in the list; never return it
            text = guide.vocabulary.decode(generated[:i]).decode("utf-8", errors="replace")
            raise TokenRejected(
                f"token {token} after {text[-80:]!r} is not allowed by {guide!r}; another logits "
                "processor or generation option overrode the constraint",
                token_id=token, state=before,
            )
    data = guide.vocabulary.decode(generated[:end])
    if not guide.is_final(state):
        raise IncompleteGeneration(
            data.decode("utf-8", errors="replace"), len(generated), max_new_tokens, guide.description
        )
    return data.decode("utf-8")


def _encode_prompt(
    tokenizer: Any, prompt: str | Sequence[dict[str, str]], chat: bool | None, **template: Any
) -> tuple[torch.Tensor, torch.Tensor]:
    has_template = bool(getattr(tokenizer, "chat_template", None))
    if chat is None:
        chat = has_template
    if chat and not has_template:
        raise StructgenError(
            f"{type(tokenizer).__name__} has no chat template; pass chat=False to use the prompt as plain text"
        )
    if chat:
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else list(prompt)
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True, **template)
        enc = tokenizer(text, return_tensors="pt", add_special_tokens=False)
    else:
        if not isinstance(prompt, str):
            raise TypeError("chat messages need a chat template; pass the prompt as a string with chat=False")
        enc = tokenizer(prompt, return_tensors="pt")
    return enc["input_ids"], enc["attention_mask"]


def _model_device(model: Any) -> torch.device:
    device = getattr(model, "device", None)
    if isinstance(device, torch.device):
        return device
    first: torch.Tensor = next(model.parameters())
    return first.device
