"""A person and the bot in a private chat: greeting, /play, whole matches against AI players, and the
buttons: one message edited in place, legal moves only, stale and double presses answered, acting once."""

from __future__ import annotations

import asyncio
import random

import pytest

from adapters.telegram.callbacks import Cfg
from service.domain.events import MovePlayed
from service.domain.identities import Room
from service.protocol.i18n import translate
from service.store.repository import history
from tests.adapters.telegram.support import World, person, play_out

ANA = person(11, "Ana", "es")
BOB = person(12, "Bob", "en")


def _over(world: World, chat: int):
    return lambda: any(m.text.startswith("🏁") for m in world.fake.chat_messages(chat))


async def _table(world: World, chat: int) -> str:
    table = await world.tg.gateway.table_of(Room(platform="telegram", chat=str(chat), kind="private"))
    assert table is not None
    return table


@pytest.mark.parametrize("who,words", [(ANA, "¡Hola"), (BOB, "Hello")])
async def test_start_greets_in_the_users_language_and_offers_the_games(fake_redis, who, words):
    async with World(fake_redis) as w:
        await w.say(who, "/start")
        await w.quiet()
        [greeting] = w.fake.chat_messages(who.id)
        assert greeting.text.startswith(words) and who.first_name in greeting.text
        daily = ["📅 Cinquillo del día", "📅 535 del día"] if who.language_code == "es" else \
            ["📅 Daily Cinquillo", "📅 Daily 535"]
        assert [b["text"] for b in greeting.buttons()] == ["Cinquillo", "535", *daily]


@pytest.mark.parametrize("command", ["/play cinquillo", "/play 535 hand_size=4 target=6"])
async def test_a_private_match_plays_to_the_end_in_one_message_edited_in_place(fake_redis, command):
    async with World(fake_redis) as w:
        await w.say(BOB, command)
        await w.quiet()
        presses = await play_out(w, [BOB], random.Random(3), over=_over(w, BOB.id))
        table = await _table(w, BOB.id)
        table_msg, summary = w.fake.chat_messages(BOB.id)
        assert table_msg.edits >= 1 and not table_msg.buttons()  # the final table, no buttons left
        assert summary.text.startswith("🏁") and f"/replay {table}" in summary.text
        # Every press was a legal move that the service played (no refusal was ever posted).
        stored = await history(w.workers[0].store, table)
        mine = [s for s in stored if isinstance(s.event, MovePlayed) and s.event.cause == "player"]
        assert len(mine) == presses > 0
        assert all(a.get("show_alert") is None for a in w.fake.answers.values())


async def test_the_settings_keyboard_starts_a_match_with_the_options_chosen(fake_redis):
    async with World(fake_redis) as w:
        await w.say(BOB, "/play")
        await w.quiet()
        [menu] = w.fake.chat_messages(BOB.id)
        five = next(b["callback_data"] for b in menu.buttons() if b["text"] == "535")
        await w.press(BOB, menu, five)
        await w.quiet()  # the keyboard's edits go through the chat's queue
        [menu] = w.fake.chat_messages(BOB.id)
        assert "3" in menu.text  # 535 starts at three players
        more = Cfg.unpack(menu.buttons()[0]["callback_data"])
        assert more.op == "n"
        await w.press(BOB, menu, menu.buttons()[0]["callback_data"])  # 4 players
        await w.quiet()
        [menu] = w.fake.chat_messages(BOB.id)
        go = next(b["callback_data"] for b in menu.buttons() if Cfg.unpack(b["callback_data"]).op == "go")
        await w.press(BOB, menu, go)
        await w.quiet()
        table = await _table(w, BOB.id)
        stored = await history(w.workers[0].store, table)
        started = next(s.event for s in stored if type(s.event).__name__ == "MatchStarted")
        assert started.players == 4
        assert w.move_buttons(BOB.id) is not None or w.fake.chat_messages(BOB.id)[-1].text


@pytest.mark.parametrize("webhook", [False, True])
async def test_a_double_click_acts_once_and_is_answered_with_an_alert(fake_redis, webhook):
    async with World(fake_redis, webhook=webhook) as w:
        await w.say(ANA, "/play cinquillo")
        await w.quiet()
        shown, moves = w.move_buttons(ANA.id)
        data = moves[0]["callback_data"]
        # Two clicks at once, then a third a moment later: one acts, the others get an alert.
        answers = list(await asyncio.gather(w.press(ANA, shown, data), w.press(ANA, shown, data)))
        answers.append(await w.press(ANA, shown, data))
        await w.quiet()
        played = [a for a in answers if a["text"].startswith("✓")]
        alerts = [a for a in answers if a.get("show_alert") in (True, "true", "True")]
        assert len(played) == 1 and len(alerts) == 2
        expected = {translate("es", "tg.alert.once"), translate("es", "tg.alert.stale")}
        assert {a["text"] for a in alerts} <= expected
        table = await _table(w, ANA.id)
        mine = [s for s in await history(w.workers[0].store, table)
                if isinstance(s.event, MovePlayed) and s.event.cause == "player"]
        assert len(mine) == 1
        # Polling answers with a call; a webhook answers in its HTTP response, with no call at all.
        calls = sum(c.method == "answerCallbackQuery" for c in w.fake.calls)
        assert calls == (0 if webhook else 3)


async def test_a_stale_button_is_answered_with_an_alert_and_does_nothing(fake_redis):
    async with World(fake_redis) as w:
        await w.say(ANA, "/play cinquillo")
        await w.quiet()
        shown, moves = w.move_buttons(ANA.id)
        old = [dict(b) for b in moves]
        old_shown = shown
        await w.press(ANA, shown, moves[0]["callback_data"])
        await w.quiet()
        table = await _table(w, ANA.id)
        before = len(await history(w.workers[0].store, table))
        # Another button of the earlier keyboard (a different card of the same, older turn).
        answer = await w.press(ANA, old_shown, old[-1]["callback_data"])
        await w.quiet()
        assert answer["show_alert"] in (True, "true", "True")
        assert answer["text"] in (translate("es", "tg.alert.stale"), translate("es", "tg.alert.once"))
        assert len(await history(w.workers[0].store, table)) == before
        # A forged token is refused as well.
        forged = old[0]["callback_data"][:-3] + "AAA"
        answer = await w.press(ANA, old_shown, forged)
        assert answer["text"] == translate("es", "tg.alert.invalid")
