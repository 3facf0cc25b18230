"""The chaos run's chat platform: a callback receiver on loopback that checks signatures, keeps what it
got by message id (duplicates counted, not kept twice) and wakes whoever waits on a chat or a user."""

from __future__ import annotations

import asyncio
import json
import time
from collections import defaultdict
from typing import Any

from aiohttp import web

from tests.adapters.webhook.support import SignedParty
from tests.polling import woken


class Receiver(SignedParty):
    """Callbacks received, by id and by recipient, with the time each first arrived."""

    def __init__(self, secrets: list[str]) -> None:
        self.secrets = secrets
        self.first_at: dict[str, float] = {}
        self.by_key: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.duplicates = 0
        self.bad_signatures = 0
        self._news: dict[str, asyncio.Event] = defaultdict(asyncio.Event)

    @staticmethod
    def key_of(msg: dict[str, Any]) -> str:
        to = msg["to"]
        return f"chat:{to['chat']['id']}" if "chat" in to else f"user:{to['user']['id']}"

    async def _signed(self, request: web.Request, wid: str, body: bytes) -> web.StreamResponse:
        if wid in self.first_at:
            self.duplicates += 1
            return web.Response(status=200)
        msg = json.loads(body)
        self.first_at[wid] = time.monotonic()
        key = self.key_of(msg)
        self.by_key[key].append(msg)
        self._news[key].set()
        return web.Response(status=200)

    async def wait(self, key: str, pred: Any, timeout_s: float) -> Any:
        """Wait until ``pred(messages of key)`` is truthy (None after ``timeout_s``)."""
        return await woken(self._news[key], lambda: pred(self.by_key[key]), timeout_s, tick=1.0) or None
