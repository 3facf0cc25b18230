"""One chat's queue in the sender (:mod:`adapters.telegram.sender`): what it holds, and how new
content merges into what waits in it.  No IO.

- A :class:`~adapters.telegram.content.Show` of a slot that still waits (not going out yet) is
  *merged*: only its latest content goes out (a burst of AI moves becomes one edit); an older
  content never replaces a newer one.
- An :class:`~adapters.telegram.content.Edit` of a message that still waits is replaced.
- A group's running table of the version at which a person was given their turn waits on that
  person (:func:`settle`): nothing is coming to merge, so it goes as soon as its budget allows.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from adapters.telegram.content import Edit, Op, Show
from adapters.telegram.flood import ChatFlood


@dataclass
class Item:
    """One operation waiting in a chat's queue, with the futures of every content merged into it."""

    op: Op
    since: float
    done: list[asyncio.Future[None]] = field(default_factory=list)
    busy: bool = False  # going out now: a newer content queues behind it instead of merging
    attempts: int = 0
    touched: float = 0.0  # when its latest content came (a group's table waits for fresh content)
    wake: asyncio.Event = field(default_factory=asyncio.Event)  # set when content merges into it

    @property
    def turn(self) -> bool:
        """Whether its content waits on a person's move (:attr:`Show.turn`): nothing comes to merge."""
        return isinstance(self.op, Show) and self.op.turn


@dataclass
class ChatQueue(ChatFlood):
    """A chat's queue, the task that drains it, and its flood counts."""

    queue: deque[Item] = field(default_factory=deque)
    task: asyncio.Task[None] | None = None
    looked_up: bool = False  # whether Redis was asked if the chat moved


def merge(queue: deque[Item], op: Op, fut: asyncio.Future[None], now: float) -> bool:
    """Merge ``op`` into the item of the same slot (or message) that waits in ``queue``; True when it
    did (``fut`` is then done with that item), False when ``op`` must be queued on its own."""
    if isinstance(op, Show) and not op.fresh:
        for item in queue:
            old = item.op
            if isinstance(old, Show) and not old.fresh and not item.busy \
                    and (old.table, old.slot) == (op.table, op.slot):
                if op.rank >= old.rank:
                    item.op = dataclasses.replace(op, ids=old.ids + op.ids)
                    item.touched = now
                    item.wake.set()
                item.done.append(fut)
                return True
    if isinstance(op, Edit):
        for item in queue:
            if isinstance(item.op, Edit) and not item.busy and item.op.message_id == op.message_id:
                item.op = op
                item.done.append(fut)
                return True
    return False


def settle(chats: Iterable[ChatQueue], table: str, version: int) -> None:
    """A person was given their turn at ``version`` of ``table``: a group's table of that version
    that waits in a queue waits on them (it stops waiting for an AI player's answer to merge)."""
    for item in (i for c in chats for i in c.queue if isinstance(i.op, Show)):
        op = item.op
        assert isinstance(op, Show)
        if op.linger and op.table == table and op.rank[0] == version and not item.busy and not op.turn:
            item.op = dataclasses.replace(op, turn=True)
            item.wake.set()
