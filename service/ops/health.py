"""Health, readiness and metrics over HTTP (aiohttp): ``/healthz``, ``/readyz``, ``/metrics``.

Readiness is a real write: a Redis that answers ``PING`` may still refuse every write (out of
memory under ``maxmemory``, a replica, a full disk with ``stop-writes-on-bgsave-error``), and a role
that cannot write cannot do its work.  Each check sets one small key, ``<prefix>probe:<role>``,
expiring in 10 s, bounded by a timeout, and says the store's own message when it fails.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from service.foundation.logs import error_text
from service.foundation.metrics import Metrics

PROBE_TTL_MS = 10_000
PROBE_TIMEOUT_S = 2.0
"""How long a readiness check waits for its write: a store slower than this is not ready."""


async def write_probe(redis: Any, key: str, timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
    """Write ``key`` (expiring in 10 s): None if Redis took it, else why not (``"Class: message"``)."""
    try:
        await asyncio.wait_for(redis.set(key, f"{time.time():.3f}", px=PROBE_TTL_MS), timeout_s)
    except TimeoutError:
        return f"the store did not take a write within {timeout_s:g} s"
    except Exception as e:  # any failure to write means: do not send traffic here
        return error_text(e, 200)
    return None


def make_app(redis: Any, metrics: Metrics, probe_key: str = "probe:worker") -> web.Application:
    """The HTTP app: liveness (the process answers), readiness (Redis takes a write), Prometheus
    metrics.  ``probe_key``: the key readiness writes (``Keys.probe(role)``)."""
    return add_routes(web.Application(), redis, metrics, probe_key=probe_key)


def add_routes(app: web.Application, redis: Any, metrics: Any,
               ready: Callable[[], Awaitable[str | None]] | None = None, *,
               probe_key: str = "probe:worker") -> web.Application:
    """Add ``/healthz``, ``/readyz`` and ``/metrics`` to ``app`` (every role serves the same three);
    ``metrics`` is anything with an ``exposition()`` giving Prometheus' text format.  ``ready`` is a
    role's own readiness check, asked after Redis took the write of ``probe_key``: None when ready,
    else what is wrong."""

    async def healthz(_: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def readyz(_: web.Request) -> web.Response:
        failed = await write_probe(redis, probe_key)
        if failed is not None:
            return web.json_response({"status": "unavailable", "error": f"store: {failed}"}, status=503)
        problem = await ready() if ready is not None else None
        if problem is not None:
            return web.json_response({"status": "unavailable", "error": problem[:200]}, status=503)
        return web.json_response({"status": "ready"})

    async def metrics_view(_: web.Request) -> web.Response:
        return web.Response(body=metrics.exposition(), content_type="text/plain", charset="utf-8")

    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics_view)
    return app


async def start(app: web.Application, host: str, port: int) -> web.AppRunner:
    """Serve ``app`` in the background; stop it with ``await runner.cleanup()``."""
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    return runner
