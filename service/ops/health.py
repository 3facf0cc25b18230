"""The operations listener: ``/healthz``, ``/readyz`` and ``/metrics`` of a process, on a port of
their own (``CINQ_HTTP_HOST:CINQ_HTTP_PORT``, 127.0.0.1:8080 by default), never on a public one.

Metrics say how much traffic there is and which platforms exist, and readiness costs a Redis write:
neither is for the players, so the public ports (the web table's, the webhook's, Telegram's) serve
``/healthz`` alone (liveness, no I/O: a load balancer may ask it) and answer 404 to the other two.
One listener per process: ``cinq serve`` runs every role in one, and each role adds its part (its
metrics, its own readiness check) to the process's :class:`Ops`; a role run alone serves its own.

Readiness is a real write: a Redis that answers ``PING`` may still refuse every write (out of
memory under ``maxmemory``, a replica, a full disk with ``stop-writes-on-bgsave-error``), and a role
that cannot write cannot do its work.  A check sets one small key, ``<prefix>probe:<role>``,
expiring in 10 s, bounded by a timeout, and says the store's own message when it fails.  Its result
is kept :data:`READY_CACHE_S` and shared by the requests that come while one runs, so that any
number of ``/readyz`` costs Redis at most one write a second.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from aiohttp import web
from prometheus_client import generate_latest
from prometheus_client.metrics_core import Metric

from service.foundation.logs import error_text
from service.foundation.metrics import Metrics

PROBE_TTL_MS = 10_000
PROBE_TIMEOUT_S = 2.0
"""How long a readiness check waits for its write: a store slower than this is not ready."""
READY_CACHE_S = 1.0
"""How long a readiness result is reused: a flood of ``/readyz`` writes at most once per this."""

Ready = Callable[[], Awaitable[str | None]]


async def write_probe(redis: Any, key: str, timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
    """Write ``key`` (expiring in 10 s): None if Redis took it, else why not (``"Class: message"``)."""
    try:
        await asyncio.wait_for(redis.set(key, f"{time.time():.3f}", px=PROBE_TTL_MS), timeout_s)
    except TimeoutError:
        return f"the store did not take a write within {timeout_s:g} s"
    except Exception as e:  # any failure to write means: do not send traffic here
        return error_text(e, 200)
    return None


class _Merged:
    """The metric families of several registries as one (a collector for ``generate_latest``):
    families of one name (the delivery metrics of Telegram and of the webhook under ``cinq serve``,
    told apart by their ``platform`` label) become one family with every sample."""

    def __init__(self, registries: list[Any]) -> None:
        self.registries = registries

    def collect(self) -> Iterator[Metric]:
        families: dict[str, Metric] = {}
        for registry in self.registries:
            for family in registry.collect():
                if family.name in families:
                    families[family.name].samples.extend(family.samples)
                else:
                    merged = Metric(family.name, family.documentation, family.type, family.unit)
                    merged.samples = list(family.samples)
                    families[family.name] = merged
        yield from families.values()


class Ops:
    """One process's operations listener (see the module docstring).  ``probe_key(role)`` names the
    key readiness writes (``Keys.probe``); the role is the one given to :meth:`start`."""

    def __init__(self, redis: Any, probe_key: Callable[[str], str] = lambda role: f"probe:{role}", *,
                 cache_s: float = READY_CACHE_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.redis = redis
        self.probe_key = probe_key
        self.role = "worker"
        self.cache_s, self.clock = cache_s, clock
        self.metrics: list[Any] = []
        self.checks: list[Ready] = []
        self.port: int | None = None
        self._last: tuple[float, str | None] | None = None
        self._lock = asyncio.Lock()

    def add(self, metrics: Any = None, ready: Ready | None = None) -> None:
        """A role's part: its metrics (anything with a Prometheus ``registry``) and its own readiness
        check (None when ready, else what is wrong), asked after Redis took the write."""
        if metrics is not None:
            self.metrics.append(metrics)
        if ready is not None:
            self.checks.append(ready)

    async def store_problem(self) -> str | None:
        """Whether Redis takes a write (None) or why not, at most one write per ``cache_s``: requests
        that come while a check runs wait for its result instead of writing again."""
        async with self._lock:
            if self._last is not None and self.clock() - self._last[0] < self.cache_s:
                return self._last[1]
            failed = await write_probe(self.redis, self.probe_key(self.role))
            self._last = (self.clock(), failed)
            return failed

    async def problem(self) -> str | None:
        """None when the process is ready, else what is wrong (the store first, then each role)."""
        failed = await self.store_problem()
        if failed is not None:
            return f"store: {failed}"
        for check in self.checks:
            problem = await check()
            if problem is not None:
                return problem[:200]
        return None

    def exposition(self) -> bytes:
        """Every part's metrics in Prometheus' text format."""
        return generate_latest(_Merged([m.registry for m in self.metrics]))

    def app(self) -> web.Application:
        """The listener's HTTP app: liveness, readiness, metrics."""

        async def readyz(_: web.Request) -> web.Response:
            problem = await self.problem()
            if problem is not None:
                return web.json_response({"status": "unavailable", "error": problem}, status=503)
            return web.json_response({"status": "ready"})

        async def metrics_view(_: web.Request) -> web.Response:
            return web.Response(body=self.exposition(), content_type="text/plain", charset="utf-8")

        app = add_liveness(web.Application())
        app.router.add_get("/readyz", readyz)
        app.router.add_get("/metrics", metrics_view)
        return app

    async def start(self, host: str, port: int, role: str = "worker") -> web.AppRunner:
        """Serve in the background (``port`` 0: any free one, then see :attr:`port`); stop it with
        ``await runner.cleanup()``.  ``role`` names the probe key (``probe:<role>``)."""
        self.role = role
        runner = web.AppRunner(self.app(), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        await site.start()
        server = getattr(site, "_server", None)
        self.port = server.sockets[0].getsockname()[1] if server and server.sockets else port
        return runner


def add_liveness(app: web.Application) -> web.Application:
    """Add ``/healthz`` (the process answers; no I/O) to ``app``: all a public port says of health."""

    async def healthz(_: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    app.router.add_get("/healthz", healthz)
    return app


def make_app(redis: Any, metrics: Metrics, probe_key: str = "probe:worker",
             ready: Ready | None = None, cache_s: float = READY_CACHE_S) -> web.Application:
    """An operations app of one part (the tests'): liveness, readiness (Redis takes a write of
    ``probe_key``, then ``ready``), Prometheus metrics."""
    ops = Ops(redis, lambda _role: probe_key, cache_s=cache_s)
    ops.add(metrics, ready)
    return ops.app()


async def start(app: web.Application, host: str, port: int) -> web.AppRunner:
    """Serve ``app`` in the background; stop it with ``await runner.cleanup()``."""
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    return runner
