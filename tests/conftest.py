"""Shared fixtures: an in-process fakeredis, and a real Redis.

The real Redis is ``REDIS_URL`` when it is set (each xdist worker then uses its own database
number, flushed before each test), else a ``redis-server`` this session starts on a free port
(``--save "" --appendonly no``) and stops at the end.  Without either the real-Redis tests are
skipped, unless ``CINQ_REQUIRE_REAL_REDIS=1`` (CI), which makes them fail instead.
"""

from __future__ import annotations

import asyncio
import io
import os
import shutil
import subprocess
import time
from collections.abc import AsyncIterator, Iterator

import fakeredis
import pytest
import redis as sync_redis
import redis.asyncio as aioredis

from tools.loopback import free_port

REQUIRE_REAL = os.environ.get("CINQ_REQUIRE_REAL_REDIS") == "1"
# Every role on Redis refuses to start without a strong daily secret (service.foundation.settings):
# the processes the tests start inherit this one, as a deployment's environment would give it.
TEST_DAILY_SECRET = "test-daily-secret-0123456789abcdefghijklmnop"
os.environ.setdefault("CINQ_DAILY_SECRET", TEST_DAILY_SECRET)
# Databases used on a shared REDIS_URL: one per xdist worker, so parallel workers never collide.
SHARED_DB_BASE = 10


def _xdist_index() -> int:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return int(worker[2:]) if worker[2:].isdigit() else 0


def _redis_server(missing: str, skip: str) -> tuple[subprocess.Popen[bytes], int]:
    """A ``redis-server`` started on a free loopback port (no persistence), and its port; without
    the binary the test fails under ``CINQ_REQUIRE_REAL_REDIS=1`` (saying ``missing``), else skips."""
    binary = shutil.which("redis-server")
    if binary is None:
        if REQUIRE_REAL:
            pytest.fail(f"CINQ_REQUIRE_REAL_REDIS=1 but {missing}")
        pytest.skip(skip)
    port = free_port()
    proc = subprocess.Popen([binary, "--save", "", "--appendonly", "no", "--port", str(port),
                             "--bind", "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc, port


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    """The service's JSON log lines (level INFO) of this test, as a text stream."""
    from service.foundation import logs

    stream = io.StringIO()
    logs.configure("INFO", stream)
    yield stream
    logs.configure("WARNING")


@pytest.fixture(scope="session")
def real_redis_url() -> Iterator[str]:
    """The URL of a real Redis for this test session (see the module docstring)."""
    url = os.environ.get("REDIS_URL")
    if url:
        base = url.rsplit("/", 1)[0] if url.count("/") > 2 else url
        yield f"{base}/{SHARED_DB_BASE + _xdist_index()}"
        return
    proc, port = _redis_server("there is no REDIS_URL and no redis-server binary",
                               "no real Redis: set REDIS_URL or install redis-server")
    client = sync_redis.Redis(port=port)
    for _ in range(100):
        try:
            client.ping()
            break
        except sync_redis.ConnectionError:
            time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail("redis-server did not start")
    client.close()
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="session")
def redis_cluster_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A three-master Redis Cluster on loopback ports, for this test session: the URL of one node.

    Started with ``redis-server --cluster-enabled yes`` and ``redis-cli --cluster create``
    (tools/local_cluster.py); skipped when the binaries are missing, unless
    ``CINQ_REQUIRE_REAL_REDIS=1`` (CI), which fails instead.
    """
    from tools import local_cluster

    if not local_cluster.available():
        if REQUIRE_REAL:
            pytest.fail("CINQ_REQUIRE_REAL_REDIS=1 but redis-server or redis-cli is missing")
        pytest.skip("no redis-server/redis-cli for a Redis Cluster")
    url, procs = local_cluster.start(tmp_path_factory.mktemp("cluster"))
    try:
        yield url
    finally:
        local_cluster.stop(procs)


@pytest.fixture
async def own_redis() -> AsyncIterator[aioredis.Redis]:
    """A client on a ``redis-server`` of this test alone, for tests that reconfigure the server
    (``CONFIG SET maxmemory`` to make it refuse writes) and must not disturb the shared one."""
    proc, port = _redis_server("there is no redis-server binary", "needs redis-server")
    r = aioredis.from_url(f"redis://127.0.0.1:{port}/0")
    try:
        for _ in range(200):
            try:
                await r.ping()
                break
            except aioredis.ConnectionError:
                await asyncio.sleep(0.05)
        else:
            pytest.fail("redis-server did not start")
        yield r
    finally:
        await r.aclose()
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
async def fake_redis() -> AsyncIterator[fakeredis.FakeAsyncRedis]:
    """A fresh in-process fakeredis (with Lua)."""
    r = fakeredis.FakeAsyncRedis(server=fakeredis.FakeServer())
    yield r
    await r.aclose()


@pytest.fixture
async def real_redis(real_redis_url: str) -> AsyncIterator[aioredis.Redis]:
    """A client on an emptied database of the real Redis."""
    r = aioredis.from_url(real_redis_url)
    await r.flushdb()
    yield r
    await r.flushdb()
    await r.aclose()


@pytest.fixture(params=["fakeredis", "real"])
async def any_redis(request: pytest.FixtureRequest) -> AsyncIterator[object]:
    """Each test using it runs twice: on fakeredis and on a real Redis (the contract suites)."""
    if request.param == "fakeredis":
        r = fakeredis.FakeAsyncRedis(server=fakeredis.FakeServer())
        yield r
        await r.aclose()
        return
    url = request.getfixturevalue("real_redis_url")
    r = aioredis.from_url(url)
    await r.flushdb()
    yield r
    await r.flushdb()
    await r.aclose()


@pytest.fixture(autouse=True, scope="session")
def _quiet_logs() -> None:
    """Warnings and errors only: one JSON line per command would drown the test output."""
    from service.foundation import logs

    logs.configure("WARNING")
