"""A group's /stats: finished matches and wins, counted in Redis as each match ends (never in the
process), once per match whatever is redelivered or restarted, atomically (fakeredis and a real Redis)."""

from __future__ import annotations

import asyncio

import engine
from adapters.telegram.render import PLATFORM
from service.i18n import translate
from service.identities import Room
from service.outbox import Message, Recipient
from service.platform_state import PlatformState
from tests.adapters.telegram.support import GROUP_ID, World, person

BEA = person(91, "Bea", "en")
GROUP = Room(platform="telegram", chat=str(GROUP_ID), kind="group")
NAMES = ["Ana", "Bea"]


def _match_over(table: str, seed: int) -> tuple[Message, list[str]]:
    """The end of a quick 535 match of Ana and Bea, as the service sends it to the group."""
    state = engine.new_game("535", players=2, seed=seed, hand_size=3, target=3)
    while engine.to_move(state) is not None:
        state = engine.play(state, engine.legal_moves(state)[0])
    view = engine.view(state, None)
    msg = Message(id=f"{table}:0", table=table, version=40, to=Recipient(room=GROUP), locale="en",
                  kind="match_over", text="final", view=view)
    return msg, [NAMES[w] for w in view["result"]["winners"]]


async def _stats(w: World) -> str:
    before = len(w.fake.calls_to(GROUP_ID))
    await w.say(BEA, "/stats", chat=GROUP_ID)
    await w.quiet()
    [reply] = [c.params["text"] for c in w.fake.calls_to(GROUP_ID)[before:]
               if c.params["text"].startswith(translate("en", "tg.group_stats", matches=0)[:20])]
    return reply


async def test_group_stats_count_each_match_once_across_redeliveries_and_restarts(any_redis):
    async with World(any_redis) as w:
        msg, winners = _match_over("tabA", 1)
        await w.tg.state.set_table_names(PLATFORM, "tabA", NAMES)
        await w.tg.handler(msg)
        await w.tg.handler(msg)  # redelivered
        await w.quiet()
        reply = await _stats(w)
        assert translate("en", "tg.group_stats", matches=1) in reply
        assert all(f"{name} 1" in reply for name in winners)
        # A new process: the counters are in Redis; the same end delivered again counts nothing.
        await w.restart_bot()
        await w.tg.handler(msg)
        other, other_winners = _match_over("tabB", 2)
        await w.tg.state.set_table_names(PLATFORM, "tabB", NAMES)
        await w.tg.handler(other)
        await w.quiet()
        reply = await _stats(w)
        assert translate("en", "tg.group_stats", matches=2) in reply
        for name in NAMES:
            wins = winners.count(name) + other_winners.count(name)
            assert (f"{name} {wins}" in reply) == (wins > 0)


async def test_two_processes_counting_the_same_end_at_once_count_it_once(any_redis):
    one, two = PlatformState(any_redis, "p1:"), PlatformState(any_redis, "p1:")
    firsts = await asyncio.gather(*(s.record_group_match(PLATFORM, "-5", "tab", ["Ana"])
                                    for s in (one, two) * 5))
    assert sorted(firsts) == [False] * 9 + [True]
    assert await one.group_stats(PLATFORM, "-5") == (1, {"Ana": 1})
    assert await two.group_stats(PLATFORM, "-6") == (0, {})
