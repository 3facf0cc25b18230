"""What Redis replies hold, as text: one place for the bytes-or-str question.

redis-py answers ``bytes`` (the service's clients do not decode replies, since most of what the
worker reads is JSON for orjson), fakeredis sometimes ``str``; every reader turns a reply into text
through these two functions.
"""

from __future__ import annotations

from typing import Any


def as_text(v: Any) -> str:
    """A reply (bytes, str, or a number) as ``str``."""
    return v.decode() if isinstance(v, bytes) else str(v)


def as_text_or_none(v: Any) -> str | None:
    """A reply that may be nil (a missing key) as ``str``, or None."""
    return None if v is None else as_text(v)
