"""The bridge killed while it shows a callback (the e2e test's stall, 2026-12-06): the hand reached the
person's room, its choices were not recorded, the person answered while the bridge was down.  The next
start shows that callback again before it reads the answer (``Bridge.resume``)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bridges.matrix.core import RESUME_S, Bridge
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
