"""Adapters submit typed commands when they know what a person asked (issue 18): a button's command
is not protocol text that the gateway parses again; a platform is asked whether someone moderates
only for the commands that need it; an adapter may answer a parsed command itself."""

from __future__ import annotations

from service.domain.commands import TableCommand
from service.domain.events import decode
from service.domain.identities import Room
from service.domain.inputs import Input
from service.domain.requests import Bots, Create, Join, Plain
from tests.service.support import ANA, BEA, GROUP, Harness

OTHER = Room(platform="tg", chat="-77", kind="group")


async def _commands(h: Harness) -> list[TableCommand]:
    out = []
    for key in h.keys.all_commands():
        for _, fields in await h.redis.xrange(key):
            out.append(TableCommand.loads(fields[b"c"]))
    return out


async def _created(h: Harness, room: Room):
    table = await h.table_of(room)
    return decode(next(iter(await h.events(table)))).event


async def test_a_typed_create_makes_the_table_its_text_makes(fake_redis):
    h = Harness(fake_redis)
    await h.gateway.submit(Input(ANA, GROUP, command_id="typed"),
                           request=Create(name="new", game="cinquillo", options={"chips": True, "turn": 30},
                                          players=3))
    await h.send(ANA, "/new cinquillo chips players=3 turn=30", room=OTHER, command_id="text")
    await h.settle()
    typed, text = await _created(h, GROUP), await _created(h, OTHER)
    shape = ("cinquillo", {"chips": True}, 3, 30.0)
    assert (typed.game, typed.options, typed.max_seats, typed.turn_seconds) == shape
    assert (text.game, text.options, text.max_seats, text.turn_seconds) == shape


async def test_typed_lobby_commands_reach_the_rooms_table(fake_redis):
    h = Harness(fake_redis)
    await h.send(ANA, "/new cinquillo")
    await h.gateway.submit(Input(BEA, GROUP), request=Join(name="join"))
    await h.gateway.submit(Input(ANA, GROUP), request=Bots(name="bots", n=1, level="easy"))
    await h.gateway.submit(Input(ANA, GROUP), request=Plain(name="start"))
    await h.settle()
    names = [type(decode(e).event).__name__ for e in await h.events(await h.table_of())]
    assert names[:5] == ["TableCreated", "PlayerJoined", "PlayerJoined", "BotsAdded", "MatchStarted"]
    bots = next(c for c in await _commands(h) if c.name == "bots")
    assert bots.args == {"n": 1, "level": "easy"} and isinstance(bots.request, Bots)


async def test_the_platform_is_asked_about_moderators_only_for_moderated_commands(fake_redis):
    h = Harness(fake_redis)
    asked: list[int] = []

    async def admin() -> bool:
        asked.append(1)
        return True

    await h.send(ANA, "/new cinquillo")
    await h.gateway.submit(Input(BEA, GROUP, moderator=admin), "/join")
    await h.gateway.submit(Input(BEA, GROUP, moderator=admin), request=Join(name="join"))
    assert asked == []
    await h.gateway.submit(Input(BEA, GROUP, moderator=admin), "/bots 1")
    await h.settle()
    assert asked == [1]
    bots = next(c for c in await _commands(h) if c.name == "bots")
    assert bots.moderator  # Bea administers the group: she may add AI players to Ana's table


async def test_an_adapter_may_answer_a_parsed_command_itself(fake_redis):
    h = Harness(fake_redis)
    seen = []

    async def mine(parsed) -> bool:
        seen.append((parsed.name, parsed.args))
        return parsed.name == "lang"

    assert await h.send(ANA, "/idioma en", intercept=mine) == []  # answered by the adapter: no reply
    assert seen == [("lang", {"locale": "en"})]
    assert await fake_redis.hget(h.keys.player_prefs(ANA.platform, ANA.user), "locale") is None
    replies = await h.send(ANA, "/ayuda", intercept=mine)
    assert seen[-1] == ("help", {}) and len(replies) == 1
    # A syntax error is the gateway's to explain: the adapter is not asked.
    await h.send(ANA, "/idioma", intercept=mine)
    assert len(seen) == 2
