"""The exactly-once claims of the ratings projector and the tournament director under the fault kit
(issue 15): the connection is killed at the compare-and-set itself, before it reaches Redis
(``kill_before``) or after it ran with its reply lost (``kill_after``); the entry stays pending, is
handled again, and the match is rated once / the round advances once."""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError

from service.domain.commands import TableCommand
from service.ratings.model import MatchRecord, SeatRecord
from service.ratings.projector import GROUP as RATERS
from service.ratings.projector import Projector, queue_record
from service.ratings.store import RatingStore, month, week
from service.store.keys import Keys
from service.tournaments.director import Director
from service.tournaments.events import RoundFinished, RoundStarted, TableScored, decode
from tests.faults.proxy import Proxy, evalsha
from tests.faults.redis_server import RedisServer
from tests.service.support import ANA, BEA, GROUP, seeds, settings

AT = 1_700_000_000.0


def once(url: str) -> aioredis.Redis:
    """A client that tries each command once: the kill is seen as it happens."""
    return aioredis.from_url(url, retry=Retry(NoBackoff(), 0))


def record(table: str) -> MatchRecord:
    return MatchRecord(table=table, game="535", at=AT, groups=("tg:-100",), seats=(
        SeatRecord(rank=1, team=0, platform="tg", user="1", name="Ana"),
        SeatRecord(rank=2, team=1, bot="medium"),
        SeatRecord(rank=3, team=2, platform="tg", user="2", name="Bea")))


@pytest.mark.parametrize("action", ["kill_before", "kill_after"])
async def test_a_match_is_rated_once_when_the_compare_and_set_is_cut(redis_server: RedisServer, proxy: Proxy,
                                                                     action: str):
    direct, via = once(redis_server.url), once(proxy.url)
    try:
        store = RatingStore(direct, Keys())
        await direct.script_load(store._apply.script)  # so that the one EVALSHA is the write itself
        pipe = direct.pipeline(transaction=False)
        queue_record(pipe, store.keys, record("tab1"))
        await pipe.execute()
        first = Projector(via, Keys(), name="p1")
        rule = proxy.arm(evalsha(first.store._apply.sha), action, times=1)
        with pytest.raises(RedisConnectionError):
            await first.drain()
        await rule.wait()
        # The entry was not acknowledged: still pending for p1.  Its write happened or not, per action.
        assert (await direct.xpending(store.keys.rating_queue(), RATERS))["pending"] == 1
        assert await store.is_rated("tab1") == (action == "kill_after")
        # p1 again (a restart of the same projector reads its pending entries first).
        again = Projector(once(proxy.url), Keys(), name="p1")
        assert await again.drain() == 1
        assert again.rated == (1 if action == "kill_before" else 0)  # after the kill: a duplicate
        ratings = await store.get("535", ["tg:1", "tg:2"])
        assert [(r.matches, r.wins) for r in ratings.values()] == [(1, 1), (1, 0)]
        gain = ratings["tg:1"].points - 1000 + 0.0
        for period in (week(AT), month(AT)):  # the windows counted the gain once, not twice
            assert await direct.zscore(store.keys.rating_window("535", period), "tg:1") == gain
        assert await direct.xlen(store.keys.rating_queue()) == 0
        assert (await direct.xpending(store.keys.rating_queue(), RATERS))["pending"] == 0
        await again.redis.aclose()
    finally:
        await direct.aclose()
        await via.aclose()


async def _events(redis: aioredis.Redis, director: Director, tid: str) -> list[object]:
    return [decode(f[b"e"]).event for _, f in await redis.xrange(director.keys.tournament_events(tid))]


@pytest.mark.parametrize("action", ["kill_before", "kill_after"])
async def test_a_round_advances_once_when_the_compare_and_set_is_cut(redis_server: RedisServer,
                                                                      proxy: Proxy, action: str):
    s = settings()
    direct, via = once(redis_server.url), once(proxy.url)
    try:
        setup = Director(direct, s, Keys.of(s), clock=lambda: AT, seeds=seeds("round"), name="d0")
        await setup.store.ensure_scripts()
        tid = "Tfaults001"
        for cid, who, args in (("c1", ANA, {"action": "open", "game": "535", "rounds": 2}),
                               ("c2", BEA, {"action": "join"}), ("c3", ANA, {"action": "start"})):
            assert await setup.handle(TableCommand(id=cid, table=tid, name="tournament", args=args, actor=who,
                                                   room=GROUP, locale="en", at=AT)) == "ok"
        t = await setup.load(tid)
        assert t is not None and t.round == 1
        (draw,) = t.tables(1)
        ranks = [{"rank": i + 1, "team": i} for i in range(len(draw.seats))]
        fin = TableCommand(id=f"fin:{draw.table}", table=tid, name="table_finished", at=AT,
                           args={"table": draw.table, "record": {"table": draw.table, "game": "535", "at": AT,
                                                                  "seats": ranks, "groups": []}})
        await setup.setup()
        await direct.xadd(Keys().tournament_commands(), {"c": fin.dumps()})
        first = Director(via, s, Keys.of(s), clock=lambda: AT, seeds=setup.seeds, name="d1")
        rule = proxy.arm(evalsha(setup.store.sha("append")), action, times=1)
        with pytest.raises(RedisConnectionError):
            await first.drain()
        await rule.wait()
        events = await _events(direct, setup, tid)
        assert any(isinstance(e, RoundStarted) and e.round == 2 for e in events) == (action == "kill_after")
        # The same director again: its pending report is decided once more, a duplicate if it was applied.
        again = Director(once(proxy.url), s, Keys.of(s), clock=lambda: AT, seeds=setup.seeds, name="d1")
        assert await again.drain() == 1
        events = await _events(direct, setup, tid)
        names = [type(e).__name__ for e in events]
        assert names.count("TableScored") == 1 and names.count("RoundFinished") == 1
        assert [e.round for e in events if isinstance(e, RoundStarted)] == [1, 2]
        assert [e.round for e in events if isinstance(e, RoundFinished | TableScored)] == [1, 1]
        # Round 2's table was sent its creation command (exactly one of it: the first try never got there).
        t = await setup.load(tid)
        assert t is not None and t.round == 2
        (draw2,) = t.tables(2)
        stream = setup.keys.commands_for(draw2.table)
        sent = [f for _, f in await direct.xrange(stream) if TableCommand.loads(f[b"c"]).id
                == f"tt:{draw2.table}"]
        assert len(sent) == 1
        assert (await direct.xpending(Keys().tournament_commands(), "directors"))["pending"] == 0
        await again.redis.aclose()
    finally:
        await direct.aclose()
        await via.aclose()
