"""Health, readiness and metrics endpoints, and the one JSON log line per command."""

from __future__ import annotations

import asyncio
import json

from aiohttp.test_utils import TestClient, TestServer

from service.foundation import logs
from service.foundation.metrics import Metrics
from service.ops.health import PROBE_TTL_MS, READY_CACHE_S, Ops, make_app, write_probe
from tests.service.support import ANA, Harness


class DownRedis:
    """A Redis that does not answer (for readiness)."""

    async def ping(self):
        raise ConnectionError("connection refused")

    async def set(self, *args, **kwargs):
        raise ConnectionError("connection refused")


class StuckRedis:
    """A Redis that takes a connection and never answers."""

    async def set(self, *args, **kwargs):
        await asyncio.Event().wait()


async def test_ready_only_while_redis_takes_writes(own_redis):  # a real redis-server of its own
    app = make_app(own_redis, Metrics(), "pfx:probe:worker", cache_s=0)  # every request checks
    async with TestClient(TestServer(app)) as client:
        resp = await client.get("/readyz")
        assert resp.status == 200 and (await resp.json()) == {"status": "ready"}
        assert 0 < await own_redis.pttl("pfx:probe:worker") <= PROBE_TTL_MS  # it expires by itself
        await own_redis.config_set("maxmemory", 1)  # Redis answers, and refuses every write (OOM)
        try:
            assert await own_redis.ping()
            resp = await client.get("/readyz")
            body = await resp.json()
            assert resp.status == 503 and body["status"] == "unavailable"
            assert body["error"].startswith("store: OutOfMemoryError: ") and "maxmemory" in body["error"]
        finally:
            await own_redis.config_set("maxmemory", 0)
        assert (await client.get("/readyz")).status == 200
        assert (await client.get("/healthz")).status == 200


async def test_the_write_probe_is_bounded():
    failed = await write_probe(StuckRedis(), "probe:worker", timeout_s=0.05)
    assert failed is not None and "did not take a write" in failed
    assert await write_probe(DownRedis(), "probe:worker") == "ConnectionError: connection refused"


def test_error_text_carries_the_servers_message():
    from redis.exceptions import OutOfMemoryError

    e = OutOfMemoryError("command not allowed when used memory > 'maxmemory'.")
    assert "maxmemory" not in repr(e)  # why the helper: redis-py's repr is the class alone
    assert logs.error_text(e) == "OutOfMemoryError: command not allowed when used memory > 'maxmemory'."
    assert logs.error_text(ValueError("two\n lines")) == "ValueError: two lines"
    assert logs.error_text(KeyError()) == "KeyError"
    assert len(logs.error_text(ValueError("x" * 1000), 50)) == 50


async def test_health_ready_and_metrics(fake_redis):
    h = Harness(fake_redis)
    await h.send(ANA, "/new cinquillo")
    await h.send(ANA, "/join")  # refused: already seated
    async with TestClient(TestServer(make_app(fake_redis, h.worker.metrics))) as client:
        assert (await client.get("/healthz")).status == 200
        assert (await client.get("/readyz")).status == 200
        body = await (await client.get("/metrics")).text()
    assert 'cinq_commands_total{command="new",outcome="ok"} 1.0' in body
    assert 'cinq_commands_total{command="join",outcome="refused"} 1.0' in body
    assert "cinq_command_seconds_bucket" in body and "cinq_dead_letters_total" in body


async def test_not_ready_when_redis_is_down():
    async with TestClient(TestServer(make_app(DownRedis(), Metrics()))) as client:
        resp = await client.get("/readyz")
        assert resp.status == 503 and "refused" in (await resp.json())["error"]
        assert (await client.get("/healthz")).status == 200


async def test_one_json_log_line_per_command(fake_redis, log_lines):
    h = Harness(fake_redis)
    await h.send(ANA, "/new cinquillo")
    await h.send(ANA, "/start")  # refused: one player
    lines = [json.loads(line) for line in log_lines.getvalue().splitlines()]
    commands = [line for line in lines if line["event"] == "command"]
    assert [(c["command"], c["outcome"], c["version"]) for c in commands] == [
        ("new", "ok", 2), ("start", "refused:player_count", 2)]
    assert all({"table", "id", "ms", "timestamp"} <= set(c) for c in commands)


class CountingRedis:
    """A Redis that counts the probe's writes and takes a while to answer each."""

    def __init__(self) -> None:
        self.writes = 0

    async def set(self, *args, **kwargs):
        self.writes += 1
        await asyncio.sleep(0.05)


async def test_readiness_writes_at_most_once_per_cache_period_whatever_the_requests():
    # issue 32: 1,000 unauthenticated /readyz made 1,000 writes (and 800 Redis connections)
    now = [100.0]
    redis = CountingRedis()
    ops = Ops(redis, lambda role: f"probe:{role}", clock=lambda: now[0])
    ops.add(Metrics())
    async with TestClient(TestServer(ops.app())) as client:
        answers = await asyncio.gather(*(client.get("/readyz") for _ in range(200)))
        assert [a.status for a in answers] == [200] * 200
        assert redis.writes == 1  # the requests that came while it ran shared its result
        now[0] += READY_CACHE_S / 2
        assert (await client.get("/readyz")).status == 200 and redis.writes == 1
        now[0] += READY_CACHE_S
        assert (await client.get("/readyz")).status == 200 and redis.writes == 2  # checked again


async def test_a_role_part_that_is_not_ready_makes_the_process_not_ready(fake_redis):
    problem: list[str | None] = ["the outbox delivery loop is not running"]

    async def ready():
        return problem[0]

    ops = Ops(fake_redis)
    ops.add(Metrics(), ready)
    async with TestClient(TestServer(ops.app())) as client:
        resp = await client.get("/readyz")
        assert resp.status == 503 and (await resp.json())["error"] == problem[0]
        problem[0] = None
        assert (await client.get("/readyz")).status == 200
