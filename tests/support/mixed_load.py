"""The mixed load a real deployment sends (issue 41), shared by ``tests/server/test_load.py``
(which asserts what it checks) and ``benchmarks/server_load.py`` (which reports its throughput
and latency): N clients at once, each with a constraint of its own (:func:`mixed_request`): chat
completions with a JSON Schema, with a regex, with a tool it must call, and Responses API
requests with a schema or a tool, half of them streamed, each schema naming its client so that an
answer delivered to the wrong client fails its check (:func:`check_answer`)."""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any

import httpx

__all__ = ["MODEL", "check_answer", "mixed_request", "run_mixed"]

MODEL = "SmolLM2-135M-Instruct"


def _record(k: int) -> dict[str, Any]:
    """A schema only client ``k``'s answer can satisfy (``client`` is ``k``)."""
    return {"type": "object", "properties": {"client": {"const": k}, "word": {"type": "string", "maxLength": 8}},
            "required": ["client", "word"], "additionalProperties": False}


def mixed_request(k: int, max_tokens: int = 48) -> tuple[str, dict[str, Any], str]:
    """Client ``k``'s request: ``(path, body, expect)``; ``expect`` names what the answer must be:
    ``"json"`` (valid under ``_record(k)``), ``"regex"`` (full-matches ``id<k>-[a-z]{2,6}``),
    ``"call"`` (a call of ``record_<k>`` with valid arguments). Kinds rotate with ``k % 8``; odd
    ``k`` stream."""
    kind = k % 8
    stream = bool(k % 2)
    user = [{"role": "user", "content": f"Client {k}: give one short word."}]
    common = {"model": MODEL, "temperature": 0.8, "stream": stream}
    schema = _record(k)
    tool = {"name": f"record_{k}", "description": "Record a word", "parameters": schema}
    if kind in (0, 1):
        body = {**common, "messages": user, "max_tokens": max_tokens, "seed": k,
                "response_format": {"type": "json_schema", "json_schema": {"name": f"c{k}", "schema": schema}}}
        return "/v1/chat/completions", body, "json"
    if kind in (2, 3):
        body = {**common, "messages": user, "max_tokens": max_tokens, "seed": k,
                "response_format": {"type": "regex", "pattern": f"id{k}-[a-z]{{2,6}}"}}
        return "/v1/chat/completions", body, "regex"
    if kind in (4, 5):
        body = {**common, "messages": user, "max_tokens": max_tokens + 16, "seed": k,
                "tools": [{"type": "function", "function": tool}],
                "tool_choice": {"type": "function", "function": {"name": f"record_{k}"}}, "parallel_tool_calls": False}
        return "/v1/chat/completions", body, "call"
    if kind == 6:
        body = {**common, "input": user, "max_output_tokens": max_tokens,
                "text": {"format": {"type": "json_schema", "name": f"c{k}", "schema": schema, "strict": True}}}
        return "/v1/responses", body, "json"
    body = {**common, "input": user, "max_output_tokens": max_tokens + 16,
            "tools": [{"type": "function", **tool}], "tool_choice": "required", "parallel_tool_calls": False}
    return "/v1/responses", body, "call"


def check_answer(k: int, expect: str, text: str | None, calls: list[tuple[str, str]]) -> None:
    """Raise ``AssertionError`` unless client ``k``'s answer is what its request asked for."""
    import jsonschema

    if expect == "json":
        assert text is not None, f"client {k}: no text"
        jsonschema.validate(json.loads(text), _record(k))
    elif expect == "regex":
        assert text is not None and re.fullmatch(f"id{k}-[a-z]{{2,6}}", text), f"client {k}: {text!r}"
    else:
        assert [name for name, _ in calls] == [f"record_{k}"], f"client {k}: calls {calls}"
        jsonschema.validate(json.loads(calls[0][1]), _record(k))


def _sse(line: str) -> dict[str, Any] | None:
    if not line.startswith("data: ") or line == "data: [DONE]":
        return None
    value: dict[str, Any] = json.loads(line[6:])
    return value


async def _read(r: httpx.Response, path: str, stream: bool) -> tuple[str | None, list[tuple[str, str]], int, float | None]:
    """``(text, calls, completion tokens, seconds to the first piece)`` of one answer."""
    start = time.perf_counter()
    first: float | None = None
    if not stream:
        body = json.loads(await r.aread())
        if path == "/v1/responses":
            texts = [c["text"] for i in body["output"] if i["type"] == "message" for c in i["content"]]
            calls = [(i["name"], i["arguments"]) for i in body["output"] if i["type"] == "function_call"]
            return ("".join(texts) if texts else None), calls, body["usage"]["output_tokens"], None
        msg = body["choices"][0]["message"]
        calls = [(c["function"]["name"], c["function"]["arguments"]) for c in msg.get("tool_calls") or ()]
        return msg.get("content"), calls, body["usage"]["completion_tokens"], None
    text: list[str] = []
    args: dict[int, list[str]] = {}
    names: dict[int, str] = {}
    tokens = 0
    async for line in r.aiter_lines():
        event = _sse(line)
        if event is None:
            continue
        if first is None:
            first = time.perf_counter() - start
        if path == "/v1/responses":
            if event["type"] == "response.failed":
                raise AssertionError(f"response failed: {event['response']['error']}")
            if event["type"] in ("response.completed", "response.incomplete"):
                done = event["response"]
                tokens = done["usage"]["output_tokens"]
                calls = [(i["name"], i["arguments"]) for i in done["output"] if i["type"] == "function_call"]
                texts = [c["text"] for i in done["output"] if i["type"] == "message" for c in i["content"]]
                streamed = "".join(text)
                assert streamed == "".join(texts), "the deltas are not the final text"
                return (streamed if texts else None), calls, tokens, first
            if event["type"] == "response.output_text.delta":
                text.append(event["delta"])
            continue
        if "error" in event:
            raise AssertionError(f"stream failed: {event['error']}")
        if event.get("usage"):
            tokens = event["usage"]["completion_tokens"]
        for choice in event["choices"]:
            delta = choice["delta"]
            if delta.get("content"):
                text.append(delta["content"])
            for call in delta.get("tool_calls") or ():
                if call.get("function", {}).get("name"):
                    names[call["index"]] = call["function"]["name"]
                args.setdefault(call["index"], []).append(call.get("function", {}).get("arguments") or "")
    calls = [(names[i], "".join(args[i])) for i in sorted(names)]
    return ("".join(text) if text else None), calls, tokens, first


async def run_mixed(base: str, clients: int, *, max_tokens: int = 48) -> list[dict[str, Any]]:
    """All ``clients`` requests at once; one record per request: ``k``, ``latency``, ``ttft``,
    ``tokens``, ``error`` (``None`` when the answer passed :func:`check_answer`)."""
    limits = httpx.Limits(max_connections=clients + 4, max_keepalive_connections=clients + 4)
    async with httpx.AsyncClient(base_url=base, timeout=900, limits=limits) as client:

        async def one(k: int) -> dict[str, Any]:
            path, body, expect = mixed_request(k, max_tokens)
            if body["stream"] and path == "/v1/chat/completions":
                body = {**body, "stream_options": {"include_usage": True}}
            start = time.perf_counter()
            record: dict[str, Any] = {"k": k, "path": path, "stream": body["stream"], "error": None, "ttft": None,
                                      "tokens": 0}
            try:
                async with client.stream("POST", path, json=body) as r:
                    if r.status_code != 200:
                        raise AssertionError(f"HTTP {r.status_code}: {(await r.aread()).decode()[:300]}")
                    text, calls, tokens, first = await _read(r, path, body["stream"])
                record.update(tokens=tokens, ttft=first)
                check_answer(k, expect, text, calls)
            except (AssertionError, ValueError, KeyError, httpx.HTTPError) as e:
                record["error"] = f"{type(e).__name__}: {e}"
            except Exception as e:  # noqa: BLE001 - a schema check's own error type, reported
                record["error"] = f"{type(e).__name__}: {e}"
            record["latency"] = time.perf_counter() - start
            return record

        return list(await asyncio.gather(*(one(k) for k in range(clients))))
