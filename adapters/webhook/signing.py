"""Standard Webhooks signatures (https://www.standardwebhooks.com), both ways.

A signed request carries ``webhook-id``, ``webhook-timestamp`` (Unix seconds) and
``webhook-signature``: space-separated ``v1,<base64 HMAC-SHA256 of "id.timestamp.body">``, one per
secret the sender signs with (rotation).  Secrets are given as ``whsec_<base64>`` (the spec's form,
the key is the decoded bytes) or as any other string (its UTF-8 bytes are the key).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Iterable, Mapping

TOLERANCE_S = 5 * 60
PREFIX = "whsec_"


class SignatureError(Exception):
    """A request that fails verification; ``code`` says why (``missing``, ``timestamp``, ``mismatch``)."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


def secret_key(secret: str) -> bytes:
    """The HMAC key of a secret: the base64 after ``whsec_``, else the string's bytes."""
    if secret.startswith(PREFIX):
        try:
            return base64.b64decode(secret[len(PREFIX):], validate=True)
        except binascii.Error as e:
            raise ValueError("a whsec_ secret must be base64") from e
    return secret.encode()


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """One signature, ``v1,<base64>``, of ``body`` under ``secret``."""
    mac = hmac.new(secret_key(secret), f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256)
    return "v1," + base64.b64encode(mac.digest()).decode()


def headers(secrets: Iterable[str], msg_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """The three headers that sign ``body`` (one signature per secret)."""
    return {"webhook-id": msg_id, "webhook-timestamp": str(timestamp),
            "webhook-signature": " ".join(sign(s, msg_id, timestamp, body) for s in secrets)}


def verify(secrets: Iterable[str], hdrs: Mapping[str, str], body: bytes, now: float,
           tolerance_s: int = TOLERANCE_S) -> str:
    """Check a request's signature against any of ``secrets``; returns its ``webhook-id``.

    Raises :class:`SignatureError` when a header is missing, the timestamp is not within
    ``tolerance_s`` of ``now`` (either way: replays and clocks far ahead), or no signature matches.
    Every candidate is compared in constant time.
    """
    msg_id, ts, sigs = (hdrs.get(h) for h in ("webhook-id", "webhook-timestamp", "webhook-signature"))
    if not msg_id or not ts or not sigs:
        raise SignatureError("missing", "webhook-id, webhook-timestamp and webhook-signature are required")
    try:
        timestamp = int(ts)
    except ValueError:
        raise SignatureError("timestamp", "webhook-timestamp must be Unix seconds") from None
    if abs(now - timestamp) > tolerance_s:
        raise SignatureError("timestamp", f"webhook-timestamp is more than {tolerance_s} s away from now")
    given = [s.partition(",")[2].encode() for s in sigs.split() if s.startswith("v1,")]
    ok = False
    for secret in secrets:
        expected = sign(secret, msg_id, timestamp, body).partition(",")[2].encode()
        for g in given:
            # No early exit: the time taken does not depend on which candidate matched.
            ok |= hmac.compare_digest(expected, g)
    if not ok:
        raise SignatureError("mismatch", "no webhook-signature matches a secret of this platform")
    return msg_id
