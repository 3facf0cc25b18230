"""service/platform/delivery.py: at least once, only this platform, order per chat across processes, takeover
of a dead process's messages, retries, dead letters and replay.  Handlers here are plain recorders."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import pytest

from service.domain.identities import Player, Room
from service.foundation import logs
from service.foundation.settings import Settings
from service.platform.delivery import (
    Delivery,
    DeliveryOptions,
    Permanent,
    Retry,
    addressed_to,
    backoff,
    recipient_key,
)
from service.platform.outbox import Message, Recipient
from service.store.groups import Group
from service.store.keys import Keys
from tests.polling import eventually

SETTINGS = Settings(redis_url=None, buckets=16, command_shards=2)


@pytest.fixture(autouse=True)
def _logs_to_current_stderr() -> None:
    """The deliveries log warnings in the background: write them to the live stderr (another test's
    command line may have pointed the logs at a stream pytest has closed since)."""
    import sys

    class Current:
        def write(self, s: str) -> int:
            return sys.stderr.write(s)

        def flush(self) -> None:
            sys.stderr.flush()

    logs.configure("WARNING", stream=Current())
KEYS = Keys(16, 2, "")


def opts(**kw: Any) -> DeliveryOptions:
    base: dict[str, Any] = dict(max_attempts=3, backoff_base_s=0.005, backoff_cap_s=0.02, lanes=4,
                                partitions=4,
                                lease_ms=300, block_ms=20)
    base.update(kw)
    return DeliveryOptions(**base)


def msg(n: int, chat: str = "g1", platform: str = "acme", table: str = "t1",
        user: str | None = None) -> Message:
    to = Recipient(player=Player(platform=platform, user=user)) if user else \
        Recipient(room=Room(platform=platform, chat=chat, kind="group"))
    return Message(id=f"c{n}-{table}-{chat}-{user}:0", table=table, version=n, to=to, locale="en",
                   kind="table", text=f"m{n}")


async def put(redis: Any, m: Message) -> str:
    """Write a message to its table's outbox stream, as the worker does."""
    return (await redis.xadd(KEYS.outbox_for(m.table or ""), {"c": m.id, "m": m.dumps()})).decode()


class Recorder:
    """A handler that records deliveries (and can be told to fail)."""

    def __init__(self, fail: Any = None, delay: float = 0.0) -> None:
        self.got: list[Message] = []
        self.calls = 0
        self.fail = fail
        self.delay = delay

    async def __call__(self, m: Message) -> None:
        self.calls += 1
        if self.delay:
            await asyncio.sleep(self.delay * random.random())
        if self.fail is not None:
            self.fail(self.calls, m)
        self.got.append(m)


async def until(pred: Any, timeout: float = 30.0) -> None:
    await eventually(pred, timeout)


async def running(*pairs: tuple[Delivery, Any]) -> tuple[asyncio.Event, list[asyncio.Task[None]]]:
    stop = asyncio.Event()
    return stop, [asyncio.create_task(d.run(h, stop)) for d, h in pairs]


async def stopped(stop: asyncio.Event, tasks: list[asyncio.Task[None]]) -> None:
    stop.set()
    await asyncio.gather(*tasks)


def test_backoff_is_full_jitter_under_an_exponential_cap():
    rng = random.Random(1)
    for attempt in range(1, 12):
        cap = min(10.0, 0.5 * 2 ** (attempt - 1))
        waits = [backoff(attempt, 0.5, 10.0, rng) for _ in range(200)]
        assert all(0 <= w <= cap for w in waits) and max(waits) > cap * 0.8


def test_addressing_and_recipient_keys():
    assert addressed_to(msg(1), "acme") and not addressed_to(msg(1), "tg")
    assert addressed_to(msg(1, user="u1"), "acme")
    assert recipient_key(msg(1)) != recipient_key(msg(1, user="g1"))


async def test_only_this_platforms_messages_are_delivered_and_the_rest_acknowledged(any_redis):
    for n in range(6):
        await put(any_redis, msg(n, platform="acme" if n % 2 else "tg", table=f"t{n}"))
    d, rec = Delivery(any_redis, SETTINGS, "acme", "p1", options=opts(), keys=KEYS), Recorder()
    stop, tasks = await running((d, rec))
    await until(lambda: len(rec.got) == 3)
    await stopped(stop, tasks)
    assert sorted(m.id for m in rec.got) == ["c1-t1-g1-None:0", "c3-t3-g1-None:0", "c5-t5-g1-None:0"]
    for b in range(KEYS.buckets):
        pending = await any_redis.xpending(KEYS.outbox(b), d.dk.group)
        assert (pending["pending"] if isinstance(pending, dict) else pending[0]) == 0


async def test_order_per_chat_is_kept_by_several_processes(any_redis):
    # 12 chats of 4 tables each spread over buckets, 15 messages each; handlers take random time.
    chats = [f"g{i}" for i in range(12)]
    for n in range(15):
        for i, chat in enumerate(chats):
            await put(any_redis, msg(n, chat=chat, table=f"tab{i}"))
    recs = [Recorder(delay=0.003) for _ in range(3)]
    # Leases long enough that a busy test machine does not lose one (that would allow a duplicate).
    ds = [Delivery(any_redis, SETTINGS, "acme", f"p{i}", options=opts(lease_ms=1500), keys=KEYS)
          for i in range(3)]
    stop, tasks = await running(*zip(ds, recs, strict=True))
    await until(lambda: len({m.id for r in recs for m in r.got}) >= 15 * 12)
    # Partitions move to the processes that started later: every one ends with its fair share.
    await until(lambda: sorted(len(d.owned) for d in ds) == [1, 1, 2])
    owned = [set(d.owned) for d in ds]
    await stopped(stop, tasks)
    assert sum(len(r.got) for r in recs) == 15 * 12, "a message was delivered twice"
    for chat in chats:
        versions = [m.version for r in recs for m in r.got if m.to.room and m.to.room.chat == chat]
        assert versions == list(range(15)), f"{chat} out of order or split: {versions}"
    assert sum(map(len, owned)) == 4
    assert not (owned[0] & owned[1] or owned[1] & owned[2] or owned[0] & owned[2])


async def test_a_dead_process_messages_are_taken_over_in_order(any_redis):
    d = Delivery(any_redis, SETTINGS, "acme", "survivor", options=opts(), keys=KEYS)
    await d.setup()
    ids = [await put(any_redis, msg(n)) for n in range(3)]
    stream = KEYS.outbox_for("t1")
    # A process that read the first two messages, held every lease, and died.
    await any_redis.xreadgroup(d.dk.group, "dead", {stream: ">"}, count=2)
    for p in range(4):
        await any_redis.set(d.dk.lease(p), "dead", px=300)
    rec = Recorder()
    stop, tasks = await running((d, rec))
    await until(lambda: len(rec.got) == 3)
    await stopped(stop, tasks)
    assert [m.version for m in rec.got] == [0, 1, 2]
    pending = await any_redis.xpending(stream, d.dk.group)
    assert (pending["pending"] if isinstance(pending, dict) else pending[0]) == 0
    assert ids


async def test_a_process_killed_and_started_again_under_its_name_delivers_at_once(any_redis):
    # kill -9: its leases (a minute long here) and the messages it had in hand stay in Redis.  The
    # process that replaces it has the same consumer name (a restarted container): it takes its own
    # leases back at once instead of waiting out their minute, then what it had in hand, in order.
    long = opts(lease_ms=60_000)
    d = Delivery(any_redis, SETTINGS, "acme", "tg-1", options=long, keys=KEYS)
    await d.setup()
    await put(any_redis, msg(0))
    await put(any_redis, msg(1))
    await any_redis.xreadgroup(d.dk.group, "tg-1", {KEYS.outbox_for("t1"): ">"}, count=1)  # in hand
    for p in range(4):
        await any_redis.set(d.dk.lease(p), "tg-1", px=60_000)
    await any_redis.zadd(d.dk.members, {"tg-1": time.time() * 1000 + 60_000})
    rec = Recorder()
    stop, tasks = await running((d, rec))
    await put(any_redis, msg(2))
    await until(lambda: len(rec.got) == 3)
    await stopped(stop, tasks)
    assert [m.version for m in rec.got] == [0, 1, 2]


async def test_retry_waits_then_succeeds_and_permanent_goes_to_the_dead_letters(any_redis):
    def fail(calls: int, m: Message) -> None:
        if m.id.startswith("c0-") and calls == 1:
            raise Retry("busy", after_s=0.2)
        if m.id.startswith("c1-"):
            raise Permanent("no such chat")

    await put(any_redis, msg(0))
    await put(any_redis, msg(1, chat="g2", table="t2"))
    d, rec = Delivery(any_redis, SETTINGS, "acme", "p1", options=opts(), keys=KEYS), Recorder(fail)
    t0 = time.monotonic()
    stop, tasks = await running((d, rec))
    await until(lambda: len(rec.got) == 1)
    took = time.monotonic() - t0
    await until(lambda: d.metrics.dead.labels("acme")._value.get() == 1)
    await stopped(stop, tasks)
    assert took >= 0.2 and rec.got[0].id.startswith("c0-")
    [dead] = await d.dead_letters()
    assert dead.message is not None and dead.message.id.startswith("c1-") and dead.attempts == 1
    assert "no such chat" in dead.error


async def test_a_handler_that_keeps_failing_is_dead_lettered_after_max_attempts_and_replayed(any_redis):
    broken = True

    def fail(_: int, __: Message) -> None:
        if broken:
            raise ConnectionError("down")

    await put(any_redis, msg(0))
    d, rec = Delivery(any_redis, SETTINGS, "acme", "p1", options=opts(), keys=KEYS), Recorder(fail)
    stop, tasks = await running((d, rec))
    await until(lambda: rec.calls == 3)
    letters: list[Any] = []
    while not letters:
        letters = await d.dead_letters()
        await asyncio.sleep(0.01)
    assert letters[0].attempts == 3 and "ConnectionError" in letters[0].error
    broken = False
    assert await d.replay() == 1
    await until(lambda: len(rec.got) == 1)
    await stopped(stop, tasks)
    assert rec.got[0].id.startswith("c0-") and await d.dead_letters() == []
    assert await d.replay() == 0


async def test_stopping_leaves_undelivered_messages_pending_for_the_next_owner(any_redis):
    await put(any_redis, msg(0))
    slow = Recorder(fail=lambda _c, _m: (_ for _ in ()).throw(Retry("later", after_s=5)))
    d = Delivery(any_redis, SETTINGS, "acme", "p1", options=opts(), keys=KEYS)
    stop, tasks = await running((d, slow))
    await until(lambda: slow.calls == 1)
    await stopped(stop, tasks)
    assert await any_redis.zcard(d.dk.members) == 0  # left the group of live processes
    rec = Recorder()
    d2 = Delivery(any_redis, SETTINGS, "acme", "p2", options=opts(), keys=KEYS)
    stop, tasks = await running((d2, rec))
    await until(lambda: len(rec.got) == 1)
    await stopped(stop, tasks)


@pytest.mark.parametrize("n", [1, 3])
async def test_a_new_process_takes_its_share_of_the_partitions(any_redis, n):
    ds = [Delivery(any_redis, SETTINGS, "acme", f"p{i}", options=opts(), keys=KEYS) for i in range(n)]
    for _ in range(3):
        for d in ds:
            await d.rebalance()
    counts = sorted(len(d.owned) for d in ds)
    assert sum(counts) == 4 and counts[-1] - counts[0] <= 2


async def test_a_delivery_started_before_redis_is_up_waits_for_it_and_stops_cleanly():
    import redis.asyncio as aioredis

    nowhere = aioredis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.2)
    d = Delivery(nowhere, SETTINGS, "acme", "p1", options=opts(), keys=KEYS)
    stop, tasks = await running((d, Recorder()))
    await asyncio.sleep(0.3)
    assert not tasks[0].done(), "the delivery died instead of waiting for Redis"
    await asyncio.wait_for(stopped(stop, tasks), 5)
    await nowhere.aclose()


async def test_a_read_whose_reply_was_lost_is_delivered_while_the_process_lives(any_redis):
    """redis-py resends a read whose connection broke: Redis delivered the entry to this consumer, the
    process never saw it.  It must still arrive, within ``reread_s``, without a restart."""
    d = Delivery(any_redis, SETTINGS, "acme", "p1", options=opts(reread_s=0.2), keys=KEYS)
    rec = Recorder()
    stop, tasks = await running((d, rec))
    await put(any_redis, msg(0))
    await until(lambda: len(rec.got) == 1)  # running, partitions owned and claimed
    stream = KEYS.outbox_for("t1")
    # The entry and "its read" in one transaction: the process's own blocked read cannot take it.
    pipe = any_redis.pipeline(transaction=True)
    pipe.xadd(stream, {"c": "x", "m": msg(1).dumps()})
    pipe.xreadgroup(d.dk.group, "p1", {stream: ">"}, count=10)
    await pipe.execute()
    await until(lambda: len(rec.got) == 2)
    await stopped(stop, tasks)
    assert [m.version for m in rec.got] == [0, 1]
    pending = await any_redis.xpending(stream, d.dk.group)
    assert (pending["pending"] if isinstance(pending, dict) else pending[0]) == 0


async def test_a_message_in_hand_is_not_read_again(any_redis):
    """A lane holding a message (waiting out a retry) must not get it a second time from a re-read."""
    calls: list[str] = []

    def fail(n: int, m: Message) -> None:
        calls.append(m.id)
        if len(calls) == 1:
            raise Retry("later", after_s=0.6)

    d = Delivery(any_redis, SETTINGS, "acme", "p1", options=opts(reread_s=0.05), keys=KEYS)
    rec = Recorder(fail=fail)
    stop, tasks = await running((d, rec))
    await put(any_redis, msg(0))
    await until(lambda: len(rec.got) == 1)
    await stopped(stop, tasks)
    assert calls == [rec.got[0].id] * 2  # the first attempt and its retry, nothing more


def test_a_persons_private_chat_and_their_hand_keep_one_order():
    ana = Player(platform="acme", user="u1")
    dm = Room(platform="acme", chat="dm-u1", kind="private")
    refusal = msg(1).model_copy(update={"to": Recipient(room=dm, person=ana)})
    hand = msg(2).model_copy(update={"to": Recipient(player=ana)})
    assert recipient_key(refusal) == recipient_key(hand)
    # Without the person, or in a group, the chat is its own recipient.
    assert recipient_key(msg(1).model_copy(update={"to": Recipient(room=dm)})) != recipient_key(hand)
    group = Room(platform="acme", chat="g1", kind="group")
    assert recipient_key(msg(1).model_copy(update={"to": Recipient(room=group, person=ana)})) != \
        recipient_key(hand)


async def test_retention_keeps_what_a_stopped_platform_has_not_received(any_redis):
    """Two platforms: one delivers and trims, the other is down.  Nothing the one that is down has not
    received goes; when it returns it gets everything, and then the outbox is empty."""
    up = Delivery(any_redis, SETTINGS, "acme", "p1", options=opts(trim_s=0.05), keys=KEYS)
    down = Delivery(any_redis, SETTINGS, "tg", "p2", options=opts(trim_s=0.05), keys=KEYS)
    await down.setup()  # the platform's group exists: it was running before
    sent = []
    for n in range(20):
        m = msg(n, platform="acme" if n % 2 else "tg", table=f"t{n % 4}")
        sent.append(m)
        await put(any_redis, m)
    outboxes = sorted({KEYS.outbox_for(m.table or "") for m in sent})

    async def left() -> int:
        return sum([await any_redis.xlen(s) for s in outboxes])

    rec = Recorder()
    stop, tasks = await running((up, rec))
    await until(lambda: len(rec.got) == 10)
    await asyncio.sleep(0.3)  # several trim rounds
    await stopped(stop, tasks)
    assert await left() == 20, "retention removed entries the stopped platform has not received"
    rec_tg = Recorder()
    stop, tasks = await running((up, Recorder()), (down, rec_tg))
    await until(lambda: len(rec_tg.got) == 10)
    deadline = time.monotonic() + 30
    while await left() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    await stopped(stop, tasks)
    assert sorted(m.id for m in rec_tg.got) == sorted(m.id for m in sent if m.to.room.platform == "tg")
    assert await left() == 0, "entries every platform acknowledged were kept"


class _ReadLog(Group):
    """The delivery's consumer group, on the same Redis, noting each read in a shared log."""

    def __init__(self, redis: Any, group: str, consumer: str, log: list[str]) -> None:
        super().__init__(redis, group, consumer)
        self.log = log

    async def read(self, *args: Any, **kwargs: Any) -> Any:
        self.log.append("read")
        got = await super().read(*args, **kwargs)
        if got:
            self.log.append(f"got {len(got)}")
        return got


async def test_the_lanes_send_before_the_next_read_is_sent(any_redis):
    """Issue 33: a move's first callback waited while the delivery packed and sent its next read (of
    1,024 streams on one Redis) before any lane had sent what the last read brought."""
    log: list[str] = []
    d = Delivery(any_redis, SETTINGS, "acme", "p1", options=opts(), keys=KEYS)
    d.group = _ReadLog(any_redis, d.dk.group, d.consumer, log)

    async def handler(m: Message) -> None:
        log.append(f"sent {m.version}")

    await put(any_redis, msg(1))
    stop, tasks = await running((d, handler))
    await until(lambda: "sent 1" in log and log.count("read") >= 2)
    await stopped(stop, tasks)
    i = log.index("got 1")
    assert log[i - 1:i + 3] == ["read", "got 1", "sent 1", "read"], log


async def test_an_entry_lost_on_a_partition_being_let_go_is_delivered_here_before_it_goes(any_redis):
    """Issue 33's stall, in the delivery: a Redis error lost a read's reply, so an entry is pending with
    this process and not in hand, on a partition it is about to let go (another process has joined).
    It is read again and handed to a lane before the partition goes, not left pending here for
    whoever takes the partition next (a third of a lease later, or never while nobody does).  The
    loop's steps are driven one by one, in the loop's order: the fault at its exact point."""
    d = Delivery(any_redis, SETTINGS, "acme", "p1", options=opts(reread_s=3600), keys=KEYS)
    await d.setup()
    await d.rebalance()
    assert set(d.owned) == {0, 1, 2, 3}
    lanes: list[asyncio.Queue[Any]] = [asyncio.Queue() for _ in range(d.options.lanes)]
    stop = asyncio.Event()
    await d._read_once(lanes, stop)  # the partitions taken over (nothing pending), nothing new
    # A table whose messages go to partition 3, the first one to be let go.
    table = next(t for n in range(1000) if KEYS.outbox_for(t := f"t{n}") in d.owned[3].streams)
    stream = KEYS.outbox_for(table)
    # The entry and "its read" in one transaction: delivered to p1, its reply never seen...
    pipe = any_redis.pipeline(transaction=True)
    pipe.xadd(stream, {"c": "x", "m": msg(1, table=table).dumps()})
    pipe.xreadgroup(d.dk.group, "p1", {stream: ">"}, count=10)
    await pipe.execute()
    d.reread_soon()  # ...as the loop says when a Redis error broke that read
    # Another process joins (its heartbeat): p1's fair share is now 2 partitions, 3 and 2 to let go.
    await any_redis.zadd(d.dk.members, {"p2": time.time() * 1000 + 60_000})
    await d.rebalance()
    assert 3 in d.owned, "partition 3 let go while an entry of it was lost, not in hand"
    await d._read_once(lanes, stop)
    items = [q.get_nowait() for q in lanes for _ in range(q.qsize())]
    assert [(i.stream, i.msg.version) for i in items] == [(stream, 1)], "not read again"
    await d.rebalance()
    assert 3 in d.owned, "let go while its entry is in a lane"
    assert set(d.owned) - d.leases.draining == {0, 1}  # p1 reads only its share meanwhile
