"""``cinq trim`` and the retention (``service.ops.trim``, ``service.store.archive``,
``service.ops.retention``): a finished table leaves Redis entirely (every key of it, compared by SCAN,
and ``used_memory`` back within 1 KB a table), what outlives it stays, and the archive file replays and
verifies (``cinq replay/verify --archive``)."""

from __future__ import annotations

import asyncio
import io
import json
import re
from pathlib import Path

import fakeredis
import pytest

from service.domain.commands import TableCommand
from service.domain.identities import Room
from service.domain.tables.state import CANCELLED, FINISHED
from service.ops import operator, retention, trim
from service.ops.cli import main
from service.platform.platform_state import PlatformState
from service.store import archive, scan
from service.store.repository import load
from tests.service.support import ANA, BEA, CAL, GROUP, Harness, play_with_bots

DAY = 86_400
# Keys that outlive a table by design: player statistics and preferences, a group's counters, and
# the streams and 24-hour keys shared by every table, which have their own retention.
OUTLIVE = re.compile(r"^(player:\{[^}]*\}:(stats|prefs)|pf:\{[^}]*\}:(stats|counted|prefs)"
                     r"|out:\{\d+\}|cmd:\{c\d+\}|seen:\{.*\}|due:\{\d+\}|rt:\{ratings\}:.*"
                     r"|dly:\{[^}]*\}:groups)$")  # a person's groups (the daily share buttons): no table's


def _room(n: int) -> Room:
    return Room(platform="tg", chat=f"-9{n:03d}", kind="group")


async def _finished(h: Harness, n: int) -> str:
    """A match of three AI players and a person who left at once: it plays to its end."""
    await play_with_bots(h, BEA, "cinquillo", 3, _room(n))
    await h.send(BEA, "/leave", room=_room(n))
    table = await h.table_of(_room(n))
    assert (await load(h.worker.store, table)).status == FINISHED
    return table


async def _keys(redis) -> set[str]:
    return {k.decode() async for k in redis.scan_iter(match="*", count=1000)}


async def _platform_state_of(h: Harness, table: str, chat: str) -> PlatformState:
    """The keys a chat adapter keeps about a table (message slots, dirty field, chats, names, flags)."""
    ps = PlatformState(h.redis, h.keys)
    await ps.want_content("tg", chat, table, "main", (3, 0), {"text": "x"})
    await ps.set_message_ref("tg", chat, table, "main", message_id=7, sent="d")
    await ps.want_content("tg", "2", table, "hand", (3, 0), {"text": "y"})  # a private chat
    await ps.add_table_chat("tg", table, chat)
    await ps.set_table_names("tg", table, ["Bea"])
    await ps.mark_once("tg", f"press:{table}:0:3")
    await ps.record_group_match("tg", chat, table, ["2"], {"2": "Bea"}, now=1000.0)
    await ps.set_chat_locale("tg", chat, "es")
    return ps


async def test_trim_removes_every_key_of_a_finished_table(any_redis, tmp_path):
    h = Harness(any_redis)
    await play_with_bots(h, ANA, "cinquillo", 2, GROUP)  # a running match: untouched throughout
    running = await h.table_of(GROUP)
    await _platform_state_of(h, running, GROUP.chat)
    before = await _keys(h.redis)
    fin = await _finished(h, 1)
    ps = await _platform_state_of(h, fin, _room(1).chat)
    grown = await _keys(h.redis) - before
    assert any(fin in k for k in grown) and any(k.startswith("pf:") and fin in k for k in grown)
    path = str(tmp_path / "a.jsonl")
    assert await trim.trim(h.redis, h.keys, 1, path, now=h.clock.now + 2 * DAY) == [fin]
    left = await _keys(h.redis) - before
    assert not [k for k in left if fin in k], "a key of the trimmed table is left"
    assert sorted(k for k in left if not OUTLIVE.match(k)) == []
    # The dirty fields of its slots went with them; the running table's stayed.
    fields = {f.decode() for f in await h.redis.hkeys("pf:{tg}:dirty")}
    assert not [f for f in fields if fin in f] and [f for f in fields if running in f]
    # What outlives the table: the group's counters and language, the players' statistics.
    assert (await ps.group_stats("tg", _room(1).chat))[0] == 1
    assert await ps.chat_locale("tg", _room(1).chat) == "es"
    assert await h.redis.hget(h.keys.player_stats(BEA.platform, BEA.user), "played") == b"1"
    assert await ps.get_message_ref("tg", GROUP.chat, running, "main") is not None
    assert await h.gateway.table_of(GROUP) == running


async def test_a_late_command_to_a_trimmed_table_leaves_nothing_after_the_next_trim(any_redis, tmp_path):
    h = Harness(any_redis)
    fin = await _finished(h, 1)
    path = str(tmp_path / "a.jsonl")
    assert await trim.trim(h.redis, h.keys, 0, path, now=h.clock.now + 1) == [fin]
    # A button pressed long after: refused (no such table), and its id marked as any refusal's.
    late = TableCommand(id="late", table=fin, name="hand", actor=BEA, room=_room(1), locale="en")
    await h.redis.xadd(h.keys.commands_for(fin), {"c": late.dumps()})
    for _ in range(100):
        h.clock.now += 1
        await h.settle()
        if await h.redis.exists(h.keys.done(fin)):
            break
    assert await h.redis.exists(h.keys.done(fin)), "the refusal marks its id (the case swept)"
    assert not await h.redis.exists(h.keys.events(fin))
    assert await trim.trim(h.redis, h.keys, 0, path, now=h.clock.now + 1) == []
    assert [k async for k in h.redis.scan_iter(match=f"*{fin}*")] == []


async def test_trim_gives_back_the_memory_of_the_tables(real_redis, tmp_path):
    """``used_memory`` after trimming is within 1 KB a table of what it was before the tables.

    The outbox and command streams are shared and trimmed by their own retention, and ``seen:`` keys
    expire after 24 h: here they are emptied by hand after each phase, as those would, so that what is
    compared is what trim owes.
    """
    h = Harness(real_redis)
    path = str(tmp_path / "a.jsonl")

    async def settle_shared() -> int:
        for b in range(h.keys.buckets):
            await h.redis.xtrim(h.keys.outbox(b), maxlen=0)
        for k in h.keys.all_commands():
            await h.redis.xtrim(k, maxlen=0)
        seen = [k async for k in h.redis.scan_iter(match="seen:*")]
        if seen:
            await h.redis.delete(*seen)
        await asyncio.sleep(0.2)  # lazy frees settle
        return int((await h.redis.info("memory"))["used_memory"])

    # Warm-up: the streams, scripts and players exist before the measure (they outlive tables).
    await _finished(h, 0)
    for b in range(h.keys.buckets):
        await h.redis.xadd(h.keys.outbox(b), {"m": "{}"})
    await trim.trim(h.redis, h.keys, 0, path, now=h.clock.now + 1)
    base = await settle_shared()
    # Enough tables that a fixed few tens of KB (the Lua heap, the keyspace's tables) stay under the
    # bound: the measure is per table.
    n = 100
    for i in range(1, n + 1):
        await _finished(h, i)
    full = await settle_shared()
    assert full - base > n * 4096, "the tables should have cost something"
    trimmed = await trim.trim(h.redis, h.keys, 0, path, now=h.clock.now + 1)
    assert len(trimmed) == n
    after = await settle_shared()
    assert after - base <= n * 1024, (base, full, after)


def _archived(path) -> tuple[str, str, list[str]]:
    """A finished and a cancelled table, trimmed to ``path`` (on fakeredis: the CLI reads only the file)."""

    async def go() -> tuple[str, str, list[str]]:
        h = Harness(fakeredis.FakeAsyncRedis(server=fakeredis.FakeServer()))
        fin = await _finished(h, 1)
        await h.send(CAL, "/new cinquillo", room=_room(2))
        await h.send(CAL, "/cancel", room=_room(2))
        cancelled = next(i.id for i in await scan.list_tables(h.redis, h.keys) if i.phase == CANCELLED)
        events = await h.events(fin)
        trimmed = await trim.trim(h.redis, h.keys, 0, str(path), now=h.clock.now + 1)
        assert sorted(trimmed) == sorted([fin, cancelled])
        assert await h.redis.exists(h.keys.events(fin)) == 0
        return fin, cancelled, events

    return asyncio.run(go())


def test_an_archived_table_replays_and_verifies_from_the_file(tmp_path, monkeypatch, capsys):
    path = tmp_path / "a.jsonl"
    fin, cancelled, events = _archived(path)
    assert archive.load_archive(str(path))[fin].events == events
    monkeypatch.delenv("REDIS_URL", raising=False)  # the archive alone: no Redis is read
    monkeypatch.setenv("CINQ_LOG_LEVEL", "WARNING")
    assert main(["verify", fin, "--archive", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("verified") and "1. seat" in out
    seed = json.loads(next(e for e in events if '"MatchStarted"' in e))["data"]["seed"]
    assert main(["replay", fin, "--archive", str(path), "--lang", "es"]) == 0
    assert seed in capsys.readouterr().out
    # Refusals: a table not in the archive, a cancelled table (no match to replay), a broken file.
    assert main(["verify", "nosuchtable", "--archive", str(path)]) == 1
    assert "no such table: nosuchtable" in capsys.readouterr().err
    assert main(["replay", cancelled, "--archive", str(path)]) == 1
    assert "not a finished match" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="cannot read the archive"):
        main(["verify", fin, "--archive", str(tmp_path / "missing.jsonl")])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"table": "x"}\n')
    with pytest.raises(SystemExit, match=r"bad.jsonl:1: not an archived table"):
        main(["verify", fin, "--archive", str(bad)])


def test_a_tampered_archive_fails_verification(tmp_path, monkeypatch, capsys):
    path = tmp_path / "a.jsonl"
    fin, _, _ = _archived(path)
    line = next(x for x in map(json.loads, path.read_text().splitlines()) if x["table"] == fin)
    started = next(i for i, e in enumerate(line["events"]) if '"MatchStarted"' in e)
    env = json.loads(line["events"][started])
    env["data"]["seed"] = env["data"]["seed"] + "x"
    line["events"][started] = json.dumps(env)
    # Appended: the last line of a table wins.
    with path.open("a") as f:
        f.write(json.dumps(line) + "\n")
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("CINQ_LOG_LEVEL", "WARNING")
    assert main(["verify", fin, "--archive", str(path)]) == 1
    assert "FAILED: commitment" in capsys.readouterr().out


async def test_retention_archives_old_finished_tables_once_across_workers(any_redis, tmp_path):
    h = Harness(any_redis)
    fin = await _finished(h, 1)
    await h.send(ANA, "/new cinquillo", room=GROUP)  # a lobby: never retained
    s = h.settings.model_copy(update={"retain_finished_days": 1.0, "archive_dir": str(tmp_path),
                                      "retain_interval_s": 0.05})
    assert await retention.retain_once(h.redis, h.keys, s, h.clock.now + 3600) == 0  # not old enough
    off = s.model_copy(update={"retain_finished_days": 0})
    assert await retention.retain_once(h.redis, h.keys, off, h.clock.now + 10 * DAY) == 0
    assert await h.redis.exists(h.keys.events(fin)) == 1
    # Two workers' loops at once: the lock lets one run per interval, so the table is archived once.
    stop = asyncio.Event()
    later = lambda: h.clock.now + 2 * DAY  # noqa: E731
    loops = [asyncio.create_task(retention.retain_loop(h.redis, h.keys, s, stop, later)) for _ in range(2)]
    for _ in range(200):
        if not await h.redis.exists(h.keys.events(fin)):
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.2)  # a few more intervals: nothing more to archive
    stop.set()
    await asyncio.gather(*loops)
    path = retention.archive_path(s, later())
    assert [json.loads(x)["table"] for x in Path(path).read_text().splitlines()] == [fin]
    assert await h.redis.exists(h.keys.events(fin)) == 0
    assert await h.gateway.table_of(GROUP) is not None
    # Off: the loop returns at once.
    await asyncio.wait_for(retention.retain_loop(h.redis, h.keys, off, asyncio.Event()), 5)


async def test_trim_output_names_the_tables(fake_redis, tmp_path):
    h = Harness(fake_redis)
    fin = await _finished(h, 1)
    out = io.StringIO()
    assert await operator.cmd_trim(h.redis, h.keys, 0, str(tmp_path / "a.jsonl"), out) == 0
    assert f"trimmed {fin}" in out.getvalue() and "1 tables archived" in out.getvalue()
