"""Write the mask-benchmark corpus: benchmarks/corpus/<name>.json = {"schema", "valid", "invalid"}.

Run: python -m benchmarks.make_corpus   (rewrites the folder; tests/test_bench_corpus.py checks it)

Schemas of the kinds real APIs use: function-call arguments, Kubernetes-style nested configs, enums,
formats, arrays of objects, optional keys, bounded strings, integer ranges, nullable fields, $defs/$ref.
Each has valid instances and *subtly* invalid ones, built as one-edit mutations of a valid instance
(wrong enum value, missing required key, string one character too long, integer one past the bound,
bad date, an extra key under additionalProperties false, a wrong type deep inside).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
from typing import Any

from benchmarks.harness import CORPUS_DIR

DEL = object()
CORPUS: dict[str, dict[str, Any]] = {}


def edit(base: Any, path: str, value: Any) -> Any:
    """A copy of ``base`` with the value at ``path`` (dotted; ints index lists) replaced or deleted."""
    out = copy.deepcopy(base)
    keys = [int(k) if k.lstrip("-").isdigit() else k for k in path.split(".")]
    node = out
    for k in keys[:-1]:
        node = node[k]
    if value is DEL:
        del node[keys[-1]]
    else:
        node[keys[-1]] = value
    return out


def add(name: str, schema: dict[str, Any], valid: list[Any], invalid: list[tuple[str, Any]]) -> None:
    """Register a schema; ``invalid`` holds (path, new value) edits of ``valid[0]`` or ("=", instance)."""
    bad = [v if p == "=" else edit(valid[0], p, v) for p, v in invalid]
    CORPUS[name] = {"schema": schema, "valid": valid, "invalid": bad}


def obj(props: dict[str, Any], required: list[str] | None = None, extra: bool = False, **kw: Any) -> dict[str, Any]:
    s: dict[str, Any] = {"type": "object", "properties": props, "required": required if required is not None else list(props)}
    if not extra:
        s["additionalProperties"] = False
    s.update(kw)
    return s


S = {"type": "string"}
I = {"type": "integer"}
N = {"type": "number"}
B = {"type": "boolean"}


def bstr(lo: int, hi: int) -> dict[str, Any]:
    return {"type": "string", "minLength": lo, "maxLength": hi}


def irange(lo: int, hi: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": lo, "maximum": hi}


def fmt(f: str) -> dict[str, Any]:
    return {"type": "string", "format": f}


def enum(*vals: Any) -> dict[str, Any]:
    return {"enum": list(vals)}


def arr(items: Any, lo: int | None = None, hi: int | None = None) -> dict[str, Any]:
    s: dict[str, Any] = {"type": "array", "items": items}
    if lo is not None:
        s["minItems"] = lo
    if hi is not None:
        s["maxItems"] = hi
    return s


def nullable(t: str, **kw: Any) -> dict[str, Any]:
    return {"type": [t, "null"], **kw}


# ---------------------------------------------------------------- function-call arguments
add("fn_get_weather", obj({
    "location": bstr(1, 80), "unit": enum("celsius", "fahrenheit"), "days": irange(1, 14),
    "include_hourly": B}, ["location", "unit"]),
    [{"location": "Kingston, Jamaica", "unit": "celsius", "days": 7, "include_hourly": True},
     {"location": "Oslo", "unit": "fahrenheit"},
     {"location": "São Paulo, Brasil", "unit": "celsius", "days": 14}],
    [("unit", "kelvin"), ("days", 15), ("days", 0), ("unit", DEL), ("include_hourly", "yes"), ("country", "JM"), ("location", "")])

add("fn_send_email", obj({
    "to": arr(fmt("email"), 1, 10), "cc": arr(fmt("email"), 0, 10), "subject": bstr(1, 120),
    "body": {"type": "string", "maxLength": 2000}, "priority": enum("low", "normal", "high")}, ["to", "subject", "body"]),
    [{"to": ["ana@example.com"], "subject": "Hello", "body": "See you at 5.", "priority": "high"},
     {"to": ["a.b+tag@mail.example.org", "c@d.io"], "cc": [], "subject": "Re: report", "body": ""},
     {"to": ["x@y.co"], "cc": ["z@y.co"], "subject": "Q3 numbers \"final\"", "body": "Line 1\nLine 2"}],
    [("to", []), ("to.0", "ana-at-example.com"), ("priority", "urgent"), ("subject", DEL), ("body", None), ("bcc", ["q@r.st"])])

add("fn_search_products", obj({
    "query": bstr(1, 200), "category": enum("books", "electronics", "garden", "toys"),
    "min_price": {"type": "number", "minimum": 0}, "max_price": {"type": "number", "minimum": 0},
    "in_stock": B, "page": irange(1, 100), "page_size": irange(1, 50)}, ["query"]),
    [{"query": "usb-c cable", "category": "electronics", "min_price": 2.5, "max_price": 20, "in_stock": True, "page": 1, "page_size": 20},
     {"query": "tomato seeds"},
     {"query": "lego", "category": "toys", "page": 3}],
    [("page_size", 51), ("page", 0), ("category", "food"), ("query", DEL), ("min_price", -1), ("in_stock", 1), ("sort", "price")])

add("fn_create_calendar_event", obj({
    "title": bstr(1, 100), "start": fmt("date-time"), "end": fmt("date-time"),
    "attendees": arr(fmt("email"), 0, 20), "location": S, "all_day": B,
    "reminder_minutes": irange(0, 10080)}, ["title", "start", "end"]),
    [{"title": "Standup", "start": "2026-11-23T09:00:00Z", "end": "2026-11-23T09:15:00Z", "attendees": ["a@b.com"], "reminder_minutes": 5},
     {"title": "Offsite", "start": "2026-12-01T00:00:00+01:00", "end": "2026-12-02T23:59:59+01:00", "all_day": True},
     {"title": "1:1", "start": "2026-02-28T14:30:00.5Z", "end": "2026-02-28T15:00:00Z", "location": "Room 4"}],
    [("start", "2026-11-23 09:00"), ("end", "2026-13-01T00:00:00Z"), ("reminder_minutes", 10081), ("title", DEL), ("attendees.0", "not-an-email"), ("recurring", True)])

add("fn_book_flight", obj({
    "origin": {"type": "string", "pattern": "^[A-Z]{3}$"}, "destination": {"type": "string", "pattern": "^[A-Z]{3}$"},
    "date": fmt("date"), "passengers": irange(1, 9), "cabin": enum("economy", "premium", "business", "first"),
    "return_date": nullable("string", format="date")}, ["origin", "destination", "date", "passengers"]),
    [{"origin": "KIN", "destination": "JFK", "date": "2026-12-20", "passengers": 2, "cabin": "economy", "return_date": None},
     {"origin": "OSL", "destination": "LHR", "date": "2027-01-05", "passengers": 1},
     {"origin": "SFO", "destination": "NRT", "date": "2026-03-31", "passengers": 9, "cabin": "first", "return_date": "2026-04-10"}],
    [("origin", "kin"), ("date", "2026-02-30x"), ("passengers", 10), ("cabin", "coach"), ("destination", DEL), ("return_date", "next week"), ("pets", 0)])

add("fn_run_sql", obj({
    "database": enum("analytics", "billing", "users"), "sql": bstr(1, 4000), "timeout_s": irange(1, 300),
    "read_only": {"const": True}}, ["database", "sql", "read_only"]),
    [{"database": "analytics", "sql": "SELECT count(*) FROM events WHERE day = '2026-11-22'", "timeout_s": 30, "read_only": True},
     {"database": "users", "sql": "SELECT 1", "read_only": True},
     {"database": "billing", "sql": "SELECT id,\n  total\nFROM invoices\tLIMIT 10", "timeout_s": 300, "read_only": True}],
    [("read_only", False), ("database", "Analytics"), ("timeout_s", 301), ("sql", ""), ("read_only", DEL), ("explain", True)])

add("fn_set_thermostat", obj({
    "room": enum("living", "kitchen", "bedroom", "office"), "target_c": {"type": "number", "minimum": 5, "maximum": 30},
    "mode": enum("heat", "cool", "auto", "off")}),
    [{"room": "living", "target_c": 21.5, "mode": "heat"},
     {"room": "office", "target_c": 5, "mode": "off"},
     {"room": "kitchen", "target_c": 30, "mode": "auto"}],
    [("room", "garage"), ("mode", "Heat"), ("target_c", "21"), ("mode", DEL), ("fan", "on"), ("target_c", None)])

add("fn_translate", obj({
    "text": bstr(1, 5000), "source_lang": {"type": "string", "pattern": "^[a-z]{2}(-[A-Z]{2})?$"},
    "target_lang": {"type": "string", "pattern": "^[a-z]{2}(-[A-Z]{2})?$"}, "formality": enum("default", "more", "less")},
    ["text", "target_lang"]),
    [{"text": "Good morning", "source_lang": "en", "target_lang": "fr-CA", "formality": "more"},
     {"text": "Ça va? 🙂", "target_lang": "en"},
     {"text": "Wie geht's", "source_lang": "de", "target_lang": "pt-BR"}],
    [("target_lang", "french"), ("source_lang", "en-us"), ("formality", "polite"), ("text", DEL), ("text", ""), ("glossary", [])])

add("fn_create_issue", obj({
    "repo": {"type": "string", "pattern": "^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$"}, "title": bstr(1, 256), "body": S,
    "labels": arr(bstr(1, 50), 0, 10), "assignee": nullable("string", maxLength=39), "milestone": nullable("integer", minimum=1)},
    ["repo", "title"]),
    [{"repo": "acme/widgets", "title": "Crash on empty input", "body": "Steps:\n1. run\n2. boom", "labels": ["bug", "p1"], "assignee": "octocat", "milestone": 3},
     {"repo": "a/b", "title": "x"},
     {"repo": "org.name/repo_1", "title": "Docs", "labels": [], "assignee": None, "milestone": None}],
    [("repo", "acme widgets"), ("labels.0", ""), ("assignee", "a" * 40), ("milestone", 0), ("title", DEL), ("labels", "bug"), ("state", "open")])

add("fn_transfer_money", obj({
    "from_account": {"type": "string", "pattern": "^[0-9]{8,12}$"}, "to_account": {"type": "string", "pattern": "^[0-9]{8,12}$"},
    "amount_cents": irange(1, 100000000), "currency": enum("USD", "EUR", "JMD", "GBP"), "memo": bstr(0, 140),
    "scheduled_for": fmt("date")}, ["from_account", "to_account", "amount_cents", "currency"]),
    [{"from_account": "12345678", "to_account": "987654321012", "amount_cents": 2500, "currency": "JMD", "memo": "rent"},
     {"from_account": "00000001", "to_account": "00000002", "amount_cents": 1, "currency": "USD"},
     {"from_account": "11112222", "to_account": "33334444", "amount_cents": 100000000, "currency": "EUR", "scheduled_for": "2026-12-31"}],
    [("amount_cents", 0), ("amount_cents", 100000001), ("currency", "usd"), ("to_account", "1234567"), ("memo", "m" * 141), ("scheduled_for", "2026-12-32"), ("fee", 0)])

add("fn_get_stock_quote", obj({
    "symbol": {"type": "string", "pattern": "^[A-Z]{1,5}$"}, "exchange": enum("NYSE", "NASDAQ", "LSE", "JSE"),
    "interval": enum("1m", "5m", "1h", "1d")}, ["symbol"]),
    [{"symbol": "AAPL", "exchange": "NASDAQ", "interval": "1d"}, {"symbol": "T"}, {"symbol": "BRKB", "interval": "5m"}],
    [("symbol", "GOOGLE"), ("symbol", "aapl"), ("interval", "2m"), ("symbol", DEL), ("exchange", None), ("limit", 5)])

add("fn_resize_image", obj({
    "url": fmt("uri"), "width": irange(1, 8192), "height": irange(1, 8192), "format": enum("png", "jpeg", "webp"),
    "quality": irange(1, 100), "keep_aspect": B}, ["url", "width", "height"]),
    [{"url": "https://cdn.example.com/img/cat.png", "width": 640, "height": 480, "format": "webp", "quality": 80},
     {"url": "http://x.io/a.jpg", "width": 1, "height": 8192},
     {"url": "https://example.org/p?id=42&s=large", "width": 1024, "height": 768, "keep_aspect": False}],
    [("width", 8193), ("height", 0), ("quality", 101), ("format", "gif"), ("url", DEL), ("keep_aspect", "true"), ("crop", True)])

add("fn_lookup_user", obj({
    "user_id": fmt("uuid"), "fields": arr(enum("name", "email", "created_at", "plan"), 1, 4), "include_deleted": B},
    ["user_id"]),
    [{"user_id": "123e4567-e89b-12d3-a456-426614174000", "fields": ["name", "email"], "include_deleted": False},
     {"user_id": "00000000-0000-0000-0000-000000000000"},
     {"user_id": "f47ac10b-58cc-4372-a567-0e02b2c3d479", "fields": ["plan", "created_at", "name", "email"]}],
    [("user_id", "123e4567-e89b-12d3-a456-42661417400"), ("user_id", "123e4567e89b12d3a456426614174000"), ("fields", []), ("fields.0", "phone"), ("user_id", DEL), ("verbose", True)])

# ---------------------------------------------------------------- enums, formats, scalars
add("enum_http_method", enum("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"),
    ["GET", "PATCH", "OPTIONS"], [("=", "get"), ("=", "TRACE"), ("=", "GET "), ("=", None)])

add("enum_mixed", {"enum": ["auto", "none", 0, 1.5, True, None, "required"]},
    ["auto", 0, None, True, 1.5], [("=", "Auto"), ("=", 1), ("=", False), ("=", "null"), ("=", [])])

add("format_date", fmt("date"), ["2026-11-23", "2024-02-29", "1999-12-31"],
    [("=", "2026-11-31"), ("=", "2023-02-29"), ("=", "2026-1-05"), ("=", "2026/11/23"), ("=", "20261123")])

add("format_datetime", fmt("date-time"), ["2026-11-23T02:00:00Z", "2026-11-23T02:00:00.123+05:30", "2024-02-29T23:59:59-08:00"],
    [("=", "2026-11-23T25:00:00Z"), ("=", "2026-11-23T02:00:00"), ("=", "2026-11-23 02:00:00Z"), ("=", "2026-11-23T02:60:00Z"), ("=", "2026-02-30T00:00:00Z")])

add("format_uuid", fmt("uuid"), ["123e4567-e89b-12d3-a456-426614174000", "f47ac10b-58cc-4372-a567-0e02b2c3d479", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"],
    [("=", "123e4567-e89b-12d3-a456-42661417400g"), ("=", "123e4567-e89b-12d3-a456"), ("=", "{123e4567-e89b-12d3-a456-426614174000}"), ("=", "123e4567-e89b-12d3-a456-4266141740000")])

add("format_email", fmt("email"), ["ana@example.com", "first.last+tag@sub.example.co.uk", "x_y@z.io"],
    [("=", "ana@"), ("=", "@example.com"), ("=", "ana example@x.com"), ("=", "ana@@example.com")])

add("format_ipv4", fmt("ipv4"), ["192.168.0.1", "0.0.0.0", "255.255.255.255"],
    [("=", "256.1.1.1"), ("=", "192.168.0"), ("=", "192.168.0.1.5"), ("=", "192.168.00.1"), ("=", "1.2.3.-4")])

add("int_port", irange(1, 65535), [1, 8080, 65535], [("=", 0), ("=", 65536), ("=", 80.5), ("=", "80"), ("=", -1)])

add("int_exclusive", {"type": "integer", "exclusiveMinimum": -10, "exclusiveMaximum": 10}, [-9, 0, 9],
    [("=", -10), ("=", 10), ("=", 100), ("=", -11)])

add("string_bounded", bstr(3, 8), ["abc", "abcdefgh", "naïve"], [("=", "ab"), ("=", "abcdefghi"), ("=", ""), ("=", 12345)])

add("string_pattern_sku", {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{4}(-[a-z]+)?$"}, ["AB-1234", "ZZ-0000-red", "QX-9876-navyblue"],
    [("=", "ab-1234"), ("=", "AB-123"), ("=", "AB-1234-"), ("=", "AB-1234-Red")])

add("nullable_scalars", obj({"name": nullable("string", maxLength=20), "age": nullable("integer", minimum=0, maximum=150),
                             "score": nullable("number"), "active": nullable("boolean")}),
    [{"name": "Ada", "age": 36, "score": 9.5, "active": True}, {"name": None, "age": None, "score": None, "active": None},
     {"name": "", "age": 0, "score": -1e3, "active": False}],
    [("age", 151), ("name", "n" * 21), ("active", "null"), ("score", DEL), ("age", 1.5), ("extra", None)])

add("const_version", obj({"version": {"const": "2.0"}, "payload": obj({"id": I}, extra=False)}),
    [{"version": "2.0", "payload": {"id": 1}}, {"version": "2.0", "payload": {"id": -5}}, {"version": "2.0", "payload": {"id": 0}}],
    [("version", "2.1"), ("version", 2.0), ("payload.id", "1"), ("payload", {}), ("payload.x", 1)])

add("number_ranges", obj({"lat": {"type": "number", "minimum": -90, "maximum": 90}, "lon": {"type": "number", "minimum": -180, "maximum": 180},
                          "accuracy_m": {"type": "number", "exclusiveMinimum": 0}}, ["lat", "lon"]),
    [{"lat": 17.97, "lon": -76.79, "accuracy_m": 12.5}, {"lat": -90, "lon": 180}, {"lat": 0, "lon": 0, "accuracy_m": 0.001}],
    [("lat", 90.5), ("lon", -181), ("accuracy_m", 0), ("lat", DEL), ("lat", "17.9"), ("alt", 3)])

# ---------------------------------------------------------------- arrays of objects
add("array_line_items", obj({"order_id": fmt("uuid"), "items": arr(obj({"sku": bstr(1, 20), "qty": irange(1, 99), "price": {"type": "number", "minimum": 0}}), 1, 20),
                             "currency": enum("USD", "EUR")}),
    [{"order_id": "f47ac10b-58cc-4372-a567-0e02b2c3d479", "items": [{"sku": "A1", "qty": 2, "price": 9.99}], "currency": "USD"},
     {"order_id": "123e4567-e89b-12d3-a456-426614174000", "items": [{"sku": "X", "qty": 1, "price": 0}, {"sku": "Y", "qty": 99, "price": 1e2}], "currency": "EUR"},
     {"order_id": "00000000-0000-0000-0000-000000000001", "items": [{"sku": "abc-def-ghi", "qty": 5, "price": 3}] * 3, "currency": "USD"}],
    [("items", []), ("items.0.qty", 100), ("items.0.sku", DEL), ("items.0.color", "red"), ("items.0.price", "9.99"), ("currency", "JPY")])

add("array_tuple_point", {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}, enum("m", "ft")], "items": False, "minItems": 2},
    [[1.5, 2.5], [0, 0, "m"], [-3, 4e2, "ft"]], [("=", [1]), ("=", [1, 2, "km"]), ("=", [1, 2, "m", 4]), ("=", ["1", 2])])

add("array_unique_tags", arr(bstr(1, 15), 0, 5), [[], ["a"], ["alpha", "beta", "gamma", "delta", "epsilon"]],
    [("=", ["a", "b", "c", "d", "e", "f"]), ("=", [""]), ("=", ["this-tag-is-too-long"]), ("=", [1])])

add("array_matrix", arr(arr(irange(-9, 9), 3, 3), 1, 3), [[[1, 2, 3]], [[0, 0, 0], [-9, 9, 1]], [[1, 0, 0], [0, 1, 0], [0, 0, 1]]],
    [("=", [[1, 2]]), ("=", [[1, 2, 10]]), ("=", []), ("=", [[1, 2, 3], [4, 5, 6], [7, 8, 9], [1, 1, 1]]), ("=", [[1, 2, "3"]])])

add("search_results", obj({"query": S, "total": irange(0, 1000000), "results": arr(obj({
    "title": bstr(1, 200), "url": fmt("uri"), "snippet": {"type": "string", "maxLength": 300}, "score": {"type": "number", "minimum": 0, "maximum": 1},
    "published": nullable("string", format="date")}, ["title", "url", "score"]), 0, 10)}),
    [{"query": "jsonschema", "total": 2, "results": [{"title": "JSON Schema", "url": "https://json-schema.org/", "snippet": "The home", "score": 0.98, "published": "2020-12-08"},
                                                     {"title": "Draft 2020-12", "url": "https://json-schema.org/draft/2020-12", "score": 0.5}]},
     {"query": "", "total": 0, "results": []},
     {"query": "q", "total": 1, "results": [{"title": "t", "url": "http://a.b/c", "score": 1, "published": None}]}],
    [("results.0.score", 1.5), ("results.0.published", "2020-12-32"), ("results.1.url", DEL), ("results.0.rank", 1), ("total", -1), ("results.0.title", "")])

add("chat_messages", obj({"model": bstr(1, 64), "messages": arr({"oneOf": [
    obj({"role": {"const": "system"}, "content": S}), obj({"role": {"const": "user"}, "content": S, "name": bstr(1, 64)}, ["role", "content"]),
    obj({"role": {"const": "assistant"}, "content": nullable("string")})]}, 1, 50), "temperature": {"type": "number", "minimum": 0, "maximum": 2},
    "max_tokens": irange(1, 4096)}, ["model", "messages"]),
    [{"model": "smol", "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi", "name": "ana"}], "temperature": 0.7},
     {"model": "m", "messages": [{"role": "user", "content": ""}]},
     {"model": "llama-3", "messages": [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": None}], "max_tokens": 4096}],
    [("messages.0.role", "tool"), ("messages", []), ("temperature", 2.5), ("messages.1.name", ""), ("messages.0.extra", 1), ("model", DEL), ("max_tokens", 0)])

# ---------------------------------------------------------------- $defs / $ref
ADDRESS = obj({"street": bstr(1, 100), "city": bstr(1, 60), "postal_code": {"type": "string", "pattern": "^[0-9A-Z -]{3,10}$"},
               "country": {"type": "string", "pattern": "^[A-Z]{2}$"}}, ["street", "city", "country"])
add("ref_customer", {"$defs": {"address": ADDRESS}, **obj({"id": fmt("uuid"), "name": bstr(1, 100), "email": fmt("email"),
    "billing": {"$ref": "#/$defs/address"}, "shipping": {"anyOf": [{"$ref": "#/$defs/address"}, {"type": "null"}]}}, ["id", "name", "billing"])},
    [{"id": "123e4567-e89b-12d3-a456-426614174000", "name": "Ada", "email": "ada@example.com", "billing": {"street": "1 Main St", "city": "Kingston", "country": "JM"}, "shipping": None},
     {"id": "f47ac10b-58cc-4372-a567-0e02b2c3d479", "name": "Bo", "billing": {"street": "Storgata 1", "city": "Oslo", "postal_code": "0155", "country": "NO"}},
     {"id": "00000000-0000-0000-0000-00000000000a", "name": "Cy", "billing": {"street": "x", "city": "y", "country": "US"}, "shipping": {"street": "z", "city": "w", "postal_code": "SW1A 1AA", "country": "GB"}}],
    [("billing.country", "JAM"), ("billing.city", DEL), ("shipping", {"street": "a", "city": "b", "country": "us"}), ("billing.zip", "1"), ("email", "ada@"), ("id", "not-a-uuid")])

add("ref_money", {"$defs": {"money": obj({"amount": {"type": "number", "minimum": 0}, "currency": {"type": "string", "pattern": "^[A-Z]{3}$"}})},
                  **obj({"subtotal": {"$ref": "#/$defs/money"}, "tax": {"$ref": "#/$defs/money"}, "total": {"$ref": "#/$defs/money"}}, ["subtotal", "total"])},
    [{"subtotal": {"amount": 10, "currency": "USD"}, "tax": {"amount": 1.5, "currency": "USD"}, "total": {"amount": 11.5, "currency": "USD"}},
     {"subtotal": {"amount": 0, "currency": "JMD"}, "total": {"amount": 0, "currency": "JMD"}},
     {"subtotal": {"amount": 99.99, "currency": "EUR"}, "total": {"amount": 119.99, "currency": "EUR"}}],
    [("tax.amount", -1), ("total.currency", "usd"), ("subtotal.amount", DEL), ("total.fx", 1), ("total", DEL), ("tax", None)])

add("ref_tree_depth2", {"$defs": {"node": obj({"name": bstr(1, 20), "children": arr({"$ref": "#/$defs/node"}, 0, 3)}, ["name"])}, "$ref": "#/$defs/node"},
    [{"name": "root"}, {"name": "root", "children": [{"name": "a"}, {"name": "b", "children": []}]}, {"name": "r", "children": [{"name": "a", "children": [{"name": "x"}]}]}],
    [("name", ""), ("children", [{"name": "a"}] * 4), ("children", [{"title": "a"}]), ("name", DEL), ("=", {"name": "r", "children": [{"name": "a", "children": [{"name": 1}]}]})])

add("ref_enum_defs", {"$defs": {"status": enum("active", "suspended", "deleted"), "role": enum("admin", "editor", "viewer")},
                      **obj({"status": {"$ref": "#/$defs/status"}, "roles": arr({"$ref": "#/$defs/role"}, 1, 3)})},
    [{"status": "active", "roles": ["admin"]}, {"status": "deleted", "roles": ["viewer", "editor"]}, {"status": "suspended", "roles": ["viewer", "viewer", "viewer"]}],
    [("status", "banned"), ("roles", []), ("roles.0", "owner"), ("roles", ["admin", "admin", "admin", "admin"]), ("status", DEL)])

# ---------------------------------------------------------------- Kubernetes-style nested configs
CONTAINER = obj({
    "name": {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "maxLength": 63}, "image": bstr(1, 200),
    "imagePullPolicy": enum("Always", "IfNotPresent", "Never"),
    "ports": arr(obj({"containerPort": irange(1, 65535), "protocol": enum("TCP", "UDP", "SCTP"), "name": bstr(1, 15)}, ["containerPort"]), 0, 8),
    "env": arr(obj({"name": bstr(1, 100), "value": S}, ["name"]), 0, 16),
    "resources": obj({"limits": obj({"cpu": {"type": "string", "pattern": "^[0-9]+m?$"}, "memory": {"type": "string", "pattern": "^[0-9]+(Ki|Mi|Gi)?$"}}, []),
                      "requests": obj({"cpu": {"type": "string", "pattern": "^[0-9]+m?$"}, "memory": {"type": "string", "pattern": "^[0-9]+(Ki|Mi|Gi)?$"}}, [])}, [])},
    ["name", "image"])
META = obj({"name": {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "maxLength": 63},
            "namespace": {"type": "string", "pattern": "^[a-z0-9-]{1,63}$"}, "labels": {"type": "object", "additionalProperties": bstr(0, 63)}}, ["name"])
C0 = {"name": "web", "image": "nginx:1.27", "imagePullPolicy": "IfNotPresent", "ports": [{"containerPort": 80, "protocol": "TCP", "name": "http"}],
      "env": [{"name": "MODE", "value": "prod"}], "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "64Mi"}}}

add("k8s_pod", {"$defs": {"container": CONTAINER, "meta": META}, **obj({"apiVersion": {"const": "v1"}, "kind": {"const": "Pod"},
    "metadata": {"$ref": "#/$defs/meta"}, "spec": obj({"containers": arr({"$ref": "#/$defs/container"}, 1, 4),
    "restartPolicy": enum("Always", "OnFailure", "Never"), "nodeSelector": {"type": "object", "additionalProperties": S}}, ["containers"])})},
    [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "default", "labels": {"app": "web"}}, "spec": {"containers": [C0], "restartPolicy": "Always"}},
     {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}},
     {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "job-7"}, "spec": {"containers": [{"name": "main", "image": "python:3.12", "env": [{"name": "X"}]}], "restartPolicy": "Never", "nodeSelector": {"disk": "ssd"}}}],
    [("kind", "Deployment"), ("metadata.name", "Web_0"), ("spec.containers.0.ports.0.containerPort", 70000), ("spec.containers.0.imagePullPolicy", "always"),
     ("spec.containers.0.resources.limits.memory", "256MB"), ("spec.containers.0.image", DEL), ("spec.containers.0.command", ["sh"]), ("spec.restartPolicy", "Sometimes")])

add("k8s_deployment", {"$defs": {"container": CONTAINER, "meta": META}, **obj({"apiVersion": {"const": "apps/v1"}, "kind": {"const": "Deployment"},
    "metadata": {"$ref": "#/$defs/meta"}, "spec": obj({"replicas": irange(0, 100), "selector": obj({"matchLabels": {"type": "object", "additionalProperties": S}}),
    "strategy": obj({"type": enum("RollingUpdate", "Recreate"), "rollingUpdate": obj({"maxSurge": {"anyOf": [irange(0, 100), {"type": "string", "pattern": "^[0-9]{1,3}%$"}]},
                                                                                       "maxUnavailable": {"anyOf": [irange(0, 100), {"type": "string", "pattern": "^[0-9]{1,3}%$"}]}}, [])}, ["type"]),
    "template": obj({"metadata": {"$ref": "#/$defs/meta"}, "spec": obj({"containers": arr({"$ref": "#/$defs/container"}, 1, 4)})})}, ["selector", "template"])})},
    [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"app": "web"}}, "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
      "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}}, "template": {"metadata": {"name": "web"}, "spec": {"containers": [C0]}}}},
     {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w"}, "spec": {"selector": {"matchLabels": {}}, "template": {"metadata": {"name": "w"}, "spec": {"containers": [{"name": "w", "image": "w"}]}}}},
     {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api", "namespace": "prod"}, "spec": {"replicas": 0, "selector": {"matchLabels": {"tier": "api"}},
      "strategy": {"type": "Recreate"}, "template": {"metadata": {"name": "api"}, "spec": {"containers": [{"name": "api", "image": "api:2", "ports": [{"containerPort": 8443}]}]}}}}],
    [("spec.replicas", 101), ("spec.strategy.type", "BlueGreen"), ("spec.strategy.rollingUpdate.maxSurge", "25"), ("spec.template.spec.containers", []),
     ("apiVersion", "v1"), ("spec.selector", DEL), ("spec.template.spec.containers.0.name", "-web"), ("spec.paused", True)])

add("k8s_service", obj({"apiVersion": {"const": "v1"}, "kind": {"const": "Service"}, "metadata": META, "spec": obj({
    "type": enum("ClusterIP", "NodePort", "LoadBalancer"), "selector": {"type": "object", "additionalProperties": S},
    "ports": arr(obj({"port": irange(1, 65535), "targetPort": {"anyOf": [irange(1, 65535), bstr(1, 15)]}, "nodePort": irange(30000, 32767),
                      "protocol": enum("TCP", "UDP")}, ["port"]), 1, 10), "clusterIP": nullable("string", format="ipv4")}, ["ports"])}),
    [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": {"type": "NodePort", "selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": "http", "nodePort": 30080, "protocol": "TCP"}]}},
     {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "db", "namespace": "data"}, "spec": {"ports": [{"port": 5432, "targetPort": 5432}], "clusterIP": "10.0.0.12"}},
     {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x"}, "spec": {"type": "ClusterIP", "ports": [{"port": 1}, {"port": 2}], "clusterIP": None}}],
    [("spec.ports.0.nodePort", 29999), ("spec.type", "ExternalName"), ("spec.clusterIP", "10.0.0.256"), ("spec.ports", []), ("spec.ports.0.targetPort", 0), ("metadata.name", DEL), ("spec.ports.0.appProtocol", "http")])

add("k8s_configmap", obj({"apiVersion": {"const": "v1"}, "kind": {"const": "ConfigMap"}, "metadata": META,
    "data": {"type": "object", "additionalProperties": S}, "immutable": B}, ["apiVersion", "kind", "metadata"]),
    [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"LOG_LEVEL": "debug", "config.yaml": "a: 1\nb: [2, 3]\n"}},
     {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "empty"}, "data": {}, "immutable": True},
     {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m", "labels": {"team": "core", "tier": ""}}}],
    [("data", {"PORT": 8080}), ("kind", "Secret"), ("immutable", "yes"), ("metadata.name", "cfg."), ("metadata.labels", {"k": "v" * 64}), ("binaryData", {})])

add("k8s_hpa", obj({"apiVersion": {"const": "autoscaling/v2"}, "kind": {"const": "HorizontalPodAutoscaler"}, "metadata": META, "spec": obj({
    "scaleTargetRef": obj({"apiVersion": S, "kind": enum("Deployment", "StatefulSet"), "name": bstr(1, 63)}),
    "minReplicas": irange(1, 100), "maxReplicas": irange(1, 1000),
    "metrics": arr(obj({"type": enum("Resource", "Pods"), "resource": obj({"name": enum("cpu", "memory"), "target": obj({
        "type": enum("Utilization", "AverageValue"), "averageUtilization": irange(1, 100)}, ["type"])})}, ["type"]), 0, 5)}, ["scaleTargetRef", "maxReplicas"])}),
    [{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"}, "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
      "minReplicas": 2, "maxReplicas": 10, "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}]}},
     {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "a"}, "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db"}, "maxReplicas": 1}},
     {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "b"}, "spec": {"scaleTargetRef": {"apiVersion": "v1", "kind": "Deployment", "name": "b"}, "maxReplicas": 1000, "metrics": []}}],
    [("spec.minReplicas", 0), ("spec.maxReplicas", 1001), ("spec.metrics.0.resource.target.averageUtilization", 101), ("spec.scaleTargetRef.kind", "Pod"),
     ("spec.metrics.0.resource.name", "gpu"), ("spec.scaleTargetRef", DEL), ("spec.behavior", {})])

add("k8s_ingress", obj({"apiVersion": {"const": "networking.k8s.io/v1"}, "kind": {"const": "Ingress"}, "metadata": META, "spec": obj({
    "ingressClassName": bstr(1, 63), "tls": arr(obj({"hosts": arr(fmt("hostname"), 1, 5), "secretName": bstr(1, 63)}), 0, 3),
    "rules": arr(obj({"host": fmt("hostname"), "http": obj({"paths": arr(obj({"path": {"type": "string", "pattern": "^/"}, "pathType": enum("Prefix", "Exact", "ImplementationSpecific"),
        "backend": obj({"service": obj({"name": bstr(1, 63), "port": obj({"number": irange(1, 65535)})})})}), 1, 10)})}, ["http"]), 1, 10)}, ["rules"])}),
    [{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "web"}, "spec": {"ingressClassName": "nginx", "tls": [{"hosts": ["example.com"], "secretName": "tls"}],
      "rules": [{"host": "example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}},
     {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i"}, "spec": {"rules": [{"http": {"paths": [{"path": "/api", "pathType": "Exact", "backend": {"service": {"name": "api", "port": {"number": 8080}}}}]}}]}},
     {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "j"}, "spec": {"rules": [{"host": "a.b.example.org", "http": {"paths": [
         {"path": "/x", "pathType": "ImplementationSpecific", "backend": {"service": {"name": "x", "port": {"number": 1}}}},
         {"path": "/y/z", "pathType": "Prefix", "backend": {"service": {"name": "y", "port": {"number": 65535}}}}]}}]}}],
    [("spec.rules.0.http.paths.0.path", "api"), ("spec.rules.0.http.paths.0.pathType", "prefix"), ("spec.rules.0.http.paths.0.backend.service.port.number", 65536),
     ("spec.rules", []), ("spec.rules.0.host", "exa mple.com"), ("spec.tls.0.hosts", []), ("spec.rules.0.http.paths.0.backend.service.port.name", "http")])

# ---------------------------------------------------------------- misc API payloads
add("webhook_event", obj({"id": fmt("uuid"), "type": enum("invoice.paid", "invoice.failed", "customer.created", "customer.deleted"),
    "created": fmt("date-time"), "livemode": B, "data": obj({"object_id": {"type": "string", "pattern": "^(in|cus)_[A-Za-z0-9]{8,24}$"},
    "amount": nullable("integer", minimum=0), "attempt": irange(1, 5)}, ["object_id"])}),
    [{"id": "123e4567-e89b-12d3-a456-426614174000", "type": "invoice.paid", "created": "2026-11-22T18:01:02Z", "livemode": True, "data": {"object_id": "in_1A2b3C4d", "amount": 1999, "attempt": 1}},
     {"id": "f47ac10b-58cc-4372-a567-0e02b2c3d479", "type": "customer.created", "created": "2026-01-01T00:00:00+00:00", "livemode": False, "data": {"object_id": "cus_abcdefgh"}},
     {"id": "00000000-0000-0000-0000-0000000000ff", "type": "invoice.failed", "created": "2026-06-30T12:00:00.999Z", "livemode": False, "data": {"object_id": "in_ZZZZZZZZZZ", "amount": None, "attempt": 5}}],
    [("type", "invoice.refunded"), ("data.object_id", "ch_1A2b3C4d"), ("data.attempt", 6), ("created", "2026-11-22"), ("livemode", DEL), ("data.amount", -1), ("data.currency", "usd")])

add("user_profile", obj({"username": {"type": "string", "pattern": "^[a-z][a-z0-9_]{2,15}$"}, "display_name": bstr(1, 50), "email": fmt("email"),
    "birthdate": fmt("date"), "age": irange(13, 120), "bio": {"type": "string", "maxLength": 160}, "website": nullable("string", format="uri"),
    "languages": arr(enum("en", "es", "fr", "de", "pt", "ja"), 0, 6), "newsletter": B}, ["username", "email"]),
    [{"username": "ada_l", "display_name": "Ada L.", "email": "ada@example.com", "birthdate": "1990-12-10", "age": 35, "bio": "Math & engines.", "website": None, "languages": ["en", "fr"], "newsletter": True},
     {"username": "bob", "email": "b@b.io"},
     {"username": "z0_123456789abcd", "email": "z@example.net", "age": 120, "website": "https://z.example", "languages": []}],
    [("username", "Ada"), ("username", "ab"), ("age", 12), ("languages.0", "it"), ("birthdate", "10/12/1990"), ("email", DEL), ("bio", "b" * 161), ("followers", 0)])

add("log_entry", obj({"ts": fmt("date-time"), "level": enum("DEBUG", "INFO", "WARN", "ERROR", "FATAL"), "service": bstr(1, 40), "msg": S,
    "host": fmt("ipv4"), "trace_id": {"type": "string", "pattern": "^[0-9a-f]{32}$"}, "latency_ms": {"type": "number", "minimum": 0}}, ["ts", "level", "msg"]),
    [{"ts": "2026-11-23T01:59:59.123Z", "level": "ERROR", "service": "api", "msg": "upstream timeout", "host": "10.1.2.3", "trace_id": "0af7651916cd43dd8448eb211c80319c", "latency_ms": 30001.5},
     {"ts": "2026-11-23T00:00:00Z", "level": "INFO", "msg": ""},
     {"ts": "2026-11-23T00:00:00-05:00", "level": "DEBUG", "msg": "k=v \"quoted\" \\ back", "latency_ms": 0}],
    [("level", "WARNING"), ("host", "10.1.2"), ("trace_id", "0AF7651916CD43DD8448EB211C80319C"), ("ts", "yesterday"), ("msg", DEL), ("latency_ms", -0.5), ("pid", 1)])

add("product_catalog_item", obj({"sku": {"type": "string", "pattern": "^[A-Z0-9]{8}$"}, "name": bstr(1, 120), "price": obj({"amount": {"type": "number", "exclusiveMinimum": 0}, "currency": enum("USD", "EUR")}),
    "dimensions": obj({"w": N, "h": N, "d": N, "unit": enum("cm", "in")}), "tags": arr(bstr(1, 20), 0, 8), "variants": arr(obj({"color": enum("red", "green", "blue", "black"), "size": enum("S", "M", "L", "XL"), "stock": irange(0, 10000)}), 0, 12),
    "discontinued": B}, ["sku", "name", "price"]),
    [{"sku": "AB12CD34", "name": "Tee", "price": {"amount": 19.99, "currency": "USD"}, "dimensions": {"w": 30, "h": 40, "d": 1, "unit": "cm"}, "tags": ["cotton"], "variants": [{"color": "red", "size": "M", "stock": 5}], "discontinued": False},
     {"sku": "00000000", "name": "Gift card", "price": {"amount": 0.01, "currency": "EUR"}},
     {"sku": "ZZZZ9999", "name": "Hoodie", "price": {"amount": 55, "currency": "USD"}, "variants": [{"color": "black", "size": "XL", "stock": 10000}, {"color": "blue", "size": "S", "stock": 0}]}],
    [("price.amount", 0), ("sku", "AB12CD3"), ("variants.0.size", "XXL"), ("variants.0.stock", 10001), ("dimensions.unit", "mm"), ("price.currency", DEL), ("tags", ["t"] * 9)])

add("feature_flags", obj({"flags": arr(obj({"key": {"type": "string", "pattern": "^[a-z][a-z0-9_.]{1,40}$"}, "enabled": B, "rollout_pct": irange(0, 100),
    "variants": arr(enum("control", "treatment_a", "treatment_b"), 1, 3), "expires": nullable("string", format="date")}, ["key", "enabled"]), 1, 30)}),
    [{"flags": [{"key": "new_checkout", "enabled": True, "rollout_pct": 25, "variants": ["control", "treatment_a"], "expires": "2027-01-01"}]},
     {"flags": [{"key": "a1", "enabled": False}]},
     {"flags": [{"key": "ui.dark_mode", "enabled": True, "rollout_pct": 100}, {"key": "beta.search", "enabled": False, "expires": None}]}],
    [("flags.0.rollout_pct", 101), ("flags.0.key", "NewCheckout"), ("flags.0.variants.0", "treatment_c"), ("flags", []), ("flags.0.expires", "2027-02-29"), ("flags.0.enabled", DEL), ("flags.0.owner", "me")])

add("geojson_point", obj({"type": {"const": "Feature"}, "geometry": obj({"type": {"const": "Point"}, "coordinates": {"type": "array", "prefixItems": [
    {"type": "number", "minimum": -180, "maximum": 180}, {"type": "number", "minimum": -90, "maximum": 90}], "items": False, "minItems": 2}}),
    "properties": obj({"name": S, "population": nullable("integer", minimum=0)}, ["name"])}),
    [{"type": "Feature", "geometry": {"type": "Point", "coordinates": [-76.79, 17.99]}, "properties": {"name": "Kingston", "population": 662426}},
     {"type": "Feature", "geometry": {"type": "Point", "coordinates": [0, 0]}, "properties": {"name": "Null Island"}},
     {"type": "Feature", "geometry": {"type": "Point", "coordinates": [180, -90]}, "properties": {"name": "", "population": None}}],
    [("geometry.coordinates", [-76.79]), ("geometry.coordinates", [200, 10]), ("geometry.coordinates", [1, 2, 3]), ("geometry.type", "LineString"), ("properties.population", -1), ("properties.name", DEL), ("id", 1)])

add("payment_method", {"oneOf": [
    obj({"kind": {"const": "card"}, "last4": {"type": "string", "pattern": "^[0-9]{4}$"}, "exp_month": irange(1, 12), "exp_year": irange(2025, 2040), "brand": enum("visa", "mastercard", "amex")}),
    obj({"kind": {"const": "bank"}, "iban": {"type": "string", "pattern": "^[A-Z]{2}[0-9]{2}[A-Z0-9]{10,30}$"}, "holder": bstr(1, 70)}),
    obj({"kind": {"const": "wallet"}, "provider": enum("paypal", "applepay", "googlepay"), "email": fmt("email")}, ["kind", "provider"])]},
    [{"kind": "card", "last4": "4242", "exp_month": 12, "exp_year": 2030, "brand": "visa"}, {"kind": "bank", "iban": "NO9386011117947", "holder": "Ola N."},
     {"kind": "wallet", "provider": "paypal", "email": "p@example.com"}, {"kind": "wallet", "provider": "applepay"}],
    [("exp_month", 13), ("last4", "424"), ("brand", "discover"), ("exp_year", 2024), ("=", {"kind": "bank", "iban": "no9386011117947", "holder": "x"}),
     ("=", {"kind": "wallet", "provider": "venmo"}), ("=", {"kind": "crypto"}), ("cvc", "123")])

add("survey_response", obj({"respondent": fmt("uuid"), "submitted": fmt("date-time"), "answers": arr({"anyOf": [
    obj({"q": irange(1, 50), "choice": enum("A", "B", "C", "D")}), obj({"q": irange(1, 50), "rating": irange(1, 5)}), obj({"q": irange(1, 50), "text": bstr(1, 500)})]}, 1, 50),
    "consent": {"const": True}}),
    [{"respondent": "123e4567-e89b-12d3-a456-426614174000", "submitted": "2026-11-22T10:00:00Z", "answers": [{"q": 1, "choice": "B"}, {"q": 2, "rating": 5}, {"q": 3, "text": "Great!"}], "consent": True},
     {"respondent": "f47ac10b-58cc-4372-a567-0e02b2c3d479", "submitted": "2026-11-22T10:00:00+02:00", "answers": [{"q": 50, "rating": 1}], "consent": True},
     {"respondent": "00000000-0000-0000-0000-000000000000", "submitted": "2026-11-22T23:59:59Z", "answers": [{"q": 7, "text": "x"}], "consent": True}],
    [("answers.0.choice", "E"), ("answers.1.rating", 6), ("answers.0.q", 51), ("consent", False), ("answers", []), ("answers.2.text", ""), ("answers.0.note", "n")])

add("retry_policy", obj({"max_attempts": irange(1, 10), "backoff": enum("fixed", "linear", "exponential"), "initial_delay_ms": irange(0, 60000),
    "max_delay_ms": irange(0, 600000), "retry_on": arr(irange(400, 599), 0, 10), "jitter": B}, ["max_attempts", "backoff"]),
    [{"max_attempts": 3, "backoff": "exponential", "initial_delay_ms": 100, "max_delay_ms": 10000, "retry_on": [429, 503], "jitter": True},
     {"max_attempts": 1, "backoff": "fixed"}, {"max_attempts": 10, "backoff": "linear", "retry_on": [500, 502, 599]}],
    [("max_attempts", 11), ("backoff", "exp"), ("retry_on.0", 399), ("initial_delay_ms", 60001), ("backoff", DEL), ("jitter", 0.5), ("circuit", True)])

add("openapi_param", obj({"name": bstr(1, 64), "in": enum("query", "header", "path", "cookie"), "required": B, "deprecated": B,
    "schema": obj({"type": enum("string", "integer", "number", "boolean", "array"), "format": enum("int32", "int64", "float", "double", "date", "date-time", "uuid"),
                   "default": {"type": ["string", "integer", "number", "boolean", "null"]}}, ["type"])}, ["name", "in", "schema"]),
    [{"name": "limit", "in": "query", "required": False, "schema": {"type": "integer", "format": "int32", "default": 20}},
     {"name": "X-Request-Id", "in": "header", "schema": {"type": "string", "format": "uuid"}},
     {"name": "id", "in": "path", "required": True, "deprecated": False, "schema": {"type": "string", "default": None}}],
    [("in", "body"), ("schema.type", "object"), ("schema.format", "int16"), ("schema.default", [1]), ("schema", DEL), ("name", ""), ("style", "form")])

add("invoice", {"$defs": {"line": obj({"description": bstr(1, 200), "quantity": irange(1, 1000), "unit_price": {"type": "number", "minimum": 0},
    "tax_rate": enum(0, 0.05, 0.15, 0.2)})}, **obj({"number": {"type": "string", "pattern": "^INV-[0-9]{6}$"}, "issued": fmt("date"), "due": fmt("date"),
    "customer": obj({"name": bstr(1, 100), "email": fmt("email"), "vat_id": nullable("string", pattern="^[A-Z]{2}[0-9A-Z]{2,12}$")}, ["name"]),
    "lines": arr({"$ref": "#/$defs/line"}, 1, 100), "status": enum("draft", "sent", "paid", "void"), "notes": nullable("string", maxLength=500)},
    ["number", "issued", "customer", "lines", "status"])},
    [{"number": "INV-000123", "issued": "2026-11-01", "due": "2026-12-01", "customer": {"name": "Acme", "email": "ap@acme.test", "vat_id": "GB123456789"},
      "lines": [{"description": "Consulting", "quantity": 10, "unit_price": 150, "tax_rate": 0.2}], "status": "sent", "notes": None},
     {"number": "INV-999999", "issued": "2026-02-28", "customer": {"name": "B"}, "lines": [{"description": "x", "quantity": 1, "unit_price": 0, "tax_rate": 0}], "status": "draft"},
     {"number": "INV-000001", "issued": "2024-02-29", "due": "2024-03-30", "customer": {"name": "C", "vat_id": None}, "lines": [
         {"description": "a", "quantity": 1000, "unit_price": 0.5, "tax_rate": 0.05}, {"description": "b", "quantity": 2, "unit_price": 1, "tax_rate": 0.15}], "status": "paid", "notes": "thanks"}],
    [("number", "INV-12345"), ("due", "2026-11-31"), ("lines.0.tax_rate", 0.1), ("lines.0.quantity", 1001), ("customer.vat_id", "gb123"), ("status", "overdue"), ("lines", []), ("customer.phone", "1")])


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(prog="python -m benchmarks.make_corpus", description=__doc__.splitlines()[0]).parse_args(argv)
    os.makedirs(CORPUS_DIR, exist_ok=True)
    for f in os.listdir(CORPUS_DIR):
        if f.endswith(".json"):
            os.remove(os.path.join(CORPUS_DIR, f))
    for name, case in CORPUS.items():
        with open(os.path.join(CORPUS_DIR, f"{name}.json"), "w", encoding="utf-8") as fh:
            json.dump(case, fh, ensure_ascii=False, indent=1)
            fh.write("\n")
    print(f"wrote {len(CORPUS)} schemas to {CORPUS_DIR}")


if __name__ == "__main__":
    main()
