"""A Redis Cluster with a replica per master (issue 36): three masters, three replicas, AOF
(``appendfsync always``) everywhere, on loopback (tools/local_cluster.py).

- every role runs on it with ``CINQ_REDIS_MIN_REPLICAS=1``: whole matches through the gateway, two
  workers and a delivery, each acknowledgement waiting for the replica of every master (one ``WAIT``
  per master), and each replica holds every table's events when the matches end;
- a master whose replica does not answer holds every acknowledgement back ("not yet"), whichever
  master the write went to;
- ``CINQ_REDIS_MIN_REPLICAS=0`` on a cluster with replicas is refused at start-up, in one line (a
  master's failover would lose what its replica had not received).

A master's failover under load is in tests/faults/test_failover.py (``cluster``).
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis
from redis.asyncio.cluster import RedisCluster

from service.domain.identities import Player, Room
from service.domain.inputs import Input
from service.domain.tables.replay import verify
from service.foundation.settings import Settings
from service.ops.runtime import worker_for
from service.platform.delivery import Delivery, DeliveryOptions
from service.platform.outbox import Message
from service.store.connection import cluster_unsafe, replicas_per_master, too_few_waited
from service.store.keys import Keys
from service.store.replicas import NotReplicated, Replicas
from service.store.repository import history, load
from service.write.gateway import Gateway
from tests.faults.redis_server import REQUIRE_REAL
from tests.service.support import SECRET
from tools import local_cluster


@dataclass
class Cluster:
    """The cluster's URL, processes and, per master port, its replica's process."""

    url: str
    procs: list[subprocess.Popen[bytes]]
    replica_of: dict[int, subprocess.Popen[bytes]]


Procs = list[subprocess.Popen[bytes]]


def _replicas_by_master(port: int, procs: Procs) -> dict[int, subprocess.Popen[bytes]]:
    """Which process is the replica of which master (``redis-cli --cluster create`` pairs them)."""
    by_port = {int(p.args[2]): p for p in procs}  # type: ignore[index]  (["redis-server", "--port", N, ...])
    c = redis.Redis(port=port)
    try:
        lines = [ln.split() for ln in c.execute_command("CLUSTER", "NODES").decode().splitlines()]
    finally:
        c.close()
    port_of = {ln[0]: int(ln[1].split("@")[0].rsplit(":", 1)[1]) for ln in lines}
    return {port_of[ln[3]]: by_port[port_of[ln[0]]] for ln in lines if "slave" in ln[2].split(",")}


@pytest.fixture(scope="module")
def replicated_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    if not local_cluster.available():
        if REQUIRE_REAL:
            pytest.fail("CINQ_REQUIRE_REAL_REDIS=1 but redis-server or redis-cli is missing")
        pytest.skip("no redis-server/redis-cli for a Redis Cluster")
    url, procs = local_cluster.start(tmp_path_factory.mktemp("cluster-replicas"), replicas=1, aof=True)
    try:
        yield Cluster(url, procs, _replicas_by_master(int(url.rsplit(":", 1)[1]), procs))
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
        local_cluster.stop(procs)


@pytest.fixture
async def cluster(replicated_cluster: Cluster) -> AsyncIterator[RedisCluster]:
    c = RedisCluster.from_url(replicated_cluster.url)
    await c.initialize()
    yield c
    await c.aclose()


def _settings(**kw: Any) -> Settings:
    base: dict[str, Any] = dict(buckets=64, command_shards=4, turn_seconds=0, token_secrets=[SECRET.decode()],
                                snapshot_every=10, claim_idle_ms=500, block_ms=50, lease_ms=600,
                                key_prefix=f"test:{secrets.token_hex(4)}:", redis_cluster=True,
                                redis_min_replicas=1, redis_replica_timeout_ms=10_000)
    base.update(kw)
    return Settings(redis_url=None, **base)


async def _until(pred: Any, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not await pred():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def _waits(cluster: RedisCluster) -> dict[str, int]:
    """``WAIT`` calls so far, per master."""
    out = {}
    for node in cluster.get_primaries():
        stats = await cluster.info("commandstats", target_nodes=node)
        out[node.name] = int(stats.get("cmdstat_wait", {}).get("calls", 0))
    return out


async def test_every_role_runs_on_the_cluster_and_each_replica_holds_what_its_master_acknowledged(cluster):
    s = _settings()
    gw = Gateway(cluster, s, Keys.of(s))
    workers = [worker_for(cluster, s, name=f"crw{i}") for i in range(2)]
    delivery = Delivery(cluster, s, "cl", "d1", keys=Keys.of(s),
                        options=DeliveryOptions(partitions=2, lease_ms=600, block_ms=50))
    got: list[Message] = []

    async def handler(m: Message) -> None:
        got.append(m)

    stop = asyncio.Event()
    tasks = [asyncio.create_task(w.run()) for w in workers]
    tasks.append(asyncio.create_task(delivery.run(handler, stop)))
    n = 9
    rooms = [Room(platform="cl", chat=f"r{i}", kind="private") for i in range(n)]
    people = [Player(platform="cl", user=f"u{i}", name=f"U{i}") for i in range(n)]
    waits_before = await _waits(cluster)
    tables: list[str] = []
    try:
        for i, (p, r) in enumerate(zip(people, rooms, strict=True)):
            await gw.submit(Input(p, r), "/play 535 3" if i % 2 else "/play cinquillo 4")
        for p, r in zip(people, rooms, strict=True):
            await gw.submit(Input(p, r), "/leave")  # AI players play every seat to the end

        async def finished() -> bool:
            nonlocal tables
            tables = [t for r in rooms if (t := await gw.table_of(r))]
            # A room's index may name a table a moment before its creation is appended (the gateway
            # points it at the id it chose): not loaded yet is not finished yet.
            loaded = [await load(workers[0].store, t) for t in tables]
            return len(tables) == n and all(t is not None and t.status == "finished" for t in loaded)
        await _until(finished)
        await _until(lambda: _true({m.table for m in got if m.kind == "match_over"} >= set(tables)))
    finally:
        stop.set()
        for w in workers:
            w.stop.set()
        await asyncio.gather(*tasks)
    # The tables are spread over the masters (table ids are random: all 9 on three masters only 92% of
    # the time, which made this test fail ~1 run in 12; on at least two: all but 0.015%), and every
    # master waited for its replica.
    assert len({cluster.get_node_from_key(gw.keys.events(t)).name for t in tables}) >= 2
    waits = await _waits(cluster)
    assert all(waits[m] > waits_before.get(m, 0) for m in waits), (waits_before, waits)
    for t in tables:
        stored = await history(workers[0].store, t)
        assert verify(stored).ok, t
        # The replica of the table's master holds every event of it (WAIT before each acknowledgement).
        master = cluster.get_node_from_key(gw.keys.events(t))
        on_primary = await cluster.xrange(gw.keys.events(t))
        replica = redis.Redis(port=_replica_port(cluster, master.port))
        try:
            replica.execute_command("READONLY")
            assert replica.xrange(gw.keys.events(t)) == on_primary, t
        finally:
            replica.close()


def _replica_port(cluster: RedisCluster, master_port: int) -> int:
    c = redis.Redis(port=master_port)
    try:
        info = c.info("replication")
    finally:
        c.close()
    return int(info["slave0"]["port"])


async def test_a_silent_replica_holds_back_every_acknowledgement(cluster, replicated_cluster):
    s = _settings(redis_replica_timeout_ms=300)
    keys = Keys.of(s)
    gw = Gateway(cluster, s, keys)
    # A table whose events live on another master than the one whose replica stops answering.
    silent = next(iter(replicated_cluster.replica_of))
    person = Player(platform="cl", user="s1", name="S1")
    proc = replicated_cluster.replica_of[silent]
    proc.send_signal(signal.SIGSTOP)
    try:
        with pytest.raises(NotReplicated):
            await gw.submit(Input(person, Room(platform="cl", chat="s1"), command_id="s-1"),
                            "/play cinquillo 4")
        table = gw.table_for("s-1")
        on = cluster.get_node_from_key(keys.commands_for(table)).port
        # Written on its own master all the same (only the acknowledgement is held back).
        assert await cluster.xlen(keys.commands_for(table)) == 1, on
        replicas = Replicas(cluster, keys, needed=1, timeout_ms=300)
        with pytest.raises(NotReplicated):
            await replicas.confirm()
    finally:
        proc.send_signal(signal.SIGCONT)
    await Replicas(cluster, keys, needed=1, timeout_ms=10_000).confirm()  # answered again


async def test_no_replica_wait_on_a_cluster_with_replicas_is_refused_in_one_line(cluster, replicated_cluster):
    unsafe = await cluster_unsafe(cluster, _settings(redis_min_replicas=0))
    # (Three replicas; one the previous test stopped for a moment may still be marked failing.)
    assert unsafe is not None and " replica(s) but CINQ_REDIS_MIN_REPLICAS is 0" in unsafe
    assert await cluster_unsafe(cluster, _settings(redis_min_replicas=1)) is None
    # The role itself, as a process: it stops at once with that one line.
    env = {**os.environ, "REDIS_URL": replicated_cluster.url, "CINQ_REDIS_CLUSTER": "true",
           "CINQ_REDIS_MIN_REPLICAS": "0",
           "CINQ_TOKEN_SECRETS": '["a-real-secret-for-this-test-0123456789abcdef"]',
           "CINQ_HTTP_PORT": "0", "CINQ_KEY_PREFIX": f"test:{secrets.token_hex(4)}:"}
    done = subprocess.run([sys.executable, "-c", "from service.ops.cli import main; raise SystemExit(main())",
                           "worker"], env=env, capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[3])
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("cinq: refusing to start: the Redis Cluster has "), done.stderr
    assert lines[-1].endswith("set CINQ_REDIS_MIN_REPLICAS=1"), done.stderr


async def _true(v: bool) -> bool:
    return v


async def test_a_primary_left_with_no_slot_in_the_clients_map_is_not_waited_for(replicated_cluster):
    # The state CI's cluster failover run left a worker in: its client still listed the killed
    # primary among its primaries, while its slot map (updated slot by slot on MOVED, as redis-py
    # does) sent every slot to the promoted replica.  No sync key maps to such a node; asking for
    # one raised before anything was sent, so the error that refreshes the map never came and the
    # worker acknowledged nothing again.  Put the client's map in that state: every slot of one
    # primary moved to another one.
    c = RedisCluster.from_url(replicated_cluster.url)
    await c.initialize()
    try:
        gone, heir = c.get_primaries()[:2]
        cache = c.nodes_manager.slots_cache
        for slot, owners in cache.items():
            if owners[0].name == gone.name:
                cache[slot] = [heir]
        assert gone in c.get_primaries()
        replicas = Replicas(c, Keys.of(_settings()), needed=1, timeout_ms=10_000)
        pipe = c.pipeline()
        mark = replicas.queue(pipe)
        # One SET + WAIT per primary that serves a slot (the two others), none for the gone one.
        assert mark.count == 2 * (len(c.get_primaries()) - 1)
    finally:
        await c.aclose()


async def test_a_cluster_master_with_more_replicas_than_writes_wait_for_is_refused(cluster):
    """Counted from the cluster's own ``CLUSTER NODES``: a master's second replica (its entry copied
    under another address: this cluster has one a master) makes waiting for one unsafe (a failover of
    a live master loses what it acknowledged with the replica not promoted)."""
    nodes = await cluster.execute_command("CLUSTER NODES", target_nodes=cluster.get_default_node())
    per_master = replicas_per_master(nodes)
    assert sorted(per_master.values()) == [1, 1, 1], nodes
    one = _settings(redis_min_replicas=1)
    assert too_few_waited("a Redis Cluster master", max(per_master.values()), one) is None
    address, replica = next((a, n) for a, n in nodes.items() if "slave" in str(n["flags"]).split(","))
    nodes[address + "0"] = dict(replica)
    per_master = replicas_per_master(nodes)
    assert per_master[replica["master_id"]] == 2
    line = too_few_waited("a Redis Cluster master", max(per_master.values()), one)
    assert line is not None and "has 2 replicas but CINQ_REDIS_MIN_REPLICAS is 1" in line, line
    assert "set CINQ_REDIS_MIN_REPLICAS=2" in line and "\n" not in line, line
