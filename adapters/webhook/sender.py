"""Outbound callbacks: one outbox message, signed, POSTed to the platform's callback URL.

:class:`Sender` is the handler that :class:`service.platform.delivery.Delivery` calls per message.  It maps
the outcome of one attempt onto the delivery's vocabulary: a 2xx returns; a network error, a
timeout, a 5xx, a 408 or a 429 raises :class:`~service.platform.delivery.Retry` (with the ``Retry-After`` the
platform asked for, if any; otherwise the delivery backs off exponentially with full jitter); any
other answer raises :class:`~service.platform.delivery.Permanent` (the message goes to the dead letters).
Every attempt is signed afresh (a new ``webhook-timestamp``) with the same ``webhook-id``: the
message id, the receiver's idempotency key.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from email.utils import parsedate_to_datetime

import aiohttp

from adapters.webhook import signing
from adapters.webhook.config import Platform
from adapters.webhook.models import OutboundMessage
from service.foundation import logs
from service.platform.delivery import Permanent, Retry
from service.platform.outbox import Message

USER_AGENT = "cinq-webhook/1"


def retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delay-seconds or an HTTP date), if usable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        return max(parsedate_to_datetime(value).timestamp() - now, 0.0)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


class Sender:
    """Delivers messages to one platform's callback URL over a shared aiohttp session."""

    def __init__(self, session: aiohttp.ClientSession, platform: Platform, *, timeout_s: float = 10.0,
                 clock: Callable[[], float] = time.time) -> None:
        self.session = session
        self.platform = platform
        self.timeout = aiohttp.ClientTimeout(total=timeout_s)
        self.clock = clock
        self.log = logs.get("webhook.sender").bind(platform=platform.name)

    def request(self, msg: Message) -> tuple[bytes, dict[str, str]]:
        """The body and headers of one attempt at delivering ``msg``."""
        body = OutboundMessage.of(msg).model_dump_json().encode()
        hdrs = signing.headers(self.platform.secret_values(), msg.id, int(self.clock()), body)
        hdrs.update({"content-type": "application/json", "user-agent": USER_AGENT})
        return body, hdrs

    async def __call__(self, msg: Message) -> None:
        """One attempt; returns when the platform accepted the message (see the module docstring)."""
        body, hdrs = self.request(msg)
        try:
            async with self.session.post(self.platform.callback_url, data=body, headers=hdrs,
                                         timeout=self.timeout, allow_redirects=False) as resp:
                status = resp.status
                wait = retry_after(resp.headers.get("Retry-After"), self.clock())
                await resp.read()
        except (TimeoutError, aiohttp.ClientError, OSError) as e:
            raise Retry(f"network: {type(e).__name__}: {e}"[:300]) from None
        if 200 <= status < 300:
            self.log.debug("delivered", message=msg.id, status=status)
            return
        if status >= 500 or status in (408, 429):
            raise Retry(f"HTTP {status}", after_s=wait)
        raise Permanent(f"HTTP {status}")
