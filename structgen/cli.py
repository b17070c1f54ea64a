"""The ``structgen`` command line.

```
structgen generate "PROMPT" (--regex R | --schema FILE_OR_JSON | --lark FILE | --gbnf FILE | --grammar NAME)
                   [--model DIR_OR_GGUF] [--max-new-tokens N] [--sample [--seed S]] [--no-chat]
structgen grammars
structgen serve [--model DIR_OR_GGUF] [--host H] [--port P] [--max-batch-size N]
                [--batch-timeout-ms MS] [--device D] [--api-key KEY] [--served-model-name NAME ...]
```

``generate`` prints the constrained answer of the embedded SmolLM2-135M-Instruct (or ``--model``).
The constraint is checked before the model loads, so a bad regex or schema fails at once: a
one-line message on stderr and exit status 2; so is a ``--max-new-tokens`` below the
constraint's shortest output (that check needs the tokenizer only). A generation that runs out of
tokens exits with 1. ``generate`` and ``serve`` need an extra (``transformers``, ``server``):
without it they say which, in one line, and exit with 2.

The constraint becomes a format value (:mod:`structgen.formats`) compiled through the door
(:func:`structgen.compile`). Named grammars are ``NAME.regex``, ``NAME.schema.json``, ``NAME.lark``
and ``NAME.gbnf`` files (see :mod:`structgen.named_grammars`, whose lookup functions this module
re-exports).

``serve`` runs the HTTP server (``structgen.server``; needs the ``server`` extra) on
127.0.0.1:8000 by default.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

from .errors import ConstraintError, StructgenError
from .formats import Format, Grammar, JsonSchema, Regex
from .named_grammars import grammar_dirs, kind_of, list_grammars, named_format

__all__ = ["grammar_dirs", "list_grammars", "main", "named_format"]


class CliError(ValueError):
    """A usage problem (a wrong argument value) reported as one line with exit status 2.

    A ``ValueError``, as the error tree has it for a wrong argument of an API call: for example a
    ``--schema`` file that does not exist."""


def _schema_arg(value: str) -> Any:
    """``--schema``: inline JSON when it looks like JSON, otherwise a file path."""
    stripped = value.strip()
    if stripped.startswith(("{", "[")) or stripped in ("true", "false"):
        source = "--schema"
        text = value
    else:
        path = Path(value).expanduser()
        if not path.is_file():
            raise CliError(f"--schema {value!r}: no such file (or pass the schema as inline JSON)")
        source = str(path)
        text = path.read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise CliError(f"{source} is not valid JSON: {e}") from e


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="structgen",
        description="Structured generation: language-model output that follows a regex, a JSON Schema or a grammar.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    gen = sub.add_parser(
        "generate",
        help="print a model's answer constrained to a regex, a JSON Schema, a grammar or a named one",
        description="Print the model's answer to PROMPT, constrained by construction.",
    )
    gen.add_argument("prompt", metavar="PROMPT")
    what = gen.add_mutually_exclusive_group(required=True)
    what.add_argument("--regex", metavar="R", help="a regex the whole answer must match")
    what.add_argument("--schema", metavar="FILE_OR_JSON", help="a JSON Schema: a file or inline JSON")
    what.add_argument("--lark", metavar="FILE", help="a Lark grammar file (start rule: start)")
    what.add_argument("--gbnf", metavar="FILE", help="a GBNF / EBNF grammar file (start rule: root)")
    what.add_argument("--grammar", metavar="NAME", help="a ready-made grammar (see `structgen grammars`)")
    gen.add_argument(
        "--model",
        metavar="DIR_OR_GGUF",
        help="a local transformers folder or .gguf file (default: the embedded SmolLM2-135M-Instruct)",
    )
    gen.add_argument("--max-new-tokens", type=int, default=None, metavar="N",
                     help="token budget (default: 64 for a regex, 256 otherwise)")
    gen.add_argument("--sample", action="store_true", help="sample instead of greedy decoding")
    gen.add_argument("--seed", type=int, default=None, metavar="S", help="random seed for --sample")
    gen.add_argument("--no-chat", action="store_true",
                     help="feed PROMPT as plain text instead of through the chat template")
    gen.add_argument("--device", default="cpu", help="torch device (default: cpu)")
    gen.add_argument("--no-budget-aware", action="store_true",
                     help="let generation be cut off at the token budget instead of always finishing")
    gen.set_defaults(func=_cmd_generate)

    gram = sub.add_parser("grammars", help="list the ready-made grammars",
                          description="List the grammars that --grammar can name.")
    gram.set_defaults(func=_cmd_grammars)

    serve = sub.add_parser(
        "serve",
        help="serve a model over HTTP (OpenAI-compatible, with response_format and continuous batching)",
        description="Run the structgen inference server (needs `pip install 'structgen[server]'`).",
    )
    serve.add_argument("--model", metavar="DIR_OR_GGUF",
                       help="a local transformers folder or .gguf file (default: the embedded SmolLM2-135M-Instruct)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    serve.add_argument("--max-batch-size", type=int, default=32, metavar="N",
                       help="most requests decoded together; 1 turns batching off (default: 32)")
    serve.add_argument("--batch-timeout-ms", type=float, default=2.0, metavar="MS",
                       help="when idle, wait this long for more requests to prefill together (default: 2)")
    serve.add_argument("--device", default="cpu", help="torch device (default: cpu)")
    serve.add_argument("--no-budget-aware", action="store_true",
                       help="let guided output be cut off at max_tokens (finish_reason 'length') "
                            "instead of always finishing within it")
    serve.add_argument("--api-key", metavar="KEY",
                       help="require 'Authorization: Bearer KEY' on /v1/* and /generate* (401 otherwise)")
    serve.add_argument("--served-model-name", nargs="+", metavar="NAME",
                       help="the name(s) clients pass as 'model' (default: the model's); the first is "
                            "the one responses report")
    serve.set_defaults(func=_cmd_serve)
    return parser


def _check_constraint(fmt: Format) -> None:
    """Compile ``fmt`` over a byte vocabulary, so that errors show up before the model loads.

    The door caches the automata, so the real compile reuses the work."""
    from . import Vocabulary, compile

    compile(fmt, Vocabulary.from_bytes([bytes([b]) for b in range(256)] + [None], eos_token_ids=[256]))


def _grammar_file(value: str, flag: str, syntax: str) -> Grammar:
    path = Path(value).expanduser()
    if not path.is_file():
        raise CliError(f"{flag} {value!r}: no such file")
    return Grammar(path.read_text(encoding="utf-8"), syntax=syntax)


def _format_arg(args: argparse.Namespace) -> Format:
    """The constraint the flags name, as a format value."""
    if args.regex is not None:
        return Regex(args.regex)
    if args.schema is not None:
        return JsonSchema(_schema_arg(args.schema))
    if args.lark is not None:
        return _grammar_file(args.lark, "--lark", "lark")
    if args.gbnf is not None:
        return _grammar_file(args.gbnf, "--gbnf", "gbnf")
    return named_format(args.grammar)


def _quiet(transformers: Any) -> None:
    """transformers' warnings and progress bars off (the CLI prints what matters itself)."""
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()


def _missing_extra(command: str, extra: str, error: ImportError) -> CliError:
    """The one-line message for a command whose extra is not installed."""
    what = f"{error.name} is not installed" if error.name else str(error)
    return CliError(f"structgen {command} needs the '{extra}' extra ({what}): pip install 'structgen[{extra}]'")


def _cmd_generate(args: argparse.Namespace) -> int:
    fmt = _format_arg(args)
    if args.max_new_tokens is not None and args.max_new_tokens < 1:
        raise CliError("--max-new-tokens must be at least 1")
    if args.seed is not None and not args.sample:
        raise CliError("--seed only matters with --sample")
    if args.model and not Path(args.model).expanduser().exists():
        raise CliError(f"--model {args.model!r}: no such folder or file")
    _check_constraint(fmt)

    # Heavy imports only now: `structgen grammars` and constraint errors stay fast.
    try:
        import transformers

        from .hf.generation import generate_text, model_vocabulary
        from .hf.models import load_default_model, load_model, load_tokenizer, vocabulary_for
    except ImportError as e:
        raise _missing_extra("generate", "transformers", e) from e
    from .compiler import compile

    def compile_for(vocab: Any) -> Any:
        return compile(fmt, vocab)

    _quiet(transformers)
    budget = args.max_new_tokens or (64 if isinstance(fmt, Regex) else 256)
    if not args.no_budget_aware:  # the budget is checked on the tokenizer, before the model loads
        compile_for(vocabulary_for(load_tokenizer(args.model or None))).check_budget(budget)
    if args.model:
        model, tokenizer = load_model(args.model, device=args.device)
    else:
        model, tokenizer = load_default_model(device=args.device)
    guide = compile_for(model_vocabulary(model, tokenizer))
    options: dict[str, Any] = {"do_sample": args.sample}
    if args.sample and args.seed is not None:
        transformers.set_seed(args.seed)
    text = generate_text(
        model, tokenizer, args.prompt, guide,
        max_new_tokens=budget, chat=False if args.no_chat else None,
        budget_aware=not args.no_budget_aware, **options,
    )
    print(text)
    return 0


def _cmd_grammars(args: argparse.Namespace) -> int:
    grammars = list_grammars()
    if not grammars:
        raise CliError("no grammars folder found next to the package")
    width = max(len(name) for name in grammars)
    for name, path in grammars.items():
        print(f"{name:<{width}}  {kind_of(path):<6}  {path}")
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    if args.max_batch_size < 1:
        raise CliError("--max-batch-size must be at least 1")
    if args.batch_timeout_ms < 0:
        raise CliError("--batch-timeout-ms must not be negative")
    if not 0 <= args.port <= 65535:
        raise CliError(f"--port {args.port}: not a port number")
    if args.model and not Path(args.model).expanduser().exists():
        raise CliError(f"--model {args.model!r}: no such folder or file")
    if args.api_key is not None and not args.api_key.strip():
        raise CliError("--api-key must not be empty")
    try:
        import transformers
        import uvicorn

        from .server import ServerConfig, create_app
    except ImportError as e:
        raise _missing_extra("serve", "server", e) from e

    from .hf.models import DEFAULT_MODEL_NAME, load_default_model, load_model

    _quiet(transformers)
    if args.model:
        model, tokenizer = load_model(args.model, device=args.device)
        name = Path(args.model).expanduser().name
    else:
        model, tokenizer = load_default_model(device=args.device)
        name = DEFAULT_MODEL_NAME
    names = args.served_model_name or [name]
    config = ServerConfig(model_name=names[0], model_aliases=tuple(names[1:]), max_batch_size=args.max_batch_size,
                          batch_timeout_ms=args.batch_timeout_ms, budget_aware=not args.no_budget_aware,
                          api_key=args.api_key)
    uvicorn.run(create_app(model, tokenizer, config), host=args.host, port=args.port, log_level="info")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 generation failed, 2 bad input)."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (CliError, ConstraintError) as e:
        print(f"structgen: error: {e}", file=sys.stderr)
        return 2
    except StructgenError as e:
        print(f"structgen: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
