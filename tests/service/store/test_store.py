"""The event store's contract, run on fakeredis and on a real Redis (the ``any_redis`` fixture)."""

from __future__ import annotations

import re

import pytest

from service.store.event_store import CONFLICT, DONE_AFTER_END_S, DUPLICATE, OK, Append, EventStore
from service.store.keys import Keys

KEYS = Keys(buckets=16, shards=2)


@pytest.fixture
def store(any_redis):
    return EventStore(any_redis, KEYS)


def _tag(key: str) -> str:
    return re.search(r"\{([^}]*)\}", key).group(1)


async def test_append_writes_events_outbox_and_done_ids_atomically(store, any_redis):
    res = await store.append(Append("t1", 0, ["c1"], ["e1", "e2"], [("c1", "m1")], deadline=5000))
    assert (res.status, res.version) == (OK, 2)
    assert await store.events("t1") == ["e1", "e2"]
    out = await any_redis.xrange(KEYS.outbox_for("t1"))
    assert [f[b"m"] for _, f in out] == [b"m1"]
    assert await any_redis.sismember(KEYS.done("t1"), "c1")
    assert await any_redis.zscore(KEYS.due_for("t1"), "t1") == 5000


async def test_entry_ids_are_the_versions(store, any_redis):
    await store.append(Append("t1", 0, ["c1"], ["e1", "e2"]))
    await store.append(Append("t1", 2, ["c2"], ["e3"]))
    ids = [i for i, _ in await any_redis.xrange(KEYS.events("t1"))]
    assert ids == [b"0-1", b"0-2", b"0-3"]


async def test_a_stale_version_is_a_conflict_and_changes_nothing(store, any_redis):
    await store.append(Append("t1", 0, ["c1"], ["e1"]))
    res = await store.append(Append("t1", 0, ["c2"], ["x"], [("c2", "m")]))
    assert (res.status, res.version) == (CONFLICT, 1)
    assert await store.events("t1") == ["e1"]
    assert await any_redis.xlen(KEYS.outbox_for("t1")) == 0
    assert not await any_redis.sismember(KEYS.done("t1"), "c2")


async def test_a_processed_command_id_is_a_duplicate_even_at_the_current_version(store, any_redis):
    await store.append(Append("t1", 0, ["c1"], ["e1"]))
    for expected in (0, 1):
        res = await store.append(Append("t1", expected, ["c9", "c1"], ["e2"], [("c1", "m")]))
        assert (res.status, res.duplicates) == (DUPLICATE, ("c1",))
    assert await store.events("t1") == ["e1"]
    assert await any_redis.xlen(KEYS.outbox_for("t1")) == 0


async def test_a_reply_only_append_marks_the_command_and_writes_the_reply(store, any_redis):
    await store.append(Append("t1", 0, ["c1"], ["e1"]))
    res = await store.append(Append("t1", 1, ["c2"], [], [("c2", "refused")]))
    assert (res.status, res.version) == (OK, 1)
    assert await store.events("t1") == ["e1"]
    assert await any_redis.sismember(KEYS.done("t1"), "c2")
    assert (await store.append(Append("t1", 1, ["c2"], [], [("c2", "again")]))).status == DUPLICATE


async def test_deadline_is_kept_replaced_or_removed(store, any_redis):
    due = KEYS.due_for("t1")
    await store.append(Append("t1", 0, ["c1"], ["e1"], deadline=1000))
    await store.append(Append("t1", 1, ["c2"], ["e2"]))  # ... keeps it
    assert await any_redis.zscore(due, "t1") == 1000
    await store.append(Append("t1", 2, ["c3"], ["e3"], deadline=2000))
    assert await any_redis.zscore(due, "t1") == 2000
    await store.append(Append("t1", 3, ["c4"], ["e4"], deadline=None))
    assert await any_redis.zscore(due, "t1") is None


async def test_load_is_the_snapshot_and_the_events_after_it(store):
    await store.append(Append("t1", 0, ["c1"], ["e1", "e2", "e3"], snapshot=(3, "S3")))
    await store.append(Append("t1", 3, ["c2"], ["e4", "e5"]))
    loaded = await store.load("t1")
    assert (loaded.base, loaded.snapshot, loaded.events, loaded.version) == (3, "S3", ["e4", "e5"], 5)


async def test_load_from_a_known_version_returns_only_newer_events(store):
    await store.append(Append("t1", 0, ["c1"], ["e1", "e2", "e3"], snapshot=(3, "S3")))
    await store.append(Append("t1", 3, ["c2"], ["e4", "e5"]))
    assert (await store.load("t1", known=4)).events == ["e5"]
    assert (await store.load("t1", known=4)).snapshot is None
    # A caller older than the snapshot gets the snapshot instead.
    older = await store.load("t1", known=1)
    assert (older.base, older.snapshot, older.events) == (3, "S3", ["e4", "e5"])


async def test_an_unknown_table_loads_empty(store):
    loaded = await store.load("nope")
    assert (loaded.base, loaded.snapshot, loaded.events, loaded.version) == (0, None, [], 0)


async def test_pipelined_appends_are_each_atomic(store):
    await store.append(Append("a", 0, ["c0"], ["e"]))
    results = await store.append_many([Append("a", 0, ["c1"], ["x"]), Append("b", 0, ["c2"], ["y"])])
    assert [r.status for r in results] == [CONFLICT, OK]
    assert await store.events("a") == ["e"] and await store.events("b") == ["y"]


async def test_the_scripts_are_reloaded_after_a_script_flush(store, any_redis):
    await store.append(Append("t1", 0, ["c1"], ["e1"]))
    await any_redis.script_flush()
    assert (await store.append(Append("t1", 1, ["c2"], ["e2"]))).ok
    assert (await store.load("t1")).events == ["e1", "e2"]


@pytest.mark.parametrize("table", ["abc", "zz9x0qk2ab", "t", "0123456789"])
def test_every_script_call_touches_one_hash_tag(table):
    store = EventStore(None, Keys(buckets=1024, shards=4))
    for keys in (store.append_keys(table), store.load_keys(table)):
        assert len({_tag(k) for k in keys}) == 1, keys


class RecordingPipeline:
    """A pipeline that records the keys of every queued script call (a fake wrapping a real one)."""

    def __init__(self, inner, calls):
        self._inner, self.calls = inner, calls

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def __len__(self):
        return len(self._inner)

    def evalsha(self, sha, numkeys, *args):
        self.calls.append(list(args[:int(numkeys)]))
        return self._inner.evalsha(sha, numkeys, *args)

    def execute_command(self, *args, **kw):
        if str(args[0]).upper() in ("EVAL", "EVALSHA"):
            self.calls.append(list(args[3:3 + int(args[2])]))
        return self._inner.execute_command(*args, **kw)


class RecordingRedis(RecordingPipeline):
    """A client that records the keys of every script call, direct or pipelined, and passes it on."""

    async def evalsha(self, sha, numkeys, *args):
        self.calls.append(list(args[:int(numkeys)]))
        return await self._inner.evalsha(sha, numkeys, *args)

    async def execute_command(self, *args, **kw):
        if str(args[0]).upper() in ("EVAL", "EVALSHA"):
            self.calls.append(list(args[3:3 + int(args[2])]))
        return await self._inner.execute_command(*args, **kw)

    def pipeline(self, *a, **kw):
        return RecordingPipeline(self._inner.pipeline(*a, **kw), self.calls)


async def test_every_script_call_of_a_whole_match_touches_one_hash_tag(fake_redis):
    from tests.service.support import ANA, Harness, private

    calls: list[list[str]] = []
    h = Harness(RecordingRedis(fake_redis, calls))
    await h.send(ANA, "/play cinquillo 3", room=private(ANA))
    await h.send(ANA, "/leave", room=private(ANA))  # AI players finish the match
    await h.send(ANA, f"/replay {await h.table_of(private(ANA))}", room=private(ANA))
    assert len(calls) > 20
    assert all(len({_tag(k) for k in keys}) == 1 for keys in calls)


async def test_a_final_append_deletes_the_snapshot_and_lets_the_ids_expire(store, any_redis):
    """Issue 33: the append that ends an aggregate drops its snapshot (its events suffice) and gives
    its command-id set DONE_AFTER_END_S to live, in which a redelivered command is still known."""
    await store.append(Append("t1", 0, ["c1"], ["e1", "e2"], snapshot=(2, "{}")))
    assert await any_redis.exists(KEYS.snap("t1"))
    res = await store.append(Append("t1", 2, ["c2"], ["e3"], [("c2", "end")], snapshot=(3, "{}"), final=True))
    assert (res.status, res.version) == (OK, 3)
    assert not await any_redis.exists(KEYS.snap("t1"))
    assert 0 < await any_redis.ttl(KEYS.done("t1")) <= DONE_AFTER_END_S
    loaded = await store.load("t1")
    assert (loaded.base, loaded.snapshot, loaded.events) == (0, None, ["e1", "e2", "e3"])
    again = await store.append(Append("t1", 3, ["c2"], [], [("c2", "end")], final=True))
    assert (again.status, again.duplicates) == (DUPLICATE, ("c2",))
    assert await any_redis.xlen(KEYS.outbox_for("t1")) == 1
