"""Ratings through the service: live projection of finished matches, counted once whatever is
redelivered, rebuilt from the streams and archives equal to the live one after a worker crash; the
boards per group and global, the week and month windows; /rating; refusals that change nothing."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import orjson
import pytest

from service.domain.events import MatchFinished
from service.domain.identities import Player
from service.ops.trim import trim
from service.protocol.i18n import translate
from service.ratings.projector import Projector
from service.ratings.rebuild import rebuild
from service.ratings.store import RatingStore
from service.store.keys import Keys
from service.write.worker import Worker
from tests.service.support import ANA, BEA, CAL, DAN, GROUP, OTHER_GROUP, Harness, private, seeds, to

PEOPLE = [ANA, BEA, CAL, DAN]
_ids = itertools.count()
WEEK = 7 * 86400


class Dies(Exception):
    """The worker process dies."""


class DiesAfterFinishing:
    """A worker's finishing stage that dies right after the append that finishes a match, before its
    acknowledgements, index writes and rating queue go out (they ride on the next round trip)."""

    def __init__(self, worker: Worker) -> None:
        self.inner, self.held = worker.finisher, worker.held
        worker.finisher = self  # type: ignore[assignment]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def finish(self, batches: Any, duplicates: Any) -> Any:
        if any(isinstance(ev, MatchFinished) for b in batches for o in b.outcomes for ev in o.events):
            self.held.drop()  # what it held back is lost with the process
            raise Dies
        return await self.inner.finish(batches, duplicates)


def dies_after_finishing(worker: Worker) -> Worker:
    """``worker``, whose process dies right after it appends the end of a match."""
    DiesAfterFinishing(worker)
    return worker


async def play_out(h: Harness, table: str, *, redeliver_every: int = 0, leaver: Player | None = None,
                   leave_after: int = 10) -> None:
    """Play the people's turns of ``table`` with their buttons until its match is over; every
    ``redeliver_every``-th move is submitted twice with the same command id (an adapter's retry)."""
    for n in itertools.count():
        if any(m.kind == "match_over" and m.table == table for m in h.messages):
            return
        assert n < 3000, "the match did not end"
        hand = [m for m in h.messages if m.kind == "hand" and m.actions and m.table == table][-1]
        person = next(p for p in PEOPLE if p.same(hand.to.player))
        if leaver is not None and n == leave_after:
            await h.send(leaver, "/leave", room=private(leaver))
            continue
        cid = f"move-{next(_ids)}"
        await h.send(person, token=hand.actions[n % len(hand.actions)].token, command_id=cid)
        if redeliver_every and n % redeliver_every == 0:
            await h.send(person, token=hand.actions[0].token, command_id=cid)


async def open_table(h: Harness, room, game: str, people: list[Player], bots: int = 0) -> str:
    await h.send(people[0], f"/new {game}", room=room)
    table = await h.table_of(room)
    for p in people[1:]:
        await h.send(p, "/join", room=room)
    if bots:
        await h.send(people[0], f"/bots {bots}", room=room)
    await h.send(people[0], "/start", room=room)
    return table


async def snapshot(redis: Any) -> dict[str, Any]:
    """Every ratings key but the queue and the lease, with its content."""
    out: dict[str, Any] = {}
    async for raw in redis.scan_iter(match="rt:{ratings}:*"):
        key = raw.decode()
        if key.endswith((":queue", ":lease")):
            continue
        kind = (await redis.type(key)).decode()
        if kind == "hash":
            out[key] = await redis.hgetall(key)
        elif kind == "zset":
            out[key] = await redis.zrange(key, 0, -1, withscores=True)
        else:
            out[key] = sorted(await redis.smembers(key))
    return out


async def reply(h: Harness, who: Player, text: str, room) -> str:
    msgs = await h.send(who, text, room=room)
    (m,) = [m for m in msgs if m.kind == "reply"]
    return m.text


async def test_live_ratings_equal_the_rebuild_after_redeliveries_and_a_worker_crash(any_redis, tmp_path):
    h = Harness(any_redis)
    projector = Projector(any_redis, Keys())
    # 1. Ana, Bea and an AI player in the group; moves sent twice now and then.
    t1 = await open_table(h, GROUP, "535", [ANA, BEA], bots=1)
    await play_out(h, t1, redeliver_every=7)
    # 2. Ana and Cal in another group, Cinquillo with two AI players.
    h.clock.now += 3600
    t2 = await open_table(h, OTHER_GROUP, "cinquillo", [ANA, CAL], bots=2)
    await play_out(h, t2, redeliver_every=11)
    # 3. Four people; Dan leaves the running match (an AI player takes his seat): he is rated last.
    h.clock.now += 3600
    t3 = await open_table(h, GROUP, "535", [ANA, BEA, CAL, DAN])
    await play_out(h, t3, leaver=DAN, leave_after=5)
    # 4. The worker dies right after appending the end of Bea and Dan's match.
    h.clock.now += 3600
    t4 = await open_table(h, GROUP, "535", [BEA, DAN], bots=1)
    h.workers[0] = dies_after_finishing(h.new_worker(name="doomed", seeds=seeds("d")))
    with pytest.raises(Dies):
        await play_out(h, t4)
    assert not await RatingStore(any_redis, Keys()).is_rated(t4)
    await asyncio.sleep(0.1)  # older than claim_idle_ms: another worker takes its commands over
    h.workers[0] = h.new_worker(name="heir", seeds=seeds("h"))
    await h.worker.process(await h.worker.claim())
    await h.settle()
    # 5. Cal alone against two AI players, in private: a match against the AI's level is rated.
    h.clock.now += 3600
    await h.send(CAL, "/play 535 3", room=private(CAL))
    t5 = await h.table_of(private(CAL))
    await play_out(h, t5)

    assert await projector.drain() >= 5
    store = RatingStore(any_redis, Keys())
    for t in (t1, t2, t3, t4, t5):
        assert await store.is_rated(t), t
    # Redelivered records (a copy queued twice, the last command resubmitted) change nothing.
    queued_again = [m for m in h.messages if m.kind == "match_over" and m.table == t1]
    assert queued_again
    live = await snapshot(any_redis)
    ratings = await store.get("535", ["tg:1", "tg:2", "web:3", "tg:4"])
    assert ratings["tg:1"].matches == 2 and ratings["tg:2"].matches == 3 and ratings["tg:4"].matches == 2
    assert ratings["web:3"].matches == 2
    assert (await store.get("cinquillo", ["tg:1"]))["tg:1"].matches == 1
    record = await any_redis.hget(store.keys.ratings("535"), "tg:1")
    await any_redis.xadd(store.keys.rating_queue(), {"r": orjson.dumps({
        "table": t1, "game": "535", "at": 1.0, "groups": [], "seats": [
            {"rank": 1, "team": 0, "platform": "tg", "user": "1"}, {"rank": 2, "team": 1, "bot": "easy"}]})})
    assert await projector.drain() == 1
    assert await any_redis.hget(store.keys.ratings("535"), "tg:1") == record
    assert await snapshot(any_redis) == live

    # The rebuild from nothing gives the same keys, to the bit; and again with half the tables trimmed
    # into an archive (read back from the file).
    await rebuild(any_redis, h.keys)
    assert await snapshot(any_redis) == live
    archive = str(tmp_path / "a.jsonl")
    trimmed = await trim(any_redis, h.keys, 0, archive, now=h.clock.now + 10 * WEEK)
    assert set(trimmed) >= {t1, t2}
    await rebuild(any_redis, h.keys, [archive])
    assert await snapshot(any_redis) == live
    fold = await rebuild(any_redis, h.keys)  # without the archive those matches are gone
    assert t1 not in fold.done


async def test_boards_per_group_global_and_windows(any_redis):
    h = Harness(any_redis)
    projector = Projector(any_redis, Keys())
    t1 = await open_table(h, GROUP, "535", [ANA, BEA], bots=1)
    await play_out(h, t1)
    h.clock.now += 2 * WEEK + 31 * 86400  # another week and another month
    t2 = await open_table(h, OTHER_GROUP, "535", [CAL, DAN])
    await play_out(h, t2)
    await projector.drain()

    board = await reply(h, ANA, "/top 535", GROUP)
    assert board.splitlines()[0] == translate("en", "top.title.group.all", game="535")
    assert "Ana" in board and "Bea" in board and "Cal" not in board and "Dan" not in board
    world = await reply(h, ANA, "/top 535", private(ANA))
    assert all(n in world for n in ("Ana", "Bea", "Cal", "Dan"))
    # This week: only Cal and Dan played (in the other group); the group board of this week is empty.
    week = await reply(h, ANA, "/top 535 week", private(ANA))
    assert "Cal" in week and "Dan" in week and "Ana" not in week
    assert translate("en", "top.empty") in await reply(h, ANA, "/top week 535", GROUP)
    month = await reply(h, CAL, "/top 535 month", OTHER_GROUP)
    assert "Cal" in month and "Dan" in month
    # Without a game, one message with both games' boards.
    both = await reply(h, ANA, "/top", GROUP)
    assert "Cinquillo" in both and translate("en", "top.empty") in both
    # Spanish aliases.
    es = await reply(h, ANA, "/ranking 535 semana", private(ANA))
    assert "Cal" in es

    mine = await reply(h, ANA, "/rating", private(ANA))
    assert mine.splitlines()[0] == translate("en", "rating.title") and "535:" in mine and "of 4" in mine
    assert translate("en", "rating.none") == await reply(h, Player(platform="tg", user="99"), "/rating",
                                                         private(Player(platform="tg", user="99")))
    rules = await reply(h, ANA, "/rules ratings", GROUP)
    assert rules == translate("en", "rules.ratings") and "AI" in rules
    assert "IA" in translate("es", "rules.ratings")


@pytest.mark.parametrize("text,code", [("/top chess", "bad_argument"), ("/top week month", "bad_argument"),
                                       ("/rating 535", "unexpected_argument"),
                                       ("/tournament cinquillo", "wrong_chat")])
async def test_refused_board_commands_change_nothing(any_redis, text, code):
    h = Harness(any_redis)
    await h.settle()  # the command streams and their group exist
    before = await snapshot(any_redis)
    keys_before = sorted(await any_redis.keys("*"))
    msgs = await h.send(ANA, text, room=private(ANA))
    (m,) = to(msgs, private(ANA)) or to(msgs, ANA)
    assert m.code == code and m.text and code not in m.text
    assert await snapshot(any_redis) == before
    after = sorted(k for k in await any_redis.keys("*") if not k.startswith(b"out:"))
    assert after == [k for k in keys_before if not k.startswith(b"out:")]
