"""A group's /stats: finished matches and wins, counted in Redis as each match ends (never in the
process), once per match whatever is redelivered or restarted, atomically (fakeredis and a real Redis).
Wins go by Telegram user id (the service's ``Message.seats``), shown under the person's latest name;
an AI player's win counts for no one."""

from __future__ import annotations

import asyncio

import engine
from adapters.telegram.content import PLATFORM
from service.domain.identities import Player, Room
from service.platform.outbox import Message, Recipient
from service.platform.platform_state import PlatformState
from service.protocol.i18n import translate
from service.store.keys import Keys
from tests.adapters.telegram.support import GROUP_ID, World, person

BEA = person(91, "Bea", "en")
GROUP = Room(platform="telegram", chat=str(GROUP_ID), kind="group")
ANA_P = Player(platform=PLATFORM, user="81", name="Ana")
BEA_P = Player(platform=PLATFORM, user="91", name="Bea")


def _match_over(table: str, seed: int, winner: Player | None, loser: Player | None) -> Message:
    """The end of a quick 535 match of two seats, as the service sends it to the group, with
    ``winner`` seated where the engine's winner sits (None: an AI player's seat)."""
    state = engine.new_game("535", players=2, seed=seed, hand_size=3, target=3)
    while engine.to_move(state) is not None:
        state = engine.play(state, engine.legal_moves(state)[0])
    view = engine.view(state, None)
    [won] = view["result"]["winners"]
    seats = [winner, loser] if won == 0 else [loser, winner]
    return Message(id=f"{table}:0", table=table, version=40, to=Recipient(room=GROUP), locale="en",
                   kind="match_over", text="final", view=view, seats=seats)


async def _stats(w: World) -> tuple[str, str | None]:
    """The group's /stats answer: its matches line and its wins line (None: no wins listed)."""
    before = len(w.fake.calls_to(GROUP_ID))
    await w.say(BEA, "/stats", chat=GROUP_ID)
    await w.quiet()
    [reply] = [c.params["text"] for c in w.fake.calls_to(GROUP_ID)[before:]
               if c.params["text"].startswith(translate("en", "tg.group_stats", matches=0)[:20])]
    first, _, rest = reply.partition("\n")
    return first, rest or None


def _wins(text: str) -> str:
    return translate("en", "tg.group_wins", wins=text)


async def test_group_stats_count_each_match_once_across_redeliveries_and_restarts(any_redis):
    async with World(any_redis) as w:
        msg = _match_over("tabA", 1, ANA_P, BEA_P)
        await w.tg.handler(msg)
        await w.tg.handler(msg)  # redelivered
        await w.quiet()
        assert await _stats(w) == (translate("en", "tg.group_stats", matches=1), _wins("Ana 1"))
        # A new process: the counters are in Redis; the same end delivered again counts nothing.
        await w.restart_bot()
        await w.tg.handler(msg)
        await w.tg.handler(_match_over("tabB", 2, BEA_P, ANA_P))
        await w.tg.handler(_match_over("tabC", 3, ANA_P, BEA_P))
        await w.quiet()
        assert await _stats(w) == (translate("en", "tg.group_stats", matches=3), _wins("Ana 2, Bea 1"))


async def test_a_renamed_winner_keeps_one_entry_under_the_latest_name(any_redis):
    async with World(any_redis) as w:
        await w.tg.handler(_match_over("tabA", 1, ANA_P, BEA_P))
        renamed = ANA_P.model_copy(update={"name": "Anita"})
        await w.tg.handler(_match_over("tabB", 2, renamed, BEA_P))
        await w.quiet()
        assert await _stats(w) == (translate("en", "tg.group_stats", matches=2), _wins("Anita 2"))
        # Losing a match under yet another name still updates the name shown.
        await w.tg.handler(_match_over("tabC", 3, BEA_P, ANA_P.model_copy(update={"name": "Ana M."})))
        await w.quiet()
        assert (await _stats(w))[1] == _wins("Ana M. 2, Bea 1")


async def test_two_people_with_the_same_name_stay_apart(any_redis):
    other_ana = Player(platform=PLATFORM, user="82", name="Ana")
    async with World(any_redis) as w:
        await w.tg.handler(_match_over("tabA", 1, ANA_P, other_ana))
        await w.tg.handler(_match_over("tabB", 2, other_ana, ANA_P))
        await w.tg.handler(_match_over("tabC", 3, ANA_P, other_ana))
        await w.quiet()
        assert await _stats(w) == (translate("en", "tg.group_stats", matches=3), _wins("Ana 2, Ana 1"))


async def test_an_ai_players_win_counts_the_match_but_no_person(any_redis):
    async with World(any_redis) as w:
        await w.tg.state.set_table_names(PLATFORM, "tabA", ["AI 1", "Bea"])  # the names the table showed
        await w.tg.state.set_table_names(PLATFORM, "tabB", ["Bea", "AI 2"])
        await w.tg.handler(_match_over("tabA", 1, None, BEA_P))
        await w.tg.handler(_match_over("tabB", 2, None, BEA_P))
        await w.quiet()
        assert await _stats(w) == (translate("en", "tg.group_stats", matches=2), None)
        await w.tg.handler(_match_over("tabC", 3, BEA_P, None))
        await w.quiet()
        assert await _stats(w) == (translate("en", "tg.group_stats", matches=3), _wins("Bea 1"))


async def test_two_processes_counting_the_same_end_at_once_count_it_once(any_redis):
    one, two = PlatformState(any_redis, Keys(prefix="p1:")), PlatformState(any_redis, Keys(prefix="p1:"))
    names = {"81": "Ana", "91": "Bea"}
    firsts = await asyncio.gather(*(s.record_group_match(PLATFORM, "-5", "tab", ["81"], names)
                                    for s in (one, two) * 5))
    assert sorted(firsts) == [False] * 9 + [True]
    assert await one.group_stats(PLATFORM, "-5") == (1, {"81": ("Ana", 1)})
    assert await two.group_stats(PLATFORM, "-6") == (0, {})


async def test_wins_counted_by_name_before_are_ignored(any_redis):
    state = PlatformState(any_redis, Keys(prefix="p2:"))
    await any_redis.hset("p2:pf:{telegram:-5}:stats", mapping={"matches": 4, "win:Ana": 3, "win:AI 2": 1})
    await state.record_group_match(PLATFORM, "-5", "tab", ["81"], {"81": "Ana"})
    assert await state.group_stats(PLATFORM, "-5") == (5, {"81": ("Ana", 1)})
