"""/rating, /top and tournaments on Telegram through the fake Bot API (issue 15): a board is one
message whose buttons (game, week or month, my rating) edit that same message; a tournament's sign-up
has Join, Leave and Start and is edited in place as people join; a refused press is the press's alert
and changes nothing in the chat; a round's message links each table; the standings offer the
leaderboard.  A board whose message can no longer be edited (deleted, too old) is posted anew, once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from aiogram import Bot
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer

from adapters.telegram.config import Limits
from adapters.telegram.content import Content, Edit
from adapters.telegram.sender import Sender
from service.platform.platform_state import PlatformState
from service.protocol.i18n import translate
from service.store.keys import Keys
from service.tournaments.director import Director
from tests.adapters.telegram.fake_api import FakeTelegram, Shown
from tests.adapters.telegram.support import GROUP_ID, TOKEN, World, person

ANA = person(81, "Ana", "en")
BEA = person(91, "Bea", "en")


async def until(w: World, pred: Callable[[], Any]) -> Any:
    """Let the world settle until ``pred()`` holds (the director runs beside it); returns its value."""
    for _ in range(100):
        await w.quiet()
        if got := pred():
            return got
        await asyncio.sleep(0.05)
    raise AssertionError("never")


def with_button(w: World, chat: int, label: str) -> list[tuple[Shown, str]]:
    """The messages of ``chat`` with a button labelled ``label`` (and that button's data)."""
    return [(m, b["callback_data"]) for m in w.fake.chat_messages(chat) for b in m.buttons()
            if b["text"] == label and "callback_data" in b]


async def test_top_is_one_message_its_buttons_edit(any_redis):
    async with World(any_redis) as w:
        await w.say(ANA, "/top", chat=GROUP_ID)
        await w.quiet()
        [(board, only_535)] = with_button(w, GROUP_ID, translate("en", "board.btn.game.535"))
        assert "Cinquillo" in board.text and "535" in board.text
        sent = len(w.fake.calls_to(GROUP_ID, ("sendMessage",)))
        await w.press(BEA, board, only_535)
        await w.quiet()
        shown = {m.id: m for m in w.fake.chat_messages(GROUP_ID)}[board.id]
        assert shown.edits == 1 and shown.text.splitlines()[0] == translate(
            "en", "top.title.group.all", game="535")
        assert "• 535" in [b["text"] for b in shown.buttons()]
        week = next(b["callback_data"] for b in shown.buttons()
                    if b["text"] == translate("en", "board.btn.window.week"))
        await w.press(BEA, shown, week)
        await w.quiet()
        mine = next(b["callback_data"] for b in shown.buttons()
                    if b["text"] == translate("en", "board.btn.rating"))
        await w.press(ANA, shown, mine)
        await w.quiet()
        assert shown.edits == 3 and shown.text == translate("en", "rating.none")
        assert len(w.fake.calls_to(GROUP_ID, ("sendMessage",))) == sent  # nothing posted: one message
        # A forged button: the alert says so, and the board stays as it was.
        forged = week[:-3] + ("AAA" if not week.endswith("AAA") else "BBB")
        answer = await w.press(BEA, shown, forged)
        await w.quiet()
        assert answer.get("show_alert") and answer["text"] == translate("en", "refusal.token_forged")
        assert shown.edits == 3 and len(w.fake.calls_to(GROUP_ID, ("sendMessage",))) == sent


async def test_a_board_whose_message_is_gone_or_too_old_is_posted_anew(any_redis):
    async with World(any_redis) as w:
        await w.say(ANA, "/top", chat=GROUP_ID)
        await w.quiet()
        [(board, only_535)] = with_button(w, GROUP_ID, translate("en", "board.btn.game.535"))
        del w.fake.messages[(GROUP_ID, board.id)]  # someone deleted the board
        await w.press(BEA, board, only_535)
        await w.quiet()
        [anew] = w.fake.chat_messages(GROUP_ID)
        assert anew.id != board.id and anew.text.splitlines()[0] == translate(
            "en", "top.title.group.all", game="535")
        w.fake.frozen.add((GROUP_ID, anew.id))  # too old to edit now
        week = next(b["callback_data"] for b in anew.buttons()
                    if b["text"] == translate("en", "board.btn.window.week"))
        await w.press(BEA, anew, week)
        await w.quiet()
        old, newest = w.fake.chat_messages(GROUP_ID)
        assert old is anew and anew.edits == 0  # Telegram refused the edit: it shows what it showed
        assert newest.text.splitlines()[0] == translate("en", "top.title.group.week", game="535")


async def test_a_boards_fallback_post_is_sent_once_and_only_for_a_message_that_is_gone(fake_redis):
    fake = FakeTelegram()
    await fake.start()
    bot = Bot(TOKEN, session=AiohttpSession(api=TelegramAPIServer.from_base(fake.url)))
    quick = Limits(chat_interval_s=0.0, group_per_window=100, window_s=1.0, global_per_s=1000,
                   coalesce_s=0.0)
    try:
        sender = Sender(bot, PlatformState(fake_redis, Keys()), quick)
        chat = str(GROUP_ID)
        # The same board redraw delivered twice (a redelivery) for a message that is gone: one post.
        await sender.deliver(Edit(chat, 41, Content("535 board"), key="wh-1:0"))
        await sender.deliver(Edit(chat, 41, Content("535 board"), key="wh-1:0"))
        assert [m.text for m in fake.chat_messages(GROUP_ID)] == ["535 board"]
        # Without a key (a settings keyboard, which only means something on its own message): refused,
        # and nothing is posted in its place.
        await sender.deliver(Edit(chat, 42, Content("settings")))
        assert [m.text for m in fake.chat_messages(GROUP_ID)] == ["535 board"]
        assert [c.method for c in fake.calls] == ["editMessageText", "sendMessage", "editMessageText",
                                                  "editMessageText"]
        # Refused for another reason (a button a group may not have): not posted either, since a post
        # would be refused the same way; the board stays as it was.
        [shown] = fake.chat_messages(GROUP_ID)
        bad = Content("week board", ((("open", "web_app", "https://example.org/app"),),))
        await sender.deliver(Edit(chat, shown.id, bad, key="wh-2:0"))
        assert [(m.text, m.edits) for m in fake.chat_messages(GROUP_ID)] == [("535 board", 0)]
        assert [c.method for c in fake.calls][4:] == ["editMessageText"]
    finally:
        await bot.session.close()
        await fake.stop()


async def test_rating_in_private_switches_to_the_board_in_the_same_message(any_redis):
    async with World(any_redis) as w:
        await w.say(ANA, "/rating")
        await w.quiet()
        [(mine, top)] = with_button(w, ANA.id, translate("en", "board.btn.top"))
        assert mine.text == translate("en", "rating.none")
        await w.press(ANA, mine, top)
        await w.quiet()
        assert mine.edits == 1 and translate("en", "top.title.global.all", game="Cinquillo") in mine.text
        assert len(w.fake.calls_to(ANA.id, ("sendMessage",))) == 1


async def test_a_tournament_signup_has_buttons_and_is_edited_in_place(any_redis):
    async with World(any_redis) as w:
        stop = asyncio.Event()
        director = Director(any_redis, w.settings, Keys.of(w.settings))
        running = asyncio.create_task(director.run(stop, block_ms=20))
        try:
            await w.say(ANA, "/tournament 535 rounds=1", chat=GROUP_ID)
            join_label, start_label = (translate("en", f"tournament.btn.{m}") for m in ("join", "start"))
            [(signup, join)] = await until(w, lambda: with_button(w, GROUP_ID, join_label))
            labels = [b["text"] for b in signup.buttons()]
            assert labels == [translate("en", f"tournament.btn.{m}") for m in ("join", "leave", "start")]
            await w.press(BEA, signup, join)
            await until(w, lambda: "Bea" in signup.text)
            assert signup.edits == 1 and len(with_button(w, GROUP_ID, join_label)) == 1  # the same message
            # Bea may not start it: the alert says who may, and nothing changes in the chat.
            [(_, start)] = with_button(w, GROUP_ID, start_label)
            calls = len(w.fake.calls_to(GROUP_ID))
            answer = await w.press(BEA, signup, start)
            await w.quiet()
            assert answer.get("show_alert") and "Ana" in answer["text"]
            assert len(w.fake.calls_to(GROUP_ID)) == calls
            await w.press(ANA, signup, start)
            table_label = translate("en", "tg.btn.tournament_table", k=1)
            rounds = await until(w, lambda: [m for m in w.fake.chat_messages(GROUP_ID)
                                             if any(b["text"] == table_label for b in m.buttons())])
            (link,) = [b["url"] for b in rounds[0].buttons()]
            assert link.startswith("https://t.me/") and "?start=" in link
        finally:
            stop.set()
            await running
