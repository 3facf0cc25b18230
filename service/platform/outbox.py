"""Outbox messages: platform-neutral, addressed to a room or to one player, and their reader.

The worker writes them to ``out:{b}`` in the same Lua call as the events that caused them; the
adapters read them (:class:`OutboxReader`) and only render them.  A message carries the text for a
plain renderer, the structured view for that recipient (never more than they may see, G-1) and, for
the player to move, the actions they may take, each with a signed token.  The model of a message,
:class:`Message` (:mod:`service.domain.messages`, where the worker's writer draws from it too), is
imported from here by the adapters.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from service.domain.messages import Action, Message, Recipient
from service.store.keys import Keys
from service.store.streams import StreamReader

__all__ = ["Action", "Message", "OutboxReader", "Recipient"]  # the models: service.domain.messages


class OutboxReader:
    """Reads outbox streams from a position (plain XREAD: every reader sees every message).

    ``streams`` are outbox keys; :meth:`watch` adds more (a terminal learns its table's bucket once
    the table exists).  Production adapters would use a consumer group per platform instead.
    """

    def __init__(self, redis: Any, keys: Keys, streams: Iterable[str] = ()) -> None:
        self.redis = redis
        self.keys = keys
        self.positions: dict[str, str] = {s: "0-0" for s in streams}

    def watch(self, stream: str, position: str = "0-0") -> None:
        """Also read ``stream`` from ``position`` (a no-op if already watched)."""
        self.positions.setdefault(stream, position)

    async def read(self, block_ms: int = 100, count: int = 500) -> list[Message]:
        """The next messages of the watched streams (waits up to ``block_ms`` for some)."""
        if not self.positions:
            return []
        # One XREAD on one Redis; one per hash slot on a Redis Cluster (service.store.streams).
        entries = await StreamReader(self.redis).read(dict(self.positions), count, block_ms)
        out: list[Message] = []
        for name, mid, fields in entries:
            self.positions[name] = mid
            raw = fields.get(b"m") or fields.get("m")
            out.append(Message.model_validate(json.loads(raw)).rendered())
        return out
