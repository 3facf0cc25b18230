"""The bridge's decisions, between two interfaces: the Matrix homeserver and cinq's webhook.

Inbound: a message in a room becomes a signed event for cinq (its ``webhook-id`` is the Matrix event
id, so an event read again after a restart is not acted on twice); a bare number answers the room's
numbered choices and becomes an ``action`` with that choice's token.  Outbound: a callback for a chat
goes to that room, one for a person to their DM room (created when needed: a private message is never
shown anywhere else); a table's table/hand message is edited in place (``m.replace``) while it is the
room's latest message, and posted anew (so people are notified and find it at the bottom) when the
room has moved on since (someone wrote, the bridge posted something else), when the match starts
(the lobby's message, with how to join, stays as it was) and when a round ends; a hand that asks for
a move is always posted anew so the person is notified.  Never an older table version over a newer
one: a table/hand callback whose version is below the one its message shows (a retry, callbacks
that overtook each other) is recorded as shown and draws nothing, and the choices a table's message
offered are withdrawn only by a newer version of it.

Boards (``/rating``, ``/top``): a number that answers a message's choices names that message's Matrix
event as the action's ``message``; cinq's answer to a board choice says it ``replaces`` that event,
and the bridge edits it in place, so a board stays one message whatever is chosen.  Only an event the
bridge itself posted with choices in that room, and not redacted since, is edited; for any other
``replaces`` the board is posted anew.

A crash: a callback being shown when the bridge stopped is shown again (``resume``) before the next
start reads anything people wrote, so the choices of a message that reached its room are known when a
number typed against it is read.  So is one whose send's outcome is unknown (a timeout, a gateway's
5xx after the homeserver may have posted it): it keeps its note, and a number typed in its room is read
only once it was shown (again, with the same transaction id) or is being shown no more.  A person's DM
room is noted as intended before it is created, and looked for before another is created; one asked
for moments ago and not found yet may still be being made, and is looked for again later.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from typing import Any, Protocol

from bridges.matrix import render
from bridges.matrix.state import State

NUMBER = re.compile(r"^\s*(\d{1,3})\s*\.?\s*$")
# The longest ``message`` cinq takes in an action (adapters/webhook/openapi.json); Matrix event ids
# are far shorter in practice, and a longer one is left out rather than have the action refused.
MAX_MESSAGE = 128
# Kinds whose last message is kept up to date in place.
EDITED = ("table", "hand")
# How old a callback left half-shown by a crash may be and still be resumed: a homeserver remembers a
# transaction id for a while only (Synapse: 30 min), after which showing it again could post a copy.
RESUME_S = 600.0
# How long after a DM room was asked for, and not found, the bridge waits before asking again: the
# homeserver may still be making it (a room's creation takes well under a second on Synapse; cinq
# retries a callback for a minute or more, so a callback waits, it is not lost).
CREATE_SETTLE_S = 30.0
log = logging.getLogger("bridges.matrix")


class Refused(Exception):
    """The homeserver answered that it did not do what was asked (an error below 500): nothing was
    posted or created."""


class OutcomeUnknown(Exception):
    """A request whose outcome is not known (timed out, connection lost, a gateway's 5xx): the
    homeserver may have done it.  A send is repeated with its transaction id; a DM room looked for."""


class NotYet(Exception):
    """Nothing was sent, and it cannot be yet (a DM room asked for may still be being made): cinq
    sends the callback again later."""


def _phase(msg: dict[str, Any]) -> str | None:
    """What a table message shows: ``lobby`` (seats, how to join) or ``match`` (None: no view)."""
    view = msg.get("view")
    if not isinstance(view, dict):
        return None
    return "lobby" if view.get("status") == "lobby" else "match"


class Homeserver(Protocol):
    """What the bridge needs of Matrix (``homeserver.Matrix`` is the real one)."""

    user_id: str

    async def send(self, room: str, content: dict[str, Any], txn_id: str) -> str:
        """Send ``content`` to ``room``; the same ``txn_id`` is sent once; returns the event id."""
        ...

    async def still_shown(self, room: str, event: str) -> bool:
        """Whether ``event`` in ``room`` still shows its content (False: redacted, or not found)."""
        ...

    async def create_dm(self, user: str) -> str:
        """Create a direct-message room with ``user`` (invited), marked as the bot's DM with ``user``
        so that ``find_dm`` can find it; returns its id."""
        ...

    async def find_dm(self, user: str) -> str | None:
        """A room ``create_dm`` made for ``user`` that the bridge has not recorded (None: none)."""
        ...

    def room_name(self, room: str) -> str | None:
        """The room's name as its members see it (None: unknown)."""
        ...


class Cinq(Protocol):
    """What the bridge needs of cinq: posting one signed inbound event."""

    async def post(self, event: dict[str, Any], webhook_id: str) -> None:
        """POST ``event``; returns once cinq took it (202, or a duplicate's first answer)."""
        ...


class Bridge:
    """Maps Matrix messages to cinq events and cinq callbacks to Matrix messages."""

    def __init__(self, state: State, matrix: Homeserver, cinq: Cinq, locale: str = "es") -> None:
        self.state = state
        self.matrix = matrix
        self.cinq = cinq
        self.locale = locale
        self._dm_locks: dict[str, asyncio.Lock] = {}
        # Held while a callback is shown in a room, from before its send until its choices are
        # recorded: a number typed there waits for it (the send may be slow to answer, timed out and
        # being repeated, while people already see the message).
        self._room_locks: dict[str, asyncio.Lock] = {}
        self._in_flight: set[str] = set()
        # Matrix events this process sent, by kind ("send" or "edit"): the bench reads them.
        self.sent = {"send": 0, "edit": 0}

    async def on_text(self, room: str, sender: str, name: str, body: str, event_id: str) -> None:
        """A person wrote ``body`` in ``room``: forward it to cinq (a number picks a choice)."""
        if sender == self.matrix.user_id:
            return
        self.state.at_bottom(room, event_id)  # the room moved on: a table above is posted anew
        kind = self.state.room_kind(room)
        chat: dict[str, Any] = {"id": room, "kind": kind}
        title = self.matrix.room_name(room) if kind == "group" else None
        if title:
            chat["title"] = title[:128]  # a group's name: where a daily result may be shared
        base = {
            "chat": chat,
            "user": {"id": sender, "name": name[:128], "locale": self.locale},
        }
        number = NUMBER.match(body)
        if number:
            tokens, locale, offered_on = await self._choices(room)
        else:
            tokens, locale, offered_on = self.state.pending(room)
        if number and tokens:
            n = int(number.group(1))
            if not 1 <= n <= len(tokens):
                log.debug("%s in %s: %d of %d choices, refused", event_id, room, n, len(tokens))
                line = render.text(locale or self.locale, "no_choice", n=n, k=len(tokens))
                await self._send(room, render.notice(line), f"refuse-{event_id}", "send")
                return
            action = {"type": "action", **base, "token": tokens[n - 1]}
            if offered_on and len(offered_on) <= MAX_MESSAGE:
                action["message"] = offered_on  # the message whose choice this is: a board redraws it
            log.debug("%s in %s: choice %d of %s, to cinq", event_id, room, n, offered_on)
            await self.cinq.post(action, event_id)
            return
        if number and self.state.ever_offered(room):
            # The choices were withdrawn (the turn moved on): the number answers an earlier turn, and
            # cinq would read it as chat text ("that is not a command").
            log.debug("%s in %s: %s answers a withdrawn choice, refused", event_id, room, number.group(1))
            line = render.text(locale or self.locale, "stale_choice")
            await self._send(room, render.notice(line), f"refuse-{event_id}", "send")
            return
        log.debug("%s in %s: text, to cinq", event_id, room)
        await self.cinq.post({"type": "message", **base, "text": body[:4096]}, event_id)

    async def on_invite(self, room: str, inviter: str, is_direct: bool) -> None:
        """Remember what kind of room the bot was invited to (the caller joins it)."""
        if is_direct:
            self.state.set_room(room, "private", inviter)
        elif self.state.room_kind(room) != "private":
            self.state.set_room(room, "group")

    async def on_callback(self, msg: dict[str, Any]) -> None:
        """Show one callback from cinq (an OutboundMessage document); a repeated id is shown once."""
        if self.state.is_done(msg["id"]):
            return
        # Written before anything reaches Matrix, gone with the ``done`` row: a crash in between
        # leaves it for ``resume``.  A failure the process lives through is cinq's to retry.
        self.state.showing(msg, time.time())
        self._in_flight.add(msg["id"])
        try:
            await self._show(msg)
        except OutcomeUnknown as e:
            # It may be in its room: the note stays, for a number typed there (``_settle``), cinq's
            # retry and the next start.
            log.warning("callback %s: outcome unknown, kept to be shown again: %s", msg["id"], e)
            raise
        except Exception:
            self.state.not_showing(msg["id"])
            raise
        finally:
            self._in_flight.discard(msg["id"])

    async def resume(self, now: float | None = None) -> int:
        """Finish showing the callbacks a previous process was showing when it stopped (a crash, a
        kill); returns how many.  Called before the bridge reads what people wrote: a hand posted just
        before the crash may be in its room with its choices unrecorded, and a number typed against it
        while the bridge was down must take its choice, not be refused as an earlier turn's.  Each is
        shown with its own transaction id, so Matrix keeps the event it may already have, and cinq's
        retry of it is a repeat.  One begun longer ago than ``RESUME_S`` is left to cinq."""
        now = time.time() if now is None else now
        finished = 0
        for msg, began in self.state.unfinished():
            if now - began > RESUME_S:
                log.warning("callback %s begun %.0f s ago is not resumed", msg["id"], now - began)
                self.state.not_showing(msg["id"])
                continue
            try:
                await self.on_callback(msg)
            except Exception as e:
                log.warning("callback %s not resumed (cinq sends it again): %s", msg["id"], e)
                continue
            finished += 1
        return finished

    async def _choices(self, room: str) -> tuple[list[str], str | None, str | None]:
        """The room's pending choices, once no callback shown there is of unknown outcome: one being
        shown is waited for (on the room's lock), one whose outcome stayed unknown is shown again
        (``_settle``, which raises ``OutcomeUnknown`` while it still is: the number is read later)."""
        while True:
            await self._settle(room)
            async with self._room_lock(room):  # a callback being shown here records its choices first
                if not any(self._room_of(m) == room for m, _ in self.state.unfinished()):
                    return self.state.pending(room)
            # One being shown here ended with its outcome unknown while this waited for the lock, or
            # one is still on its way to the lock (creating the DM room): settle again shortly.
            await asyncio.sleep(0.05)

    async def _settle(self, room: str) -> None:
        """Show again the callbacks for ``room`` whose send's outcome is unknown, before a number typed
        there is read (it may answer one of them).  Raises ``OutcomeUnknown`` while one still is: the
        number is then handed on later (the inbox tries it again), not against older choices."""
        for msg, began in self.state.unfinished():
            if msg["id"] in self._in_flight or self._room_of(msg) != room:
                continue  # one being shown now is waited for on the room's lock
            if time.time() - began > RESUME_S:
                self.state.not_showing(msg["id"])
                continue
            try:
                await self.on_callback(msg)
            except OutcomeUnknown:
                raise
            except Exception as e:  # refused: it is not in the room, and cinq sends it again
                log.warning("callback %s not shown again: %s", msg["id"], e)

    def _room_of(self, msg: dict[str, Any]) -> str | None:
        to = msg["to"]
        return str(to["chat"]["id"]) if "chat" in to else self.state.dm(to["user"]["id"])

    def _room_lock(self, room: str) -> asyncio.Lock:
        return self._room_locks.setdefault(room, asyncio.Lock())

    async def _show(self, msg: dict[str, Any]) -> None:
        to = msg["to"]
        room = to["chat"]["id"] if "chat" in to else await self._dm(to["user"]["id"])
        async with self._room_lock(room):
            if not self.state.is_done(msg["id"]):  # the same callback, shown meanwhile (cinq's retry)
                await self._show_in(room, msg)

    async def _show_in(self, room: str, msg: dict[str, Any]) -> None:
        content = render.content(msg)
        tokens = [b["token"] for b in msg.get("buttons") or []]
        table, kind = msg.get("table"), msg["kind"]
        locale = msg.get("locale") or self.locale
        version = msg.get("version")
        drawn = (table, kind, version) if table and kind in EDITED and isinstance(version, int) else None
        if drawn is not None and self._older(room, *drawn):
            log.debug("callback %s: %s v%s older than %s shows, not drawn", msg["id"], kind, version, room)
            self.state.shown(msg["id"], room, locale, None)
            return
        txn = "cb-" + re.sub(r"[^A-Za-z0-9._-]", "_", msg["id"])
        posted = None
        replaces = msg.get("replaces")
        if replaces and self.state.offered(room, replaces) and await self.matrix.still_shown(room, replaces):
            # A board redrawn: the same event, edited (its later choices still name it).  A redacted
            # one is not: an edit of it would stay hidden, so the board is posted anew instead.
            await self._send(room, render.replacement(replaces, content), txn, "edit")
            shows = replaces
        elif table and kind in EDITED:
            original = self.state.posted(room, table, kind)
            phase = _phase(msg)
            if original and not self._anew(room, table, kind, original, phase, msg, tokens):
                await self._send(room, render.replacement(original, content), txn, "edit")
                shows = original
                if phase != self.state.phase(room, table, kind):
                    posted = (table, kind, original, phase)
            else:
                shows = await self._send(room, content, txn, "send")
                posted = (table, kind, shows, phase)
        else:
            shows = await self._send(room, content, txn, "send")
        # The numbers answer the last message that offered choices; a table or hand without any
        # (another's turn) withdraws them, so a late number is refused instead of sent stale; but
        # not one of the same version as the hand that offered them (the room's view of that turn).
        keep = tokens if tokens or kind in EDITED else None
        if not tokens and drawn is not None and self._offered_since(room, drawn[0], drawn[2]):
            keep = None
        self.state.shown(msg["id"], room, locale, keep, posted, shows, drawn)
        log.debug("callback %s: %s v%s shown in %s as %s, %d choices", msg["id"], kind, version, room, shows,
                  len(tokens))

    def _older(self, room: str, table: str, kind: str, version: int) -> bool:
        """Whether ``room`` already shows a newer version of ``table``'s ``kind`` message."""
        shown = self.state.drawn(room, table, kind)
        return shown is not None and version < shown

    def _offered_since(self, room: str, table: str, version: int) -> bool:
        """Whether the room's pending choices came from ``table`` at ``version`` or later."""
        offered_table, offered_version = self.state.offered_at(room)
        return offered_table == table and offered_version is not None and version <= offered_version

    def _anew(self, room: str, table: str, kind: str, original: str, phase: str | None,
              msg: dict[str, Any], tokens: list[str]) -> bool:
        """Whether a table/hand update is posted as a new message instead of editing ``original``:
        a hand asking for a move (a notification), a room that moved on since, the match's start (the
        lobby's message keeps how to join), a round's end (its result is news)."""
        if kind == "hand" and tokens:
            return True
        if self.state.bottom(room) not in (None, original):
            return True
        before = self.state.phase(room, table, kind)
        if before is not None and phase is not None and before != phase:
            return True
        outcome = msg.get("outcome") or {}
        return bool(outcome.get("round")) and not (outcome.get("standings") or {}).get("over")

    async def _send(self, room: str, content: dict[str, Any], txn: str, what: str) -> str:
        event = await self.matrix.send(room, content, txn)
        self.sent[what] += 1
        if what == "send":
            self.state.at_bottom(room, event)
        return event

    async def _dm(self, user: str) -> str:
        """The DM room of ``user``, created (once, even under concurrent callbacks, a crash or a lost
        answer) if missing."""
        lock = self._dm_locks.setdefault(user, asyncio.Lock())
        async with lock:
            room = self.state.dm(user)
            if room is not None:
                return room
            asked = self.state.dm_intended(user)
            if asked is not None:
                # Asked for before and never recorded: the process died in between, or the answer was
                # lost; the homeserver may have made it, and the person may be in it already.
                room = await self.matrix.find_dm(user)
                if room is not None:
                    log.info("found %s's DM room %s, created and not recorded", user, room)
                elif time.time() - asked < CREATE_SETTLE_S:
                    # The homeserver may be making it still (asked by a process killed since, or by a
                    # request that timed out): asking again now could make a second room.
                    raise NotYet(f"{user}'s DM room, asked for, is not made yet: looked for later")
            if room is None:
                self.state.intend_dm(user, time.time())
                try:
                    room = await self.matrix.create_dm(user)
                except Refused:
                    self.state.forget_dm_intent(user)  # nothing was made: the next attempt need not wait
                    raise
            self.state.set_room(room, "private", user)
            return room
