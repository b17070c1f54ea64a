"""Test helper: run requests through a started server ``Engine`` and collect what each one streamed."""

from __future__ import annotations

import asyncio
from typing import Any, Callable


def drain(submit: Callable[[], list[Any]]) -> list[tuple[str, Any]]:
    """Call ``submit`` inside an event loop (the engine needs one) and, for each request handle
    it returns, collect the concatenated text of its events and its last event."""

    async def run() -> list[tuple[str, Any]]:
        out = []
        for h in submit():
            text, ev = "", None
            async for ev in h:
                text += ev.text
            out.append((text, ev))
        return out

    return asyncio.run(run())
