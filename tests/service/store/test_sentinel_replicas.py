"""A Sentinel deployment whose primary has more replicas than writes wait for is refused at start-up
(``service.store.connection.sentinel_unsafe``).

Why: a failover of a primary that is still alive (sentinels that wrongly judge it down, an operator's
``SENTINEL FAILOVER``) promotes one replica while the old primary keeps its clients and the other
replica for a moment; waiting for one replica, it acknowledges moves that the new primary never
gets (``bench/false_failover.py`` counts them; ``tests/faults/test_failover.py`` ``live`` shows that
waiting for every replica loses none).  Real ``redis-server`` and ``redis-sentinel`` processes on
loopback; the refusal is asked of the sentinels themselves, and of a real ``cinq worker`` process.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from service.foundation.settings import Settings
from service.store.connection import refuse_unsafe, sentinel_unsafe
from tests.faults.chaos import _env
from tests.faults.redis_server import require_binary
from tests.faults.replicated import MASTER, Replicated, require_sentinel
from tests.service.support import SECRET
from tools.loopback import free_port

pytestmark = pytest.mark.faults


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replicated]:
    """A primary, two replicas and three sentinels that know them all."""
    require_binary()
    require_sentinel()
    r = Replicated(tmp_path_factory.mktemp("sentinel"), replicas=2, sentinels=3, min_replicas=1).start()
    try:
        yield r
    finally:
        r.stop()


def sentinel_settings(r: Replicated, min_replicas: int) -> Settings:
    return Settings(redis_url=None, token_secrets=[SECRET.decode()], redis_sentinels=r.sentinel_addresses,
                    redis_min_replicas=min_replicas)


async def test_waiting_for_fewer_replicas_than_the_primary_has_is_refused_in_one_line(deployment):
    with pytest.raises(SystemExit) as e:
        await refuse_unsafe(None, sentinel_settings(deployment, 1))
    line = str(e.value)
    assert line.startswith("cinq: refusing to start: ") and "\n" not in line, line
    assert "has 2 replicas but CINQ_REDIS_MIN_REPLICAS is 1" in line, line
    assert "set CINQ_REDIS_MIN_REPLICAS=2" in line, line


async def test_waiting_for_every_replica_is_accepted(deployment):
    assert await sentinel_unsafe(sentinel_settings(deployment, 2)) is None
    assert await sentinel_unsafe(sentinel_settings(deployment, 3)) is None
    await refuse_unsafe(None, sentinel_settings(deployment, 2))  # no SystemExit


async def test_no_sentinel_that_answers_is_not_a_refusal():
    dead = Settings(redis_url=None, token_secrets=[SECRET.decode()],
                    redis_sentinels=[f"127.0.0.1:{free_port()}"], redis_min_replicas=1)
    assert await sentinel_unsafe(dead) is None


def test_a_real_worker_refuses_to_start_and_says_why_in_one_line(deployment):
    env = _env("", CINQ_REDIS_SENTINELS=json.dumps(deployment.sentinel_addresses),
               CINQ_REDIS_MIN_REPLICAS="1")
    done = subprocess.run([sys.executable, "-m", "service.ops.cli", "worker"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode != 0, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("cinq: refusing to start: ") and "CINQ_REDIS_MIN_REPLICAS=2" in last, done.stderr


async def test_a_replica_the_sentinels_see_down_still_counts(tmp_path: Path):
    """It may come back and be promoted: the refusal does not depend on the moment the roles start."""
    require_binary()
    require_sentinel()
    r = Replicated(tmp_path, replicas=2, sentinels=3, min_replicas=1).start()
    try:
        r.replicas[0].kill()
        c = redis.Redis(port=r.sentinels[0].port, socket_timeout=2)
        try:
            deadline = time.monotonic() + 60
            while not any(s["is_sdown"] for s in c.sentinel_slaves(MASTER)):
                assert time.monotonic() < deadline, "the sentinel never saw the replica down"
                time.sleep(0.2)
        finally:
            c.close()
        problem = await sentinel_unsafe(sentinel_settings(r, 1))
        assert problem is not None and "has 2 replicas" in problem, problem
    finally:
        r.stop()
