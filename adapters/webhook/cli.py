"""Running the webhook adapter: the HTTP server and one delivery loop per registered platform.

- ``cinq webhook`` (or ``python -m adapters.webhook``): the adapter alone, until SIGTERM/SIGINT.
- ``cinq webhook dead-letters [--platform P]``: list the messages that could not be delivered.
- ``cinq webhook dead-letters --replay ID... | --replay-all``: send them again.
- under ``cinq serve`` the service calls :func:`serve` with its runtime.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from typing import Any

import aiohttp
from aiohttp import web

from adapters.webhook.app import WebhookMetrics, make_app
from adapters.webhook.config import WebhookSettings
from adapters.webhook.sender import Sender
from adapters.webhook.server import ProblemRunner
from service.foundation import logs
from service.foundation.secrets import load
from service.foundation.settings import Settings
from service.ops.running import run_until_stopped, until_cancelled
from service.ops.runtime import build
from service.platform.delivery import Delivery, DeliveryOptions
from service.store.connection import refuse_unsafe
from service.write.gateway import Gateway


def delivery_options(ws: WebhookSettings, **overrides: Any) -> DeliveryOptions:
    """The delivery tuning from the adapter's settings."""
    base: dict[str, Any] = dict(max_attempts=ws.max_attempts, backoff_base_s=ws.backoff_base_s,
                                backoff_cap_s=ws.backoff_cap_s, lanes=ws.lanes)
    base.update(overrides)
    return DeliveryOptions(**base)


class WebhookAdapter:
    """The adapter in one process: the HTTP app and a delivery loop per platform, started and stopped
    together (tests and the benchmark run it in-process)."""

    def __init__(self, redis: Any, settings: Settings, ws: WebhookSettings, gateway: Gateway, *,
                 options: DeliveryOptions | None = None, metrics: WebhookMetrics | None = None,
                 clock: Any = time.time, consumer: str | None = None) -> None:
        self.redis, self.settings, self.ws = redis, settings, ws
        self.gateway = gateway  # the process's (service.ops.runtime.build)
        self.metrics = metrics or WebhookMetrics()
        self.app = make_app(self.gateway, ws, metrics=self.metrics, clock=clock)
        self.options = options or delivery_options(ws)
        self.clock = clock
        self.consumer = consumer
        self.stop = asyncio.Event()
        self.deliveries: list[Delivery] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self.port: int | None = None

    async def start(self, host: str | None = None, port: int | None = None, *, http: bool = True,
                    deliver: bool = True) -> None:
        """Serve HTTP (``port`` 0: any free port, then see :attr:`port`) and start the deliveries."""
        if http:
            self._runner = ProblemRunner(self.app, access_log=None)
            await self._runner.setup()
            site = web.TCPSite(self._runner, host or self.ws.host, self.ws.port if port is None else port)
            await site.start()
            self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=256))
        for p in self.ws.platforms if deliver else []:
            d = Delivery(self.redis, self.settings, p.name, self.consumer and f"{self.consumer}-{p.name}",
                         options=self.options, metrics=self.metrics.delivery, clock=self.clock,
                         keys=self.gateway.keys)
            sender = Sender(self._session, p, timeout_s=self.ws.timeout_s, clock=self.clock)
            self.deliveries.append(d)
            self._tasks.append(asyncio.create_task(d.run(sender, self.stop)))

    async def close(self) -> None:
        """Stop taking input, then flush: the server stops listening and answers the requests in hand
        first; then the deliveries stop (the message in hand finishes its attempt; what is left stays
        pending in Redis for the next process)."""
        try:
            if self._runner is not None:
                runner, self._runner = self._runner, None
                await runner.cleanup()
        finally:
            self.stop.set()
            try:
                await asyncio.gather(*self._tasks, return_exceptions=True)
            finally:
                # Even when cancelled while the deliveries finish: the sockets are closed either way.
                if self._session is not None:
                    await self._session.close()


async def serve(rt: Any) -> None:
    """Run the adapter on a service runtime (``cinq serve``) until cancelled; without a registered
    platform there is nothing to serve, and it returns at once."""
    ws = WebhookSettings()
    if not ws.platforms:
        logs.get("webhook").info("idle", reason="no platform registered (CINQ_WEBHOOK_PLATFORMS)")
        return
    adapter = WebhookAdapter(rt.redis, rt.settings, ws, rt.gateway)
    rt.ops.add(adapter.metrics)
    await _serving(adapter, ws)


async def _serving(adapter: WebhookAdapter, ws: WebhookSettings) -> None:
    """Serve until cancelled, then close (input first, then the deliveries in hand)."""
    try:
        await adapter.start(deliver=ws.deliver)
        logs.get("webhook").info("listening", host=ws.host, port=adapter.port,
                                 platforms=[p.name for p in ws.platforms])
        await until_cancelled()
    finally:
        await adapter.close()


async def _run_alone(settings: Settings, ws: WebhookSettings) -> int:
    rt = build(settings)
    await refuse_unsafe(rt.redis, settings)
    adapter = WebhookAdapter(rt.redis, settings, ws, rt.gateway)
    rt.ops.add(adapter.metrics)
    # /readyz and /metrics on the operations listener (CINQ_HTTP_HOST:CINQ_HTTP_PORT, loopback)
    ops = await rt.ops.start(settings.http_host, settings.http_port, "webhook")
    try:
        await run_until_stopped(_serving(adapter, ws))
    finally:
        await ops.cleanup()
    return 0


async def _dead_letters(settings: Settings, ws: WebhookSettings, args: argparse.Namespace,
                        out: Any) -> int:
    rt = build(settings)
    redis = rt.redis
    names = [args.platform] if args.platform else [p.name for p in ws.platforms]
    try:
        for name in names:
            d = Delivery(redis, settings, name, keys=rt.keys)
            if args.replay or args.replay_all:
                n = await d.replay(None if args.replay_all else args.replay)
                print(f"{name}: {n} replayed", file=out)
                continue
            letters = await d.dead_letters()
            print(f"{name}: {len(letters)} dead letters", file=out)
            for dl in letters:
                m = dl.message
                what = f"{m.id} table={m.table} v{m.version} {m.kind}" if m else "(unreadable)"
                at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(dl.at))
                print(f"  {dl.id}  {at}  {what}  attempts={dl.attempts}  {dl.error}", file=out)
    finally:
        with contextlib.suppress(Exception):
            await redis.aclose()
    return 0


def parser() -> argparse.ArgumentParser:
    """The ``cinq webhook`` command line."""
    p = argparse.ArgumentParser(prog="cinq webhook", description="The HTTP webhook adapter.")
    sub = p.add_subparsers(dest="command")
    dl = sub.add_parser("dead-letters", help="list (or replay) the messages that could not be delivered")
    dl.add_argument("--platform", help="only this platform (default: every registered one)")
    dl.add_argument("--replay", nargs="+", metavar="ID", help="send these dead letters again")
    dl.add_argument("--replay-all", action="store_true", help="send every dead letter again")
    return p


def run(argv: list[str] | None = None, out: Any = None) -> int:
    """``cinq webhook [dead-letters ...]``; returns the exit status."""
    args = parser().parse_args(argv)
    settings = load(Settings)
    ws = load(WebhookSettings, "the webhook adapter's configuration (CINQ_WEBHOOK_*)")
    if args.command == "dead-letters":
        return asyncio.run(_dead_letters(settings, ws, args, out or sys.stdout))
    if not ws.platforms:
        print("no platform registered: set CINQ_WEBHOOK_PLATFORMS", file=sys.stderr)
        return 2
    logs.configure(settings.log_level)
    return asyncio.run(_run_alone(settings, ws))
