"""Health, readiness and metrics over HTTP (aiohttp): ``/healthz``, ``/readyz``, ``/metrics``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from service.metrics import Metrics


def make_app(redis: Any, metrics: Metrics) -> web.Application:
    """The HTTP app: liveness (the process answers), readiness (Redis answers), Prometheus metrics."""
    return add_routes(web.Application(), redis, metrics)


def add_routes(app: web.Application, redis: Any, metrics: Any,
               ready: Callable[[], Awaitable[str | None]] | None = None) -> web.Application:
    """Add ``/healthz``, ``/readyz`` and ``/metrics`` to ``app`` (every role serves the same three);
    ``metrics`` is anything with an ``exposition()`` giving Prometheus' text format.  ``ready`` is a
    role's own readiness check, asked after Redis answered: None when ready, else what is wrong."""

    async def healthz(_: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def readyz(_: web.Request) -> web.Response:
        try:
            await redis.ping()
        except Exception as e:  # any failure to reach Redis means: do not send traffic here
            return web.json_response({"status": "unavailable", "error": str(e)[:200]}, status=503)
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
