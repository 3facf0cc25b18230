"""The same code on a three-master Redis Cluster (issue 8): whole matches across many buckets through
the gateway, two running workers, the timers and a delivery process; every Lua call in one slot.

The cluster is started by the ``redis_cluster_url`` fixture (tests/conftest.py).  Every test uses a
key prefix of its own, so they share the cluster without interfering.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Any

import pytest
from redis.asyncio.cluster import ClusterPipeline, RedisCluster
from redis.crc import key_slot

from service.domain.identities import Player, Room
from service.domain.inputs import Input
from service.domain.tables.replay import verify
from service.foundation.settings import Settings
from service.ops.runtime import connect, worker_for
from service.ops.trim import trim
from service.platform.delivery import Delivery, DeliveryOptions
from service.platform.outbox import Message, OutboxReader
from service.store.keys import Keys
from service.store.repository import history, load
from service.store.scan import list_tables
from service.write.gateway import Gateway
from service.write.timers import fire_due
from tests.service.support import SECRET

SCRIPT_COMMANDS = ("EVAL", "EVALSHA")


def _record(calls: list[list[str]], args: tuple[Any, ...]) -> None:
    if args and str(args[0]).upper() in SCRIPT_COMMANDS:
        n = int(args[2])
        calls.append([a.decode() if isinstance(a, bytes) else str(a) for a in args[3:3 + n]])


class RecordingPipeline(ClusterPipeline):
    """A real cluster pipeline that also records the keys of every script call queued on it."""

    calls: list[list[str]]

    def execute_command(self, *args: Any, **kw: Any) -> Any:
        _record(self.calls, args)
        return super().execute_command(*args, **kw)


class RecordingCluster(RedisCluster):
    """A real cluster client that records the keys of every script call, direct or pipelined."""

    script_calls: list[list[str]]

    async def execute_command(self, *args: Any, **kw: Any) -> Any:
        _record(self.script_calls, args)
        return await super().execute_command(*args, **kw)

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> ClusterPipeline:
        pipe = RecordingPipeline(self, transaction)
        pipe.calls = self.script_calls
        return pipe


def _settings(**kw: Any) -> Settings:
    base: dict[str, Any] = dict(buckets=64, command_shards=4, turn_seconds=0, token_secrets=[SECRET.decode()],
                                snapshot_every=10, claim_idle_ms=500, block_ms=50, lease_ms=600,
                                key_prefix=f"test:{secrets.token_hex(4)}:", redis_cluster=True)
    base.update(kw)
    return Settings(redis_url=None, **base)


@pytest.fixture
async def cluster(redis_cluster_url: str) -> Any:
    c = RecordingCluster.from_url(redis_cluster_url)
    c.script_calls = []
    await c.initialize()
    yield c
    await c.aclose()


async def _true(v: bool) -> bool:
    return v


async def _until(pred: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not await pred():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


def test_connect_makes_a_cluster_client_when_told(redis_cluster_url: str) -> None:
    client, embedded = connect(Settings(redis_url=redis_cluster_url, redis_cluster=True,
                                        token_secrets=[SECRET.decode()]))
    assert isinstance(client, RedisCluster) and not embedded


async def test_matches_across_many_buckets_end_correctly_with_every_lua_call_in_one_slot(cluster, tmp_path):
    s = _settings()
    gw = Gateway(cluster, s, Keys.of(s))
    workers = [worker_for(cluster, s, name=f"cw{i}") for i in range(2)]
    tasks = [asyncio.create_task(w.run()) for w in workers]
    n = 16
    rooms = [Room(platform="cl", chat=f"r{i}") for i in range(n)]
    people = [Player(platform="cl", user=f"u{i}", name=f"U{i}") for i in range(n)]
    try:
        for i, (p, r) in enumerate(zip(people, rooms, strict=True)):
            await gw.submit(Input(p, r), "/play 535 3" if i % 2 else "/play cinquillo 4")
        tables: list[str] = []

        async def created() -> bool:
            nonlocal tables
            tables = [t for r in rooms
                      if (t := await gw.table_of(r)) and await cluster.xlen(gw.keys.events(t))]
            return len(tables) == n
        await _until(created)
        # The tables are spread over the three masters.
        nodes = {cluster.get_node_from_key(gw.keys.events(t)).name for t in tables}
        assert len(nodes) == 3, nodes
        for p, r in zip(people, rooms, strict=True):
            await gw.submit(Input(p, r), "/leave")  # AI players play every seat to the end

        async def finished() -> bool:
            return all([(await load(workers[0].store, t)).status == "finished" for t in tables])
        await _until(finished, 120)
    finally:
        for w in workers:
            w.stop.set()
        await asyncio.gather(*tasks)
    for t in tables:
        stored = await history(workers[0].store, t)
        assert verify(stored).ok, t  # the fair-deal check and a replay to the same end
        runs: dict[str, list[int]] = {}
        for v, st in enumerate(stored, 1):
            runs.setdefault(st.cmd, []).append(v)
        assert all(vs == list(range(vs[0], vs[0] + len(vs))) for vs in runs.values()), "applied twice"
    # Both workers had shards; every script call named keys of one slot only (and Redis, holding the
    # store's scripts to their slot, would have refused any other key).
    assert all(w.processed for w in workers)
    assert len(cluster.script_calls) > 100
    assert all(len({key_slot(k.encode()) for k in keys}) == 1 for keys in cluster.script_calls)
    # The outbox of every table has its messages, readable across slots.
    reader = OutboxReader(cluster, gw.keys, [gw.keys.outbox_for(t) for t in tables])
    got: list[Message] = []
    while batch := await reader.read(block_ms=0):
        got += batch
    assert {m.table for m in got} >= set(tables)
    # The operator's commands see every table across the masters, and trim them.
    assert {i.id for i in await list_tables(cluster, gw.keys)} == set(tables)
    archive = tmp_path / "archive.jsonl"
    trimmed = await trim(cluster, gw.keys, 0, str(archive), now=time.time() + 1)
    assert set(trimmed) == set(tables) and await list_tables(cluster, gw.keys) == []
    assert len(archive.read_text().splitlines()) == len(tables)


async def test_a_turn_timer_fires_on_the_cluster(cluster):
    s = _settings(turn_seconds=1)
    gw, w = Gateway(cluster, s, Keys.of(s)), worker_for(cluster, s, timers=False)
    ana = Player(platform="cl", user="ana", name="Ana")
    room = Room(platform="cl", chat="timer")
    await gw.submit(Input(ana, room), "/play cinquillo 3")
    await w.drain()
    table = await gw.table_of(room)
    assert table is not None
    before = (await load(w.store, table)).version
    fired = 0
    for _ in range(100):  # the person's turn runs out; a tick plays for them
        fired += await fire_due(cluster, w.keys, time.time() * 1000 + 120_000)
        await w.drain()
        if (await load(w.store, table)).version > before:
            break
        await asyncio.sleep(0.02)
    assert fired >= 1 and (await load(w.store, table)).version > before


async def test_delivery_wakes_on_the_doorbell_and_reads_every_bucket_in_order(cluster):
    s = _settings(buckets=16)
    gw, w = Gateway(cluster, s, Keys.of(s)), worker_for(cluster, s, timers=False)
    # A sweep only every 60 s: what is delivered within the test came through the doorbell.
    d = Delivery(cluster, s, "cl", "d1",
                 options=DeliveryOptions(partitions=2, lease_ms=600, block_ms=50, sweep_s=60),
                 keys=Keys.of(s))
    got: list[Message] = []

    async def handler(m: Message) -> None:
        got.append(m)

    stop = asyncio.Event()
    task = asyncio.create_task(d.run(handler, stop))
    try:
        # The first sweep runs when the process has its partitions (and the bell's position).
        await _until(lambda: _true(d._bell.last is not None and len(d.owned) == 2), 10)
        people = [Player(platform="cl", user=f"d{i}", name=f"D{i}") for i in range(6)]
        for i, p in enumerate(people):
            await gw.submit(Input(p, Room(platform="cl", chat=f"d{i}")), "/play 535 3")
        await w.drain()

        async def delivered() -> bool:
            return {m.to.room.chat for m in got if m.to.room} >= {f"d{i}" for i in range(6)}
        await _until(delivered, 30)
    finally:
        stop.set()
        await task
    per_room: dict[str, list[int]] = {}
    for m in got:
        if m.to.room is not None:
            per_room.setdefault(m.to.room.chat, []).append(m.version)
    assert all(vs == sorted(vs) for vs in per_room.values())
    assert len({gw.keys.bucket(t) for t in {m.table for m in got}}) > 1
