"""The bridge's Matrix side (``homeserver.Matrix``, matrix-nio) against a homeserver on a loopback
socket that does what it is asked and then loses the answer: it posts a message or makes a room, then
never answers (the request times out), drops the connection, answers 504 (a gateway that stopped
waiting), or cuts the connection in the middle of its answer.  A message is then in its room once
(the send is repeated with its transaction id) and a number typed against its choices takes them; a
room is made once (a creation has no transaction id: it is never repeated blindly, and the room made
is found by its ``cinq.dm`` mark)."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import web

from bridges.matrix.core import Bridge, OutcomeUnknown
from bridges.matrix.homeserver import DM_MARK, Matrix
from bridges.matrix.state import State
from tests.bridges.lossy_homeserver import BOT, LossyHomeserver
from tests.bridges.matrix_fakes import FakeCinq, msg
from tools.loopback import free_port

ANA = "@ana:hs"


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


async def test_a_send_whose_connection_is_dropped_is_repeated_and_a_number_typed_meanwhile_takes_its_choice(
    world,
):
    b, hs, cinq = world
    dm, showing = await _hand_3_lost(b, hs, "drop")
    await b.on_text(dm, ANA, "Ana", "2", "$move2")
    await showing  # aiohttp repeats a PUT whose kept-alive connection was dropped: same transaction id
    assert cinq.events["$move2"]["token"] == "tok-c"
    assert len(hs.events[dm]) == 3  # three hands, no copy, no "earlier turn" refusal
    assert b.state.unfinished() == []


@pytest.mark.parametrize("how", ["hang", "504", "cut"])
async def test_a_send_whose_answer_is_lost_keeps_its_note_and_a_number_typed_against_it_takes_its_choice(
    world, how
):
    # Not repeated by matrix-nio (a hung send would run past cinq's callback timeout): the callback is
    # answered 503, and shown again, with its transaction id, by cinq's retry or a number typed first.
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
