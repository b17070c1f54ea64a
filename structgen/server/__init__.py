"""The structgen inference server: OpenAI-compatible HTTP API, ``response_format``, continuous batching.

Needs the ``server`` extra (FastAPI, uvicorn). ``structgen serve`` runs it; :func:`create_app`
builds the ASGI app around a loaded model for embedding or tests; :func:`serve` runs it with
uvicorn, draining on ``SIGTERM`` (:mod:`.drain`).
"""

from __future__ import annotations

from .app import ServerConfig, create_app
from .drain import serve

__all__ = ["ServerConfig", "create_app", "serve"]
