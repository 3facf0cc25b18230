"""Command shards leased to live workers (service.store.leases): affinity, fair shares, takeover of a dead
worker's shards.  On fakeredis and on a real Redis."""

from __future__ import annotations

import asyncio
import json
import time

from service.domain.inputs import Input
from service.store.leases import Leases
from service.store.repository import load
from tests.polling import eventually
from tests.service.support import ANA, BEA, Harness, Player, Room


def _leases(redis, owner: str, parts: int = 4, lease_ms: int = 1000) -> Leases:
    return Leases(redis, owner, parts, "m", lambda p: f"lease:{p}", lease_ms)


async def test_live_processes_share_the_parts_fairly_and_never_twice(any_redis):
    a, b, c = (_leases(any_redis, n) for n in "abc")
    await a.rebalance(1000)
    assert a.owned == {0, 1, 2, 3}  # alone: everything
    await b.rebalance(1000)
    assert b.owned == set()  # nothing is free yet...
    await a.rebalance(1100)  # ...until a gives up what is beyond its share
    await b.rebalance(1100)
    assert len(a.owned) == 2 and len(b.owned) == 2 and not a.owned & b.owned
    await c.rebalance(1200)
    for x in (a, b, c, a, b, c):
        await x.rebalance(1300)
    owned = [a.owned, b.owned, c.owned]
    assert sorted(len(o) for o in owned) == [1, 1, 2]
    assert set().union(*owned) == {0, 1, 2, 3} and sum(map(len, owned)) == 4


async def test_a_busy_part_is_kept_until_nothing_of_it_is_in_hand(any_redis):
    a, b = _leases(any_redis, "a"), _leases(any_redis, "b")
    await a.rebalance(1000)
    await b.rebalance(1000)
    await a.rebalance(1100, busy=lambda p: True)
    assert a.owned == {0, 1, 2, 3} and a.draining and set(a.active) == a.owned - a.draining
    await a.rebalance(1200)
    assert len(a.owned) == 2 and not a.draining


async def test_a_dead_processes_parts_are_taken_when_its_leases_expire_and_leave_frees_at_once(any_redis):
    a, b = _leases(any_redis, "a", lease_ms=200), _leases(any_redis, "b", lease_ms=200)
    await a.rebalance(int(time.time() * 1000))
    await asyncio.sleep(0.3)  # a died: no renewal
    await b.rebalance(int(time.time() * 1000))
    assert b.owned == {0, 1, 2, 3}
    gained, lost = await a.rebalance(int(time.time() * 1000))  # a wakes up: its leases are gone
    assert gained == [] and sorted(lost) == [0, 1, 2, 3] and a.owned == set()
    await b.leave()
    assert [await any_redis.get(f"lease:{p}") for p in range(4)] == [None] * 4
    assert await any_redis.zscore("m", "b") is None


async def test_a_restarted_process_takes_back_its_own_leases_at_once_and_no_one_elses(any_redis):
    # A killed process comes back under the same name: what it held is its own, not to wait for.
    a, b = _leases(any_redis, "a", lease_ms=60_000), _leases(any_redis, "b", lease_ms=60_000)
    await a.rebalance(1000)
    assert a.owned == {0, 1, 2, 3}
    again = _leases(any_redis, "a", lease_ms=60_000)  # a, killed and started again: nothing in memory
    await again.rebalance(2000)
    assert again.owned == {0, 1, 2, 3}
    await b.rebalance(2000)
    assert b.owned == set()  # another name never takes a lease that has not expired
    assert [await any_redis.get(f"lease:{p}") for p in range(4)] == [b"a"] * 4


async def _wait_for(pred, timeout: float = 15.0) -> None:
    await eventually(pred, timeout, every=0.02)


async def test_running_workers_split_the_shards_and_every_table_stays_with_one_worker(any_redis):
    # (leases long enough that a loaded machine renews them in time: a lapsed lease moves a shard,
    # and then a conflict is the expected, safe outcome, not what this test is about)
    h = Harness(any_redis, workers=2, command_shards=4, lease_ms=3000, buckets=16)
    for w in h.workers:
        w.timers = False
    tasks = [asyncio.create_task(w.run()) for w in h.workers]
    try:
        async def split() -> bool:
            owned = [w.leases.owned for w in h.workers]
            return all(len(o) == 2 for o in owned) and not owned[0] & owned[1]
        await _wait_for(split)
        rooms = [Room(platform="tg", chat=f"r{i}") for i in range(8)]
        people = [Player(platform="tg", user=f"u{i}", name=f"U{i}") for i in range(8)]
        for p, r in zip(people, rooms, strict=True):
            await h.gateway.submit(Input(p, r), "/play 535 3")
        tables: list[str] = []

        async def created() -> bool:
            nonlocal tables
            tables = [t for r in rooms if (t := await h.gateway.table_of(r))
                      and await any_redis.xlen(h.keys.events(t))]
            return len(tables) == len(rooms)
        await _wait_for(created)
        for p, r in zip(people, rooms, strict=True):
            await h.gateway.submit(Input(p, r), "/leave")

        async def finished() -> bool:
            return all([(await load(h.worker.store, t)).status == "finished" for t in tables])
        await _wait_for(finished, 60)
        assert [w.metrics.shards._value.get() for w in h.workers] == [2, 2]
        # The timers are shared the same way: each worker fires the deadlines of its shards' buckets.
        due = [set(w.intake.due_buckets() or ()) for w in h.workers]
        assert due[0] | due[1] == set(range(16)) and not due[0] & due[1]
        # No table was ever worked on by both workers: no conflicts at all.
        assert sum(w.metrics.conflicts._value.get() for w in h.workers) == 0
        for w in h.workers:
            shards = {h.keys.commands(s) for s in w.leases.owned}
            assert all(h.keys.commands_for(t) in shards for t in w.loader.cache), "a table of another's shard"
    finally:
        for w in h.workers:
            w.stop.set()
        await asyncio.gather(*tasks)
    # A graceful stop hands the shards back at once.
    assert [await any_redis.get(h.keys.shard_lease(s)) for s in range(4)] == [None] * 4


async def test_a_dead_workers_shards_and_pending_commands_are_taken_over(any_redis):
    h = Harness(any_redis, workers=1, command_shards=2, lease_ms=300)
    dead = h.new_worker(name="dead")
    await dead.setup()
    assert dead.leases is not None
    await dead.leases.rebalance(int(time.time() * 1000))  # it owns both shards...
    await h.gateway.submit(Input(Player(platform="tg", user="x", name="X"), Room(platform="tg", chat="x")),
                           "/play cinquillo 3")
    dead.intake.leasing = True
    taken = await dead.intake.read(block=False)  # ...reads the /play and dies without acknowledging it
    assert len(taken) == 1
    alive = h.worker
    task = asyncio.create_task(alive.run())
    try:
        async def played() -> bool:
            t = await h.gateway.table_of(Room(platform="tg", chat="x"))
            return bool(t) and await any_redis.xlen(h.keys.events(t)) > 0
        await _wait_for(played, 10)
        assert alive.leases is not None and alive.leases.owned == {0, 1}
    finally:
        alive.stop.set()
        await task


async def test_a_running_worker_fires_the_turn_timers_of_its_shards(any_redis):
    h = Harness(any_redis, turn_seconds=30, timeouts_to_bot=2, lease_ms=300, timer_interval=0.05)
    await h.send(ANA, "/new cinquillo")
    await h.send(BEA, "/join")
    await h.send(ANA, "/start")
    table = await h.table_of()
    before = (await load(h.worker.store, table)).version
    h.clock.now += 31  # the person to move runs out of time
    h.worker.timers = True  # the harness's workers leave the timers to the tests, not this one
    task = asyncio.create_task(h.worker.run())
    try:
        async def moved() -> bool:
            return (await load(h.worker.store, table)).version > before
        await _wait_for(moved, 10)
        assert h.worker.intake.due_buckets() == list(range(16))  # alone: every shard, every bucket
    finally:
        h.worker.stop.set()
        await task


async def test_a_single_holder_lease_is_taken_kept_and_refused_to_another(any_redis):
    from service.store import leases

    assert await leases.hold(any_redis, "one", "a", 10_000)  # free: taken
    assert await leases.hold(any_redis, "one", "a", 20_000)  # ours: kept, and renewed
    assert 10_000 < await any_redis.pttl("one") <= 20_000
    # Refused: another holds it, and the refusal changes nothing (owner and expiry stay a's).
    assert not await leases.hold(any_redis, "one", "b", 60_000)
    assert await any_redis.get("one") == b"a" and await any_redis.pttl("one") <= 20_000
    assert not await leases.release(any_redis, "one", "b")  # b cannot free a's lease either
    assert await any_redis.get("one") == b"a"
    assert await leases.release(any_redis, "one", "a")
    assert await leases.hold(any_redis, "one", "b", 10_000)  # free again: b takes it
    await any_redis.pexpire("one", 1)
    await asyncio.sleep(0.01)
    assert await leases.hold(any_redis, "one", "a", 10_000)  # expired: free to take


class _Counting:
    """A Redis client that counts its round trips: each command sent alone, and each pipeline."""

    def __init__(self, redis) -> None:
        self.redis, self.trips = redis, 0

    def __getattr__(self, name):
        attr = getattr(self.redis, name)
        if name == "pipeline":
            def pipeline(*a, **k):
                pipe = attr(*a, **k)
                execute = pipe.execute

                async def counted(*ea, **ek):
                    self.trips += 1
                    return await execute(*ea, **ek)
                pipe.execute = counted
                return pipe
            return pipeline
        if callable(attr) and name in ("eval", "evalsha", "execute_command"):
            async def one(*a, **k):
                self.trips += 1
                return await attr(*a, **k)
            return one
        return attr


async def test_a_renewal_of_every_lease_held_is_one_round_trip_not_one_per_part(any_redis):
    """A worker's loop waits for its renewals every third of a lease: one round trip per shard (16 of
    them) stalled it for milliseconds each time (issue 33: the p99 of command -> outbox)."""
    counting = _Counting(any_redis)
    a = _leases(counting, "a", parts=16)
    await a.rebalance(1000)
    assert len(a.owned) == 16
    counting.trips = 0
    gained, lost = await a.rebalance(1100)
    assert (gained, lost) == ([], []) and len(a.owned) == 16
    assert counting.trips == 2  # the heartbeat and the renewals
    await any_redis.delete("lease:3")  # one lease lost meanwhile (expired): found in the same trip
    gained, lost = await a.rebalance(1200)
    assert 3 in lost or 3 in gained


async def test_a_lapsed_lease_is_said_and_what_is_in_hand_is_not_claimed_back(any_redis, log_lines):
    """A worker held up for most of a lease (its loop or Redis stalled) finds its leases lapsed and
    takes its shards back at once; the command it holds is its own, still in hand: not claimed back
    as a dead worker's would be (that "claimed 1 command" read as a command left unread, issue 33)."""
    h = Harness(any_redis, workers=1, command_shards=2, lease_ms=60_000)
    w = h.worker
    await w.setup()
    w.intake.leasing = True
    await w.intake.rebalance([])
    assert w.leases is not None and w.leases.owned == {0, 1}
    await h.gateway.submit(Input(Player(platform="tg", user="x", name="X"), Room(platform="tg", chat="x")),
                           "/new cinquillo")
    in_hand = await w.intake.read(block=False)
    assert len(in_hand) == 1
    await any_redis.delete(*[h.keys.shard_lease(s) for s in range(2)])  # both expired meanwhile
    assert await w.intake.rebalance(in_hand) == []
    assert w.leases.owned == {0, 1} and sorted(w.leases.lapsed) == [0, 1]
    assert w.metrics.claimed._value.get() == 0
    await w.process(in_hand)
    assert await h.gateway.table_of(Room(platform="tg", chat="x"))
    said = [json.loads(line)["event"] for line in log_lines.getvalue().splitlines()]
    assert "lease_lapsed" in said and "claimed" not in said
