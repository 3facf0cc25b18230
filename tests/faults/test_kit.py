"""The fault kit does what it says, observed with plain redis-py clients on a real AOF redis-server.

The clients here make one attempt per command (no retries), so that each action is seen exactly.
"""

from __future__ import annotations

import asyncio
import time

import pytest
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from tests.faults import oom, resp
from tests.faults.proxy import Proxy, command, evalsha, has_entries, xreadgroup
from tests.faults.redis_server import RedisServer
from tests.faults.replicated import Sentinel, require_sentinel
from tools.loopback import free_port


def once(url: str, **kw: object) -> aioredis.Redis:
    """A client that tries each command once (redis-py retries connection errors by default)."""
    return aioredis.from_url(url, retry=Retry(NoBackoff(), 0), **kw)


@pytest.fixture
async def direct(redis_server: RedisServer):
    r = once(redis_server.url)
    yield r
    await r.aclose()


@pytest.fixture
async def via(proxy: Proxy):
    r = once(proxy.url)
    yield r
    await r.aclose()


def test_resp_splits_pipelined_commands_and_replies():
    buf = b"*2\r\n$3\r\nGET\r\n$1\r\na\r\n*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$2\r\nxy\r\nPING\r\n*1\r\n$3\r\nGE"
    first, p = resp.command_at(buf, 0)
    second, p = resp.command_at(buf, p)
    third, p = resp.command_at(buf, p)
    assert (first, second, third) == ([b"GET", b"a"], [b"SET", b"b", b"xy"], [b"PING"])
    assert resp.command_at(buf, p) is None  # the last one is not all there yet
    replies = (b"+OK\r\n$-1\r\n*2\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*0\r\n:5\r\n"
               b"-OOM no\r\n%1\r\n+k\r\n:1\r\n")
    values, pos = [], 0
    while (end := resp.reply_end(replies, pos)) >= 0:
        values.append(resp.decode(replies, pos)[0])
        pos = end
    assert values[:2] == [b"OK", None]
    assert values[2] == [[b"s", [[b"1-0", []]]], 5]
    assert isinstance(values[3], resp.ReplyError) and values[3].startswith("OOM")
    assert values[4] == [(b"k", 1)]
    assert has_entries([[b"s", [[b"1-0", []]]]]) and not has_entries(None) and not has_entries([[b"s", []]])


async def test_kill_before_an_xadd_runs_what_precedes_and_nothing_of_the_rest(proxy, via, direct):
    rule = proxy.arm(command("XADD", key_prefix="cmd:"), "kill_before")
    pipe = via.pipeline(transaction=False)
    pipe.set("before", 1).xadd("cmd:{c0}", {"c": "x"}).set("after", 1)
    with pytest.raises(RedisConnectionError):
        await pipe.execute()
    assert rule.fired.is_set() and rule.hits[0].keys == [b"cmd:{c0}"]
    assert await direct.get("before") == b"1"
    assert await direct.xlen("cmd:{c0}") == 0
    assert await direct.get("after") is None
    # One-shot: the next XADD, on a new connection, goes through.
    assert await via.xadd("cmd:{c0}", {"c": "y"})
    assert await direct.xlen("cmd:{c0}") == 1


async def test_drop_reply_of_an_xadd_leaves_the_entry_and_the_client_sees_an_error(proxy, via, direct):
    proxy.arm(command("XADD", key="cmd:{c1}"), "drop_reply")
    pipe = via.pipeline(transaction=False)
    pipe.xadd("cmd:{c1}", {"c": "x"}).set("after", 1)
    with pytest.raises(RedisConnectionError):
        await pipe.execute()
    assert await direct.xlen("cmd:{c1}") == 1
    assert await direct.get("after") is None, "what follows the command on the connection is held back"
    assert await via.ping()


async def test_kill_after_matches_the_nth_command_of_a_group(proxy, via, direct):
    await direct.xgroup_create("s", "deliver:acme", id="0", mkstream=True)
    await direct.xgroup_create("s", "other", id="0")
    for i in range(3):
        await direct.xadd("s", {"n": i})
    rule = proxy.arm(xreadgroup("deliver:acme"), "kill_after", skip=2)
    for _ in range(2):
        assert await via.xreadgroup("other", "c", {"s": ">"}, count=1)  # another group: not counted
        assert await via.xreadgroup("deliver:acme", "c", {"s": ">"}, count=1)
    assert not rule.fired.is_set()
    with pytest.raises(RedisConnectionError):
        await via.xreadgroup("deliver:acme", "c", {"s": ">"}, count=1)
    assert len(rule.hits) == 1
    pending = await direct.xpending("s", "deliver:acme")
    assert pending["pending"] == 3, "the third read happened: its entry is pending, never received"
    assert len(proxy.seen(xreadgroup("deliver:acme"))) == 3


async def test_a_dropped_blocking_read_with_entries_leaves_them_pending(proxy, via, direct):
    await direct.xgroup_create("out", "g", id="$", mkstream=True)
    rule = proxy.arm(xreadgroup("g"), "drop_reply", reply=has_entries)
    # An empty blocking read (the timeout) passes: the rule waits for a reply with entries.
    assert await via.xreadgroup("g", "c", {"out": ">"}, block=30) == []
    reader = asyncio.create_task(via.xreadgroup("g", "c", {"out": ">"}, block=5000))
    await asyncio.sleep(0.1)
    await direct.xadd("out", {"m": "hello"})
    with pytest.raises(RedisConnectionError):
        await reader
    assert rule.fired.is_set()
    assert (await direct.xpending("out", "g"))["pending"] == 1


async def test_eval_and_evalsha_expose_the_scripts_keys(proxy, via, direct):
    script = via.register_script("return redis.call('SET', KEYS[1], ARGV[1])")
    await script(keys=["t:{1}:a"], args=["v"])
    sha = script.sha
    rule = proxy.arm(evalsha(sha, key_prefix="t:{1}"), "kill_before")
    with pytest.raises(RedisConnectionError):
        await script(keys=["t:{1}:b"], args=["v"])
    assert rule.hits[0].keys == [b"t:{1}:b"]
    assert await direct.get("t:{1}:b") is None


async def _stopped(server) -> None:
    """The server is dead: the client may see its connection close a moment before the killed
    process is reaped, so wait for that (a server that never dies fails here)."""
    for _ in range(600):
        if not server.running:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the server is still running")


async def test_kill_server_before_then_restart_keeps_the_acknowledged_writes(proxy, via, redis_server):
    for i in range(50):
        await via.xadd("cmd:{c2}", {"n": i})
    proxy.arm(command("XADD", key="cmd:{c2}"), "kill_server_before")
    with pytest.raises(RedisConnectionError):
        await via.xadd("cmd:{c2}", {"n": "lost"})
    await _stopped(redis_server)
    # While it is down, new connections through the proxy fail at once.
    with pytest.raises(RedisError):
        await via.ping()
    redis_server.restart()
    entries = await via.xrange("cmd:{c2}")
    assert [e[1][b"n"] for e in entries] == [str(i).encode() for i in range(50)]


async def test_kill_server_after_an_xadd_keeps_it_though_the_client_saw_an_error(proxy, via, redis_server):
    proxy.arm(command("XADD", key="cmd:{c3}"), "kill_server_after")
    with pytest.raises(RedisConnectionError):
        await via.xadd("cmd:{c3}", {"n": "kept"})
    await _stopped(redis_server)
    redis_server.restart()
    assert [e[1] for e in await via.xrange("cmd:{c3}")] == [{b"n": b"kept"}]


async def test_pause_holds_a_command_until_released(proxy, via, direct):
    release = asyncio.Event()
    rule = proxy.arm(command("SET", key="held"), "pause", release=release)
    task = asyncio.create_task(via.set("held", 1))
    await rule.wait()
    await asyncio.sleep(0.1)
    assert await direct.get("held") is None and not task.done()
    release.set()
    assert await task
    assert await direct.get("held") == b"1"
    proxy.arm(command("GET", key="held"), "pause", seconds=0.2)
    t0 = time.monotonic()
    assert await via.get("held") == b"1"
    assert time.monotonic() - t0 >= 0.2


async def test_refuse_once_makes_exactly_one_write_fail_with_a_real_oom(proxy, direct):
    writers = [once(proxy.url) for _ in range(8)]
    target = once(proxy.url)
    rule = oom.refuse_once(proxy, command("XADD", key="cmd:{c4}"), direct)
    stop = asyncio.Event()
    refused_others: list[BaseException] = []

    async def write(r: aioredis.Redis, i: int) -> int:
        n = 0
        while not stop.is_set():
            try:
                await r.set(f"k{i}:{n}", "x" * 100)
            except RedisError as e:
                refused_others.append(e)
            n += 1
        return n

    tasks = [asyncio.create_task(write(w, i)) for i, w in enumerate(writers)]
    await asyncio.sleep(0.1)
    with pytest.raises(RedisError) as refused:
        await target.xadd("cmd:{c4}", {"c": "x"})
    assert oom.is_oom(refused.value), repr(refused.value)
    assert rule.fired.is_set()
    # Restored before the client saw the refusal: its next write succeeds.
    assert await target.xadd("cmd:{c4}", {"c": "y"})
    stop.set()
    counts = await asyncio.gather(*tasks)
    assert sum(counts) > 8 and not refused_others, "only the chosen write was refused"
    assert await direct.xlen("cmd:{c4}") == 1
    assert int((await direct.config_get("maxmemory"))["maxmemory"]) == 0
    for r in (*writers, target):
        await r.aclose()


async def test_an_oom_window_refuses_writes_and_serves_reads(via, direct):
    await via.set("a", 1)
    async with oom.window(direct):
        with pytest.raises(RedisError) as refused:
            await via.set("b", 1)
        assert oom.is_oom(refused.value)
        assert await via.get("a") == b"1"
    assert await via.set("b", 1)


async def test_many_connections_and_large_pipelines_go_through(proxy):
    clients = [once(proxy.url) for _ in range(20)]

    async def load(r: aioredis.Redis, i: int) -> list[object]:
        pipe = r.pipeline(transaction=False)
        for n in range(2000):
            pipe.xadd(f"big:{i}", {"n": n, "pad": "p" * 50})
        pipe.xrange(f"big:{i}")
        return await pipe.execute()

    results = await asyncio.gather(*(load(r, i) for i, r in enumerate(clients)))
    assert all(len(res[-1]) == 2000 for res in results)
    assert len(proxy.seen(command("XADD"))) == 20 * 2000
    # A kill of every connection does not stop the proxy: the pools reconnect.
    assert await proxy.kill_connections() >= 1
    # (a client may see its dead connection once: it makes one attempt per command here)
    await asyncio.gather(*(r.ping() for r in clients), return_exceptions=True)
    assert all(await asyncio.gather(*(r.ping() for r in clients)))
    assert await clients[0].xlen("big:0") == 2000
    for r in clients:
        await r.aclose()


async def test_client_names_tell_connections_apart(proxy, direct):
    worker = once(proxy.url, client_name="worker")
    adapter = once(proxy.url, client_name="webhook")
    rule = proxy.arm(command("XADD", client="webhook"), "kill_before")
    assert await worker.xadd("s", {"a": 1})
    with pytest.raises(RedisConnectionError):
        await adapter.xadd("s", {"a": 2})
    assert rule.hits[0].client == "webhook" and await direct.xlen("s") == 1
    await worker.aclose()
    await adapter.aclose()


def test_free_port_never_hands_out_a_port_twice():
    # A port is picked before its server starts; the kernel may offer it again meanwhile, to a
    # listener that then holds it (CI's failover run: a sentinel's port went to a fault proxy).
    ports = [free_port() for _ in range(500)]
    assert len(set(ports)) == len(ports)


async def test_a_sentinel_whose_port_another_listener_holds_says_so(proxy, redis_server, tmp_path):
    require_sentinel()
    sentinel = Sentinel(tmp_path / "sentinel", redis_server.port, 1000, quorum=1)
    sentinel.port = proxy.port  # the proxy answers PING there (the server's PONG), as in CI
    sentinel.watch(redis_server.port)
    try:
        with pytest.raises(RuntimeError, match="not the one answering"):
            await asyncio.to_thread(sentinel.start)
    finally:
        sentinel.stop()


async def test_a_replica_replicates_through_a_parsing_proxy(proxy, direct, tmp_path):
    """Its ``PSYNC`` turns the connection raw: the full sync's RDB payload (a bulk string without the
    closing CRLF) and the command stream reach it whole, and the primary counts it online (the
    failover runs' replicas replicate from a primary the sentinels know by the proxy's port)."""
    await direct.set("before", "1")
    replica = RedisServer(tmp_path / "replica", extra=("--replicaof", "127.0.0.1", str(proxy.port))).start()
    client = aioredis.Redis(port=replica.port)
    try:
        await direct.set("after", "2")
        deadline = time.monotonic() + 30
        while await client.get("after") != b"2" or await client.get("before") != b"1":
            assert time.monotonic() < deadline, await client.info("replication")
            await asyncio.sleep(0.05)
        assert await direct.execute_command("WAIT", 1, 5000) == 1
    finally:
        await client.aclose()
        replica.stop()
