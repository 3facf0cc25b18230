"""A real ``redis-server`` that a test may SIGKILL and start again on the same port and data directory.

It runs with ``--appendonly yes --appendfsync always --save ""``: every write is fsynced to the
append-only file before its reply is sent, so a write the client saw acknowledged survives a SIGKILL
(the restart replays the file).  ``restart()`` keeps the port, so clients (and the fault proxy in
:mod:`tests.faults.proxy`) reconnect to the same address.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tools.loopback import free_port

REQUIRE_REAL = os.environ.get("CINQ_REQUIRE_REAL_REDIS") == "1"


class RedisServer:
    """One ``redis-server`` process with AOF (``appendfsync always``) on a loopback port."""

    def __init__(self, data_dir: Path, port: int | None = None, binary: str | None = None,
                 extra: tuple[str, ...] = (), argv0: str | None = None) -> None:
        self.dir = Path(data_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.binary = binary or shutil.which("redis-server") or "redis-server"
        # The name the process is started under: one binary is the server, the AOF/RDB checker or a
        # sentinel depending on it (Debian's valkey-tools ships the server as valkey-check-rdb).
        self.argv0 = argv0 or self.binary
        self.extra = extra
        self.proc: subprocess.Popen[bytes] | None = None
        self.kills = 0

    @property
    def url(self) -> str:
        """The ``redis://`` URL of the server itself (not through a proxy)."""
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def running(self) -> bool:
        """Whether the process is alive."""
        return self.proc is not None and self.proc.poll() is None

    def start(self, timeout_s: float = 30.0) -> RedisServer:
        """Start the server and wait until it answers PING (``-LOADING`` while it replays the AOF)."""
        args = [self.argv0, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "yes", "--appendfsync", "always", "--dir", str(self.dir),
                "--logfile", str(self.dir / "redis.log"), *self.extra]
        self.proc = subprocess.Popen(args, executable=self.binary, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.proc.returncode}: {self._log_tail()}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port),
                                                                        timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                if s.recv(64).startswith(b"+PONG"):
                    return self
            time.sleep(0.02)
        self.proc.kill()
        raise RuntimeError(f"redis-server did not answer within {timeout_s} s: {self._log_tail()}")

    def kill(self) -> None:
        """SIGKILL the server (no shutdown, no final save: what is in the AOF is what survives)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
            self.kills += 1

    def restart(self) -> RedisServer:
        """Kill the server if it runs, then start it again on the same port and data directory."""
        self.kill()
        return self.start()

    def stop(self) -> None:
        """Stop the server for good (SIGTERM, then SIGKILL if it lingers)."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def _log_tail(self) -> str:
        with contextlib.suppress(OSError):
            return (self.dir / "redis.log").read_text()[-600:]
        return ""


def require_binary() -> str:
    """The ``redis-server`` binary; without it the test is skipped, or fails under
    ``CINQ_REQUIRE_REAL_REDIS=1`` (CI), so that CI never counts a fault test as passed unrun."""
    binary = shutil.which("redis-server")
    if binary is None:
        if REQUIRE_REAL:
            pytest.fail("CINQ_REQUIRE_REAL_REDIS=1 but there is no redis-server binary")
        pytest.skip("no redis-server binary")
    return binary


# Debian bookworm's redis-server is 7.0, without WAITAOF (7.2+).  Valkey 8 (a fork of Redis 7.2.4 that
# still reports redis_version 7.2.4) has it: bookworm-backports' valkey-tools ships its server binary
# as valkey-check-rdb, which is the server when started as valkey-server (.ci/run installs it).
WAITAOF_SERVERS = (("valkey-server", "valkey-server"), ("valkey-check-rdb", "valkey-server"))


def waitaof_binary() -> tuple[str, str]:
    """``(binary, argv0)`` of a server that has ``WAITAOF``; skipped without one, a failure under
    ``CINQ_REQUIRE_REAL_REDIS=1`` (CI installs it)."""
    for name, argv0 in WAITAOF_SERVERS:
        binary = shutil.which(name)
        if binary is not None:
            return binary, argv0
    if REQUIRE_REAL:
        pytest.fail("CINQ_REQUIRE_REAL_REDIS=1 but there is no server with WAITAOF (valkey-tools)")
    pytest.skip("no server with WAITAOF (Valkey 8: Debian bookworm-backports' valkey-tools)")


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A fresh AOF ``redis-server`` for one test, stopped at its end."""
    server = RedisServer(tmp_path / "redis", binary=require_binary()).start()
    try:
        yield server
    finally:
        server.stop()
