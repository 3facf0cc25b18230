"""Polling confirms an update to Telegram only once its command is stored (issue 36).

The Telegram role runs as a real process (``python -m adapters.telegram``, long polling the fake Bot
API server on loopback) on a real ``redis-server`` reached through the fault proxy; a worker applies
the commands in the test's process.  A person plays a private match; when they press a move button,
the proxy holds the press's command on its way to Redis (``before``: between the receipt of the
update and the append of its command) or lets it through and holds the reply (``after``: appended,
the bot not told), and the role is SIGKILLed there.  Telegram must not have been told the update was
taken (no ``getUpdates`` offset past it), so the next process receives it again, and the move is
applied exactly once.  aiogram's own polling confirms a batch as soon as it has handed it to its
handler tasks: with it the ``before`` case loses the press.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
from aiogram.types import CallbackQuery, Chat, Message, Update, User

from adapters.telegram.callbacks import TOKEN_RE
from adapters.telegram.presses import command_id
from service.domain.events import envelope
from service.foundation.settings import Settings
from service.ops.runtime import worker_for
from service.store.keys import Keys
from service.write.gateway import Gateway
from tests.adapters.telegram.fake_api import FakeTelegram, Shown
from tests.adapters.telegram.test_telegram_shutdown import Role
from tests.faults.proxy import Proxy, command
from tests.faults.redis_server import RedisServer, require_binary

PERSON = 4242
ANA = User(id=PERSON, is_bot=False, first_name="Ana", language_code="en")
SECRETS = ["a-test-secret-for-shutdown-0123456789ab"]  # the Role's CINQ_TOKEN_SECRETS


def _update(update_id: int, **kw: Any) -> dict[str, Any]:
    return Update(update_id=update_id, **kw).model_dump(mode="json", exclude_none=True, by_alias=True)


def _text(update_id: int, text: str) -> dict[str, Any]:
    msg = Message(message_id=update_id, date=datetime.now(UTC), chat=Chat(id=PERSON, type="private"),
                  from_user=ANA, text=text)
    return _update(update_id, message=msg)


def _press(update_id: int, shown: Shown, data: str, cq_id: str) -> dict[str, Any]:
    msg = Message(message_id=shown.id, date=datetime.now(UTC), chat=Chat(id=PERSON, type="private"),
                  text=shown.text, reply_markup=shown.markup)
    return _update(update_id, callback_query=CallbackQuery(id=cq_id, from_user=ANA, chat_instance="ci",
                                                           data=data, message=msg))


def _move_button(fake: FakeTelegram) -> tuple[Shown, str] | None:
    """A move button of the person's hand, if it asks for a move now (the newest such message)."""
    for shown in reversed(fake.chat_messages(PERSON)):
        moves = [b["callback_data"] for b in shown.buttons() if TOKEN_RE.match(b.get("callback_data", ""))]
        if moves:
            return shown, moves[0]
    return None


async def _until(check: Callable[[], Awaitable[bool]], what: str, role: Role | None = None,
                 timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        if role is not None and role.proc is not None:
            assert role.proc.poll() is None, role.stderr()
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.05)


async def _moves(r: aioredis.Redis, keys: Keys, table: str, cid: str) -> int:
    """How many moves the table's events record for the command ``cid``."""
    events = [envelope(json.loads(f[b"e"])) for _, f in await r.xrange(keys.events(table))]
    return sum(1 for e in events if e["cmd"] == cid and e["type"] == "MovePlayed")


@pytest.mark.parametrize("strike", ["before", "after"])
async def test_a_press_killed_before_its_command_is_stored_is_received_again_and_applied_once(
        tmp_path: Path, strike: str) -> None:
    require_binary()
    server = RedisServer(tmp_path / "redis").start()
    proxy = await Proxy(server).start()
    prefix = f"tgpoll{os.getpid()}{strike}:"
    service = Settings(redis_url=None, key_prefix=prefix, buckets=16, command_shards=2,
                       token_secrets=SECRETS, block_ms=20, claim_idle_ms=500,
                       auto_pass_s=0)  # no pass made for the person: the press is theirs alone
    keys = Keys.of(service)
    r = aioredis.from_url(server.url)
    worker = worker_for(r, service, name="w-poll")
    working = asyncio.create_task(worker.run())
    fake = FakeTelegram()
    await fake.start()
    fake.started.add(PERSON)
    role = Role(proxy.url, prefix, fake, "polling")
    role.env["CINQ_TELEGRAM_POLLING_TIMEOUT"] = "1"
    try:
        await role.start()
        fake.push(_text(1, "/play cinquillo"))
        table = Gateway(r, service, keys).table_for(f"tg:m:{PERSON}:1")
        found: tuple[Shown, str] | None = None

        async def my_turn() -> bool:
            nonlocal found
            found = _move_button(fake)
            return found is not None
        await _until(my_turn, "the person never got a move to make", role)
        assert found is not None
        shown, data = found

        # The press's command, on its way to Redis.
        cmd = command("XADD", key_prefix=f"{prefix}cmd:")
        if strike == "before":
            rule = proxy.arm(cmd, "pause", release=asyncio.Event())  # never released: never appended
        else:
            rule = proxy.arm(cmd, "hook", after=lambda: asyncio.to_thread(role.kill))
        fake.push(_press(2, shown, data, "cq-1"))
        await rule.wait(timeout_s=60)
        role.kill()  # SIGKILL (done already by the hook in the "after" case)
        assert fake.handed >= 2  # the update was received ...
        assert fake.confirmed < 2  # ... but never confirmed: Telegram keeps it for the next process
        if strike == "before":
            await asyncio.sleep(0.5)
            assert await _moves(r, keys, table, command_id("cq-1")) == 0  # never appended

        proxy.disarm()
        await role.start()  # the next process, same consumer
        await _until(lambda: _applied(r, keys, table, command_id("cq-1")), "the press was lost", role)
        await _until(lambda: _true(fake.confirmed >= 2), "the press was never confirmed", role)
        await asyncio.sleep(1.0)  # a second copy (the "after" case appended one) would be applied by now
        assert await _moves(r, keys, table, command_id("cq-1")) == 1
        assert fake.answers.get("cq-1") is not None  # the press was answered (by the second process)
    finally:
        role.kill()
        worker.stop.set()
        await asyncio.gather(working, return_exceptions=True)
        if worker.thinker is not None:
            worker.thinker.close()
        await fake.stop()
        await proxy.close()
        await r.aclose()
        server.stop()


async def _applied(r: aioredis.Redis, keys: Keys, table: str, cid: str) -> bool:
    return await _moves(r, keys, table, cid) >= 1


async def _true(value: bool) -> bool:
    return value
