"""One room's wait does not hold up the others (``inbox.Inbox``), through the real sync loop and
matrix-nio against a homeserver on a loopback socket.

Room A's table is posted and its send hangs (the homeserver is slow for that room); a person answers
it with a number, which must wait for that table's choices.  Meanwhile a number typed in room B is
handed to cinq; A's number is handed on once A's send completes, once, with the choice of the table
people see; and a bridge stopped while A's number waits hands it on at its next start, and hands on
nothing that it had handed on before (its parts stopped in this process, and the process SIGKILLed).
And the inbox's bounds, and a sync batch stored with its token or not at all."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from bridges.matrix import signing
from bridges.matrix.config import REQUEST_TIMEOUT_S, Config
from bridges.matrix.core import Bridge, OutcomeUnknown
from bridges.matrix.homeserver import Matrix
from bridges.matrix.inbox import Inbox, Incoming
from bridges.matrix.state import State
from tests.bridges.lossy_homeserver import BOT, LossyHomeserver
from tests.bridges.matrix_fakes import FakeCinq, msg
from tools.loopback import free_port

A, B = "!a:hs", "!b:hs"
SECRET = "whsec_" + "k" * 32
ROOT = Path(__file__).resolve().parents[2]
IN_A, IN_B = {"chat": {"id": A, "kind": "group"}}, {"chat": {"id": B, "kind": "group"}}
TABLE_A = msg(1, to=IN_A, table="ta", buttons=[("x", "tok-a1"), ("y", "tok-a2")])
TABLE_A2 = msg(2, to=IN_A, table="ta", text="Cinquillo · round 2", buttons=[("x", "tok-a3"), ("y", "tok-a4")])
TABLE_B = msg(3, to=IN_B, table="tb", buttons=[("z", "tok-b1")])


@asynccontextmanager
async def homeserver() -> AsyncIterator[tuple[LossyHomeserver, str]]:
    hs = LossyHomeserver()
    runner = web.AppRunner(hs.app())
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield hs, f"http://127.0.0.1:{port}"
    finally:
        hs.closing.set()
        hs.release.set()
        await runner.cleanup()


@asynccontextmanager
async def bridge(url: str, path: Path, cinq: FakeCinq) -> AsyncIterator[tuple[Bridge, Inbox]]:
    """A bridge process's parts as ``app.serve`` wires them: resume, then the inbox, then the sync.
    Leaving it stops the sync and the inbox mid-way (cancelled: what is stored stays, as after a kill)."""
    state = State(str(path))
    if state.get("since") is None:
        state.put("access_token", "tok")
        state.put("device_id", "DEV")
        state.put("since", "s0")  # not a first start: what people write is read
    matrix = Matrix(url, BOT, state, request_timeout=0.5)
    await matrix.login("unused: the stored token is", "Cinquillo")
    b = Bridge(state, matrix, cinq, locale="en")
    await b.resume()
    inbox = Inbox(state, b.on_text, retry_s=0.05, retry_cap_s=0.2)
    inbox.start()
    sync = asyncio.create_task(matrix.run(inbox.take, b.on_invite))
    try:
        yield b, inbox
    finally:
        sync.cancel()
        await asyncio.gather(sync, return_exceptions=True)
        await inbox.close()
        await matrix.close()
        state.close()


async def until(condition, what: str) -> None:
    """Wait until ``condition()`` holds (a guard against a hang, not a measure of time)."""
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.01)
    try:
        await asyncio.wait_for(poll(), 60)
    except TimeoutError:
        pytest.fail(f"never: {what}")


async def _a_hangs_while_both_rooms_answer(
    hs: LossyHomeserver, b: Bridge, cinq: FakeCinq
) -> asyncio.Task[None]:
    """Both rooms show a table with choices; A's next table is posted and its send hangs; Ana answers
    it (2: tok-a4) and Bob answers B's (1: tok-b1).  Returns the task showing A's second table."""
    await b.on_callback(TABLE_A)
    await b.on_callback(TABLE_B)
    hs.hang_in.add(A)
    hs.posted = asyncio.Event()
    showing = asyncio.create_task(b.on_callback(TABLE_A2))
    await hs.posted.wait()  # people in A see round 2's choices
    hs.say(A, "@ana:hs", "2", "$a-num")
    hs.say(B, "@bob:hs", "1", "$b-num")
    await until(lambda: "$b-num" in cinq.events, "B's number handed on while A's send hangs")
    assert cinq.events["$b-num"]["token"] == "tok-b1"
    assert "$a-num" not in cinq.events  # it waits for A's table's choices
    return showing


async def test_a_number_waiting_on_one_rooms_send_does_not_hold_up_another_room(tmp_path):
    cinq = FakeCinq()
    async with homeserver() as (hs, url), bridge(url, tmp_path / "s.sqlite3", cinq) as (b, inbox):
        showing = await _a_hangs_while_both_rooms_answer(hs, b, cinq)
        with pytest.raises(OutcomeUnknown):
            await showing  # timed out: cinq is answered 503 (and retries it later)
        hs.say(B, "@bob:hs", "hello", "$b-text")  # B is still read while A's number waits
        await until(lambda: "$b-text" in cinq.events, "B's text handed on")
        assert "$a-num" not in cinq.events
        hs.release.set()  # the homeserver answers A's sends again
        await until(lambda: "$a-num" in cinq.events, "A's number handed on")
        await inbox.idle()
        assert b.state.unfinished() == []
    assert cinq.events["$a-num"]["token"] == "tok-a4"  # the choice of the table people see
    assert cinq.posts.count("$a-num") == 1 and cinq.posts.count("$b-num") == 1
    assert len(hs.events[A]) == 2 and len(hs.events[B]) == 1  # no copy of round 2, no refusal


async def test_a_bridge_stopped_while_a_number_waits_hands_it_on_at_its_next_start_and_nothing_twice(
    tmp_path,
):
    # Its parts in this process, cancelled (nothing after the cancellation point writes the state);
    # the next test kills the process itself.
    cinq, path = FakeCinq(), tmp_path / "s.sqlite3"
    async with homeserver() as (hs, url):
        async with bridge(url, path, cinq) as (b, _):
            showing = await _a_hangs_while_both_rooms_answer(hs, b, cinq)
            hs.say(B, "@bob:hs", "hello", "$b-text")
            await until(lambda: "$b-text" in cinq.events, "B's text handed on")
            with pytest.raises(OutcomeUnknown):
                await showing
        # Stopped while A's number waits: the sync token has moved past it, and it is stored.
        hs.hang_in.clear()
        hs.release.set()
        async with bridge(url, path, cinq) as (b, inbox):
            await until(lambda: "$a-num" in cinq.events, "A's number handed on after the restart")
            await inbox.idle()
    assert cinq.events["$a-num"]["token"] == "tok-a4"
    assert sorted(cinq.posts) == ["$a-num", "$b-num", "$b-text"]  # each once, across the stop
    assert len(hs.events[A]) == 2


def test_a_request_to_the_homeserver_ends_before_cinq_stops_waiting_for_the_callback():
    from adapters.webhook.config import WebhookSettings

    assert Config.request_timeout == REQUEST_TIMEOUT_S < WebhookSettings.model_fields["timeout_s"].default


async def test_a_room_holding_as_many_waiting_messages_as_allowed_stores_no_more_and_the_others_are_read(
    tmp_path,
):
    # A room whose head waits (cinq down for it, say) holds at most ``per_room`` messages: the inbox
    # stays bounded, and another room's messages are still stored and handed on.
    state, cinq = State(str(tmp_path / "s.sqlite3")), FakeCinq()
    held = asyncio.Event()

    async def handle(room: str, sender: str, name: str, body: str, event: str) -> None:
        if room == A:
            await held.wait()
        await cinq.post({"room": room, "text": body}, event)

    inbox = Inbox(state, handle, per_room=2)
    inbox.take([Incoming(A, "@ana:hs", "Ana", str(i), f"$a{i}") for i in range(3)], "s1")
    inbox.take([Incoming(A, "@ana:hs", "Ana", "3", "$a3"), Incoming(B, "@bob:hs", "Bob", "hi", "$b")], "s2")
    await until(lambda: "$b" in cinq.events, "B's message handed on")
    assert state.get("since") == "s2" and cinq.posts == ["$b"]
    held.set()
    await inbox.idle()
    assert cinq.posts == ["$b", "$a0", "$a1"]  # A's, in order; $a2 and $a3 were not stored
    state.close()


def test_a_sync_batch_is_stored_with_its_token_or_not_at_all(tmp_path):
    # The token must not move past a message that is not stored: a write that fails midway (here a
    # trigger refuses the batch's second message) leaves neither the first message nor the token.
    state = State(str(tmp_path / "s.sqlite3"))
    state.put("since", "s0")
    state.db.execute("CREATE TEMP TRIGGER refuse BEFORE INSERT ON inbox WHEN NEW.event = '$2' "
                     "BEGIN SELECT RAISE(ABORT, 'disk full'); END")
    batch = [Incoming(A, "@ana:hs", "Ana", "hi", "$1"), Incoming(B, "@bob:hs", "Bob", "1", "$2")]
    with pytest.raises(sqlite3.IntegrityError):
        state.queue(batch, "s2", 200)
    assert state.get("since") == "s0" and state.waiting_rooms() == []
    state.db.execute("DROP TRIGGER refuse")
    assert state.queue(batch, "s2", 200) == ([A, B], 0)  # the batch read again
    assert state.get("since") == "s2" and state.next_in(A) is not None
    state.close()


class CinqWebhook:
    """cinq's webhook on a loopback socket: records every event posted, by its ``webhook-id``."""

    def __init__(self) -> None:
        self.posts: list[str] = []
        self.events: dict[str, dict] = {}

    async def post(self, request: web.Request) -> web.Response:
        hook = request.headers["webhook-id"]
        self.posts.append(hook)
        self.events.setdefault(hook, await request.json())
        return web.json_response({"status": "accepted"}, status=202)


async def test_a_bridge_killed_while_a_number_waits_hands_it_on_at_its_next_start_and_nothing_twice(
    tmp_path,
):
    # The process itself (python -m bridges.matrix), SIGKILLed while Ana's number waits on A's hung send.
    cinq = CinqWebhook()
    app = web.Application()
    app.router.add_post("/v1/platforms/matrix/events", cinq.post)
    runner = web.AppRunner(app)
    await runner.setup()
    cinq_port, port = free_port(), free_port()
    await web.TCPSite(runner, "127.0.0.1", cinq_port).start()
    path = str(tmp_path / "s.sqlite3")
    state = State(path)
    for key, value in (("access_token", "tok"), ("device_id", "DEV"), ("since", "s0")):
        state.put(key, value)
    state.close()
    async with homeserver() as (hs, url), aiohttp.ClientSession() as http:
        env = {**os.environ, "CINQ_MATRIX_HOMESERVER": url, "CINQ_MATRIX_USER": BOT,
               "CINQ_MATRIX_PASSWORD": "unused", "CINQ_MATRIX_CINQ_URL": f"http://127.0.0.1:{cinq_port}",
               "CINQ_MATRIX_PLATFORM": "matrix", "CINQ_MATRIX_SECRET": SECRET, "CINQ_MATRIX_PORT": str(port),
               "CINQ_MATRIX_STATE": path, "CINQ_MATRIX_REQUEST_TIMEOUT": "0.5", "CINQ_MATRIX_LOCALE": "en"}

        async def start() -> asyncio.subprocess.Process:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bridges.matrix", cwd=ROOT, env=env
            )

            async def up() -> bool:
                try:
                    async with http.get(f"http://127.0.0.1:{port}/healthz") as resp:
                        return resp.status == 200
                except aiohttp.ClientError:
                    return False

            while not await up():
                assert proc.returncode is None, "the bridge stopped"
                await asyncio.sleep(0.05)
            return proc

        async def callback(m: dict) -> int:
            body = json.dumps(m).encode()
            hdrs = signing.headers(SECRET, m["id"], int(time.time()), body)
            hdrs["Content-Type"] = "application/json"
            async with http.post(f"http://127.0.0.1:{port}/", data=body, headers=hdrs) as resp:
                return resp.status

        first = await start()
        try:
            assert await callback(TABLE_A) == 200 and await callback(TABLE_B) == 200
            hs.hang_in.add(A)
            hs.posted = asyncio.Event()
            showing = asyncio.create_task(callback(TABLE_A2))
            await hs.posted.wait()
            hs.say(A, "@ana:hs", "2", "$a-num")
            hs.say(B, "@bob:hs", "1", "$b-num")
            await until(lambda: "$b-num" in cinq.events, "B's number handed on while A's send hangs")
            assert await showing == 503  # timed out: cinq would retry it
            assert "$a-num" not in cinq.events
        finally:
            first.send_signal(signal.SIGKILL)
            await first.wait()
        assert first.returncode == -signal.SIGKILL
        hs.hang_in.clear()
        hs.release.set()
        second = await start()
        try:
            await until(lambda: "$a-num" in cinq.events, "A's number handed on after the restart")
            hs.say(B, "@bob:hs", "hello", "$b-text")  # read on from where the killed one stopped
            await until(lambda: "$b-text" in cinq.events, "B's text handed on")
        finally:
            second.terminate()
            await second.wait()
    await runner.cleanup()
    assert cinq.events["$a-num"]["token"] == "tok-a4" and cinq.events["$b-num"]["token"] == "tok-b1"
    assert sorted(cinq.posts) == ["$a-num", "$b-num", "$b-text"]  # each once, across the kill
    assert len(hs.events[A]) == 2  # round 2 shown again with its transaction id: no copy
