"""Helpers of the webhook tests: a fake chat platform on loopback, a signing client, and a harness that
runs the adapter (HTTP + deliveries) and workers in-process over one Redis."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
from aiohttp import web

from adapters.webhook import signing
from adapters.webhook.cli import WebhookAdapter
from adapters.webhook.config import Platform, WebhookSettings
from service.foundation.settings import Settings
from service.ops.health import Ops
from service.ops.runtime import worker_for
from service.platform.delivery import DeliveryOptions
from service.platform.outbox import Message
from service.store.keys import Keys
from service.write.gateway import Gateway
from tests.loopback import Served
from tests.polling import woken
from tests.service.support import SECRET, seeds

PLATFORM = "acme"
# A Standard Webhooks secret (whsec_ + base64 of 24 bytes) and a plain one, both registered (rotation).
SECRETS = ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "second-secret-of-acme-0123"]
WRONG_SECRET = "whsec_" + "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB"

Responder = Callable[[int, dict[str, Any]], Awaitable[web.StreamResponse | None]]


def settings(**kw: Any) -> Settings:
    """Service settings for the tests: few buckets, no turn timer, a known token secret, no forced pass
    made for people (the tests press every button a hand has; tests/service/write/test_auto_pass.py)."""
    base: dict[str, Any] = dict(buckets=16, command_shards=2, turn_seconds=0, token_secrets=[SECRET.decode()],
                                snapshot_every=10, claim_idle_ms=200, block_ms=20, auto_pass_s=0)
    base.update(kw)
    return Settings(redis_url=None, **base)


def fast_options(**kw: Any) -> DeliveryOptions:
    """Delivery tuning with short waits (backoff and leases) so that retries take milliseconds."""
    base: dict[str, Any] = dict(max_attempts=4, backoff_base_s=0.01, backoff_cap_s=0.05, lanes=8,
                                partitions=4,
                                lease_ms=600, block_ms=20,
                                # The tests read the outbox as the record of what was sent: keep it.
                                keep_s=3600)
    base.update(kw)
    return DeliveryOptions(**base)


class SignedParty(Served):
    """A platform's end of the webhook: it takes signed callbacks only (a bad signature is answered
    401 and counted in ``bad_signatures``); :meth:`_signed` says what a signed one does."""

    secrets: list[str]
    bad_signatures = 0

    async def _callback(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        try:
            wid = signing.verify(self.secrets, request.headers, body, time.time())
        except signing.SignatureError:
            self.bad_signatures += 1
            return web.Response(status=401)
        return await self._signed(request, wid, body)

    async def _signed(self, request: web.Request, wid: str, body: bytes) -> web.StreamResponse:
        raise NotImplementedError


class FakePlatform(SignedParty):
    """A chat platform on loopback: receives callbacks, checks their signatures, records what it got.

    ``responder`` (called with the attempt number and the body) may return a response to send instead
    of 200 (a failure), or sleep (a timeout).
    """

    def __init__(self, secrets: list[str] | None = None, responder: Responder | None = None) -> None:
        self.secrets = secrets or SECRETS
        self.responder = responder
        self.received: list[dict[str, Any]] = []  # verified and accepted (2xx)
        self.attempts: list[tuple[float, dict[str, Any]]] = []
        self.bad_signatures = 0
        self.ids_seen: set[str] = set()
        self.duplicates = 0
        self.changed = asyncio.Event()

    async def _signed(self, request: web.Request, wid: str, body: bytes) -> web.StreamResponse:
        assert request.headers["content-type"] == "application/json"
        msg = json.loads(body)
        assert msg["id"] == wid, "the webhook-id is the message id"
        self.attempts.append((time.monotonic(), msg))
        if self.responder is not None:
            resp = await self.responder(len(self.attempts), msg)
            if resp is not None:
                return resp
        if wid in self.ids_seen:
            self.duplicates += 1
        else:
            self.ids_seen.add(wid)
            self.received.append(msg)
        self.changed.set()
        return web.Response(status=200)

    async def wait_for(self, pred: Callable[[], Any], timeout: float = 10.0) -> Any:
        """Wait until ``pred()`` is truthy (re-checked after every callback); returns its value."""
        got = await woken(self.changed, pred, timeout)
        if not got:
            raise TimeoutError("the platform did not receive what was expected")
        return got

    def to_user(self, user: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m["to"].get("user", {}).get("id") == user]

    def to_chat(self, chat: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m["to"].get("chat", {}).get("id") == chat]


_wids = itertools.count()


def event(text: str | None = None, *, user: str = "u1", chat: str = "g1", kind: str = "group",
          name: str = "", locale: str | None = "en", token: str | None = None) -> dict[str, Any]:
    """An inbound event body."""
    base: dict[str, Any] = {"chat": {"id": chat, "kind": kind}, "user": {"id": user, "name": name or user,
                                                                         "locale": locale}}
    if token is not None:
        return {"type": "action", **base, "token": token}
    return {"type": "message", **base, "text": text}


class Client:
    """A platform's side of inbound requests: signs and POSTs events."""

    def __init__(self, session: aiohttp.ClientSession, base_url: str, platform: str = PLATFORM,
                 secrets: list[str] | None = None) -> None:
        self.session = session
        self.base_url = base_url
        self.platform = platform
        self.secrets = secrets or SECRETS[:1]

    def signed(self, body: bytes, wid: str | None = None, timestamp: int | None = None,
               secrets: list[str] | None = None) -> dict[str, str]:
        wid = wid or f"msg_{next(_wids)}_{time.monotonic_ns()}"
        ts = int(time.time()) if timestamp is None else timestamp
        return {**signing.headers(secrets or self.secrets, wid, ts, body), "content-type": "application/json"}

    async def post(self, payload: dict[str, Any] | bytes, *, wid: str | None = None,
                   headers: dict[str, str] | None = None, platform: str | None = None,
                   timestamp: int | None = None, secrets: list[str] | None = None,
                   ) -> tuple[int, dict[str, str], Any]:
        """POST an event, signed unless ``headers`` are given; returns (status, headers, JSON body)."""
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        hdrs = headers if headers is not None else self.signed(body, wid, timestamp, secrets)
        url = f"{self.base_url}/v1/platforms/{platform or self.platform}/events"
        async with self.session.post(url, data=body, headers=hdrs) as resp:
            raw = await resp.read()
            try:
                data = json.loads(raw)
            except ValueError:
                data = raw
            return resp.status, dict(resp.headers), data

    async def accepted(self, payload: dict[str, Any]) -> None:
        """POST an event that must be accepted (202)."""
        status, _, body = await self.post(payload)
        assert status == 202, body


class Harness:
    """The adapter (HTTP on a free loopback port, deliveries) and workers, over one Redis."""

    def __init__(self, redis: Any, platform_url: str, *, workers: int = 1,
                 options: DeliveryOptions | None = None,
                 ws: dict[str, Any] | None = None, **kw: Any) -> None:
        self.redis = redis
        self.settings = settings(**kw)
        self.keys = Keys(self.settings.buckets, self.settings.command_shards, self.settings.key_prefix)
        platform = Platform(name=PLATFORM, secrets=SECRETS, callback_url=platform_url)
        wsd: dict[str, Any] = dict(platforms=[platform],
                                   timeout_s=2.0, rate=1000.0, burst=1000)
        wsd.update(ws or {})
        self.ws = WebhookSettings(**wsd)
        self.adapter = WebhookAdapter(redis, self.settings, self.ws, Gateway(redis, self.settings, self.keys),
                                      options=options or fast_options())
        self.workers = [worker_for(redis, self.settings, name=f"w{i}", seeds=seeds(), timers=False)
                        for i in range(workers)]
        # the process's operations listener (/readyz, /metrics), as `cinq webhook` runs it
        self.ops = Ops(redis, self.keys.probe)
        self.ops.add(self.adapter.metrics)
        self._ops_runner: Any = None
        self._tasks: list[asyncio.Task[None]] = []
        self.session: aiohttp.ClientSession | None = None
        self.client: Client

    async def start(self, deliver: bool = True, work: bool = True) -> Harness:
        await self.adapter.start("127.0.0.1", 0, deliver=deliver)
        self._ops_runner = await self.ops.start("127.0.0.1", 0, "webhook")
        if work:
            self._tasks = [asyncio.create_task(w.run()) for w in self.workers]
        self.session = aiohttp.ClientSession()
        self.client = Client(self.session, f"http://127.0.0.1:{self.adapter.port}")
        return self

    async def close(self) -> None:
        for w in self.workers:
            w.stop.set()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.adapter.close()
        if self._ops_runner is not None:
            await self._ops_runner.cleanup()
        if self.session is not None:
            await self.session.close()

    @property
    def ops_url(self) -> str:
        """The operations listener's address (/readyz, /metrics)."""
        return f"http://127.0.0.1:{self.ops.port}"

    async def outbox(self) -> list[Message]:
        """Every outbox message written so far (rendered, as delivered), in stream order per stream."""
        out: list[Message] = []
        for b in range(self.keys.buckets):
            for _, fields in await self.redis.xrange(self.keys.outbox(b)):
                out.append(Message.model_validate_json(fields[b"m"]).rendered())
        return out

    async def fingerprint(self, table: str | None = None) -> dict[str, int]:
        """Lengths of the table's events, the command streams and the outbox (to see that nothing moved)."""
        pipe = self.redis.pipeline(transaction=False)
        names = ([self.keys.events(table)] if table else []) + self.keys.all_commands() + \
            [self.keys.outbox(b) for b in range(self.keys.buckets)]
        for n in names:
            pipe.xlen(n)
        return dict(zip(names, await pipe.execute(), strict=True))


@contextlib.asynccontextmanager
async def on_platform(redis: Any, **kw: Any) -> AsyncIterator[tuple[FakePlatform, Harness]]:
    """A fake platform and a :class:`Harness` (``kw``: its options) that calls it back, both
    closed at the end."""
    platform = FakePlatform()
    await platform.start()
    h = await Harness(redis, platform.url, **kw).start()
    try:
        yield platform, h
    finally:
        await h.close()
        await platform.close()
