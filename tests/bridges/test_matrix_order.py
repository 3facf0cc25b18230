"""The Matrix bridge never draws an older table version over a newer one (issue 36): it edits a
table's message in place, so a callback that arrives after a newer one of the same message (cinq's
retry of a callback whose answer was lost, two callbacks overtaking each other) must not be shown.
Against the fakes of the bridge's two interfaces, and once through the bridge's real callback server."""

from __future__ import annotations

import json
import sqlite3
import time

import aiohttp
import pytest
from aiohttp import web

from adapters.webhook import signing as cinq_signing
from bridges.matrix.app import callback_app
from bridges.matrix.core import Bridge
from bridges.matrix.state import State
from tests.bridges.matrix_fakes import FakeCinq, FakeMatrix, bridge_world, msg
from tools.loopback import free_port

SECRET = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
HAND = {"user": {"id": "@ana:hs"}}


@pytest.fixture
def world(tmp_path):
    with bridge_world(tmp_path, "en") as w:
        yield w


def _room(version: int) -> dict[str, object]:
    """The room's table view of a private table, in Ana's DM (an id of its own beside her hand's)."""
    return {**msg(version, to={"chat": {"id": "!dm-@ana:hs", "kind": "private"}}, text=f"table v{version}"),
            "id": f"wh-room-{version}"}


def _bodies(m: FakeMatrix) -> list[str]:
    """What each Matrix event shows (an edit: its new content)."""
    return [c.get("m.new_content", c)["body"] for _, c in m.sent]


async def test_an_older_table_version_is_never_drawn_over_a_newer_one(world):
    b, m, _ = world
    await b.on_callback(msg(1, text="v1"))
    await b.on_callback(msg(3, text="v3"))
    await b.on_callback(msg(2, text="v2"))  # overtaken: v3 is shown already
    assert _bodies(m) == ["v1", "v3"]
    await b.on_callback(msg(2, text="v2"))  # cinq's retry of it: still nothing
    await b.on_callback(msg(4, text="v4"))  # a newer one is drawn as usual
    assert _bodies(m) == ["v1", "v3", "v4"]
    assert b.sent == {"send": 1, "edit": 2}


async def test_an_older_hand_keeps_neither_its_text_nor_its_choices(world):
    b, m, c = world
    await b.on_callback(msg(4, to=HAND, kind="hand", text="v4", buttons=[("old", "tok-old")]))
    await b.on_callback(msg(6, to=HAND, kind="hand", text="v6", buttons=[("new", "tok-new")]))
    await b.on_callback(msg(5, to=HAND, kind="hand", text="v5"))  # late: another's turn, before v6
    assert [body.split("\n")[0] for body in _bodies(m)] == ["v4", "v6"]
    # v5 would have withdrawn the choices; v6's still count.
    await b.on_text("!dm-@ana:hs", "@ana:hs", "Ana", "1", "$ev1")
    assert c.events["$ev1"]["token"] == "tok-new"


async def test_the_rooms_view_of_the_turn_that_offered_choices_does_not_withdraw_them(world):
    # A private table: its room is the person's DM, so the room's view of a version lands beside the
    # hand of the same version; only a newer version of the table ends the person's turn.
    b, _, c = world
    await b.on_callback(msg(7, to=HAND, kind="hand", text="your turn", buttons=[("5", "tok5")]))
    await b.on_callback(_room(7))
    await b.on_text("!dm-@ana:hs", "@ana:hs", "Ana", "1", "$ev1")
    assert c.events["$ev1"]["token"] == "tok5"
    await b.on_callback(_room(8))
    await b.on_text("!dm-@ana:hs", "@ana:hs", "Ana", "1", "$ev2")
    assert "$ev2" not in c.events  # answered as an earlier turn's choice


async def test_versions_are_kept_per_table_and_per_room(world):
    b, m, _ = world
    await b.on_callback(msg(5, text="t1 v5"))
    await b.on_callback(msg(2, table="t2", text="t2 v2"))  # another table: its own message
    await b.on_callback(msg(3, to={"chat": {"id": "!other", "kind": "group"}}, text="t1 v3 elsewhere"))
    assert _bodies(m) == ["t1 v5", "t2 v2", "t1 v3 elsewhere"]


async def test_out_of_order_callbacks_through_the_callback_server(tmp_path):
    state, m = State(str(tmp_path / "s.sqlite3")), FakeMatrix()
    runner = web.AppRunner(callback_app(Bridge(state, m, FakeCinq()), SECRET))
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        async with aiohttp.ClientSession() as s:
            for n in (1, 3, 2):
                body = json.dumps(msg(n, text=f"v{n}")).encode()
                headers = {**cinq_signing.headers([SECRET], f"wh-{n}:1", int(time.time()), body),
                           "content-type": "application/json"}
                async with s.post(f"http://127.0.0.1:{port}/cb", data=body, headers=headers) as r:
                    assert r.status == 200  # taken (the late one too: cinq must not retry it)
        assert _bodies(m) == ["v1", "v3"]
    finally:
        await runner.cleanup()
        state.close()


async def test_a_state_file_from_an_older_bridge_opens_and_keeps_its_choices(tmp_path):
    path = str(tmp_path / "old.sqlite3")
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE pending (room TEXT PRIMARY KEY, tokens TEXT NOT NULL, locale TEXT NOT NULL)")
    db.execute("INSERT INTO pending VALUES ('!dm-@ana:hs', '[\"tok-a\"]', 'en')")
    db.commit()
    db.close()
    state = State(path)
    try:
        assert state.pending("!dm-@ana:hs") == (["tok-a"], "en", None)
        assert state.offered_at("!dm-@ana:hs") == (None, None)
    finally:
        state.close()
