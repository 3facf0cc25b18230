"""The bridge's Matrix side (``homeserver.Matrix``, matrix-nio) against a homeserver on a loopback
socket that does what it is asked and then loses the answer: it posts a message or makes a room, then
never answers (the request times out), drops the connection, answers 504 (a gateway that stopped
waiting), or cuts the connection in the middle of its answer.  A message is then in its room once
(the send is repeated with its transaction id) and a number typed against its choices takes them; a
room is made once (a creation has no transaction id: it is never repeated blindly, and the room made
is found by its ``cinq.dm`` mark)."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest
from aiohttp import web

from bridges.matrix.core import Bridge, OutcomeUnknown
from bridges.matrix.homeserver import DM_MARK, Matrix
from bridges.matrix.state import State
from tests.bridges.matrix_fakes import FakeCinq, msg
from tools.loopback import free_port

BOT, ANA = "@cinq:hs", "@ana:hs"
API = "/_matrix/client/v3"


class LossyHomeserver:
    """The few client-server endpoints the bridge uses.  ``lose`` says how the next matching
    request's answer is lost once it was done: ``hang``, ``drop``, ``504`` or ``cut``; ``lose_on`` which
    requests (``send`` or ``create``)."""

    def __init__(self) -> None:
        self.lose: str | None = None
        self.lose_on = "send"
        self.events: dict[str, list[dict[str, Any]]] = {}  # room -> the messages posted in it
        self.txns: dict[str, str] = {}
        self.state: dict[str, list[dict[str, Any]]] = {}  # room -> its state events
        self.posted = asyncio.Event()  # set whenever a message is posted (people see it)
        self.closing = asyncio.Event()  # the test is over: a request left hanging may end
        self._ids = itertools.count(1)

    async def _lost(self, request: web.Request, what: str) -> web.StreamResponse | None:
        if self.lose is None or self.lose_on != what:
            return None
        how, self.lose = self.lose, None
        if how == "hang":
            await self.closing.wait()  # not answered while the client waits: it times out
        if how == "drop":
            assert request.transport is not None
            request.transport.abort()
            return web.Response()
        if how == "cut":  # the answer begins, and the connection is lost in its middle
            resp = web.StreamResponse(headers={"Content-Type": "application/json", "Content-Length": "200"})
            await resp.prepare(request)
            await resp.write(b'{"event_id": "$')
            assert request.transport is not None
            request.transport.abort()
            return resp
        return web.Response(status=504, text="<html>504 Gateway Time-out</html>", content_type="text/html")

    async def send(self, request: web.Request) -> web.StreamResponse:
        room, txn = request.match_info["room"], request.match_info["txn"]
        if txn not in self.txns:  # Matrix keeps one event per transaction id
            self.txns[txn] = f"$ev{next(self._ids)}"
            self.events.setdefault(room, []).append(await request.json())
            self.posted.set()
        return await self._lost(request, "send") or web.json_response({"event_id": self.txns[txn]})

    async def create(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Authorization") != "Bearer tok":
            return web.json_response({"errcode": "M_MISSING_TOKEN", "error": "no token"}, status=401)
        body = await request.json()
        room = f"!room{next(self._ids)}:hs"
        marks = [{"sender": BOT, **e} for e in body.get("initial_state", [])]
        self.state[room] = [{"type": "m.room.create", "state_key": "", "sender": BOT, "content": {}}, *marks]
        return await self._lost(request, "create") or web.json_response({"room_id": room})

    async def joined(self, _: web.Request) -> web.Response:
        return web.json_response({"joined_rooms": list(self.state)})

    async def room_state(self, request: web.Request) -> web.Response:
        room = request.match_info["room"]
        return web.json_response([{"event_id": f"$s{i}", "origin_server_ts": 1, **e}
                                  for i, e in enumerate(self.state[room])])

    async def displayname(self, request: web.Request) -> web.Response:
        assert request.headers["Authorization"] == "Bearer tok"  # the stored login, reused
        return web.json_response({})

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_put(API + "/rooms/{room}/send/m.room.message/{txn}", self.send)
        app.router.add_post(API + "/createRoom", self.create)
        app.router.add_get(API + "/joined_rooms", self.joined)
        app.router.add_get(API + "/rooms/{room}/state", self.room_state)
        app.router.add_put(API + "/profile/{user}/displayname", self.displayname)
        return app


@pytest.fixture
async def world(tmp_path):
    hs = LossyHomeserver()
    runner = web.AppRunner(hs.app())
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    state = State(str(tmp_path / "s.sqlite3"))
    state.put("access_token", "tok")
    state.put("device_id", "DEV")
    matrix = Matrix(f"http://127.0.0.1:{port}", BOT, state, request_timeout=0.5)
    await matrix.login("unused: the stored token is", "Cinquillo")
    cinq = FakeCinq()
    yield Bridge(state, matrix, cinq, locale="en"), hs, cinq
    await matrix.close()
    hs.closing.set()
    await runner.cleanup()
    state.close()


async def _hand_3_lost(b: Bridge, hs: LossyHomeserver, how: str) -> tuple[str, asyncio.Task[None]]:
    """Ana played hand 1's choice, hand 2 withdrew her choices, and hand 3's send is done and its answer
    lost; returns her DM room and the task showing hand 3."""
    await b.on_callback(msg(1, to={"user": {"id": ANA}}, kind="hand", buttons=[("a", "tok-a")]))
    dm = b.state.dm(ANA)
    assert dm is not None
    await b.on_text(dm, ANA, "Ana", "1", "$move1")
    await b.on_callback(msg(2, to={"user": {"id": ANA}}, kind="hand"))
    hs.lose, hs.posted = how, asyncio.Event()
    showing = asyncio.create_task(
        b.on_callback(msg(3, to={"user": {"id": ANA}}, kind="hand", buttons=[("b", "tok-b"), ("c", "tok-c")]))
    )
    await hs.posted.wait()  # hand 3 is in Ana's room: she answers it
    return dm, showing


@pytest.mark.parametrize("how", ["hang", "drop"])
async def test_a_send_whose_answer_is_lost_is_repeated_and_a_number_typed_meanwhile_takes_its_choice(
    world, how
):
    b, hs, cinq = world
    dm, showing = await _hand_3_lost(b, hs, how)
    await b.on_text(dm, ANA, "Ana", "2", "$move2")
    await showing  # matrix-nio repeated the send with its transaction id
    assert cinq.events["$move2"]["token"] == "tok-c"
    assert len(hs.events[dm]) == 3  # three hands, no copy, no "earlier turn" refusal
    assert b.state.unfinished() == []


@pytest.mark.parametrize("how", ["504", "cut"])
async def test_a_send_answered_504_or_cut_keeps_its_note_and_a_number_typed_against_it_takes_its_choice(
    world, how
):
    b, hs, cinq = world
    dm, showing = await _hand_3_lost(b, hs, how)
    with pytest.raises(OutcomeUnknown):
        await showing  # cinq is answered 503 and retries it later
    assert [m["id"] for m, _ in b.state.unfinished()] == ["wh-3"]
    await b.on_text(dm, ANA, "Ana", "2", "$move2")  # before cinq's retry: hand 3 is shown again first
    assert cinq.events["$move2"]["token"] == "tok-c"
    assert len(hs.events[dm]) == 3 and b.state.unfinished() == []


@pytest.mark.parametrize("how", ["hang", "drop", "504", "cut"])
async def test_a_dm_room_made_and_its_answer_lost_is_found_and_not_made_again(world, how):
    b, hs, _ = world
    hs.lose, hs.lose_on = how, "create"
    hand = msg(1, to={"user": {"id": ANA}}, kind="hand", buttons=[("a", "tok-a")])
    with pytest.raises(OutcomeUnknown):
        await b.on_callback(hand)
    (room,) = hs.state  # made once: not repeated by matrix-nio
    await b.on_callback(hand)  # cinq's retry
    assert list(hs.state) == [room] and len(hs.events[room]) == 1
    assert b.state.dm(ANA) == room


async def test_a_room_marked_for_the_person_by_anyone_but_the_bot_is_not_taken_for_their_dm(world):
    # A person (an admin of their DM) could mark a room: G-1, a hand goes only to a room the bot made.
    b, hs, _ = world
    hs.state["!theirs:hs"] = [
        {"type": "m.room.create", "state_key": "", "sender": ANA, "content": {}},
        {"type": DM_MARK, "state_key": "", "sender": ANA, "content": {"user": ANA}},
    ]
    b.state.intend_dm(ANA, 0.0)  # as if a creation had been asked for and not recorded
    await b.on_callback(msg(1, to={"user": {"id": ANA}}, kind="hand"))
    assert b.state.dm(ANA) != "!theirs:hs" and len(hs.state) == 2
