"""Health, readiness and metrics endpoints, and the one JSON log line per command."""

from __future__ import annotations

import io
import json

import pytest
from aiohttp.test_utils import TestClient, TestServer

from service import logs
from service.health import make_app
from service.metrics import Metrics
from tests.service.support import ANA, Harness


class DownRedis:
    """A Redis that does not answer (for readiness)."""

    async def ping(self):
        raise ConnectionError("connection refused")


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


@pytest.fixture
def log_lines():
    stream = io.StringIO()
    logs.configure("INFO", stream)
    yield stream
    logs.configure("WARNING")


async def test_one_json_log_line_per_command(fake_redis, log_lines):
    h = Harness(fake_redis)
    await h.send(ANA, "/new cinquillo")
    await h.send(ANA, "/start")  # refused: one player
    lines = [json.loads(line) for line in log_lines.getvalue().splitlines()]
    commands = [line for line in lines if line["event"] == "command"]
    assert [(c["command"], c["outcome"], c["version"]) for c in commands] == [
        ("new", "ok", 2), ("start", "refused:player_count", 2)]
    assert all({"table", "id", "ms", "timestamp"} <= set(c) for c in commands)
