"""A restart of the bot mid-match loses nothing: the new process edits the same messages, the queued
edits that never went out are sent, and the match plays on to the end (fakeredis and a real Redis)."""

from __future__ import annotations

import random

from service.domain.events import MovePlayed
from service.domain.identities import Room
from service.store.repository import history
from tests.adapters.telegram.support import GROUP_ID, World, person, play_out

ANA = person(31, "Ana", "es")
BEA = person(32, "Bea", "en")


def _over(world: World, chat: int):
    return lambda: any(m.text.startswith("🏁") for m in world.fake.chat_messages(chat))


async def test_a_restart_mid_match_loses_nothing(any_redis):
    async with World(any_redis) as w:
        await w.say(ANA, "/play cinquillo")
        await w.quiet()
        rng = random.Random(11)
        for _ in range(3):
            shown, moves = w.move_buttons(ANA.id)
            await w.press(ANA, shown, rng.choice(moves)["callback_data"])
            await w.quiet()
        [board] = w.fake.chat_messages(ANA.id)
        # A press, then the bot dies at once: the edit it caused is queued or not even read yet.
        shown, moves = w.move_buttons(ANA.id)
        await w.press(ANA, shown, moves[0]["callback_data"])
        await w.restart_bot()
        await w.quiet()
        presses = 4 + await play_out(w, [ANA], rng, over=_over(w, ANA.id))
        # Still the same message, edited in place, then the summary; nothing posted twice.
        first, summary = w.fake.chat_messages(ANA.id)
        assert first.id == board.id and summary.text.startswith("🏁")
        table = await w.tg.gateway.table_of(Room(platform="telegram", chat=str(ANA.id)))
        stored = await history(w.workers[0].store, table)
        assert sum(isinstance(s.event, MovePlayed) and s.event.cause == "player" for s in stored) == presses


async def test_a_group_table_survives_a_restart_and_is_edited_in_place(fake_redis):
    async with World(fake_redis) as w:
        for p in (ANA, BEA):
            await w.say(p, "/start")
        await w.say(ANA, "/new cinquillo", chat=GROUP_ID)
        await w.quiet()
        lobby, join = w.button(GROUP_ID, "lb:join")
        await w.press(BEA, lobby, join)
        await w.quiet()
        await w.restart_bot()
        lobby, start = w.button(GROUP_ID, "lb:start")
        await w.press(ANA, lobby, start)
        await w.quiet()
        await w.restart_bot()
        await play_out(w, [ANA, BEA], random.Random(2), over=_over(w, GROUP_ID))
        board, summary = w.fake.chat_messages(GROUP_ID)
        assert board.id == lobby.id and board.edits >= 3
        assert summary.text.startswith("🏁")
