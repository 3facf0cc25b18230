"""Every private message tells the truth to the end (issue 20, bugs 3 and 5): when a group match
ends each player's message shows the result without buttons; a player whose seat an AI player took
loses their buttons, the group is told in a message of its own, and a person the bot cannot write
to is not tried again and again.  Everything sent, to everyone, is scanned for hidden cards (G-1)."""

from __future__ import annotations

import asyncio
import json
import random

from service.domain.identities import Room
from service.protocol.i18n import translate
from tests.adapters.telegram.leaks import assert_no_leak
from tests.adapters.telegram.support import GROUP_ID, World, person, play_out

ANA = person(51, "Ana", "es")
BEA = person(52, "Bea", "en")
DAN = person(53, "Dan", "en")  # never starts the bot
GROUP_ROOM = Room(platform="telegram", chat=str(GROUP_ID), kind="group")


def _over(w: World):
    return lambda: any(m.text.startswith("🏁") for m in w.fake.chat_messages(GROUP_ID))


async def test_at_the_end_of_a_group_match_every_private_message_shows_the_result(fake_redis):
    async with World(fake_redis) as w:
        for p in (ANA, BEA):
            await w.say(p, "/start")
        await w.start_in_group(ANA, "/new cinquillo players=2", [BEA])
        table = await w.tg.gateway.table_of(GROUP_ROOM)
        await play_out(w, [ANA, BEA], random.Random(7), over=_over(w))
        await w.quiet()
        for p in (ANA, BEA):
            hand = max((m for m in w.fake.chat_messages(p.id) if table in str(m.markup) or m.edits),
                       key=lambda m: m.seq)
            assert w.move_buttons(p.id) is None, f"{p.first_name} still has move buttons"
            assert translate(p.language_code, "view.over") in hand.text
            assert translate(p.language_code, "table.your_turn") not in hand.text
        assert await assert_no_leak(w, table) > 10


async def test_a_player_who_leaves_loses_the_buttons_and_the_group_is_told_apart(fake_redis):
    async with World(fake_redis) as w:
        for p in (ANA, BEA):
            await w.say(p, "/start")
        await w.start_in_group(ANA, "/new cinquillo players=3", [BEA, DAN])
        table = await w.tg.gateway.table_of(GROUP_ROOM)
        await w.say(BEA, "/leave", chat=GROUP_ID)
        await w.quiet()
        assert w.move_buttons(BEA.id) is None, "Bea, replaced, still has move buttons"
        line = translate("es", "table.bot_took_seat_left", name="Bea")  # the table is Spanish (Ana)
        # Its own message in the group, not a line a later edit of the table merges away.
        assert any(m.text == line for m in w.fake.chat_messages(GROUP_ID))
        # Dan, who never started the bot, leaves too (a group message: the bot still cannot write to him).
        await w.say(DAN, "/leave", chat=GROUP_ID)
        await w.quiet()
        await play_out(w, [ANA, BEA], random.Random(3), over=_over(w))
        await w.quiet()
        assert any(m.text == line for m in w.fake.chat_messages(GROUP_ID))
        # Dan was refused once, then not tried again for the rest of the match (his replaced seat,
        # the final result).
        refused = [c for c in w.fake.calls if c.chat == DAN.id and not c.ok]
        assert len(refused) == 1
        assert await assert_no_leak(w, table) > 10


async def test_a_group_notice_is_in_the_groups_language_not_the_addressees(fake_redis):
    async with World(fake_redis) as w:
        await w.say(ANA, "/start")
        await w.say(ANA, "/nueva cinquillo players=2", chat=GROUP_ID)  # a Spanish table
        await w.quiet()
        lobby, join = w.button(GROUP_ID, "lb:join")
        await w.press(DAN, lobby, join)  # Dan's Telegram is in English
        await w.quiet()
        await w.press(ANA, lobby, w.button(GROUP_ID, "lb:start")[1])
        await w.quiet()
        notice = [m for m in w.fake.chat_messages(GROUP_ID) if m.text.startswith("Dan")]
        assert [m.text for m in notice] == [translate("es", "tg.start_me", name="Dan")]


async def test_the_lobby_always_shows_who_is_seated_and_what_to_do(fake_redis):
    async with World(fake_redis) as w:
        await w.say(BEA, "/new cinquillo chips", chat=GROUP_ID)
        await w.quiet()
        lobby, join = w.button(GROUP_ID, "lb:join")
        for p in (ANA, DAN):
            await w.press(p, lobby, join)
            await w.quiet()
        await w.press(BEA, lobby, w.button(GROUP_ID, "lb:bots")[1])
        await w.quiet()
        await w.press(ANA, lobby, w.button(GROUP_ID, "lb:leave")[1])
        await w.quiet()
        [shown] = [m for m in w.fake.chat_messages(GROUP_ID) if m.buttons()]
        text = shown.text
        # The latest event is there, and so is the roster: Bea, Dan, the AI player, a free seat.
        assert translate("en", "table.left", name="Ana") in text
        assert "1. Bea" in text and "2. Dan" in text
        assert f"3. {translate('en', 'tg.lobby.ai', name=translate('en', 'table.bot_name', n=3))}" in text
        assert f"4. {translate('en', 'tg.lobby.free')}" in text
        assert "chips" in text and translate("en", "tg.lobby.next") in text


async def test_the_bot_registers_its_commands_per_chat_type_in_both_languages(fake_redis):
    async with World(fake_redis, transport="webhook") as w:
        for _ in range(1000):  # set a moment after the bot started receiving (app.MENU_AFTER_S)
            if len(w.fake.commands) == 4:
                break
            await asyncio.sleep(0.02)
        menus = {(json.loads(scope)["type"], lang): [c["command"] for c in cmds]
                 for (scope, lang), cmds in w.fake.commands.items()}
        assert set(menus) == {("all_private_chats", ""), ("all_private_chats", "es"),
                              ("all_group_chats", ""), ("all_group_chats", "es")}
        assert "hand" in menus[("all_private_chats", "")] and "mano" in menus[("all_private_chats", "es")]
        assert "new" in menus[("all_group_chats", "")] and "nueva" in menus[("all_group_chats", "es")]
        assert "play" not in menus[("all_group_chats", "")]  # /play is for a private chat
