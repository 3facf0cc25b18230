"""Fakes of the Matrix bridge's two interfaces (``core.Homeserver``, ``core.Cinq``) and a callback
builder, shared by the bridge's tests."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


class Killed(BaseException):
    """The bridge process died (SIGKILL): nothing after the point it is raised at runs, not even an
    ``except Exception``."""


class FakeMatrix:
    """A homeserver that records what was sent; ``txn_id`` deduplicates as Matrix does.  With
    ``die_after_send``, a send reaches the room and the bridge dies before it hears the answer; with
    ``lost_after_send`` (a count), that many sends reach the room and their answer is lost (a
    gateway's 504: ``OutcomeUnknown``); with ``answer_after`` set, a send reaches the room and is
    answered only once that event is set (a slow homeserver, a timed-out send being repeated).
    ``die_after_create``: a DM room is made and the bridge dies before it hears of it."""

    user_id = "@cinq:hs"

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.txns: dict[str, str] = {}
        self.dms: list[str] = []
        self.fail = False
        self.die_after_send = False
        self.lost_after_send = 0
        self.answer_after: asyncio.Event | None = None
        self.die_after_create = False
        self.created: dict[str, str] = {}  # DM room -> its person
        self.redacted: set[str] = set()
        self.asked: list[str] = []  # the events still_shown was asked about
        self.names: dict[str, str] = {}  # rooms' display names

    async def send(self, room: str, content: dict[str, Any], txn_id: str) -> str:
        if self.fail:
            raise RuntimeError("homeserver down")
        if txn_id not in self.txns:
            self.sent.append((room, content))
            self.txns[txn_id] = f"$e{len(self.sent)}"
        if self.die_after_send:
            raise Killed(f"killed once {self.txns[txn_id]} was in {room}")
        if self.lost_after_send:
            from bridges.matrix.core import OutcomeUnknown

            self.lost_after_send -= 1
            raise OutcomeUnknown(f"504 Gateway Timeout once {self.txns[txn_id]} was in {room}")
        if self.answer_after is not None:
            await self.answer_after.wait()
        return self.txns[txn_id]

    async def still_shown(self, room: str, event: str) -> bool:
        self.asked.append(event)
        return event in self.txns.values() and event not in self.redacted

    async def create_dm(self, user: str) -> str:
        await asyncio.sleep(0)  # let a concurrent callback run in between
        self.dms.append(user)
        room = f"!dm-{user}" + (f"-{self.dms.count(user)}" if user in self.created.values() else "")
        self.created[room] = user
        if self.die_after_create:
            raise Killed(f"killed once {room} was made")
        return room

    async def find_dm(self, user: str) -> str | None:
        # The bridge asks only when it has not recorded one: the latest made for ``user``.
        return next((room for room, u in reversed(self.created.items()) if u == user), None)

    def room_name(self, room: str) -> str | None:
        return self.names.get(room)


class FakeCinq:
    """cinq's webhook: records each event by webhook id (a repeated id is acted on once), and every
    post's webhook id (``posts``: how often each was sent)."""

    def __init__(self) -> None:
        self.events: dict[str, dict[str, Any]] = {}
        self.posts: list[str] = []

    async def post(self, event: dict[str, Any], webhook_id: str) -> None:
        self.posts.append(webhook_id)
        self.events.setdefault(webhook_id, event)


def msg(
    n: int,
    *,
    to: dict[str, Any] | None = None,
    kind: str = "table",
    table: str | None = "t1",
    text: str = "Cinquillo · round 1",
    buttons: list[tuple[str, str]] = (),
    locale: str = "en",
    replaces: str | None = None,
) -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"wh-{n}",
        "platform": "matrix",
        "to": to or {"chat": {"id": "!group", "kind": "group"}},
        "table": table,
        "version": n,
        "kind": kind,
        "locale": locale,
        "text": text,
        "buttons": [{"label": lb, "token": tk} for lb, tk in buttons],
        "view": None,
        "replaces": replaces,
    }


@contextmanager
def bridge_world(tmp_path: Path, locale: str) -> Iterator[tuple[Any, FakeMatrix, FakeCinq]]:
    """A bridge on its own state file between a fake homeserver and a fake cinq: (bridge, matrix, cinq)."""
    from bridges.matrix.core import Bridge
    from bridges.matrix.state import State

    state = State(str(tmp_path / "state.sqlite3"))
    m, c = FakeMatrix(), FakeCinq()
    try:
        yield Bridge(state, m, c, locale=locale), m, c
    finally:
        state.close()
