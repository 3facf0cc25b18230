"""A throwaway Redis Cluster of three masters on loopback ports (tests and benchmarks).

``redis-server --cluster-enabled yes`` three times, then ``redis-cli --cluster create``; nothing is
kept on disk beyond the nodes' config files in ``base``.  Used by the ``redis_cluster_url`` fixture
(tests/conftest.py) and by ``bench/scale.py``.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import redis

from tools.loopback import free_port


def available() -> bool:
    """Whether redis-server and redis-cli are installed."""
    return bool(shutil.which("redis-server") and shutil.which("redis-cli"))


def free_cluster_port() -> int:
    """A free port whose cluster bus port (+10000) is free too."""
    for _ in range(200):
        port = free_port()
        if port + 10000 > 65535:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port pair for a cluster node")


def _wait(port: int, ready: bytes | None, timeout: float = 20.0) -> None:
    client = redis.Redis(port=port)
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                if ready is None:
                    client.ping()
                    return
                if ready in client.execute_command("CLUSTER", "INFO"):
                    return
            except redis.ConnectionError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the cluster node on port {port} did not become ready")
            time.sleep(0.05)
    finally:
        client.close()


def node_args(port: int, d: Path, node_timeout_ms: int = 5000, aof: bool = False) -> list[str]:
    """A cluster node's ``redis-server`` arguments (its config file and data in ``d``); ``aof``:
    ``appendonly yes`` with ``appendfsync always`` (a write fsynced before its reply)."""
    persistence = ["--appendonly", "yes", "--appendfsync", "always"] if aof else ["--appendonly", "no"]
    return ["--port", str(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
            "--cluster-config-file", str(d / "nodes.conf"), "--dir", str(d), "--save", "",
            "--cluster-node-timeout", str(node_timeout_ms), "--logfile", str(d / "redis.log"), *persistence]


def start(base: Path, masters: int = 3, replicas: int = 0, node_timeout_ms: int = 5000,
          aof: bool = False) -> tuple[str, list[subprocess.Popen[bytes]]]:
    """Start the cluster (``replicas`` replicas per master); returns the URL of one node and the
    server processes (see :func:`stop`), masters first, each master's port before its replicas'
    (as ``redis-cli --cluster create`` assigns them: the first ``masters`` nodes are the masters)."""
    server, cli = shutil.which("redis-server"), shutil.which("redis-cli")
    if server is None or cli is None:
        raise RuntimeError("redis-server and redis-cli are needed for a Redis Cluster")
    procs: list[subprocess.Popen[bytes]] = []
    ports: list[int] = []
    try:
        for i in range(masters * (1 + replicas)):
            port = free_cluster_port()
            d = base / f"node{i}"
            d.mkdir(parents=True, exist_ok=True)
            procs.append(subprocess.Popen([server, *node_args(port, d, node_timeout_ms, aof)],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            ports.append(port)
        for port in ports:
            _wait(port, None)
        subprocess.run([cli, "--cluster", "create", *[f"127.0.0.1:{p}" for p in ports],
                        "--cluster-replicas", str(replicas), "--cluster-yes"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        for port in ports:
            _wait(port, b"cluster_state:ok")
        if replicas:
            _wait_replicas(ports[0], masters * replicas)
    except BaseException:
        stop(procs)
        raise
    return f"redis://127.0.0.1:{ports[0]}", procs


def _wait_replicas(port: int, count: int, timeout: float = 60.0) -> None:
    """Wait until the cluster (as the node on ``port`` sees it) has ``count`` replicas whose link to
    their master is up (``redis-cli --cluster create`` returns before they synced)."""
    client = redis.Redis(port=port)
    deadline = time.monotonic() + timeout
    try:
        while True:
            nodes = client.execute_command("CLUSTER", "NODES").decode().splitlines()
            up = [n for n in nodes if " slave " in n or ",slave " in n]
            if len(up) >= count and all(_link_up(int(n.split()[1].split(":")[1].split("@")[0])) for n in up):
                return
            if time.monotonic() > deadline:
                raise RuntimeError("the cluster's replicas did not sync")
            time.sleep(0.1)
    finally:
        client.close()


def _link_up(port: int) -> bool:
    client = redis.Redis(port=port)
    try:
        return client.info("replication").get("master_link_status") == "up"
    except redis.RedisError:
        return False
    finally:
        client.close()


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    """Stop the cluster's servers."""
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
