"""Losing the Redis machine (issue 36): a seeded load of private matches over real processes on a
Sentinel deployment, the primary SIGKILLed at random or at its worst moments, or cut off from its
replicas; ``run(...) -> FailoverReport``.

A primary with two replicas and three sentinels (:mod:`tests.faults.replicated`; every server
``appendfsync always`` and ``min-replicas-to-write 1``), two ``cinq worker`` processes and one ``cinq
webhook`` process that find the primary through the sentinels and wait for both replicas
(``CINQ_REDIS_MIN_REPLICAS=2``: the roles refuse to wait for fewer than the primary's replicas,
``service.store.connection.too_few_waited``; what waiting for one loses is measured by
``bench/false_failover.py``), and the chat platform of the chaos run (:mod:`tests.faults.platform`).
``tables`` people at a time (a new one whenever a match ends, until ``drive_s``) each ``/play`` a
private Cinquillo table against AI players in their own chat and press the buttons of their hand
until the match ends: the room's messages (to the chat) and the
person's (to the user) land in one chat, so the order of table versions in it is counted.

For the worst moments the sentinels watch the first primary through the fault proxy
(:mod:`tests.faults.proxy`), so its every command can be struck at: ``fault`` is one of

``random``     SIGKILL the primary at random moments (``kills`` times, each a new primary);
``xadd``       SIGKILL it just after it took a command's XADD (the reply never reaches the gateway),
               then (``kills`` > 1) the new primary at a random moment;
``append``     just after it ran a worker's compare-and-append (before the command's acknowledgement);
``read``       just after it answered a delivery's read with entries (the reply never arrives);
``live``       fail over a primary that is still alive (``SENTINEL FAILOVER``, as sentinels that wrongly
               judge it down do), ``kills`` times: it keeps its clients, and the replica that is not
               promoted, for a moment;
``partition``  cut the primary off from both replicas (raw proxies on their replication links) for
               ``partition_s``: the sentinels still see it, so no failover; nothing may be
               acknowledged meanwhile, and all goes on after the cut heals;
``cluster``    no Sentinel: a Redis Cluster of three masters with a replica each
               (:mod:`tests.faults.cluster_failover`), a master SIGKILLed at random moments
               (``kills`` times) and its replica promoted by the cluster itself.

A killed primary is started again a second later (as a supervisor would) and the sentinels make it a
replica of the new one.  Then the run waits for quiescence and accounts as the chaos run does
(:func:`tests.faults.chaos_report.account`), plus: callbacks whose content the final store does not
hold (*undone*: shown, then taken back by the failover), order inversions per chat, and the time from
each promotion to the first request the service accepted after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
from collections import defaultdict
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import aiohttp
import redis.asyncio as aioredis

from tests.faults.chaos import PLATFORM, SECRET, Run, _env
from tests.faults.chaos_report import ChaosReport, account, outbox, percentiles
from tests.faults.proxy import Proxy, command, evalsha, has_entries, xreadgroup
from tests.faults.redis_server import RedisServer
from tests.faults.replicated import Replicated

FAULTS = ("random", "xadd", "append", "read", "live", "partition", "cluster")


@dataclass
class FailoverReport(ChaosReport):
    """A chaos report plus what a failover may break (see the module docstring)."""

    fault: str = ""
    min_replicas: int = 0
    kills: int = 0
    partitions: int = 0
    promotions: int = 0
    promotion_s: list[float] = field(default_factory=list)  # SIGKILL -> the sentinels name another
    recovery_s: list[float] = field(default_factory=list)  # promotion -> first request accepted
    undone: list[str] = field(default_factory=list)
    inversions: dict[str, int] = field(default_factory=dict)  # chat -> callbacks older than one before
    callbacks_received: int = 0

    def line(self) -> str:
        """One line of bench/results/failover.txt."""
        rec = percentiles(self.recovery_s)
        return (f"{self.fault:<9} seed {self.seed:>3} WAIT {self.min_replicas}: {self.kills} kills, "
                f"{self.partitions} partitions, "
                f"{self.promotions} promotions; {self.acknowledged} acknowledged of {self.requests} "
                f"requests ({self.statuses}); lost {len(self.lost)}, doubled {len(self.twice)}, "
                f"undone {len(self.undone)}; callbacks {self.callbacks_received} received, "
                f"{len(self.callbacks_missing)} missing; inversions {sum(self.inversions.values())} in "
                f"{len(self.inversions)} chats; replays failing {len(self.replay_failed)}, tables "
                f"unfinished {len(self.tables_unfinished)}; kill->promotion "
                f"{[round(x, 1) for x in self.promotion_s]} s; promotion->answering "
                f"p50 {rec.get('p50', '-')} max {rec.get('max', '-')} s")


class FailoverRun(Run):
    """The processes and records of one run (the chaos run's, on a Sentinel deployment)."""

    def __init__(self, seed: int, workdir: Path, fault: str, stall_s: float, min_replicas: int = 2) -> None:
        super().__init__(seed, workdir, workers=2, claim_idle_ms=30_000, stall_s=stall_s)
        self.fault = fault
        self.min_replicas = min_replicas
        self.redis = Replicated(workdir / "redis", replicas=2, sentinels=3, min_replicas=1)
        # The sentinels (so every client) reach the first primary through the fault proxy; the
        # replicas' replication links go through raw proxies that a partition cuts.
        self.proxy = Proxy(self.redis.primary)
        self.links = [Proxy(self.redis.primary, raw=True) for _ in self.redis.replicas]
        self.kills = 0
        self.promotions: list[tuple[float, float]] = []  # (killed at, promoted at)
        self.partitions = 0

    def env(self, **extra: str) -> dict[str, str]:
        return _env("", CINQ_REDIS_SENTINELS=json.dumps(self.redis.sentinel_addresses),
                    CINQ_REDIS_MIN_REPLICAS=str(self.min_replicas), CINQ_REDIS_REPLICA_TIMEOUT_MS="1000",
                    **extra)

    def spawn_worker(self) -> None:
        env = self.env(CINQ_CLAIM_IDLE_MS=str(self.claim_idle_ms), CINQ_LEASE_MS="2000",
                       CINQ_TIMER_INTERVAL="0.5")
        self.procs.append(self._spawn(["worker"], env, f"worker{len(self.procs)}"))

    async def start(self) -> None:
        await self.proxy.start()
        for link in self.links:
            await link.start()
        for replica, link in zip(self.redis.replicas, self.links, strict=True):
            i = replica.extra.index("--replicaof")
            replica.extra = (*replica.extra[:i + 2], str(link.port), *replica.extra[i + 3:])
        if self.fault in ("xadd", "append", "read"):
            # The sentinels (so every client) reach the first primary through the proxy, and once it
            # is a replica it announces the proxy's port as its own: it has one address, as a server
            # of a real deployment does.  (Known under two, the proxy's and its own, it made a second
            # failover take 27 s: the sentinels counted one server as two replicas.)
            for sen in self.redis.sentinels:
                sen.watch(self.proxy.port)
            self.redis.primary.extra += ("--replica-announce-port", str(self.proxy.port))
        await asyncio.to_thread(self.redis.start)
        await self._start_roles()

    async def _start_roles(self) -> None:
        """The platform's receiver, the webhook role and the workers, on the store as :meth:`env` says."""
        url = await self.receiver.start()
        platforms = [{"name": PLATFORM, "secrets": [SECRET], "callback_url": url}]
        env = self.env(CINQ_WEBHOOK_PLATFORMS=json.dumps(platforms), CINQ_WEBHOOK_PORT=str(self.port),
                       CINQ_WEBHOOK_RATE="10000", CINQ_WEBHOOK_BURST="10000", CINQ_WEBHOOK_MAX_ATTEMPTS="100",
                       CINQ_WEBHOOK_BACKOFF_BASE_S="0.05", CINQ_WEBHOOK_BACKOFF_CAP_S="1")
        self.webhook = self._spawn(["webhook"], env, "webhook")
        for _ in range(self.n_workers):
            self.spawn_worker()
        async with aiohttp.ClientSession() as s:
            for _ in range(600):
                with contextlib.suppress(aiohttp.ClientError, OSError):
                    async with s.get(f"http://127.0.0.1:{self.port}/healthz") as r:
                        if r.status == 200:
                            return
                await asyncio.sleep(0.1)
        raise RuntimeError("the webhook adapter did not start")

    async def stop(self) -> None:
        for p in [*self.procs, self.webhook]:
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
        await self.receiver.close()
        await self.proxy.close()
        for link in self.links:
            await link.close()
        await asyncio.to_thread(self.redis.stop)

    async def side_client(self) -> Any:
        """A client of the store as it is now (the accounting reads through it)."""
        primary = await asyncio.to_thread(self.redis.primary_now)
        assert primary is not None
        return aioredis.from_url(primary.url)

    # -- the people ------------------------------------------------------------------------------

    async def table(self, session: aiohttp.ClientSession, i: int, human_moves: int, deadline: float) -> None:
        """Person ``p<i>`` plays a private table in ``dm-p<i>`` against AI players to its end."""
        user, chat = f"p{i}", f"dm-p{i}"
        base = {"chat": {"id": chat, "kind": "private"}, "user": {"id": user, "name": user, "locale": "en"}}
        self.opened.add(i)
        await self.send(session, {"type": "message", **base, "text": "/play cinquillo"}, deadline)
        acted: set[int] = set()
        quiet_since = time.monotonic()
        while time.monotonic() < deadline:
            mine = self.receiver.by_key[f"user:{user}"]
            if any(m["kind"] == "match_over" for m in self.receiver.by_key[f"chat:{chat}"]):
                return
            hands = [m for m in mine if m["kind"] == "hand" and m["buttons"]]
            last = max(hands, key=lambda m: m["version"]) if hands else None
            if last is not None and last["version"] not in acted:
                acted.add(last["version"])
                quiet_since = time.monotonic()
                token = self.rng.choice(last["buttons"])["token"]
                await self.send(session, {"type": "action", **base, "token": token}, deadline)
                continue
            if time.monotonic() - quiet_since > self.stall_s:
                break  # no news: leave, and AI players finish the match
            await asyncio.sleep(0.1)
        await self.leave(session, i, deadline)

    async def leave(self, session: aiohttp.ClientSession, i: int, deadline: float) -> None:
        if (i, f"p{i}") in self.left:
            return
        payload = {"type": "message", "chat": {"id": f"dm-p{i}", "kind": "private"},
                   "user": {"id": f"p{i}", "name": f"p{i}", "locale": "en"}, "text": "/leave"}
        if await self.send(session, payload, deadline):
            self.left.add((i, f"p{i}"))

    # -- faults ------------------------------------------------------------------------------------

    async def kill_primary(self, server: RedisServer | None = None, killed: bool = False) -> None:
        """SIGKILL the primary (unless a proxy rule just did), wait for the promotion, start it again."""
        victim = server or await asyncio.to_thread(self.redis.primary_now)
        assert victim is not None
        at = time.monotonic()
        if not killed:
            await asyncio.to_thread(victim.kill)
        self.kills += 1
        self.note(f"SIGKILL primary :{victim.port}")
        promoted = await self._promotion(victim)
        self.promotions.append((at, promoted))
        self.note(f"promoted after {promoted - at:.1f} s")
        await asyncio.sleep(1.0)
        # It was the primary: a server the sentinels reconfigured has that in its rewritten config, so
        # it comes back a primary (the sentinels convert it); not as the replica of the address it was
        # first started with (now perhaps a replica: replication through it is not the primary's own).
        if "--replicaof" in victim.extra:
            i = victim.extra.index("--replicaof")
            victim.extra = (*victim.extra[:i], *victim.extra[i + 3:])
        await asyncio.to_thread(victim.start)
        self.note(f"old primary :{victim.port} restarted")

    async def fail_over(self) -> None:
        """``SENTINEL FAILOVER``: a replica promoted while the primary lives on (see ``live``)."""
        old = await asyncio.to_thread(self.redis.primary_now)
        assert old is not None
        at = time.monotonic()
        await asyncio.to_thread(self.redis.fail_over)
        self.note(f"SENTINEL FAILOVER of the live primary :{old.port}")
        promoted = await self._promotion(old)
        self.promotions.append((at, promoted))
        self.note(f"promoted after {promoted - at:.1f} s")

    async def _healthy(self, timeout_s: float = 60.0) -> None:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            now = await asyncio.to_thread(self.redis.primary_now)
            if now is not None and await asyncio.to_thread(self.redis.connected_replicas, now) >= 2:
                return
            await asyncio.sleep(0.2)
        raise RuntimeError("the deployment did not get both replicas back")

    async def _promotion(self, old: RedisServer, timeout_s: float = 60.0) -> float:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            now = await asyncio.to_thread(self.redis.primary_now)
            if now is not None and now is not old:
                return time.monotonic()
            await asyncio.sleep(0.05)
        raise RuntimeError("the sentinels promoted no replica")

    async def strike(self, fault: str, at: float, kills: int, partition_s: float) -> None:
        """The run's fault (see the module docstring), from ``at`` seconds into the run."""
        await asyncio.sleep(max(0.0, at - (time.monotonic() - self.t0)))
        if fault == "random":
            for n in range(kills):
                if n:  # the deployment whole again first: a primary with both replicas
                    await self._healthy()
                    await asyncio.sleep(self.rng.random() * 3.0)
                await self.kill_primary()
            return
        if fault == "live":
            for n in range(kills):
                if n:
                    await self._healthy()
                    await asyncio.sleep(self.rng.random() * 3.0)
                await self.fail_over()
            return
        if fault == "partition":
            for link in self.links:
                await link.partition()
            self.partitions += 1
            self.note(f"primary cut off from its replicas for {partition_s:.1f} s")
            await asyncio.sleep(partition_s)
            for link in self.links:
                link.heal()
            self.note("partition healed")
            return
        append = hashlib.sha1(resources.files("service.store.lua").joinpath("append.lua")
                              .read_bytes()).hexdigest()
        match, reply = {
            "xadd": (command("XADD", key_prefix="cmd:"), None),
            "append": (evalsha(append, key_prefix="t:"), None),
            "read": (xreadgroup(f"deliver:{PLATFORM}"), has_entries),
        }[fault]
        rule = self.proxy.arm(match, "kill_server_after", reply=reply)
        await rule.wait(timeout_s=60.0)
        self.note(f"the primary died just after {rule.hits[0].name} ({fault})")
        await self.kill_primary(self.redis.primary, killed=True)
        for _ in range(kills - 1):  # then at random, the deployment whole again first
            await self._healthy()
            await asyncio.sleep(self.rng.random() * 3.0)
            await self.kill_primary()


def inversions(receiver: Any) -> dict[str, int]:
    """Per chat (a person's messages and their private chat's are one chat), how many callbacks
    arrived with a table version lower than one that chat had already received for that table."""
    arrivals: list[tuple[float, str, str, int]] = []
    for key, msgs in receiver.by_key.items():
        for m in msgs:
            if not m.get("table") or not m.get("version"):
                continue
            chat = key if key.startswith("chat:") else "chat:dm-" + key.split(":", 1)[1]
            arrivals.append((receiver.first_at[m["id"]], chat, m["table"], m["version"]))
    highest: dict[tuple[str, str], int] = {}
    out: dict[str, int] = defaultdict(int)
    for _, chat, table, version in sorted(arrivals):
        if version < highest.get((chat, table), 0):
            out[chat] += 1
        highest[(chat, table)] = max(version, highest.get((chat, table), 0))
    return dict(out)


async def undone(receiver: Any, side: Any, keys: Any) -> list[str]:
    """Callbacks the platform got whose message the final store does not hold as it was shown."""
    held = {m["id"]: m for _, m in await outbox(side, keys)}
    out = []
    for msgs in receiver.by_key.values():
        for m in msgs:
            stored = held.get(m["id"])
            if stored is None or (stored.get("version"), stored.get("kind")) != (m.get("version"), m["kind"]):
                out.append(m["id"])
    return out


async def run(*, fault: str = "random", tables: int = 30, seed: int = 36, drive_s: float = 40.0,
              strike_at: float = 8.0, kills: int = 2, partition_s: float = 4.0, quiesce_s: float = 60.0,
              stall_s: float = 8.0, min_replicas: int = 2, workdir: Path) -> FailoverReport:
    """One run (see the module docstring); returns its report."""
    assert fault in FAULTS, fault
    report = FailoverReport(seed=seed, tables=tables, fault=fault,
                            min_replicas=1 if fault == "cluster" else min_replicas)
    if fault == "cluster":
        from tests.faults.cluster_failover import ClusterRun

        r: FailoverRun = ClusterRun(seed, workdir, stall_s)
    else:
        r = FailoverRun(seed, workdir, fault, stall_s, min_replicas)
    side: Any = None
    try:
        await r.start()
        r.t0 = time.monotonic()
        striking = asyncio.create_task(r.strike(fault, strike_at, kills, partition_s))
        deadline = r.t0 + drive_s
        counter = iter(range(1_000_000))
        async with aiohttp.ClientSession() as session:
            async def one(n: int) -> None:
                # ``tables`` people at a time, each starting a new table when theirs ends, until the
                # deadline: the load goes on across every fault.
                await asyncio.sleep(n * 0.25)
                while time.monotonic() < deadline - 2.0:
                    await r.table(session, next(counter), 0, deadline)
            drivers = [asyncio.create_task(one(n)) for n in range(tables)]
            await asyncio.wait(drivers, timeout=max(deadline - time.monotonic(), 1.0))
            for d in drivers:
                d.cancel()
            await asyncio.gather(*drivers, return_exceptions=True)
            tail = time.monotonic() + quiesce_s
            await asyncio.gather(*(r.leave(session, i, tail) for i in sorted(r.opened)))
        await striking
        side = await r.side_client()
        report.quiesced = await _quiesce(r, side, quiesce_s)
        await account(report, side, r.keys, r.acked, r.receiver.first_at)
        report.requests, report.attempts = len(r.acked) + len(r.unacked), r.attempts
        report.acknowledged, report.unacknowledged = len(r.acked), r.unacked
        report.statuses, report.faults = r.statuses, r.faults
        report.callbacks_duplicated = r.receiver.duplicates
        report.callbacks_received = len(r.receiver.first_at)
        report.undone = await undone(r.receiver, side, r.keys)
        report.inversions = inversions(r.receiver)
        report.kills, report.partitions, report.promotions = r.kills, r.partitions, len(r.promotions)
        report.promotion_s = [p - k for k, p in r.promotions]
        starts = sorted(r.accepted.values())
        report.recovery_s = [next((s for s in starts if s >= p), float("inf")) - p for _, p in r.promotions]
    finally:
        if side is not None:
            with contextlib.suppress(Exception):
                await side.aclose()
        await r.stop()
        report.elapsed_s = time.monotonic() - r.t0
    return report


async def _quiesce(r: FailoverRun, side: Any, quiesce_s: float) -> bool:
    end = time.monotonic() + quiesce_s
    while time.monotonic() < end:
        probe = ChaosReport(seed=0, tables=0)
        with contextlib.suppress(Exception):
            await account(probe, side, r.keys, r.acked, r.receiver.first_at)
            if not probe.lost and not probe.callbacks_missing and not probe.tables_unfinished:
                return True
        await asyncio.sleep(1.0)
    return False


if __name__ == "__main__":
    import argparse
    import tempfile

    ap = argparse.ArgumentParser(description="Failover runs (issue 36); prints one line per run.")
    ap.add_argument("--faults", default=",".join(FAULTS))
    ap.add_argument("--seeds", default="36")
    ap.add_argument("--tables", type=int, default=30)
    args = ap.parse_args()
    for seed in (int(s) for s in args.seeds.split(",")):
        for f in args.faults.split(","):
            with tempfile.TemporaryDirectory(prefix="cinq-failover-") as d:
                print(asyncio.run(run(fault=f, seed=seed, tables=args.tables, workdir=Path(d))).line(),
                      flush=True)
