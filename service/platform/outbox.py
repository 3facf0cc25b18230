"""Outbox messages: platform-neutral, addressed to a room or to one player.

The worker writes them to ``out:{b}`` in the same Lua call as the events that caused them; the
adapters read them (:class:`OutboxReader`) and only render them.  A message carries the text for a
plain renderer, the structured view for that recipient (never more than they may see, G-1) and, for
the player to move, the actions they may take, each with a signed token.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from service.domain.identities import Player, Room
from service.protocol.i18n.render import move_text
from service.protocol.text import render_lines
from service.store.keys import Keys
from service.store.streams import StreamReader


class Recipient(BaseModel):
    """Exactly one of ``room`` and ``player``.  ``person``, on a private chat's message: the person in
    that chat, when the message answers them (the order of their messages is kept per person,
    whichever way they are addressed: see :func:`service.platform.delivery.recipient_key`)."""

    model_config = ConfigDict(frozen=True)

    room: Room | None = None
    player: Player | None = None
    person: Player | None = None


class Action(BaseModel):
    """One thing the recipient may do: a label to show and the token to send back.

    ``label`` is filled in the recipient's language when the message is read (see ``rendered``).
    """

    model_config = ConfigDict(frozen=True)

    move: str
    token: str
    label: str = ""


class Message(BaseModel):
    """One outbox message.  ``kind`` is ``table``, ``hand``, ``reply``, ``match_over`` or ``replay``.

    The worker writes ``lines`` (deferred text, see :mod:`service.protocol.text`) and leaves ``text`` empty;
    :meth:`rendered` (called by :class:`OutboxReader`) fills ``text`` and the action labels in the
    recipient's locale, from the message alone.
    """

    model_config = ConfigDict(frozen=True, cache_strings="keys")  # ids are new each time: see TableCommand

    id: str
    table: str | None
    version: int
    to: Recipient
    locale: str
    kind: str
    text: str = ""
    lines: list[Any] = Field(default_factory=list)
    game: str | None = None
    view: dict[str, Any] | None = None
    actions: list[Action] = Field(default_factory=list)
    # When the person to move runs out of time (unix seconds; None: no turn timer, or no person's turn).
    deadline: float | None = None
    # A refusal's machine-readable code (``stale_token``, ``not_your_turn``...; None: not a refusal).
    code: str | None = None
    # On a room's ``match_over``: who sits in each seat, in seat order (the person, or None for a seat
    # an AI player plays), so that a platform can count wins per person; None on other messages.
    seats: list[Player | None] | None = None
    # The recipient's address of the web table (a person's own link on their hand, a spectator's on a
    # room's table, the replay page on a replay), set on delivery when the web table is configured
    # (:mod:`service.platform.links`); never written to the outbox.
    link: str | None = None
    # The platform's own reference to an earlier message this one redraws (a /top button pressed on
    # it: ``service.ratings.boards``), given by the adapter with the press: edit that message in place
    # where the platform can, else post this one.  None: a message of its own.
    replaces: str | None = None

    def dumps(self) -> str:
        """The JSON written to the outbox stream."""
        return self.model_dump_json()

    def rendered(self, locale: str | None = None) -> Message:
        """The message with its text and action labels in the recipient's language, or in ``locale``
        (an adapter that knows better, e.g. a group's own ``/lang``).  The one renderer: a message
        already rendered in another language is put into words again from its deferred lines, so
        its text and its buttons always agree.  A text written in words (a gateway reply: no
        lines) stays as it is."""
        loc = locale or self.locale
        again = loc != self.locale
        text = self.text
        if self.lines and (again or not text):
            text = render_lines(self.lines, loc, self.view)
        # A reply in words keeps its labels too (a board's buttons, labelled and marked by the gateway).
        actions = [a if a.label and (not again or not self.lines) else
                   a.model_copy(update={"label": move_text(self.game, a.move, loc)}) for a in self.actions]
        return self.model_copy(update={"text": text, "actions": actions, "locale": loc})


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
