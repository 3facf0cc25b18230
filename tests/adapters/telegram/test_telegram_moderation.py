"""Group admins (Telegram's getChatMember) may start, cancel and kick like the table's creator."""

from __future__ import annotations

from service.domain.commands import TableCommand
from service.domain.identities import Room
from service.domain.requests import Bots, Join
from service.protocol.i18n import translate
from service.store.repository import history
from tests.adapters.telegram.support import GROUP_ID, World, person

ANA = person(31, "Ana", "en")
BEA = person(32, "Bea", "en")
CAL = person(33, "Cal", "en")
DAN = person(34, "Dan", "es")  # an admin of the group, not at the table
GROUP_ROOM = Room(platform="telegram", chat=str(GROUP_ID), kind="group")


def _texts(w: World) -> list[str]:
    return [c.params.get("text", "") for c in w.fake.calls_to(GROUP_ID)]


async def test_a_group_admin_starts_and_kicks_a_member_cannot(fake_redis):
    async with World(fake_redis) as w:
        w.fake.admins.add((GROUP_ID, DAN.id))
        for p in (ANA, BEA):
            await w.say(p, "/start")
        await w.say(ANA, "/new cinquillo", chat=GROUP_ID)
        await w.quiet()
        lobby, join = w.button(GROUP_ID, "lb:join")
        await w.press(BEA, lobby, join)
        await w.quiet()
        table = await w.tg.gateway.table_of(GROUP_ROOM)
        # Cal is neither the creator nor an admin: his Start is refused, the table untouched; the
        # refusal is the alert that answers his press, not a message in the group.
        before = len(await history(w.workers[0].store, table))
        lobby, start = w.button(GROUP_ID, "lb:start")
        answer = await w.press(CAL, lobby, start)
        await w.quiet()
        assert len(await history(w.workers[0].store, table)) == before
        assert answer["text"] == translate("en", "refusal.not_creator")
        assert answer["show_alert"] in (True, "true")
        assert translate("en", "refusal.not_creator") not in _texts(w)
        # Dan administers the group: his Start starts the match, his /kick gives Bea's seat to an AI.
        await w.press(DAN, lobby, start)
        await w.quiet()
        assert any(type(s.event).__name__ == "MatchStarted" for s in await history(w.workers[0].store, table))
        await w.say(DAN, "/expulsar 2", chat=GROUP_ID)
        await w.quiet()
        # (The group's table message is edited in place: the AI's next move may replace the line.)
        [kick] = [s.event for s in await history(w.workers[0].store, table)
                  if type(s.event).__name__ == "PlayerKicked"]
        assert kick.by.name == "Dan" and kick.player.name == "Bea" and kick.level
        # A member's /cancel is refused; no admin check is made for a command anyone may send.
        calls = len(w.fake.calls)
        await w.say(CAL, "/cancel", chat=GROUP_ID)
        await w.quiet()
        assert [c for c in w.fake.calls[calls:] if c.method == "getChatMember"]
        # A typed command's refusal is a reply in the group.
        assert _texts(w).count(translate("en", "refusal.not_creator")) == 1


async def test_lobby_buttons_submit_typed_commands_and_ask_telegram_only_when_moderated(fake_redis):
    # Issue 18: a button submits the command it stands for, typed; nothing re-parses protocol text.
    async with World(fake_redis) as w:
        await w.say(ANA, "/new cinquillo", chat=GROUP_ID)
        await w.quiet()
        lobby, join = w.button(GROUP_ID, "lb:join")
        calls = len(w.fake.calls)
        await w.press(BEA, lobby, join)
        await w.quiet()
        # Join is anyone's: Telegram is not asked whether Bea administers the group.
        assert not [c for c in w.fake.calls[calls:] if c.method == "getChatMember"]
        await w.press(ANA, lobby, w.button(GROUP_ID, "lb:bots")[1])
        await w.quiet()
        commands = []
        for key in w.workers[0].keys.all_commands():
            for _, fields in await w.redis.xrange(key):
                commands.append(TableCommand.loads(fields[b"c"]))
        by_name = {c.name: c for c in commands}
        assert isinstance(by_name["join"].request, Join)
        bots = by_name["bots"].request
        assert isinstance(bots, Bots) and (bots.n, bots.level) == (1, "medium")
        table = await w.tg.gateway.table_of(GROUP_ROOM)
        added = [s.event for s in await history(w.workers[0].store, table)
                 if type(s.event).__name__ == "BotsAdded"]
        assert added and len(added[0].seats) == 1
