"""A rematch on Telegram (issue 34): the end's private message has a "Play again" button; in a group,
the other person is asked in private with a choice of their own, and the match starts on acceptance."""

from __future__ import annotations

import random

from service.domain.identities import Room
from service.domain.tables import rematch
from service.store.repository import load
from tests.adapters.telegram.support import GROUP_ID, World, person, play_out

ANA = person(61, "Ana", "en")
BEA = person(62, "Bea", "es")
GROUP_ROOM = Room(platform="telegram", chat=str(GROUP_ID), kind="group")


def _button(w: World, user, text: str):
    for m in sorted(w.fake.chat_messages(user.id), key=lambda m: -m.seq):
        for b in m.buttons():
            if b["text"] == text:
                return m, b["callback_data"]
    raise AssertionError(f"no {text!r} button for {user.first_name}")


async def test_play_again_in_a_group_asks_the_other_in_private_and_starts_on_acceptance(fake_redis):
    async with World(fake_redis) as w:
        for p in (ANA, BEA):
            await w.say(p, "/start")
        await w.start_in_group(ANA, "/new cinquillo players=2", [BEA])
        table = await w.tg.gateway.table_of(GROUP_ROOM)
        await play_out(w, [ANA, BEA], random.Random(5),
                       over=lambda: any(m.text.startswith("🏁") for m in w.fake.chat_messages(GROUP_ID)))
        await w.quiet()
        shown, data = _button(w, ANA, "🔁 Play again")
        await w.press(ANA, shown, data)
        await w.quiet()
        new_id = rematch.table_id(table)
        assert (await load(w.workers[0].store, new_id)).waiting_for()
        # Bea is asked in her own chat (in Spanish), with her own choices.
        shown, data = _button(w, BEA, "✔ Juego")
        assert "otra vez" in shown.text
        await w.press(BEA, shown, data)
        await w.quiet()
        t = await load(w.workers[0].store, new_id)
        assert t.status == "running" and await w.tg.gateway.table_of(GROUP_ROOM) == new_id
        assert w.move_buttons(ANA.id) is not None or w.move_buttons(BEA.id) is not None  # the match is on
