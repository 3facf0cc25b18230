"""People's messages, from the sync to the bridge: one queue per room, so that a room whose number
waits does not hold up the others.

A number typed in a room waits there until the choices it answers are recorded: a callback whose send
is slow, or whose outcome is unknown (a gateway's 5xx, a timeout) and must be shown again first
(``Bridge._settle``).  Read straight from the sync, that wait stopped the sync itself: no other room
was read until the homeserver answered.  Here each sync batch is stored (``State.queue``) in the same
transaction as the sync token after it, and each room's messages are handed on in order by that room's
own task, each message removed once handed on.  So the sync reads on while a room waits; the token
never moves past a message that is not stored; a kill loses no message (the next start hands on what
is stored, after ``Bridge.resume``) and hands on none that was already handed on, but the one being
handed on when it died (cinq answers that one as a duplicate: its ``webhook-id`` is the event id).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import NamedTuple

from bridges.matrix.core import Refused
from bridges.matrix.state import State

log = logging.getLogger("bridges.matrix")
# Messages a room may hold while its head waits; beyond it, its new messages are not stored (a
# number waits for minutes at most: ``core.RESUME_S`` after cinq's last retry of the callback).
PER_ROOM = 200


class Incoming(NamedTuple):
    """A person's text message, as read from the sync."""

    room: str
    sender: str
    name: str  # the sender's display name in the room
    body: str
    event: str  # the Matrix event id


class Inbox:
    """Stores what the sync read and hands it on, one room at a time, to ``handle`` (``Bridge.on_text``),
    trying a message again (after ``retry_s``, doubling up to ``retry_cap_s``) while it fails."""

    def __init__(
        self,
        state: State,
        handle: Callable[[str, str, str, str, str], Awaitable[None]],
        retry_s: float = 1.0,
        retry_cap_s: float = 30.0,
        per_room: int = PER_ROOM,
    ) -> None:
        self.state = state
        self.handle = handle
        self.retry_s = retry_s
        self.retry_cap_s = retry_cap_s
        self.per_room = per_room
        self._rooms: dict[str, asyncio.Task[None]] = {}

    def take(self, messages: list[Incoming], since: str) -> None:
        """Store a sync batch and the token after it, then have each room's messages handed on."""
        rooms, dropped = self.state.queue(messages, since, self.per_room)
        if dropped:
            log.warning("%d message(s) not stored: their room holds %d waiting", dropped, self.per_room)
        for room in rooms:
            self._wake(room)

    def start(self) -> None:
        """Hand on what a previous process stored and did not hand on (call after ``Bridge.resume``)."""
        for room in self.state.waiting_rooms():
            self._wake(room)

    async def idle(self) -> None:
        """Wait until every stored message was handed on (tests and a clean stop)."""
        while self._rooms:
            await asyncio.gather(*self._rooms.values(), return_exceptions=True)

    async def close(self) -> None:
        """Stop handing on; what is stored stays for the next start."""
        tasks = list(self._rooms.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _wake(self, room: str) -> None:
        if room not in self._rooms:
            self._rooms[room] = asyncio.create_task(self._drain(room), name=f"inbox {room}")

    async def _drain(self, room: str) -> None:
        delay = self.retry_s
        try:
            # No await between finding the room empty and leaving ``_rooms``: a ``take`` in between
            # would otherwise find this task and not start another.
            while (head := self.state.next_in(room)) is not None:
                seq, sender, name, body, event = head
                try:
                    await self.handle(room, sender, name, body, event)
                except Refused as e:  # the homeserver will not take the bridge's answer in that room
                    log.warning("%s in %s not answered: %s", event, room, e)
                except Exception as e:
                    log.warning("%s in %s not handed on yet (again in %.0f s): %s", event, room, delay, e)
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, self.retry_cap_s)
                    continue
                self.state.handed_on(seq)
                delay = self.retry_s
        finally:
            del self._rooms[room]
