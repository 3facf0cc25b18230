"""A Redis Cluster master lost under load (issue 36): the ``cluster`` fault of
:mod:`tests.faults.failover`, on a cluster of three masters with a replica each.

Every node runs with AOF (``appendfsync always``) and a one-second ``cluster-node-timeout``
(tools/local_cluster.py); the roles reach it with ``CINQ_REDIS_CLUSTER=true`` and wait for one replica
per master (``CINQ_REDIS_MIN_REPLICAS=1``).  A master is SIGKILLed at a random moment; the cluster
itself promotes its replica (no Sentinel); a second later the killed node is started again on its
own data, and the cluster makes it the new master's replica.  A second kill, of any master, comes
once every master has a replica again.  The accounting is the Sentinel runs' own.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import time
from pathlib import Path
from typing import Any

import redis
from redis.asyncio.cluster import RedisCluster

from tests.faults.chaos import Run, _env
from tests.faults.failover import FailoverRun
from tools import local_cluster


class Node:
    """One cluster node's process, killed and started again with the same arguments."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.args = [str(a) for a in proc.args]  # type: ignore[union-attr]
        self.port = int(self.args[self.args.index("--port") + 1])

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def start(self) -> None:
        self.proc = subprocess.Popen(self.args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _nodes(port: int) -> dict[int, dict[str, Any]] | None:
    """``CLUSTER NODES`` as the node on ``port`` sees it, by port (None: it does not answer)."""
    with contextlib.suppress(redis.RedisError, OSError):
        c = redis.Redis(port=port, socket_timeout=1)
        try:
            raw = c.execute_command("CLUSTER", "NODES").decode()
        finally:
            c.close()
        out = {}
        for line in raw.splitlines():
            f = line.split()
            out[int(f[1].split("@")[0].rsplit(":", 1)[1])] = {"id": f[0], "flags": f[2].split(","),
                                                             "master": f[3], "slots": f[8:]}
        return out
    return None


def _link_up(port: int) -> bool:
    with contextlib.suppress(redis.RedisError, OSError):
        c = redis.Redis(port=port, socket_timeout=1)
        try:
            return bool(c.info("replication").get("master_link_status") == "up")
        finally:
            c.close()
    return False


class ClusterRun(FailoverRun):
    """The processes and records of one cluster run (a :class:`FailoverRun` without Sentinel)."""

    def __init__(self, seed: int, workdir: Path, stall_s: float) -> None:
        Run.__init__(self, seed, workdir, workers=2, claim_idle_ms=30_000, stall_s=stall_s)
        self.fault = "cluster"
        self.url = ""
        self.nodes: list[Node] = []
        self.kills = 0
        self.promotions: list[tuple[float, float]] = []
        self.partitions = 0

    def env(self, **extra: str) -> dict[str, str]:
        return _env(self.url, CINQ_REDIS_CLUSTER="true", CINQ_REDIS_MIN_REPLICAS="1",
                    CINQ_REDIS_REPLICA_TIMEOUT_MS="1000", **extra)

    async def start(self) -> None:
        self.url, procs = await asyncio.to_thread(local_cluster.start, self.dir / "cluster", 3, 1, 1000, True)
        self.nodes = [Node(p) for p in procs]
        await self._start_roles()

    async def stop(self) -> None:
        for p in [*self.procs, self.webhook]:
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
        await self.receiver.close()
        await asyncio.to_thread(local_cluster.stop, [n.proc for n in self.nodes])

    async def side_client(self) -> Any:
        live = next(n for n in self.nodes if n.proc.poll() is None)
        c = RedisCluster(host="127.0.0.1", port=live.port)
        await c.initialize()
        return c

    # -- the cluster's state -----------------------------------------------------------------------

    def _view(self) -> dict[int, dict[str, Any]]:
        for n in self.nodes:
            if n.proc.poll() is None and (view := _nodes(n.port)) is not None:
                return view
        raise RuntimeError("no cluster node answers")

    def masters(self) -> list[Node]:
        """The nodes that serve slots now (as a live node sees it)."""
        view = self._view()
        return [n for n in self.nodes if "master" in view.get(n.port, {}).get("flags", [])
                and "fail" not in view[n.port]["flags"] and view[n.port]["slots"]]

    def whole(self) -> bool:
        """Every master has a replica whose link is up."""
        view = self._view()
        masters = {v["id"] for v in view.values() if "master" in v["flags"] and v["slots"]
                   and "fail" not in v["flags"]}
        served = {v["master"] for p, v in view.items() if "slave" in v["flags"] and "fail" not in v["flags"]
                  and _link_up(p)}
        return len(masters) == 3 and masters <= served

    # -- faults ------------------------------------------------------------------------------------

    async def strike(self, fault: str, at: float, kills: int, partition_s: float) -> None:
        """SIGKILL a master ``kills`` times (the cluster whole again before each)."""
        await asyncio.sleep(max(0.0, at - (time.monotonic() - self.t0)))
        for n in range(kills):
            if n:
                await self._healthy()
                await asyncio.sleep(self.rng.random() * 3.0)
            await self.kill_master()

    async def kill_master(self) -> None:
        masters = await asyncio.to_thread(self.masters)
        victim = self.rng.choice(sorted(masters, key=lambda m: m.port))
        at = time.monotonic()
        await asyncio.to_thread(victim.kill)
        self.kills += 1
        self.note(f"SIGKILL master :{victim.port}")
        promoted = await self._promotion(victim)
        self.promotions.append((at, promoted))
        self.note(f"promoted after {promoted - at:.1f} s")
        await asyncio.sleep(1.0)
        await asyncio.to_thread(victim.start)
        self.note(f"old master :{victim.port} restarted")

    async def _promotion(self, old: Node, timeout_s: float = 60.0) -> float:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            masters = await asyncio.to_thread(self.masters)
            if len(masters) == 3 and old not in masters:
                return time.monotonic()
            await asyncio.sleep(0.05)
        raise RuntimeError("the cluster promoted no replica")

    async def _healthy(self, timeout_s: float = 60.0) -> None:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if await asyncio.to_thread(self.whole):
                return
            await asyncio.sleep(0.2)
        raise RuntimeError("the cluster did not get a replica for every master back")
