"""Issue 33's stall: a command read by a worker, then neither done nor acknowledged, claimed back seconds
later ("claimed 1 command of cmd:{c3}").  The paths where that happened, each faulted at its exact
point (real redis-server behind the fault proxy; the worker's client as the service builds it).

- A worker over its fair share of the command shards (another worker has joined: a process starting,
  or one of another run on the same Redis) stops reading the extra ones (the highest first: c3) and
  hands each over once nothing read from it is in hand.  When a Redis error dropped the batch in hand,
  the worker read again what it had been delivered only on the shards it still *reads*: a command of a
  shard being handed over stayed pending with it, the shard counted as not busy and was released,
  and the command waited for whoever took the shard next to claim it (a lease later, when the
  joiner's heartbeat was gone and the shard came back: 6-8 s with the default lease), or for ever
  while nobody did.
- The server lost its scripts (a restart, a failover to a replica): the round trip of a batch's
  appends was answered NOSCRIPT, and the read of the next batch sent with it was answered too; its
  commands were dropped until the next periodic re-read (or a claim, on a shard handed over since).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from service.domain.events import TableCreated, decode
from service.domain.identities import Player, Room
from service.domain.inputs import Input
from service.ops.runtime import worker_for
from service.store.keys import Keys
from service.store.pool import bounded_client
from service.write import bots
from service.write.gateway import Gateway
from tests.faults.proxy import Proxy, command, evalsha, xreadgroup
from tests.faults.stack import NO_CLAIM_MS
from tests.polling import eventually
from tests.service.support import seeds, settings

pytestmark = pytest.mark.faults

RECOVERY_S = 30.0
# Long enough that a loaded machine renews it in time while the test holds the worker's read for
# half of it (a lapsed lease would move the shards, which is not what this test is about).
LEASE_MS = 3000


@pytest.fixture
async def clients(proxy: Proxy) -> AsyncIterator[tuple[Any, Any]]:
    """The worker's client as the service builds it (a bounded pool: no silent retry of a command
    whose connection broke), named for the proxy's rules, and a client on the server itself."""
    s = settings()
    worker = bounded_client(proxy.url, s)
    worker.connection_pool.connection_kwargs["client_name"] = "worker"
    direct = bounded_client(proxy.server.url, s)
    try:
        yield worker, direct
    finally:
        await worker.aclose()
        await direct.aclose()


def _command_id_on_shard(gw: Gateway, keys: Keys, shard: int) -> str:
    """A command id whose new table's commands go to ``shard``."""
    return next(cid for n in range(10_000) if keys.shard(gw.table_for(cid := f"stall-{n}")) == shard)


async def test_a_command_dropped_on_a_shard_being_handed_over_is_done_at_once_not_claimed(proxy, clients):
    """The worker alone holds the 4 shards; another joins; the worker's next round hands over 3 and
    2 with a /new of shard 3 in hand, whose append then dies with its connection: the /new is done at
    once by the worker it was delivered to, not claimed back a lease later."""
    worker_redis, direct = clients
    s = settings(command_shards=4, lease_ms=LEASE_MS, claim_idle_ms=NO_CLAIM_MS)
    keys = Keys.of(s)
    gw = Gateway(direct, s, keys)
    w = worker_for(worker_redis, s, name="w0", seeds=seeds(), timers=False, choose_move=bots.choose_move)
    assert w.leases is not None
    task = asyncio.create_task(w.run())
    try:
        await eventually(lambda: w.leases is not None and len(w.leases.owned) == 4, RECOVERY_S,
                         "the worker alone holding every shard")
        cid = _command_id_on_shard(gw, keys, 3)
        table = gw.table_for(cid)
        # The worker's next read is held before it reaches Redis while, meanwhile, the command is
        # written and another worker joins (its heartbeat: it holds no shard yet); held for half a
        # lease, so that the worker's next round hands over its extra shards (3 and 2) with the
        # command of shard 3 in hand.
        other_joined = asyncio.Event()
        cut: list[Any] = []

        async def meanwhile() -> None:
            await gw.submit(Input(Player(platform="tg", user="u1"), Room(platform="tg", chat="g1"),
                                  command_id=cid), "/new cinquillo")
            # (its heartbeat lasts a lease: it dies, or stalls, before taking any shard)
            await direct.zadd(keys.worker_members(), {"w-joining": time.time() * 1000 + LEASE_MS})
            other_joined.set()
            # The command's append will die with its connection: the batch in hand is dropped.
            cut.append(proxy.arm(command("EVALSHA", key=keys.events(table), client="worker"), "kill_before"))
            await asyncio.sleep(LEASE_MS / 2000)

        held = proxy.arm(xreadgroup(s.group, client="worker"), "hook", before=meanwhile)
        await held.wait(RECOVERY_S)
        await eventually(lambda: cut, RECOVERY_S, "the fault armed")
        await cut[0].wait(RECOVERY_S)
        cut_at = time.monotonic()
        assert 3 in w.leases.draining, "shard 3 was being handed over when its command was dropped"

        async def created() -> list[Any]:
            events = [decode(f[b"e"]) for _, f in await direct.xrange(keys.events(table))]
            return [e for e in events if isinstance(e.event, TableCreated)]

        creations = await eventually(created, RECOVERY_S, "the /new dropped on shard 3 being done")
        took = time.monotonic() - cut_at
        assert [e.cmd for e in creations] == [cid], "done exactly once"
        # Done by the worker it was delivered to, at once: not taken back by the claim of whoever
        # holds shard 3 next (here the same worker, once the joiner's heartbeat is gone and its share
        # is every shard again: a lease later, the stall's "claimed 1 command of cmd:{c3}").
        assert w.metrics.claimed._value.get() == 0, f"claimed back {took:.1f} s after the fault"

        async def acknowledged() -> bool:
            return (await direct.xpending(keys.commands(3), s.group))["pending"] == 0
        await eventually(acknowledged, RECOVERY_S, "the command acknowledged")
        print(f"command dropped on a shard being handed over: done {took:.3f} s after the fault, "
              f"{w.metrics.claimed._value.get():.0f} claimed")
        assert other_joined.is_set()
    finally:
        w.stop.set()
        await asyncio.wait_for(task, RECOVERY_S)


async def test_commands_read_with_appends_the_server_has_no_script_for_are_done_at_once(proxy, clients):
    """The server lost its scripts (a restart, a failover to a replica): the pipeline of a batch's
    appends is answered NOSCRIPT, and the read of the next batch sent in the same round trip was
    answered too, its commands delivered to the worker.  They are read again at once, not at the
    next periodic re-read (here never: ``reread_s`` an hour) nor by a claim."""
    worker_redis, direct = clients
    s = settings(command_shards=2, claim_idle_ms=NO_CLAIM_MS)
    keys = Keys.of(s)
    gw = Gateway(direct, s, keys)
    w = worker_for(worker_redis, s, name="w0", seeds=seeds(), timers=False, choose_move=bots.choose_move)
    w.reread_s = 3600.0
    task = asyncio.create_task(w.run())
    try:
        first, second = "noscript-1", "noscript-2"
        await eventually(lambda: w.leases is not None and len(w.leases.owned) == 2, RECOVERY_S,
                         "the worker holding its shards")

        async def meanwhile() -> None:
            # Just before the first table's append reaches Redis: its scripts are gone, and the second
            # command is written, so that the read after the append returns it.
            await direct.script_flush()
            await gw.submit(Input(Player(platform="tg", user="u2"), Room(platform="tg", chat="g2"),
                                  command_id=second), "/new cinquillo")

        await w.store.ensure_scripts()
        append = evalsha(w.store.sha("append"), key=keys.events(gw.table_for(first)), client="worker")
        rule = proxy.arm(append, "hook", before=meanwhile)
        await gw.submit(Input(Player(platform="tg", user="u1"), Room(platform="tg", chat="g1"),
                              command_id=first), "/new cinquillo")
        await rule.wait(RECOVERY_S)

        async def created(cid: str) -> list[Any]:
            events = [decode(f[b"e"]) for _, f in await direct.xrange(keys.events(gw.table_for(cid)))]
            return [e.cmd for e in events if isinstance(e.event, TableCreated)]

        for cid in (first, second):
            assert await eventually(lambda c=cid: created(c), RECOVERY_S, f"{cid} done") == [cid]
        assert w.metrics.claimed._value.get() == 0
    finally:
        w.stop.set()
        await asyncio.wait_for(task, RECOVERY_S)
