"""The worker's robustness: races between workers, takeover of a dead worker's commands, dead letters,
timers and a graceful stop.  On fakeredis and on a real Redis."""

from __future__ import annotations

import asyncio
import gc
import json

import pytest

import engine
from service.domain.commands import TableCommand
from service.domain.events import decode
from service.domain.inputs import Input
from service.store.event_store import DONE_AFTER_END_S
from service.store.repository import fold, load
from service.write.timers import fire_due
from service.write.worker import GEN0_THRESHOLD, Worker
from tests.service.support import ANA, BEA, GROUP, Harness, Player, Room, private, to


async def _all_done(h, table):
    return {m.decode() for m in await h.redis.smembers(h.keys.done(table))}


async def test_concurrent_workers_on_one_table_append_once_per_version_and_lose_nothing(any_redis):
    # worker_leases=False: every worker reads every shard, so the four really race on one table.
    h = Harness(any_redis, workers=4, batch=8, worker_leases=False)
    await h.send(ANA, "/new cinquillo tradicional")
    table = await h.table_of()
    people = [Player(platform="tg", user=f"p{i}", name=f"P{i}") for i in range(30)]
    ids = []
    for p in people:
        ids.append(await h.gateway.submit(Input(p, GROUP), "/join"))
        ids.append(await h.gateway.submit(Input(p, GROUP), "/leave"))
    tasks = [asyncio.create_task(w.run()) for w in h.workers]
    for _ in range(400):
        if set(ids) <= await _all_done(h, table):
            break
        await asyncio.sleep(0.02)
    for w in h.workers:
        w.stop.set()
    await asyncio.gather(*tasks)
    assert set(ids) <= await _all_done(h, table)  # no command lost
    entries = await any_redis.xrange(h.keys.events(table))
    assert [e[0].decode() for e in entries] == [f"0-{v}" for v in range(1, len(entries) + 1)]
    by_cmd: dict[str, list[int]] = {}
    for v, (_, f) in enumerate(entries, 1):
        by_cmd.setdefault(decode(f[b"e"]).cmd, []).append(v)
    # Each command applied once: its events are one contiguous run of versions.
    assert all(vs == list(range(vs[0], vs[0] + len(vs))) for vs in by_cmd.values())
    t = await load(h.worker.store, table)
    assert t.version == len(entries)
    # Every command got exactly one outcome: one reply or one table message per room.
    msgs = await h.collect()
    assert sorted(m.id.split(":")[0] for m in msgs if m.to.room) == sorted(ids)


async def test_a_dead_workers_pending_commands_are_claimed_and_done_once(any_redis):
    h = Harness(any_redis, workers=2)
    await h.send(ANA, "/new cinquillo")
    table = await h.table_of()
    await h.gateway.submit(Input(BEA, GROUP), "/join")
    dead, alive = h.workers
    await dead.setup()
    taken = await dead.intake.read(block=False)  # delivered to a worker that then dies without acking
    assert len(taken) == 1
    assert await alive.drain() == 0  # nothing new for the others...
    await asyncio.sleep(0.1)  # ...until the command has been idle for claim_idle_ms
    claimed = await alive.claim()
    await alive.process(claimed)
    assert (await load(alive.store, table)).seat_of(BEA) == 1
    # The dead worker comes back and finishes what it had: the script sees the id and does nothing.
    await dead.process(taken)
    assert (await load(alive.store, table)).version == 3
    assert await any_redis.xpending(h.keys.commands_for(table), h.settings.group) in (
        {"pending": 0, "min": None, "max": None, "consumers": []},)


async def test_a_malformed_command_goes_to_the_dead_letter_stream(any_redis):
    h = Harness(any_redis)
    await h.worker.setup()
    await any_redis.xadd(h.keys.commands(0), {"c": b"{not json"})
    await h.worker.drain()
    [(_, fields)] = await any_redis.xrange(h.keys.dead(0))
    assert b"malformed" in fields[b"error"]
    assert (await any_redis.xpending(h.keys.commands(0), h.settings.group))["pending"] == 0


async def test_a_command_that_keeps_failing_is_dead_lettered_with_its_error(any_redis):
    h = Harness(any_redis, max_attempts=3)

    def broken(view, level, seed):
        raise RuntimeError("the AI player crashed")

    h.workers[0] = h.new_worker(choose_move=broken)
    await h.send(ANA, "/play cinquillo 2", room=private(ANA))
    table = await h.table_of(private(ANA))
    t = await load(h.worker.store, table)
    if t.seats[t.to_move()].human:
        hand = h.last_hand()
        await h.send(ANA, token=hand.actions[0].token, room=private(ANA))
    dead = await any_redis.xrange(h.keys.dead(h.keys.shard(table)))
    assert len(dead) == 1 and b"the AI player crashed" in dead[0][1][b"error"]
    assert json.loads(dead[0][1][b"c"])["name"] == "tick"
    assert h.worker.metrics.dead._value.get() == 1


async def test_a_timed_out_turn_is_played_for_the_person_who_is_told(any_redis):
    h = Harness(any_redis, turn_seconds=30, timeouts_to_bot=2)
    await h.send(ANA, "/new cinquillo")
    await h.send(BEA, "/join")
    await h.send(ANA, "/start")
    table = await h.table_of()
    t = await load(h.worker.store, table)
    late = [ANA, BEA][t.to_move()]
    assert await fire_due(any_redis, h.keys, h.clock.now * 1000) == 0  # not due yet
    h.clock.now += 31
    assert await fire_due(any_redis, h.keys, h.clock.now * 1000) == 1
    msgs = await h.settle()
    assert any(m.kind == "reply" and m.to.player and m.to.player.same(late) for m in msgs)
    assert (await load(h.worker.store, table)).version == t.version + 1
    # The same deadline fired again (a second timer loop) does nothing more.
    await any_redis.xadd(h.keys.commands_for(table), {"c": TableCommand(
        id=f"tick:{table}:{t.version}", table=table, name="tick", args={"version": t.version}).dumps()})
    assert await h.settle() == []


async def test_a_forgotten_lobby_is_closed_by_its_deadline_and_the_room_is_told(any_redis):
    h = Harness(any_redis, lobby_idle_s=600)
    await h.send(ANA, "/new cinquillo")
    table = await h.table_of()
    h.clock.now += 599
    await fire_due(any_redis, h.keys, h.clock.now * 1000)
    await h.settle()
    assert (await load(h.worker.store, table)).status == "lobby"
    h.clock.now += 1
    assert await fire_due(any_redis, h.keys, h.clock.now * 1000) == 1
    await h.settle()
    assert (await load(h.worker.store, table)).status == "cancelled"
    assert any(m.to.room and "closed" in (m.text or "") for m in h.messages)
    assert await any_redis.zcard(h.keys.due_for(table)) == 0  # nothing left to fire


async def test_k_timeouts_in_a_row_hand_the_seat_to_an_ai_player(any_redis):
    h = Harness(any_redis, turn_seconds=30, timeouts_to_bot=2)
    await h.send(ANA, "/play cinquillo 2", room=private(ANA))
    table = await h.table_of(private(ANA))
    for _ in range(50):
        t = await load(h.worker.store, table)
        if t.status != "running" or not t.seats[0].human:
            break
        h.clock.now += 31
        await fire_due(any_redis, h.keys, h.clock.now * 1000)
        await h.settle()
    t = await load(h.worker.store, table)
    assert t.status == "finished" or not t.seats[0].human
    if t.status == "running" or any(m.kind == "reply" and "AI" in m.text for m in h.messages):
        assert any(m.text for m in to(h.messages, ANA) if m.kind == "reply")


async def test_a_lost_ai_tick_is_recovered_by_the_deadline(any_redis):
    h = Harness(any_redis)
    await h.send(ANA, "/play cinquillo 2", room=private(ANA))
    await h.send(ANA, "/leave", room=private(ANA))
    table = await h.table_of(private(ANA))
    assert (await load(h.worker.store, table)).status == "finished"
    # Now the same, but the worker's direct tick is dropped from the stream before anyone reads it.
    await h.send(BEA, "/play 535 2", room=private(BEA))
    t2 = await h.table_of(private(BEA))
    await h.gateway.submit(Input(BEA, private(BEA)), "/leave")
    await h.worker.drain()
    stream = h.keys.commands_for(t2)
    for mid, f in await any_redis.xrange(stream):
        if b'"tick"' in f[b"c"]:
            await any_redis.xdel(stream, mid)
    h.clock.now += 3
    while (await load(h.worker.store, t2)).status == "running":
        assert await fire_due(any_redis, h.keys, h.clock.now * 1000) >= 1
        await h.settle()
        h.clock.now += 6
    assert (await load(h.worker.store, t2)).status == "finished"


class StopsWhileLoading:
    """A worker's loading stage during which the worker receives its stop signal (SIGTERM): a batch
    is in hand."""

    def __init__(self, worker):
        self.inner, self.stop = worker.loader, worker.stop
        worker.loader = self

    def __getattr__(self, name):
        return getattr(self.inner, name)

    async def load(self, batches):
        self.stop.set()
        return await self.inner.load(batches)


def stopped_mid_batch(worker):
    """A worker that receives its stop signal while a batch is in hand."""
    StopsWhileLoading(worker)
    return worker


async def test_a_graceful_stop_finishes_the_batch_in_hand(any_redis):
    h = Harness(any_redis)
    await h.send(ANA, "/new cinquillo")
    table = await h.table_of()
    ids = [await h.gateway.submit(Input(Player(platform="x", user=str(i)), GROUP), "/join")
           for i in range(3)]
    worker = stopped_mid_batch(h.new_worker())
    await asyncio.wait_for(worker.run(), 5)
    assert set(ids) <= await _all_done(h, table)
    pending = await any_redis.xpending(h.keys.commands_for(table), h.settings.group)
    assert pending["pending"] == 0  # acknowledged before the worker exited


@pytest.mark.parametrize("n", [3])
async def test_snapshots_are_written_every_n_events_and_used_to_load(any_redis, n):
    h = Harness(any_redis, snapshot_every=n)
    await h.send(ANA, "/play cinquillo 4", room=private(ANA))
    table = await h.table_of(private(ANA))
    # while the match runs (the person's turn: the AI players have moved up to it)
    loaded = await h.worker.store.load(table)
    assert loaded.snapshot is not None and len(loaded.events) < n
    fresh = await load(h.worker.store, table)
    full = fold(table, None, await h.events(table))
    assert fresh.version == full.version and engine.view(fresh.engine, None) == engine.view(full.engine, None)
    await h.send(ANA, "/leave", room=private(ANA))
    # once it is over, its snapshot is gone (issue 33) and it loads from its events alone, exactly
    loaded = await h.worker.store.load(table)
    assert loaded.snapshot is None and loaded.base == 0 and len(loaded.events) == loaded.version
    fresh = await load(h.worker.store, table)
    full = fold(table, None, await h.events(table))
    assert fresh.status == "finished"
    assert fresh.version == full.version and fresh.result == full.result


async def test_a_join_read_before_its_tables_creation_waits_for_it_instead_of_being_refused(any_redis):
    # Two workers share a command stream: the /join can reach one before the other appended /new.
    h = Harness(any_redis, workers=2)
    first, second = h.workers
    await first.setup()
    await h.gateway.submit(Input(ANA, GROUP), "/new cinquillo")
    await h.gateway.submit(Input(BEA, GROUP), "/join")
    entries = await first.intake.read(block=False)
    new_entry, join_entry = sorted(entries, key=lambda e: json.loads(e.raw)["name"] != "new")
    await second.process([join_entry])  # the table does not exist yet: the join waits
    table = await h.table_of()
    assert await h.events(table) == []
    await first.process([new_entry])
    await second.drain()
    kinds = [type(decode(e).event).__name__ for e in await h.events(table)]
    assert kinds.count("PlayerJoined") == 2  # the creator and then Bea: the join was not lost
    assert not [m for m in to(await h.collect(), GROUP) if m.kind == "reply" and m.code == "no_table"]


async def test_a_command_for_a_table_that_never_appears_is_refused_after_its_wait(any_redis):
    h = Harness(any_redis)
    await h.gateway.submit(Input(ANA, GROUP), "/replay nosuchtable")
    await h.worker.drain()
    [reply] = [m for m in to(await h.collect(), GROUP) if m.kind == "reply"]
    assert reply.code == "no_table"
    assert await h.events("nosuchtable") == []


async def test_commands_a_lost_read_delivered_are_done_in_seconds_not_after_the_claim_timeout(any_redis):
    """A read whose reply was lost (redis-py resent it) left a command pending with this worker, which
    never saw it.  With a claim timeout of an hour, it is still done: the worker re-reads its own."""
    h = Harness(any_redis, workers=1, claim_idle_ms=3_600_000)
    await h.send(ANA, "/new cinquillo")
    table = await h.table_of()
    w = h.workers[0]
    task = asyncio.create_task(w.run())
    cmd = TableCommand(id="lost-join", table=table, name="join", actor=BEA, room=GROUP, locale="en",
                       at=h.clock())
    stream = h.keys.commands_for(table)
    # The command and "its read" in one transaction: the worker's own blocked read cannot take it.
    pipe = any_redis.pipeline(transaction=True)
    pipe.xadd(stream, {"c": cmd.dumps()})
    pipe.xreadgroup(h.settings.group, w.name, {stream: ">"}, count=10)
    await pipe.execute()
    for _ in range(1000):
        if "lost-join" in await _all_done(h, table):
            break
        await asyncio.sleep(0.02)
    w.stop.set()
    await task
    assert (await load(w.store, table)).seat_of(BEA) == 1


async def test_acknowledged_commands_are_trimmed_from_the_streams(any_redis):
    """Retention: the table's events and done set prove what was applied; the command streams keep
    only what is not acknowledged yet."""
    h = Harness(any_redis, workers=1)
    await h.send(ANA, "/new cinquillo")
    table = await h.table_of()
    w = h.workers[0]
    w.trim_s = 0.05
    for p in range(3):
        await h.gateway.submit(Input(Player(platform="tg", user=f"p{p}", name=f"P{p}"), GROUP), "/join")
    task = asyncio.create_task(w.run())
    for _ in range(1000):
        if sum([await any_redis.xlen(k) for k in h.keys.all_commands()]) == 0:
            break
        await asyncio.sleep(0.02)
    w.stop.set()
    await task
    assert sum([await any_redis.xlen(k) for k in h.keys.all_commands()]) == 0
    assert len(await _all_done(h, table)) == 4


async def test_hard_ai_moves_are_thought_off_the_loop_while_other_tables_go_on(any_redis):
    h = Harness(any_redis)
    dm = private(ANA)
    for text in ("/new 535", "/bots 3 hard", "/start"):
        await h.send(ANA, text, room=dm)
    table = await h.table_of(dm)
    t = await load(h.worker.store, table)
    assert t.to_move() == 0  # the person leads (F-13); then three hard AI players
    move = engine.legal_moves(t.engine)[0]
    await h.gateway.submit(Input(ANA, dm), f"/move {move}")
    await h.worker.drain(max_batches=1)  # the person's move; the first AI move starts thinking
    assert h.worker.thinker is not None
    await h.gateway.submit(Input(BEA, GROUP), "/new cinquillo")
    await h.worker.drain(max_batches=1)
    # the other table was served in that cycle, while the AI move was still being thought
    assert h.worker.thinker.thinking()
    assert await h.gateway.table_of(GROUP) is not None
    await h.settle()  # the AI moves come in once thought, in order
    after = await load(h.worker.store, table)
    assert after.version > t.version + 1
    assert after.to_move() == 0 or after.status == "finished"
    assert not h.worker.thinker.thinking()
    h.worker.thinker.close()


def test_the_workers_start_freezes_the_heap_and_raises_the_young_generations_threshold():
    """Worker.freeze_heap (run at the loop's start): what exists is moved out of the collector's
    scans, and the young generation is collected every GEN0_THRESHOLD containers, not 700 (issue 33:
    at 700 the collector took ~25% of the worker's CPU per command)."""
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, *before[1:])
        Worker.freeze_heap()
        assert gc.get_threshold()[0] == GEN0_THRESHOLD > 700
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


async def test_a_finished_tables_snapshot_goes_its_command_ids_expire_and_a_redelivery_is_known(any_redis):
    """Issue 33: the append that finishes a match deletes its snapshot and gives its command-id set
    DONE_AFTER_END_S to live: a redelivered command of it is still acknowledged as a duplicate (no
    second reply), and the table replays exactly from its events."""
    h = Harness(any_redis, snapshot_every=3)
    await h.send(ANA, "/play cinquillo 4", room=private(ANA))
    table = await h.table_of(private(ANA))
    assert await any_redis.exists(h.keys.snap(table))
    assert await any_redis.ttl(h.keys.done(table)) == -1  # a running table's ids live on
    await h.send(ANA, "/leave", room=private(ANA))
    assert h.over()
    assert not await any_redis.exists(h.keys.snap(table))
    assert 0 < await any_redis.ttl(h.keys.done(table)) <= DONE_AFTER_END_S
    events = await h.events(table)
    last = decode(events[-1])
    assert last.event.__class__.__name__ == "MatchFinished"
    # the command that finished it, delivered again: known, acknowledged, nothing sent
    finishing = last.cmd
    assert await any_redis.sismember(h.keys.done(table), finishing)
    await h.collect()
    stream = h.keys.commands_for(table)
    replayed = TableCommand(id=finishing, table=table, name="leave", actor=ANA, room=private(ANA))
    await any_redis.xadd(stream, {"c": replayed.dumps()})
    assert await h.worker.drain() == 1
    assert await h.collect() == []  # (a command not known would be told the match is over)
    assert await h.events(table) == events
    t = await load(h.worker.store, table)
    assert t.result == fold(table, None, events).result


async def test_retention_trims_one_shard_a_step_each_in_turn(any_redis):
    """A step of the worker's loop trims one of its shards, the next one each time (all of them at
    once held the loop for 4-5 ms in the latency run: issue 33's p99), and every shard in turn."""
    h = Harness(any_redis, workers=1, command_shards=4)
    w = h.workers[0]
    ids = [f"trim-{n}" for n in range(200)]
    for shard in range(4):  # commands on every shard, then done and acknowledged
        cid = next(c for c in ids if h.keys.shard(h.gateway.table_for(c)) == shard)
        await h.gateway.submit(Input(Player(platform="tg", user=cid, name=cid), Room(platform="tg", chat=cid),
                                     command_id=cid), "/new cinquillo")
    await h.settle()
    lengths = [await any_redis.xlen(k) for k in h.keys.all_commands()]
    assert all(lengths), lengths
    for step in range(4):
        await w.intake.trim_next()
        now = [await any_redis.xlen(k) for k in h.keys.all_commands()]
        assert sum(1 for a, b in zip(lengths, now, strict=True) if a != b) == 1, f"step {step}: {now}"
        lengths = now
    assert lengths == [0, 0, 0, 0]
