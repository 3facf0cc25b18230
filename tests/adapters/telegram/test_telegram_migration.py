"""A group upgraded to a supergroup gets a new chat id: the table it shows, its language and its
counters carry on there, whether Telegram's service message or a refused call tells the bot first."""

from __future__ import annotations

import random

from service.domain.identities import Room
from service.protocol.i18n import translate
from tests.adapters.telegram.support import GROUP_ID, World, person, play_out

ANA = person(61, "Ana", "en")
BEA = person(62, "Bea", "en")
NEW_ID = -100777


def _over(w: World, chat: int):
    return lambda: any(m.text.startswith("🏁") for m in w.fake.chat_messages(chat))


async def _running_match(w: World) -> str:
    for p in (ANA, BEA):
        await w.say(p, "/start")
    await w.say(ANA, "/lang es", chat=GROUP_ID)
    await w.start_in_group(ANA, "/new 535 players=2 hand_size=4 target=6", [BEA])
    table = await w.tg.gateway.table_of(Room(platform="telegram", chat=str(GROUP_ID), kind="group"))
    assert table is not None
    return table


async def test_a_group_upgraded_mid_match_carries_on_in_the_supergroup(fake_redis):
    async with World(fake_redis) as w:
        table = await _running_match(w)
        await w.migrate(ANA, GROUP_ID, NEW_ID)
        await w.quiet()
        # The table is shown in the supergroup at once (the old message stays in the old history).
        [shown] = w.fake.chat_messages(NEW_ID)
        assert f"start={table}" in str(shown.markup)
        calls_to_old = len([c for c in w.fake.calls if c.chat == GROUP_ID])
        # Commands from the supergroup reach the same table; its language is still the one chosen.
        await w.say(BEA, "/hand", chat=NEW_ID)
        await play_out(w, [ANA, BEA], random.Random(4), over=_over(w, NEW_ID))
        assert [c for c in w.fake.calls if c.chat == GROUP_ID][calls_to_old:] == []
        summary = w.fake.chat_messages(NEW_ID)[-1]
        assert f"/replay {table}" in summary.text
        # The group's counters carry on: /stats in the supergroup counts the match.
        await w.say(BEA, "/stats", chat=NEW_ID)
        await w.quiet()
        texts = [m.text for m in w.fake.chat_messages(NEW_ID)]
        assert any(translate("es", "tg.group_stats", matches=1) in t for t in texts)
        # A new lobby in the supergroup works like any other, buttons included.
        await w.say(ANA, "/new cinquillo", chat=NEW_ID)
        await w.quiet()
        lobby, join = w.button(NEW_ID, "lb:join")
        answer = await w.press(BEA, lobby, join)
        assert answer["text"] == "✓"


async def test_a_refused_call_teaches_the_bot_the_new_id_and_a_restarted_bot_remembers_it(fake_redis):
    async with World(fake_redis) as w:
        await _running_match(w)
        # Telegram upgraded the group; the bot missed the service messages.
        w.fake.migrate(GROUP_ID, NEW_ID)
        await w.say(ANA, "/rules", chat=NEW_ID)  # a reply to the supergroup: no lookup needed
        shown, moves = w.move_buttons(ANA.id) or w.move_buttons(BEA.id)
        who = ANA if shown.chat == ANA.id else BEA
        await w.press(who, shown, moves[0]["callback_data"])
        await w.quiet()
        refused = [c for c in w.fake.calls if c.chat == GROUP_ID and not c.ok]
        assert len(refused) == 1  # one call told the bot; it went to the supergroup right after
        assert w.fake.chat_messages(NEW_ID)
        await w.restart_bot()
        await play_out(w, [ANA, BEA], random.Random(8), over=_over(w, NEW_ID))
        assert len([c for c in w.fake.calls if c.chat == GROUP_ID and not c.ok]) == 1
