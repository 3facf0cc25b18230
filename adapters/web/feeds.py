"""How many live feeds (``GET /api/events``) one web process holds open, per link and in all.

A feed costs the process a socket, a subscription of :class:`service.platform.watch.Watch` and its
queue; without a bound one link opened 500 of them (issue 32, 4).  A person's link (one person at one
table, whatever its expiry) may hold :attr:`FeedLimits.per_link` feeds at a time (tabs, devices); a
room's spectator link, which everyone in a group chat opens, :attr:`FeedLimits.per_room_link`; the
process :attr:`FeedLimits.total`.  Past a bound the request is refused before anything is read:
429 for a link over its share, 503 for a full process, both with ``Retry-After``.

A feed's slot is given back when the feed ends, however it ends (the page went: the server cancels
its handler; an error; a shutdown): :meth:`Feeds.open` is a context manager.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class FeedLimits:
    """The bounds (``CINQ_WEB_MAX_FEEDS``, ``CINQ_WEB_FEEDS_PER_LINK``, ``CINQ_WEB_FEEDS_PER_ROOM_LINK``)."""

    total: int = 2000
    per_link: int = 8
    per_room_link: int = 256


class FeedRefused(Exception):
    """No slot for this feed: ``code`` is ``too_many_feeds`` (the link's share, 429) or ``busy``
    (the process's, 503)."""

    def __init__(self, code: str, status: int) -> None:
        super().__init__(code)
        self.code, self.status = code, status


class Feeds:
    """The open feeds of one process, counted per link (see the module docstring)."""

    def __init__(self, limits: FeedLimits) -> None:
        self.limits = limits
        self.by_link: dict[tuple[str, str | None, str | None], int] = {}
        self.total = 0

    @contextlib.contextmanager
    def open(self, table: str, platform: str | None, user: str | None) -> Iterator[None]:
        """Hold a slot for one feed of this link (``platform``/``user`` None: a spectator's) while
        the block runs; raises :class:`FeedRefused` when there is none."""
        key = (table, platform, user)
        held = self.by_link.get(key, 0)
        share = self.limits.per_room_link if platform is None else self.limits.per_link
        if held >= share:
            raise FeedRefused("too_many_feeds", 429)
        if self.total >= self.limits.total:
            raise FeedRefused("busy", 503)
        self.by_link[key] = held + 1
        self.total += 1
        try:
            yield
        finally:
            self.total -= 1
            left = self.by_link[key] - 1
            if left:
                self.by_link[key] = left
            else:
                del self.by_link[key]
