"""Standard Webhooks signatures (https://www.standardwebhooks.com), written again from the
specification: the bridge shares no code with cinq, only the contract.

A signed request carries ``webhook-id``, ``webhook-timestamp`` (Unix seconds) and
``webhook-signature`` (space-separated ``v1,<base64 HMAC-SHA256 of "id.timestamp.body">``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Mapping

TOLERANCE_S = 5 * 60


class BadSignature(Exception):
    """A callback that fails verification (missing header, stale timestamp or no matching signature)."""


def key(secret: str) -> bytes:
    """The HMAC key of a secret: the base64 after ``whsec_``, else the string's own bytes."""
    if secret.startswith("whsec_"):
        return base64.b64decode(secret[len("whsec_") :], validate=True)
    return secret.encode()


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """The signature ``v1,<base64>`` of ``body`` under ``secret``."""
    mac = hmac.new(key(secret), f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256)
    return "v1," + base64.b64encode(mac.digest()).decode()


def headers(secret: str, msg_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """The headers that sign an inbound event for cinq."""
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": sign(secret, msg_id, timestamp, body),
        "content-type": "application/json",
    }


def verify(
    secret: str, hdrs: Mapping[str, str], body: bytes, now: float, tolerance_s: int = TOLERANCE_S
) -> str:
    """Check a callback from cinq; returns its ``webhook-id`` or raises :class:`BadSignature`."""
    msg_id, ts, sigs = (hdrs.get(h) for h in ("webhook-id", "webhook-timestamp", "webhook-signature"))
    if not msg_id or not ts or not sigs:
        raise BadSignature("webhook-id, webhook-timestamp and webhook-signature are required")
    try:
        timestamp = int(ts)
    except ValueError:
        raise BadSignature("webhook-timestamp must be Unix seconds") from None
    if abs(now - timestamp) > tolerance_s:
        raise BadSignature("webhook-timestamp is too far from now")
    expected = sign(secret, msg_id, timestamp, body).encode()
    ok = False
    for given in sigs.split():
        # No early exit: the time taken does not say which candidate matched.
        ok |= hmac.compare_digest(expected, given.encode())
    if not ok:
        raise BadSignature("no webhook-signature matches the secret")
    return msg_id
