"""A replicated Redis on loopback: a primary, its replicas and (optionally) three sentinels, each a real
process (``redis-server``, ``redis-sentinel``) that a test may SIGKILL, stop or start again.

Every server runs as :class:`tests.faults.redis_server.RedisServer` does (AOF, ``appendfsync
always``), with ``min-replicas-to-write`` when asked (a primary cut off from its replicas stops taking
writes).  The sentinels watch the primary as ``cinq`` with a short ``down-after`` so that a failover
takes a few seconds; :meth:`Replicated.primary_now` asks them which server is the primary now.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import redis

from tests.faults.redis_server import REQUIRE_REAL, RedisServer
from tools.loopback import free_port

MASTER = "cinq"


def require_sentinel() -> str:
    """The ``redis-sentinel`` binary (skipped without it, a failure under ``CINQ_REQUIRE_REAL_REDIS=1``)."""
    binary = shutil.which("redis-sentinel")
    if binary is None or shutil.which("redis-server") is None:
        if REQUIRE_REAL:
            pytest.fail("CINQ_REQUIRE_REAL_REDIS=1 but redis-server or redis-sentinel is missing")
        pytest.skip("no redis-server/redis-sentinel binary")
    return binary


class Sentinel:
    """One ``redis-sentinel`` process."""

    def __init__(self, base: Path, primary_port: int, down_after_ms: int, quorum: int) -> None:
        self.dir = base
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.conf = self.dir / "sentinel.conf"
        self.down_after_ms, self.quorum = down_after_ms, quorum
        self.proc: subprocess.Popen[bytes] | None = None
        self.watched = primary_port
        self.watch(primary_port)

    def watch(self, primary_port: int) -> None:
        """Watch the primary at ``primary_port`` (before :meth:`start`; a fault proxy's, say).

        A long failover timeout: a sentinel also waits that long before it points a replica that
        replicates from another address (a proxy's) at the address it watches."""
        self.watched = primary_port
        self.conf.write_text(
            f"port {self.port}\nbind 127.0.0.1\ndir {self.dir}\nlogfile {self.dir / 'sentinel.log'}\n"
            f"sentinel monitor {MASTER} 127.0.0.1 {primary_port} {self.quorum}\n"
            f"sentinel down-after-milliseconds {MASTER} {self.down_after_ms}\n"
            f"sentinel failover-timeout {MASTER} 180000\nsentinel parallel-syncs {MASTER} 2\n")

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        binary = shutil.which("redis-sentinel") or "redis-sentinel"
        self.proc = subprocess.Popen([binary, str(self.conf)], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        _wait_ping(self.port)
        # The PONG must be this sentinel's: another listener on the port (its own bind then failed)
        # answers PING too, and the deployment then runs a sentinel short.
        c = redis.Redis(port=self.port, socket_timeout=2)
        try:
            server = c.info("server")
        finally:
            c.close()
        if self.proc.poll() is not None or server.get("process_id") != self.proc.pid \
                or server.get("redis_mode") != "sentinel":
            log = self.dir / "sentinel.log"
            tail = log.read_text(errors="replace").splitlines()[-2:] if log.exists() else []
            raise RuntimeError(f"the sentinel for port {self.port} is not the one answering there: "
                               f"{' | '.join(tail)}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=5)
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


class Replicated:
    """A primary, ``replicas`` replicas and ``sentinels`` sentinels (0 or 3) under ``base``."""

    def __init__(self, base: Path, *, replicas: int = 2, sentinels: int = 3, min_replicas: int = 0,
                 down_after_ms: int = 1000, binary: str | None = None, argv0: str | None = None,
                 replica_extra: tuple[str, ...] = ()) -> None:
        # A replica's first sync starts at once (Redis 7 waits 5 s for more replicas to join it).
        extra: tuple[str, ...] = ("--repl-diskless-sync-delay", "0")
        if min_replicas:
            extra += ("--min-replicas-to-write", str(min_replicas), "--min-replicas-max-lag", "5")
        self.primary = RedisServer(base / "primary", extra=extra, binary=binary, argv0=argv0)
        self.servers = [self.primary]
        for i in range(replicas):
            self.servers.append(RedisServer(base / f"replica{i}", binary=binary, argv0=argv0, extra=(
                *extra, *replica_extra, "--replicaof", "127.0.0.1", str(self.primary.port))))
        self.sentinels = [Sentinel(base / f"sentinel{i}", self.primary.port, down_after_ms, quorum=2)
                          for i in range(sentinels)]

    @property
    def replicas(self) -> list[RedisServer]:
        """The servers that were started as replicas."""
        return self.servers[1:]

    @property
    def sentinel_addresses(self) -> list[str]:
        return [s.address for s in self.sentinels]

    def start(self) -> Replicated:
        for s in self.servers:
            s.start()
        self.wait_synced()
        for s in self.sentinels:
            s.start()
        if self.sentinels:
            self.wait_sentinels_see(len(self.replicas))
        return self

    def stop(self) -> None:
        for sen in self.sentinels:
            sen.stop()
        for s in self.servers:
            if s.proc is not None and s.proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    s.proc.send_signal(signal.SIGCONT)  # a paused server must hear the stop
            s.stop()

    def by_port(self, port: int) -> RedisServer:
        """The server listening on ``port`` (or the primary, for the port the sentinels watch it at)."""
        watched = {sen.watched for sen in self.sentinels}
        if port in watched and port not in {s.port for s in self.servers}:
            return self.primary
        return next(s for s in self.servers if s.port == port)

    def connected_replicas(self, server: RedisServer) -> int:
        """How many replicas ``server`` has online (0 if it does not answer)."""
        with contextlib.suppress(redis.RedisError, OSError):
            c = redis.Redis(port=server.port, socket_timeout=1)
            try:
                info = c.info("replication")
            finally:
                c.close()
            return sum(1 for k, v in info.items() if k.startswith("slave") and isinstance(v, dict)
                       and v.get("state") == "online")
        return 0

    def primary_now(self) -> RedisServer | None:
        """The server the sentinels name as the primary (the first that answers)."""
        for sen in self.sentinels:
            with contextlib.suppress(redis.RedisError, OSError):
                c = redis.Redis(port=sen.port, socket_timeout=1)
                try:
                    _host, port = c.sentinel_get_master_addr_by_name(MASTER)
                finally:
                    c.close()
                return self.by_port(int(port))
        return None

    def fail_over(self) -> None:
        """``SENTINEL FAILOVER``: the first sentinel that answers promotes a replica at once, without
        asking the others and with the primary alive (as sentinels that wrongly judge it down do)."""
        for sen in self.sentinels:
            with contextlib.suppress(redis.RedisError, OSError):
                c = redis.Redis(port=sen.port, socket_timeout=2)
                try:
                    c.execute_command("SENTINEL", "FAILOVER", MASTER)
                finally:
                    c.close()
                return
        raise RuntimeError("no sentinel answered SENTINEL FAILOVER")

    def wait_synced(self, timeout_s: float = 30.0, primary: RedisServer | None = None) -> None:
        """Wait until every running server but ``primary`` (default: the first) reports its replication
        link up (to whichever address it replicates from: a proxy's, say)."""
        primary = primary or self.primary
        deadline = time.monotonic() + timeout_s
        for s in self.servers:
            if s is primary or not s.running:
                continue
            c = redis.Redis(port=s.port, socket_timeout=2)
            try:
                while True:
                    with contextlib.suppress(redis.RedisError):
                        info = c.info("replication")
                        if info.get("role") == "slave" and info.get("master_link_status") == "up":
                            break
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"replica on {s.port} did not sync with {primary.port}")
                    time.sleep(0.05)
            finally:
                c.close()

    def wait_sentinels_see(self, replicas: int, timeout_s: float = 30.0) -> None:
        """Wait until every sentinel knows the primary, its replicas and the other sentinels."""
        deadline = time.monotonic() + timeout_s
        for sen in self.sentinels:
            c = redis.Redis(port=sen.port, socket_timeout=2)
            try:
                while True:
                    with contextlib.suppress(redis.RedisError):
                        m = c.sentinel_master(MASTER)
                        if int(m.get("num-slaves", 0)) >= replicas and \
                                int(m.get("num-other-sentinels", 0)) >= len(self.sentinels) - 1:
                            break
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"sentinel {sen.port} does not see the deployment")
                    time.sleep(0.1)
            finally:
                c.close()


def _wait_ping(port: int, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            if s.recv(64).startswith(b"+PONG"):
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing answers PING on port {port}")
