"""The bridge killed while it shows a callback (the e2e test's stall, 2026-12-06): the hand reached the
person's room, its choices were not recorded, the person answered while the bridge was down.  The next
start shows that callback again before it reads the answer (``Bridge.resume``).

The same window without a kill: a send answered late (a timeout being repeated) or never (a gateway's
504 after the homeserver posted it).  A number typed against that hand waits for it, or for it to be
shown again with its transaction id.  And a kill between creating a person's DM room and recording it:
the next start finds that room instead of creating a second one."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bridges.matrix.core import CREATE_SETTLE_S, RESUME_S, Bridge, NotYet, OutcomeUnknown
from bridges.matrix.state import State
from tests.bridges.matrix_fakes import FakeCinq, FakeMatrix, Killed, msg

ANA, DM = {"user": {"id": "@ana:hs"}}, "!dm-@ana:hs"
ROOT = Path(__file__).resolve().parents[2]


async def _killed_while_showing_a_hand(path: str, m: FakeMatrix) -> None:
    """Ana played her first hand's choice; another's turn; then her next hand reaches her room and the
    bridge is killed before it records its choices."""
    state = State(path)
    b = Bridge(state, m, FakeCinq(), locale="en")
    await b.on_callback(msg(1, to=ANA, kind="hand", buttons=[("a", "tok-a")]))
    await b.on_text(DM, "@ana:hs", "Ana", "1", "$move1")
    await b.on_callback(msg(2, to=ANA, kind="hand"))  # another's turn: her choices withdrawn
    m.die_after_send = True
    with pytest.raises(Killed):
        await b.on_callback(msg(3, to=ANA, kind="hand", buttons=[("b", "tok-b"), ("c", "tok-c")]))
    m.die_after_send = False
    state.close()


async def test_a_number_typed_while_the_bridge_was_down_takes_the_choice_of_the_hand_it_was_showing(tmp_path):
    path, m = str(tmp_path / "s.sqlite3"), FakeMatrix()
    await _killed_while_showing_a_hand(path, m)
    assert m.sent[-1][0] == DM and "2. c" in m.sent[-1][1]["body"]  # Ana sees hand 3 and answers 2

    state, c = State(path), FakeCinq()
    b = Bridge(state, m, c, locale="en")
    assert await b.resume() == 1
    await b.on_text(DM, "@ana:hs", "Ana", "2", "$move2")  # read after the restart, before cinq's retry
    assert c.events["$move2"]["token"] == "tok-c" and c.events["$move2"]["message"] == "$e3"
    await b.on_callback(msg(3, to=ANA, kind="hand", buttons=[("b", "tok-b"), ("c", "tok-c")]))  # the retry
    assert len(m.sent) == 3  # hand 3 is one event: the resume's send was Matrix's repeat
    assert await b.resume() == 0
    state.close()


async def test_a_send_that_failed_while_the_bridge_lived_is_left_to_cinqs_retry(tmp_path):
    path, m = str(tmp_path / "s.sqlite3"), FakeMatrix()
    state = State(path)
    b = Bridge(state, m, FakeCinq())
    m.fail = True
    with pytest.raises(RuntimeError):
        await b.on_callback(msg(1, to=ANA, kind="hand", buttons=[("a", "tok-a")]))
    m.fail = False
    assert await b.resume() == 0 and m.sent == []
    state.close()


async def test_a_callback_left_half_shown_too_long_ago_is_not_shown_again(tmp_path):
    # A homeserver forgets transaction ids after a while: showing it again could post a second copy.
    path, m = str(tmp_path / "s.sqlite3"), FakeMatrix()
    await _killed_while_showing_a_hand(path, m)
    state = State(path)
    b = Bridge(state, m, FakeCinq())
    assert await b.resume(now=time.time() + RESUME_S + 60) == 0
    assert len(m.sent) == 3 and state.unfinished() == []
    state.close()


def test_the_row_of_a_callback_being_shown_outlives_a_sigkill_of_the_process(tmp_path):
    # ``showing`` does not wait for the disk: what a kill leaves must still be there for the next start.
    path = tmp_path / "s.sqlite3"
    child = (
        "import os, signal, sys, time\n"
        "from bridges.matrix.state import State\n"
        "from tests.bridges.matrix_fakes import msg\n"
        "state = State(sys.argv[1])\n"
        "state.showing(msg(7, kind='hand', buttons=[('a', 'tok-a')]), time.time())\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    run = subprocess.run([sys.executable, "-c", child, str(path)], cwd=ROOT, capture_output=True)
    assert run.returncode == -signal.SIGKILL, run.stderr
    state = State(str(path))
    assert [m["id"] for m, _ in state.unfinished()] == ["wh-7"]
    state.close()


async def _answered_then_withdrawn(b: Bridge) -> None:
    """Ana played her first hand's choice, then another's turn withdrew her choices."""
    await b.on_callback(msg(1, to=ANA, kind="hand", buttons=[("a", "tok-a")]))
    await b.on_text(DM, "@ana:hs", "Ana", "1", "$move1")
    await b.on_callback(msg(2, to=ANA, kind="hand"))


HAND3 = msg(3, to=ANA, kind="hand", buttons=[("b", "tok-b"), ("c", "tok-c")])


async def test_a_number_typed_while_a_hand_is_sent_and_not_yet_answered_waits_for_its_choices(tmp_path):
    # The homeserver posted hand 3 (Ana sees it) and its answer is late: nio repeats a timed-out send.
    state, m, c = State(str(tmp_path / "s.sqlite3")), FakeMatrix(), FakeCinq()
    b = Bridge(state, m, c, locale="en")
    await _answered_then_withdrawn(b)
    m.answer_after = asyncio.Event()
    showing = asyncio.create_task(b.on_callback(HAND3))
    while len(m.sent) < 3:
        await asyncio.sleep(0)
    typed = asyncio.create_task(b.on_text(DM, "@ana:hs", "Ana", "2", "$move2"))
    for _ in range(20):
        await asyncio.sleep(0)
    assert not typed.done() and "$move2" not in c.events  # read once hand 3's choices are recorded
    m.answer_after.set()
    await asyncio.gather(showing, typed)
    assert c.events["$move2"]["token"] == "tok-c" and c.events["$move2"]["message"] == "$e3"
    assert len(m.sent) == 3  # no "earlier turn" refusal was posted
    state.close()


async def test_a_send_whose_answer_was_lost_keeps_its_note_and_a_number_typed_against_it_takes_its_choice(
    tmp_path,
):
    state, m, c = State(str(tmp_path / "s.sqlite3")), FakeMatrix(), FakeCinq()
    b = Bridge(state, m, c, locale="en")
    await _answered_then_withdrawn(b)
    m.lost_after_send = 1  # hand 3 is posted, and the bridge hears a 504
    with pytest.raises(OutcomeUnknown):
        await b.on_callback(HAND3)  # answered 503: cinq retries it later
    assert [m["id"] for m, _ in state.unfinished()] == ["wh-3"]
    await b.on_text(DM, "@ana:hs", "Ana", "2", "$move2")  # typed before cinq's retry
    assert c.events["$move2"]["token"] == "tok-c" and c.events["$move2"]["message"] == "$e3"
    await b.on_callback(HAND3)  # cinq's retry: already shown
    assert len(m.sent) == 3 and state.unfinished() == []  # hand 3 is one event, no refusal
    state.close()


async def test_while_a_sends_outcome_stays_unknown_a_number_typed_in_its_room_is_not_read(tmp_path):
    state, m, c = State(str(tmp_path / "s.sqlite3")), FakeMatrix(), FakeCinq()
    b = Bridge(state, m, c, locale="en")
    await _answered_then_withdrawn(b)
    m.lost_after_send = 2  # hand 3's send, and its repeat for the number, both lost
    with pytest.raises(OutcomeUnknown):
        await b.on_callback(HAND3)
    with pytest.raises(OutcomeUnknown):  # the inbox tries it again later
        await b.on_text(DM, "@ana:hs", "Ana", "2", "$move2")
    assert "$move2" not in c.events and len(m.sent) == 3  # not refused as an earlier turn
    await b.on_text(DM, "@ana:hs", "Ana", "2", "$move2")  # the batch read again
    assert c.events["$move2"]["token"] == "tok-c"
    state.close()


async def test_a_send_whose_answer_was_lost_before_a_kill_is_shown_again_at_the_next_start(tmp_path):
    path, m = str(tmp_path / "s.sqlite3"), FakeMatrix()
    state = State(path)
    await _answered_then_withdrawn(Bridge(state, m, FakeCinq(), locale="en"))
    m.lost_after_send = 1
    with pytest.raises(OutcomeUnknown):
        await Bridge(state, m, FakeCinq(), locale="en").on_callback(HAND3)
    state.close()  # killed before cinq's retry

    state, c = State(path), FakeCinq()
    b = Bridge(state, m, c, locale="en")
    assert await b.resume() == 1
    await b.on_text(DM, "@ana:hs", "Ana", "2", "$move2")
    assert c.events["$move2"]["token"] == "tok-c" and len(m.sent) == 3
    state.close()


async def test_a_kill_between_creating_a_persons_dm_room_and_recording_it_makes_no_second_room(tmp_path):
    path, m = str(tmp_path / "s.sqlite3"), FakeMatrix()
    state = State(path)
    m.die_after_create = True
    with pytest.raises(Killed):
        await Bridge(state, m, FakeCinq()).on_callback(msg(1, to=ANA, kind="hand", buttons=[("a", "tok-a")]))
    m.die_after_create = False
    state.close()
    assert m.dms == ["@ana:hs"] and m.sent == []  # the room exists, Ana is invited to it

    state = State(path)
    b = Bridge(state, m, FakeCinq())
    await b.on_callback(msg(1, to=ANA, kind="hand", buttons=[("a", "tok-a")]))  # cinq's retry
    assert m.dms == ["@ana:hs"] and [room for room, _ in m.sent] == [DM]
    assert state.dm("@ana:hs") == DM and state.room_kind(DM) == "private"
    await b.on_callback(msg(2, to=ANA, kind="reply"))
    assert m.dms == ["@ana:hs"] and [room for room, _ in m.sent] == [DM, DM]
    state.close()


async def test_a_dm_room_still_being_made_at_the_next_start_is_waited_for_and_not_made_twice(tmp_path):
    # Killed while the homeserver was making Ana's room: at the next start it is not made yet.
    state, m = State(str(tmp_path / "s.sqlite3")), FakeMatrix()
    state.intend_dm("@ana:hs", time.time())
    b = Bridge(state, m, FakeCinq())
    hand = msg(1, to=ANA, kind="hand", buttons=[("a", "tok-a")])
    with pytest.raises(NotYet):  # answered 503: cinq sends it again later
        await b.on_callback(hand)
    assert m.dms == [] and m.sent == [] and state.unfinished() == []
    m.created[DM] = "@ana:hs"  # the homeserver made it meanwhile
    await b.on_callback(hand)  # cinq's retry
    assert m.dms == [] and [room for room, _ in m.sent] == [DM] and state.dm("@ana:hs") == DM
    state.close()


async def test_a_dm_room_asked_for_long_ago_and_never_made_is_made(tmp_path):
    state, m = State(str(tmp_path / "s.sqlite3")), FakeMatrix()
    state.intend_dm("@ana:hs", time.time() - CREATE_SETTLE_S - 1)
    await Bridge(state, m, FakeCinq()).on_callback(msg(1, to=ANA, kind="hand"))
    assert m.dms == ["@ana:hs"] and [room for room, _ in m.sent] == [DM]
    state.close()


def test_the_intent_to_create_a_dm_room_outlives_a_sigkill_after_the_room_was_made(tmp_path):
    # A real process, killed (SIGKILL) the moment the homeserver made the room: the next start
    # finds that room and creates none.
    path, made = tmp_path / "s.sqlite3", tmp_path / "made"
    child = (
        "import asyncio, os, signal, sys\n"
        "from bridges.matrix.core import Bridge\n"
        "from bridges.matrix.state import State\n"
        "from tests.bridges.matrix_fakes import FakeCinq, FakeMatrix, msg\n"
        "class Dying(FakeMatrix):\n"
        "    async def create_dm(self, user):\n"
        "        open(sys.argv[2], 'w').write('!made-for-' + user)\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "b = Bridge(State(sys.argv[1]), Dying(), FakeCinq())\n"
        "asyncio.run(b.on_callback(msg(1, to={'user': {'id': '@ana:hs'}}, kind='hand')))\n"
    )
    run = subprocess.run([sys.executable, "-c", child, str(path), str(made)], cwd=ROOT, capture_output=True)
    assert run.returncode == -signal.SIGKILL, run.stderr
    room = made.read_text()
    state, m = State(str(path)), FakeMatrix()
    m.created[room] = "@ana:hs"  # what the homeserver holds
    asyncio.run(Bridge(state, m, FakeCinq()).on_callback(msg(1, to=ANA, kind="hand")))
    assert m.dms == [] and [r for r, _ in m.sent] == [room]
    state.close()
