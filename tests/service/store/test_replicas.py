"""Acknowledge only what a failover keeps (issue 36): with ``CINQ_REDIS_MIN_REPLICAS`` the gateway, the
worker and a delivery each wait for a replica before they tell anyone "done", on a real primary and a
real replica (``redis-server --replicaof``) that the tests stop with SIGSTOP: a replica that does not
answer is exactly what a primary cut off from its replicas sees.

- the gateway's ``submit`` does not return while the replica lacks the command, and when it returns
  the replica has it; a replica silent past the bound makes the webhook answer 503 + ``Retry-After``
  (``store_not_replicated``), and the platform's retry is acted on once;
- the worker appends but does not acknowledge a command before the replica has its events;
- a delivery sends nothing the replica has not got;
- configurations that could lose an acknowledged move are refused at start-up, in one line.
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from adapters.webhook.app import command_id
from service.domain.events import envelope
from service.domain.identities import Player, Room
from service.domain.inputs import Input
from service.foundation.settings import Settings
from service.ops.runtime import connect, worker_for
from service.platform.delivery import Delivery
from service.platform.outbox import Message, Recipient
from service.store.keys import Keys
from service.store.replicas import NotReplicated, Replicas
from service.write.gateway import Gateway
from tests.adapters.webhook.support import PLATFORM, FakePlatform, Harness, fast_options
from tests.faults.redis_server import require_binary
from tests.faults.replicated import Replicated
from tests.service.support import SECRET, seeds, settings

ANA = Player(platform="tg", user="1", name="Ana")
HOME = Room(platform="tg", chat="1", kind="private")


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[Replicated]:
    """A primary and one replica (no sentinel)."""
    require_binary()
    r = Replicated(tmp_path, replicas=1, sentinels=0).start()
    try:
        yield r
    finally:
        r.stop()


@pytest.fixture
async def primary(pair: Replicated) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.from_url(pair.primary.url)
    try:
        yield client
    finally:
        await client.aclose()


class Paused:
    """The replica stopped (SIGSTOP) until the block ends: it neither receives nor acknowledges."""

    def __init__(self, pair: Replicated) -> None:
        self.proc = pair.replicas[0].proc
        assert self.proc is not None

    def __enter__(self) -> Paused:
        self.proc.send_signal(signal.SIGSTOP)
        return self

    def resume(self) -> None:
        self.proc.send_signal(signal.SIGCONT)

    def __exit__(self, *exc: object) -> None:
        self.resume()


def replicated(**kw: object) -> Settings:
    return settings(redis_min_replicas=1, **kw)


async def test_submit_returns_only_once_the_replica_has_the_command(pair, primary):
    s = replicated(redis_replica_timeout_ms=30_000)
    gateway = Gateway(primary, s, Keys.of(s))
    replica = aioredis.from_url(pair.replicas[0].url)
    try:
        with Paused(pair) as paused:
            submit = asyncio.create_task(gateway.submit(Input(ANA, HOME, command_id="c1"), "/play cinquillo"))
            await asyncio.sleep(0.3)
            # The command is on the primary, but the replica has not got it: no acknowledgement yet.
            assert not submit.done()
            paused.resume()
            await submit
        table = gateway.table_for("c1")
        on_replica = await replica.xrange(gateway.keys.commands_for(table))
        assert [json.loads(f[b"c"])["id"] for _, f in on_replica] == ["c1"]
    finally:
        await replica.aclose()


async def test_a_replica_that_does_not_answer_in_time_is_a_503_and_the_retry_acts_once(pair, primary):
    platform = FakePlatform()
    await platform.start()
    h = await Harness(primary, platform.url, redis_min_replicas=1, redis_replica_timeout_ms=200).start()
    payload = {"type": "message", "chat": {"id": "dm-ana", "kind": "private"},
               "user": {"id": "ana", "name": "Ana", "locale": "en"}, "text": "/play cinquillo"}
    try:
        with Paused(pair):
            status, headers, doc = await h.client.post(payload, wid="w-1")
        assert status == 503 and headers["Retry-After"] == "1", doc
        assert doc["type"] == "urn:cinq:problem:store_not_replicated"
        assert "replicas" in doc["detail"]
        # The platform's retries, same webhook-id, until one is taken: a replica just woken may take
        # longer than the 200 ms bound to catch up on a loaded machine (another 503, retried again).
        for _ in range(100):
            status, _, _ = await h.client.post(payload, wid="w-1")
            if status != 503:
                break
            await asyncio.sleep(0.1)
        assert status == 202
        cid = command_id(PLATFORM, "w-1")
        table = h.adapter.gateway.table_for(cid)
        for _ in range(400):
            if await primary.xlen(h.keys.events(table)):
                break
            await asyncio.sleep(0.02)
        events = [envelope(json.loads(f[b"e"])) for _, f in await primary.xrange(h.keys.events(table))]
        # Applied once although the command is twice in its stream.
        assert events and [e["type"] for e in events][:1] == ["TableCreated"]
        assert sum(1 for e in events if e["type"] == "TableCreated") == 1
    finally:
        await h.close()
        await platform.close()


async def test_the_worker_acknowledges_a_command_only_once_the_replica_has_its_events(pair, primary):
    s = replicated(redis_replica_timeout_ms=150)
    # The gateway's own bound is generous: only the worker's short one is under test.
    gateway = Gateway(primary, replicated(redis_replica_timeout_ms=30_000), Keys.of(s))
    await gateway.submit(Input(ANA, HOME, command_id="c1"), "/play cinquillo")
    table = gateway.table_for("c1")
    worker = worker_for(primary, s, name="w1", seeds=seeds(), timers=False)
    worker.reread_s = 0.05
    replica = aioredis.from_url(pair.replicas[0].url)
    stream = gateway.keys.commands_for(table)
    try:
        with Paused(pair) as paused:
            with pytest.raises(NotReplicated):
                await worker.drain()
            # Appended on the primary, but not acknowledged: the command is still pending.
            assert await primary.xlen(gateway.keys.events(table)) > 0
            assert (await primary.xpending(stream, s.group))["pending"] == 1
            paused.resume()
        await worker.setup()
        for _ in range(100):  # a replica just woken may miss the 150 ms bound on a loaded machine
            worker.retry += await worker.intake.reread()
            try:
                await worker.drain()
                break
            except NotReplicated:
                continue
        assert (await primary.xpending(stream, s.group))["pending"] == 0
        # Acknowledged, so on the replica (WAIT) with every event of it, and applied once.
        on_primary = await primary.xrange(gateway.keys.events(table))
        on_replica = await replica.xrange(gateway.keys.events(table))
        assert on_replica[:len(on_primary)] == on_primary
        assert sum(1 for _, f in on_primary if envelope(json.loads(f[b"e"]))["type"] == "TableCreated") == 1
    finally:
        await replica.aclose()
        if worker.thinker is not None:
            worker.thinker.close()


async def test_a_delivery_sends_nothing_the_replica_has_not_got(pair, primary):
    s = replicated(redis_replica_timeout_ms=150)
    keys = Keys.of(s)
    sent: list[str] = []

    async def handler(msg: Message) -> None:
        sent.append(msg.id)

    delivery = Delivery(primary, s, PLATFORM, "d1", options=fast_options(partitions=1), keys=Keys.of(s))
    stop = asyncio.Event()
    await delivery.setup()
    msg = Message(id="m:0", table="t1", version=1, to=Recipient(room=Room(platform=PLATFORM, chat="g")),
                  locale="en", kind="reply", text="hello")
    with Paused(pair) as paused:
        await primary.xadd(keys.outbox(0), {"c": "m", "m": msg.dumps()})
        run = asyncio.create_task(delivery.run(handler, stop))
        await asyncio.sleep(0.8)  # several reads, each waiting for the replica in vain
        assert sent == []
        paused.resume()
    for _ in range(500):
        if sent:
            break
        await asyncio.sleep(0.02)
    stop.set()
    await run
    assert sent == ["m:0"]


async def test_wait_is_used_where_the_server_has_no_waitaof(pair, primary):
    # A generous bound: a replica is there, and a loaded machine may take over a second to answer.
    replicas = Replicas(primary, Keys(), needed=1, timeout_ms=30_000)
    await replicas.ready()
    info = await primary.info("server")
    has_waitaof = tuple(int(x) for x in info["redis_version"].split(".")[:2]) >= (7, 2)
    assert replicas.describe().startswith("WAITAOF" if has_waitaof else "WAIT for 1")
    await replicas.confirm()  # a replica is there: no error
    off = Replicas(primary, Keys(), needed=0)
    pipe = primary.pipeline(transaction=False)
    off.queue(pipe)
    assert len(pipe) == 0  # one Redis, no replica: nothing is sent


@pytest.mark.parametrize(("env", "says"), [
    (dict(redis_sentinels=["127.0.0.1:26379"]), "CINQ_REDIS_MIN_REPLICAS is 0"),
    (dict(redis_sentinels=["127.0.0.1:26379"], redis_min_replicas=1, redis_cluster=True), "choose one"),
    (dict(redis_min_replicas=1), "without a Redis"),
    (dict(redis_sentinels=["127.0.0.1:x"], redis_min_replicas=1), "not host:port"),
])
def test_unsafe_redis_settings_are_refused_at_start_up_in_one_line(env, says):
    with pytest.raises(SystemExit) as e:
        connect(Settings(redis_url=None, token_secrets=[SECRET.decode()], **env))
    line = str(e.value)
    assert line.startswith("cinq: refusing to start: ") and says in line and "\n" not in line
