"""Links to the web table in the messages delivered (``adapters/web``).

When the web table is configured (``CINQ_WEB_PUBLIC_URL``), each message an adapter delivers carries
the link its recipient may open (:attr:`service.platform.outbox.Message.link`):

- a **hand** (addressed to one person, privately): that person's own signed link to the table, which
  shows their hand and lets them play;
- a room's **table** or **match_over** message: a spectator's link (the room view, no hand), since
  everyone in the room reads it;
- a **replay**: the page that steps through the finished match (public moves only);
- nothing on replies.

A person's link is only ever put on a message addressed to that person alone, never on one a room
reads (G-1): anyone holding it would see their hand.  Links are signed when the message is
delivered, not when it is written, so a link is fresh for :data:`~service.domain.weblinks.LINK_TTL_S`
from the moment it reaches the chat, and the outbox holds no link at all.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from service.domain.weblinks import LINK_TTL_S, issue_link, replay_url, table_url
from service.foundation.settings import Settings
from service.platform.outbox import Message

_ROOM_KINDS = frozenset({"table", "match_over"})


class Links:
    """Signs the web table's links for delivered messages (see the module docstring)."""

    def __init__(self, base_url: str, secret: bytes, *, ttl_s: float = LINK_TTL_S,
                 clock: Callable[[], float] = time.time) -> None:
        if not base_url:
            raise ValueError("the web table's public URL is empty")
        self.base = base_url.rstrip("/")
        self.secret = secret
        self.ttl_s = ttl_s
        self.clock = clock

    @classmethod
    def of(cls, settings: Settings, clock: Callable[[], float] = time.time) -> Links | None:
        """The links of a deployment (None: no web table configured)."""
        if not settings.web_public_url:
            return None
        return cls(settings.web_public_url, settings.secrets_bytes()[0], clock=clock)

    def link_for(self, msg: Message) -> str | None:
        """The address ``msg``'s recipient may open, or None (see the module docstring)."""
        table = msg.table
        if not table:
            return None
        if msg.kind == "replay":
            return replay_url(self.base, table)
        # Rounded up to ten minutes: the messages of one stretch of play carry the same link, so an
        # adapter that edits a message in place sees no change where there is none.
        expires = math.ceil((self.clock() + self.ttl_s) / 600) * 600
        to = msg.to
        if msg.kind == "hand" and to.player is not None and to.room is None:
            return table_url(self.base, issue_link(self.secret, table=table, expires=expires,
                                                   platform=to.player.platform, user=to.player.user))
        if msg.kind in _ROOM_KINDS and to.room is not None:
            return table_url(self.base, issue_link(self.secret, table=table, expires=expires))
        return None

    def attach(self, msg: Message) -> Message:
        """``msg`` with its link (itself when it gets none)."""
        link = self.link_for(msg)
        return msg if link is None else msg.model_copy(update={"link": link})
