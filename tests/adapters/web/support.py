"""A web table on loopback for the tests and ``bench/web.py``: the service's worker in-process on
fakeredis, the web adapter on a free port, and helpers to open tables and read the API."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import aiohttp
import fakeredis

from adapters.web.cli import WebAdapter
from adapters.web.config import WebSettings
from service.domain.identities import Player, Room
from service.domain.inputs import Input
from service.foundation.settings import Settings
from service.ops.runtime import Runtime, build
from service.store import repository

CHROMIUM = "/usr/bin/chromium"


def settings(**kw: Any) -> Settings:
    """Service settings for the tests: few buckets, no turn timer, fast workers, no forced pass made
    for people unless a test asks (the browser tests press Pass themselves)."""
    base: dict[str, Any] = dict(buckets=8, command_shards=2, turn_seconds=0, token_secrets=["web-test"],
                                block_ms=20, timer_interval=0.1, auto_pass_s=0)
    base.update(kw)
    return Settings(redis_url=None, **base)


class Stack:
    """A worker and the web adapter on one Redis (fakeredis unless one is given)."""

    def __init__(self, redis: Any = None, service: Settings | None = None,
                 bot_token: str | None = None) -> None:
        self.redis = redis if redis is not None else fakeredis.FakeAsyncRedis()
        self.settings = service or settings()
        self.rt: Runtime = build(self.settings, redis=self.redis)
        self.web = WebAdapter(self.settings, WebSettings(public_url=None, bot_token=bot_token),
                              self.rt.gateway, self.rt.watch(block_ms=50))
        self._worker: asyncio.Task[None] | None = None
        self.http: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> Stack:
        self._worker = asyncio.create_task(self.rt.worker.run())
        await self.web.start(host="127.0.0.1", port=0)
        self.http = aiohttp.ClientSession()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        assert self.http is not None
        await self.http.close()
        await self.web.close()
        self.rt.worker.stop.set()
        if self._worker is not None:
            await self._worker

    @property
    def url(self) -> str:
        """The adapter's base address."""
        return f"http://127.0.0.1:{self.web.port}"

    async def play_ai(self, me: Player, words: str = "cinquillo", cid: str = "web-test-1") -> str:
        """A table of ``me`` against AI players (``/play`` in their private chat); returns its id once
        the match runs."""
        room = Room(platform=me.platform, chat=me.user, kind="private")
        await self.rt.gateway.submit(Input(me, room, command_id=cid, language="en"), f"/play {words}")
        table = self.rt.gateway.table_for(cid)
        await self.until(lambda t: t is not None and t.status == "running", table)
        return table

    async def table(self, table: str) -> Any:
        """The table as the service has it now."""
        return await repository.load(self.rt.worker.store, table)

    async def until(self, check: Any, table: str, timeout: float = 30.0) -> Any:
        """Waits until ``check(table now)`` holds; returns the table."""
        deadline = time.monotonic() + timeout
        while True:
            t = await self.table(table)
            if check(t):
                return t
            if time.monotonic() > deadline:
                raise AssertionError(f"table {table} never got there: {t and t.status}")
            await asyncio.sleep(0.05)

    async def get(self, path: str, **params: str) -> tuple[int, Any]:
        """GET ``path``: the status and the JSON body."""
        assert self.http is not None
        async with self.http.get(self.url + path, params=params) as r:
            with contextlib.suppress(Exception):
                return r.status, await r.json(content_type=None)
            return r.status, None

    async def post(self, path: str, body: Any, **params: str) -> tuple[int, Any]:
        """POST JSON to ``path``: the status and the JSON body."""
        assert self.http is not None
        async with self.http.post(self.url + path, json=body, params=params) as r:
            return r.status, await r.json(content_type=None)


def hidden_cards(table: Any, viewer_seat: int | None) -> set[str]:
    """The cards in the hands of every seat but ``viewer_seat`` now (what that viewer must not see)."""
    import engine

    out: set[str] = set()
    for seat in range(len(table.seats)):
        if seat != viewer_seat:
            out |= {str(c) for c in engine.view(table.engine, seat).get("hand") or []}
    return out
