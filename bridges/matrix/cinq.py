"""The cinq side: signed inbound events over HTTP (the webhook contract), retried while cinq asks."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import aiohttp

from bridges.matrix import signing

log = logging.getLogger("bridges.matrix")
# Answers after which the same event is sent again: cinq is busy, rate-limits, or is restarting.
RETRY = {408, 429, 500, 502, 503, 504}


class CinqError(Exception):
    """cinq kept failing; the caller keeps the Matrix event to hand on again."""


class CinqClient:
    """POSTs events to ``{url}/v1/platforms/{platform}/events`` (implements ``core.Cinq``)."""

    def __init__(
        self, session: aiohttp.ClientSession, url: str, platform: str, secret: str, attempts: int = 8
    ) -> None:
        self.session = session
        self.endpoint = f"{url}/v1/platforms/{platform}/events"
        self.secret = secret
        self.attempts = attempts

    async def post(self, event: dict[str, Any], webhook_id: str) -> None:
        """Send one event; the same ``webhook_id`` on every attempt, so cinq acts on it once."""
        body = json.dumps(event, ensure_ascii=False).encode()
        delay = 0.2
        for _ in range(self.attempts):
            hdrs = signing.headers(self.secret, webhook_id, int(time.time()), body)
            try:
                async with self.session.post(self.endpoint, data=body, headers=hdrs) as resp:
                    status, answer = resp.status, await resp.text()
                    wait = resp.headers.get("Retry-After")
            except (aiohttp.ClientError, OSError, TimeoutError) as e:
                status, answer, wait = 0, str(e), None
            if 200 <= status < 300:
                return
            if status not in RETRY and status != 0:
                # Refused for good (malformed, too long): sending it again would not help.
                log.warning("cinq refused event %s: %s %s", webhook_id, status, answer[:200])
                return
            await asyncio.sleep(float(wait) if wait and wait.isdigit() else delay)
            delay = min(delay * 2, 5.0)
        raise CinqError(f"cinq did not take event {webhook_id}: {status} {answer[:200]}")
