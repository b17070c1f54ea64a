"""Tool calls with and without enforcement: how many responses are valid calls, and tokens/s.

Run: python -m benchmarks.tools
Greedy SmolLM2-135M-Instruct (the embedded default model), CPU. Each of the prompts (up to 52,
four per tool; ``--limit`` takes the first n, round-robin over the tools) asks for something one of
the 13 function schemas of ``benchmarks/corpus/fn_*.json`` does; the model is shown four tools (that
one and the next three by name), described in the system message in the default Hermes format
(SmolLM2's chat template does not render tools), exactly as ``generate_tool_call`` shows them.
The same prompt tokens are then generated three ways, at most ``--max-tokens`` new tokens:

- ``unconstrained``: ``model.generate``; the output is read leniently (every ``<tool_call>`` ...
  ``</tool_call>`` block, or to the end, parsed as JSON ``{"name", "arguments"}``);
- ``enforced, required``: the guide of ``tool_calls_format(tools, "required", parallel=False)`` (one call, its
  arguments valid for the tool it names), through :func:`structgen.hf.decoding.decode`;
- ``enforced, auto``: the guide of ``tool_choice: "auto"`` (text, in which ``<tool_call>`` can only
  start a valid call).

A response is a *valid call* when it holds at least one call and every call names one of its four
tools with arguments valid against that tool's schema (``jsonschema`` with its format checker, the
same check for every mode); *right tool* when, besides, the first call is the tool the prompt is
about. Tokens/s counts every generated token (forced ones included) over the generation's wall time;
compiling the guides (one per tool set, cached) is timed apart. Prints a Markdown table, then one
line per mode with what went wrong.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import Counter
from typing import Any

import jsonschema
import torch

import structgen
from benchmarks.harness import CORPUS_DIR, markdown_table
from structgen import compile_composed
from structgen.compose.tools import HERMES, Tool, parse_tool_calls, template_renders_tools, tool_calls_format, tool_messages
from structgen.hf.decoding import DecodeStats, decode
from structgen.hf.generation import model_vocabulary

DESCRIPTIONS = {
    "book_flight": "Book a flight between two airports (IATA codes) on a date",
    "create_calendar_event": "Create a calendar event with a title, a start and an end time",
    "create_issue": "Open an issue in a GitHub repository",
    "get_stock_quote": "Get the latest quote of a stock by its ticker symbol",
    "get_weather": "Get the weather forecast for a location",
    "lookup_user": "Look up a user account by its UUID",
    "resize_image": "Resize the image at a URL to a width and a height in pixels",
    "run_sql": "Run a read-only SQL query on one of the databases",
    "search_products": "Search the product catalogue",
    "send_email": "Send an email",
    "set_thermostat": "Set a room's thermostat",
    "transfer_money": "Transfer money between two bank accounts",
    "translate": "Translate a text into another language",
}

#: (the tool the prompt is about, the prompt): four per tool.
PROMPTS: dict[str, list[str]] = {
    "book_flight": [
        "Book me a flight from Kingston (KIN) to New York JFK on 2026-12-20 for two passengers.",
        "I need one economy seat from Oslo OSL to London LHR on March 3rd 2026.",
        "Please book a business class flight for 3 people from SFO to NRT on 2026-05-14.",
        "Get me on a flight from Paris CDG to Rome FCO on 2026-07-01, just me.",
    ],
    "create_calendar_event": [
        "Put a standup meeting in my calendar on 2026-11-23 from 09:00 to 09:15 UTC.",
        "Schedule 'Lunch with Ana' on 2026-12-02 from 12:30 to 13:30 UTC and invite ana@example.com.",
        "Create an event called Dentist on 2026-10-05 from 15:00 to 16:00 UTC, remind me 30 minutes before.",
        "Block my calendar for 'Quarterly review' on 2026-09-30 from 14:00 to 17:00 UTC.",
    ],
    "create_issue": [
        "Open an issue in acme/widgets titled 'Crash on empty input'.",
        "File a bug in octocat/hello-world: the README has a broken link. Label it docs.",
        "Create an issue on structgen/structgen called 'Support Python 3.14' and assign it to alice.",
        "Report in acme/api that the login endpoint returns 500 when the password is empty.",
    ],
    "get_stock_quote": [
        "What is Apple's stock (AAPL) trading at right now?",
        "Get me the daily quote for MSFT on NASDAQ.",
        "How is Tesla, ticker TSLA, doing in 5 minute intervals?",
        "Show the price of IBM on the NYSE.",
    ],
    "get_weather": [
        "What's the weather in Kingston, Jamaica this week, in celsius?",
        "Will it rain in Oslo tomorrow? Give me fahrenheit.",
        "Give me a 3 day forecast for Tokyo in celsius, hourly.",
        "How hot is it in Lagos today, in celsius?",
    ],
    "lookup_user": [
        "Look up the user 123e4567-e89b-12d3-a456-426614174000.",
        "Find the email and plan of user 00000000-0000-0000-0000-000000000042.",
        "Who is user 9f1c2d3e-4b5a-6789-abcd-ef0123456789? Include deleted accounts.",
        "Get the name of the account with id 3fa85f64-5717-4562-b3fc-2c963f66afa6.",
    ],
    "resize_image": [
        "Resize https://cdn.example.com/img/cat.png to 640 by 480.",
        "Make the image at http://x.io/a.jpg 1024 pixels wide and 768 high, as webp.",
        "Shrink https://example.org/photo.jpeg to a 128x128 thumbnail.",
        "Scale https://images.example.com/banner.png to 1920 by 1080 keeping the aspect ratio.",
    ],
    "run_sql": [
        "How many events were there on 2026-11-22? Query the analytics database.",
        "Count the users who signed up this month, in the users database.",
        "Sum the invoice amounts in the billing database for October 2026.",
        "List the ten most recent rows of the events table in analytics.",
    ],
    "search_products": [
        "Find me a usb-c cable under 20 dollars.",
        "Search for tomato seeds in the garden category.",
        "Show me books about Python that are in stock.",
        "I'm looking for a toy robot for a 6 year old.",
    ],
    "send_email": [
        "Email ana@example.com with the subject Hello and say see you at 5.",
        "Send bob@work.io a high priority email about the server outage.",
        "Write to team@example.org: the meeting moved to Thursday.",
        "Send an email to carla@mail.com thanking her for the gift.",
    ],
    "set_thermostat": [
        "Set the living room to 21.5 degrees, heating.",
        "Cool the office down to 19 degrees.",
        "Turn the bedroom thermostat off.",
        "Put the kitchen on auto at 22 degrees.",
    ],
    "transfer_money": [
        "Send 25 dollars from account 12345678 to 987654321012 for rent.",
        "Transfer 100 EUR from 00000001 to 11112222 with the memo 'books'.",
        "Move 5000 JMD from account 55556666 to account 77778888.",
        "Pay 12.50 GBP from 10203040 to 50607080.",
    ],
    "translate": [
        "Translate 'Good morning' into Canadian French.",
        "How do you say 'where is the station' in German?",
        "Translate this to English: 'Ça va? On se voit demain.'",
        "Translate 'thank you very much' into Japanese, formally.",
    ],
}


def load_tools() -> dict[str, Tool]:
    """The corpus' function schemas as tools, by name."""
    tools = {}
    for name, description in DESCRIPTIONS.items():
        schema = json.loads((CORPUS_DIR / f"fn_{name}.json").read_text())["schema"]
        tools[name] = Tool(name, schema, description)
    return tools


def cases(limit: int) -> list[tuple[str, str]]:
    """``(tool, prompt)`` round-robin over the tools, the first ``limit``."""
    out = [(name, prompts[i]) for i in range(4) for name, prompts in PROMPTS.items()]
    return out[:limit]


def tool_set(target: str, names: list[str]) -> tuple[str, ...]:
    """The target and the next three tools by name, in name order."""
    i = names.index(target)
    return tuple(sorted(names[(i + k) % len(names)] for k in range(4)))


def render(tokenizer: Any, prompt: str, tools: list[Tool]) -> torch.Tensor:
    """The prompt's ids, the tools shown as :func:`structgen.generate_tool_call` shows them."""
    native = template_renders_tools(tokenizer.chat_template)
    messages = tool_messages([{"role": "user", "content": prompt}], tools, native=native)
    extra = {"tools": [t.openai() for t in tools]} if native else {}
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True, **extra)
    return tokenizer(text, return_tensors="pt", add_special_tokens=False)["input_ids"]


def lenient_calls(text: str) -> list[tuple[str, Any]] | str:
    """The ``(name, arguments)`` of every ``<tool_call>`` block of a free output, or what is wrong."""
    blocks = re.findall(r"<tool_call>(.*?)(?:</tool_call>|$)", text, re.S)
    if not blocks:
        return "no call"
    calls = []
    for block in blocks:
        try:
            call = json.loads(block.strip())
        except json.JSONDecodeError:
            return "not JSON"
        if not isinstance(call, dict) or not isinstance(call.get("name"), str) or "arguments" not in call:
            return "not {name, arguments}"
        calls.append((call["name"], call["arguments"]))
    return calls


def judge(calls: list[tuple[str, Any]] | str, tools: dict[str, Tool], target: str) -> tuple[str, bool]:
    """``(verdict, right tool)``: verdict ``"valid"`` or what is wrong."""
    if isinstance(calls, str):
        return calls, False
    for name, arguments in calls:
        if name not in tools:
            return "unknown tool", False
        schema = tools[name].schema()
        validator = jsonschema.validators.validator_for(schema)(schema, format_checker=jsonschema.FormatChecker())
        if not validator.is_valid(arguments):
            return "invalid arguments", False
    return "valid", calls[0][0] == target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=50, help="prompts (at most 52)")
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--modes", default="unconstrained,required,auto")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--show", action="store_true", help="print every output")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    model, tokenizer = structgen.load_default_model()
    vocab = model_vocabulary(model, tokenizer)
    eos = sorted(vocab.eos_token_ids)
    all_tools = load_tools()
    names = sorted(all_tools)
    modes = args.modes.split(",")
    guides: dict[tuple[str, tuple[str, ...]], Any] = {}
    compile_seconds = 0.0
    results: dict[str, list[tuple[str, bool, int, float]]] = {m: [] for m in modes}
    for target, prompt in cases(args.limit):
        listed = [all_tools[n] for n in tool_set(target, names)]
        shown = {t.name: t for t in listed}
        ids = render(tokenizer, prompt, listed)
        for mode in modes:
            start = time.perf_counter()
            if mode == "unconstrained":
                out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=args.max_tokens,
                                     do_sample=False, eos_token_id=eos, pad_token_id=eos[0])[0, ids.shape[1]:].tolist()
                seconds = time.perf_counter() - start
                while out and out[-1] in eos:
                    out.pop()
                text = tokenizer.decode(out, skip_special_tokens=False)
                calls: list[tuple[str, Any]] | str = lenient_calls(text)
                tokens = len(out)
            else:
                key = (mode, tuple(shown))
                if key not in guides:
                    guides[key] = compile_composed(tool_calls_format(listed, mode, parallel=False), vocab)
                    guides[key].token_mask(guides[key].initial_state)
                    compile_seconds += time.perf_counter() - start
                    start = time.perf_counter()
                stats = DecodeStats()
                out = decode(model, tokenizer, guides[key], ids, max_new_tokens=args.max_tokens, stats=stats)
                seconds = time.perf_counter() - start
                text = tokenizer.decode(out, skip_special_tokens=False)
                try:
                    calls = [(c.name, c.parsed) for c in parse_tool_calls(text, listed, HERMES)[1]] or "no call"
                except structgen.ConstraintError:
                    calls = "incomplete call"  # only when max_tokens cut it: the guide allows nothing else
                tokens = stats.tokens
            verdict, right = judge(calls, shown, target)
            results[mode].append((verdict, right, tokens, seconds))
            if args.show:
                print(f"[{mode}] {target}: {prompt}\n    {verdict}{' (right tool)' if right else ''}: {text!r}")
    label = {"unconstrained": "unconstrained (`model.generate`)", "required": "enforced, `tool_choice: \"required\"`",
             "auto": "enforced, `tool_choice: \"auto\"`"}
    rows = []
    n = len(cases(args.limit))
    for mode in modes:
        got = results[mode]
        valid = sum(v == "valid" for v, _, _, _ in got)
        n_right = sum(r for _, r, _, _ in got)
        tokens = sum(t for _, _, t, _ in got)
        seconds = sum(s for _, _, _, s in got)
        rows.append([label[mode], f"{valid}/{n} ({100 * valid / n:.0f}%)", f"{n_right}/{n} ({100 * n_right / n:.0f}%)",
                     f"{tokens / n:.1f}", f"{tokens / seconds:.1f}", f"{seconds:.0f}"])
    print(markdown_table(["mode", "valid tool calls", "valid, right tool", "tokens per response", "tokens/s",
                          "generation (s)"], rows, "lrrrrr"))
    print(f"\n{len(guides)} guides compiled in {compile_seconds:.1f} s in all (one per tool set and mode)")
    for mode in modes:
        wrong = Counter(v for v, _, _, _ in results[mode] if v != "valid")
        print(f"{mode}: not valid: {dict(wrong) or 'none'}")


if __name__ == "__main__":
    main()
