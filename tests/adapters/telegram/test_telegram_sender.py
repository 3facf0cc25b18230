"""The outgoing queue: edits merged, identical edits never sent, flood limits kept, 429 waited out,
and slots whose content never went out sent again by the next process."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator

import pytest
from aiogram import Bot
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer

from adapters.telegram.config import Limits
from adapters.telegram.consumer import OutboxHandler
from adapters.telegram.content import MAIN, PLATFORM, Content, Post, Show
from adapters.telegram.flood import ChatFlood, Flood
from adapters.telegram.sender import Sender
from service.platform.platform_state import PlatformState
from service.store.keys import Keys
from tests.adapters.telegram.fake_api import FakeTelegram
from tests.adapters.telegram.support import TOKEN

USER, GROUP = 7, -700
QUICK = Limits(chat_interval_s=0.0, group_per_window=100, window_s=1.0, global_per_s=1000, coalesce_s=0.05)


@pytest.fixture
async def api() -> AsyncIterator[tuple[FakeTelegram, Bot]]:
    fake = FakeTelegram()
    await fake.start()
    fake.started.add(USER)
    bot = Bot(TOKEN, session=AiohttpSession(api=TelegramAPIServer.from_base(fake.url)))
    yield fake, bot
    await bot.session.close()
    await fake.stop()


def show(version: int, text: str, chat: int = USER, turn: bool = False) -> Show:
    return Show(str(chat), "tab", MAIN, (version, 0), Content(text), turn=turn)


async def _want(state: PlatformState, op: Show) -> None:
    assert await state.want_content(PLATFORM, op.chat, op.table, op.slot, op.rank, op.content.to_json())


async def test_edits_of_one_message_merge_and_identical_edits_are_not_sent(api, fake_redis):
    fake, bot = api
    state = PlatformState(fake_redis, Keys())
    sender = Sender(bot, state, QUICK)
    futures = [sender.submit(show(v, f"v{v}")) for v in range(1, 6)]
    await asyncio.gather(*futures)
    assert [(c.method, c.params["text"]) for c in fake.calls] == [("sendMessage", "v5")]
    await sender.deliver(show(6, "v6"))
    await sender.deliver(show(7, "v6"))  # a newer version that looks the same: no call
    assert [c.method for c in fake.calls] == ["sendMessage", "editMessageText"]
    [m] = fake.chat_messages(USER)
    assert m.text == "v6" and m.edits == 1
    assert sender.skipped == 1


# Long enough that an edit waiting for it never goes out during a test: only what skips the wait does.
FOREVER = Limits(chat_interval_s=0.0, group_per_window=100, window_s=1.0, global_per_s=1000, coalesce_s=3600)


async def test_a_hand_that_gives_the_turn_goes_without_waiting_for_edits_to_merge(api, fake_redis):
    fake, bot = api
    other = 8
    fake.started.add(other)
    sender = Sender(bot, PlatformState(fake_redis, Keys()), FOREVER)
    waiting = sender.submit(show(1, "the mover's hand", chat=other))
    await asyncio.wait_for(sender.deliver(show(1, "your turn", turn=True)), 60)  # never waits coalesce_s
    assert [c.params["text"] for c in fake.calls] == ["your turn"]
    assert not waiting.done()  # an edit that gives no turn still waits to merge
    sender.hurry()
    await asyncio.wait_for(waiting, 60)
    assert [c.params["text"] for c in fake.calls] == ["your turn", "the mover's hand"]


async def test_a_turn_merging_into_a_waiting_edit_sends_it_at_once_with_the_turn(api, fake_redis):
    # A private match: the mover's hand waits to merge, the AI players answer, the person's turn comes.
    fake, bot = api
    sender = Sender(bot, PlatformState(fake_redis, Keys()), FOREVER)
    first = sender.submit(show(1, "played 5o"))
    await asyncio.sleep(0.05)  # the first edit is waiting
    assert fake.calls == []
    ai = sender.submit(show(2, "an AI player played"))
    turn = sender.submit(show(3, "your turn again", turn=True))
    await asyncio.wait_for(asyncio.gather(first, ai, turn), 60)
    assert [(c.method, c.params["text"]) for c in fake.calls] == [("sendMessage", "your turn again")]


async def test_a_429_is_waited_out_and_the_latest_content_goes(api, fake_redis):
    fake, bot = api
    sender = Sender(bot, PlatformState(fake_redis, Keys()), QUICK)
    await sender.deliver(show(1, "one"))
    fake.flood("editMessageText", retry_after=1)
    first = sender.submit(show(2, "two"))
    await asyncio.sleep(0.3)
    later = sender.submit(show(3, "three"))  # arrives while the chat waits: merged, not queued
    await asyncio.gather(first, later)
    edits = [c for c in fake.calls if c.method == "editMessageText"]
    assert [c.ok for c in edits] == [False, True]
    assert edits[1].at - edits[0].at >= 1.0
    assert fake.chat_messages(USER)[0].text in ("two", "three")
    await sender.deliver(show(4, "three"))
    assert fake.chat_messages(USER)[0].text == "three"


async def test_a_group_gets_at_most_its_share_per_window_and_a_chat_one_call_per_interval(api, fake_redis):
    fake, bot = api
    limits = Limits(chat_interval_s=0.05, group_per_window=5, window_s=0.6, global_per_s=1000, coalesce_s=0)
    sender = Sender(bot, PlatformState(fake_redis, Keys()), limits)
    await asyncio.gather(*[sender.submit(Post(str(GROUP), Content(f"g{i}"), f"g{i}")) for i in range(12)],
                         *[sender.submit(Post(str(USER), Content(f"u{i}"), f"u{i}")) for i in range(4)])
    group = [c.at for c in fake.calls_to(GROUP)]
    assert len(group) == 12
    assert max(sum(1 for t in group if s <= t < s + 0.6) for s in group) <= 5
    private = [c.at for c in fake.calls_to(USER)]
    assert all(b - a >= 0.05 - 1e-3 for a, b in itertools.pairwise(private))
    assert [m.text for m in fake.chat_messages(GROUP)] == [f"g{i}" for i in range(12)]


async def test_a_post_is_sent_once_even_when_delivered_twice(api, fake_redis):
    fake, bot = api
    sender = Sender(bot, PlatformState(fake_redis, Keys()), QUICK)
    await sender.deliver(Post(str(USER), Content("hello"), "m1:0"))
    await sender.deliver(Post(str(USER), Content("hello"), "m1:0"))
    assert len(fake.calls_to(USER)) == 1


async def test_content_queued_when_the_process_stopped_is_sent_by_the_next_one(api, fake_redis):
    fake, bot = api
    state = PlatformState(fake_redis, Keys())
    slow = Limits(chat_interval_s=0.0, group_per_window=100, window_s=1.0, global_per_s=1000, coalesce_s=5)
    sender = Sender(bot, state, slow)
    op = show(3, "queued")
    await _want(state, op)
    sender.submit(op)
    await sender.close()  # the process stops before the edit went out
    assert fake.calls_to(USER) == []
    fresh = Sender(bot, state, QUICK)
    handler = OutboxHandler(state, fresh, bot_username="b")
    assert await handler.recover() == 1
    await fresh.idle()
    assert [m.text for m in fake.chat_messages(USER)] == ["queued"]
    assert await handler.recover() == 0  # sent: no longer dirty


async def test_an_older_content_never_replaces_a_newer_one(fake_redis):
    state = PlatformState(fake_redis, Keys())
    await _want(state, show(5, "new"))
    assert not await state.want_content(PLATFORM, str(USER), "tab", MAIN, (4, 9), {"text": "old"})
    ref = await state.get_message_ref(PLATFORM, str(USER), "tab", MAIN)
    assert ref is not None and ref.want == {"text": "new", "rows": []}


def test_out_of_budget_a_group_table_waits_for_a_fresher_move_not_for_the_refill():
    # Flood.table_due on a clock of its own: one edit a second, a burst of one, a 0.5 s hold.
    now = [100.0]
    flood = Flood(Limits(group_interval_s=1.0, group_burst=1, group_hold_s=0.5, coalesce_s=0.1),
                  clock=lambda: now[0])
    chat, slot = ChatFlood(), ("tab", MAIN)
    assert flood.table_due(chat, slot, fresh=100.1) == 100.1  # the budget has an edit: at once
    flood.spend(chat, slot)  # ... and it went out
    now[0] = 100.2
    # The next move came before the refill (101.0): it waits past the refill, for a fresher move ...
    assert flood.table_due(chat, slot, fresh=100.3) == pytest.approx(101.5)
    # ... which, coming after the refill, goes at once (and the edit shows both moves).
    now[0] = 101.2
    assert flood.table_due(chat, slot, fresh=101.3) == 101.3
    # Content ready before now (it waits on a person: ready when it came) goes at once with the budget.
    assert flood.table_due(chat, slot, fresh=101.1) == 101.1


def _table(version: int, text: str) -> Show:
    return Show(str(GROUP), "tab", MAIN, (version, 0), Content(text), linger=True)


async def test_a_group_table_that_waits_on_a_person_goes_without_waiting_to_merge(api, fake_redis):
    # The group's table waits for an AI player's answer to merge, unless a person was given their turn
    # at its version (their hand offers moves): then nothing is coming, before or after it was queued.
    fake, bot = api
    sender = Sender(bot, PlatformState(fake_redis, Keys()), FOREVER)
    queued = sender.submit(_table(4, "v4: Bea to move"))
    await asyncio.sleep(0.05)
    assert fake.calls_to(GROUP) == []  # waiting for an answer to merge
    sender.turn_given("tab", 3)  # an older version's turn: changes nothing
    await asyncio.sleep(0.05)
    assert fake.calls_to(GROUP) == []
    sender.turn_given("tab", 4)
    await asyncio.wait_for(queued, 60)
    sender.turn_given("tab", 6)  # known before the table of that version comes
    await asyncio.wait_for(sender.deliver(_table(6, "v6: Cal to move")), 60)
    assert [c.params["text"] for c in fake.calls_to(GROUP)] == ["v4: Bea to move", "v6: Cal to move"]
    waiting = sender.submit(_table(7, "v7: an AI player to move"))
    await asyncio.sleep(0.05)
    assert not waiting.done()
    sender.hurry()
    await asyncio.wait_for(waiting, 60)


async def test_a_held_group_table_goes_with_the_fresher_move_in_one_edit(api, fake_redis):
    fake, bot = api
    state = PlatformState(fake_redis, Keys())
    limits = Limits(chat_interval_s=0.0, group_per_window=100, window_s=1.0, global_per_s=1000,
                    coalesce_s=0.01, group_interval_s=0.6, group_burst=1, group_hold_s=5.0)
    sender = Sender(bot, state, limits)

    def table(version: int) -> Show:
        return Show(str(GROUP), "tab", MAIN, (version, 0), Content(f"table v{version}"), linger=True)

    await sender.deliver(table(1))  # the budget's one edit
    later = sender.submit(table(2))  # out of budget: held for a fresher move (up to 5 s past the refill)
    await asyncio.sleep(0.8)  # past the refill
    assert not later.done() and [m.text for m in fake.chat_messages(GROUP)] == ["table v1"]
    await sender.deliver(table(3))  # a fresher move: it goes now, with v2 merged into it
    assert later.done()
    [shown] = fake.chat_messages(GROUP)
    assert shown.text == "table v3" and shown.edits == 1
    await sender.close()
