"""Operator commands (``service.ops.operator``): tables, inspect, dead-letters, trim — on fakeredis and on a
real Redis, refusals included; and the ``cinq`` wiring (exit codes, messages)."""

from __future__ import annotations

import asyncio
import io
import json
import re

import pytest
import redis.asyncio as aioredis

import engine
from service.domain.commands import TableCommand
from service.domain.identities import Room
from service.domain.tables.state import CANCELLED, FINISHED, LOBBY, RUNNING
from service.ops import operator, trim
from service.ops.cli import main
from service.store import scan
from service.store.keys import Keys
from service.store.repository import load
from tests.service.support import ANA, BEA, CAL, GROUP, SECRET, Harness, card_tokens, play_with_bots

FINISHED_ROOM = Room(platform="tg", chat="-200", kind="group")
LOBBY_ROOM = Room(platform="tg", chat="-300", kind="group")
CANCEL_ROOM = Room(platform="tg", chat="-400", kind="group")


async def _tables(h: Harness) -> dict[str, str]:
    """A running match (Ana against an AI player, her turn), a finished one, a lobby, a cancelled one."""
    await play_with_bots(h, ANA, "cinquillo", 2, GROUP)
    await play_with_bots(h, BEA, "cinquillo", 3, FINISHED_ROOM)
    await h.send(BEA, "/leave", room=FINISHED_ROOM)  # AI players play to the end
    await h.send(CAL, "/new 535", room=LOBBY_ROOM)
    await h.send(CAL, "/new cinquillo", room=CANCEL_ROOM)
    await h.send(CAL, "/cancel", room=CANCEL_ROOM)
    ids = {"running": await h.table_of(GROUP), "finished": await h.table_of(FINISHED_ROOM),
           "lobby": await h.table_of(LOBBY_ROOM)}
    # The cancelled table is found through its events (the room may no longer point at it).
    for info in await scan.list_tables(h.redis, h.keys):
        if info.phase == CANCELLED:
            ids["cancelled"] = info.id
    return ids


async def test_tables_lists_every_table_with_its_phase(any_redis):
    h = Harness(any_redis)
    ids = await _tables(h)
    rows = {r.id: r for r in await scan.list_tables(h.redis, h.keys)}
    assert {rows[ids[p]].phase for p in ids} == {RUNNING, FINISHED, LOBBY, CANCELLED}
    assert rows[ids["running"]].phase == RUNNING and "Ana" in rows[ids["running"]].players
    assert rows[ids["lobby"]].game == "535"
    assert rows[ids["finished"]].version == await h.redis.xlen(h.keys.events(ids["finished"]))
    out = io.StringIO()
    assert await operator.cmd_tables(h.redis, h.keys, out) == 0
    text = out.getvalue()
    assert all(t in text for t in ids.values()) and "4 tables" in text


async def test_tables_honours_the_key_prefix(any_redis):
    h = Harness(any_redis, key_prefix="other:")
    await h.send(ANA, "/new cinquillo")
    assert len(await scan.list_tables(h.redis, h.keys)) == 1
    assert await scan.list_tables(h.redis, Keys(16, 2, "")) == []


async def test_inspect_is_the_spectator_view_unless_reveal(any_redis):
    h = Harness(any_redis)
    ids = await _tables(h)
    t = await load(h.worker.store, ids["running"])
    hands = set().union(*(engine.view(t.engine, i)["hand"] for i in range(len(t.seats))))
    assert hands and t.seed
    out = io.StringIO()
    assert await operator.cmd_inspect(h.redis, h.keys, ids["running"], out) == 0
    text = out.getvalue()
    assert len([line for line in text.splitlines() if line.lstrip()[:1].isdigit()]) == t.version
    assert not card_tokens(text) & hands, "a hidden card was printed"
    assert t.seed not in text
    out = io.StringIO()
    assert await operator.cmd_inspect(h.redis, h.keys, ids["running"], out, reveal=True) == 0
    assert card_tokens(out.getvalue()) >= hands and t.seed in out.getvalue()
    # A finished match hides nothing: its seed was revealed to everyone at the end.
    out = io.StringIO()
    assert await operator.cmd_inspect(h.redis, h.keys, ids["finished"], out) == 0
    assert "result:" in out.getvalue()


async def test_inspect_of_an_unknown_table_is_refused(any_redis):
    h = Harness(any_redis)
    with pytest.raises(operator.OperatorError, match="no such table: nosuch"):
        await operator.cmd_inspect(h.redis, h.keys, "nosuch", io.StringIO())


async def test_dead_letters_are_listed_and_replayed(any_redis):
    h = Harness(any_redis)
    await h.send(ANA, "/new cinquillo")
    table = await h.table_of()
    join = TableCommand(id="lost-join", table=table, name="join", actor=BEA, room=GROUP, locale="en")
    shard = h.keys.shard(table)
    letter = {"c": join.dumps(), "entry": "1-0", "error": "RuntimeError: boom", "worker": "w0"}
    dead_id = (await h.redis.xadd(h.keys.dead(shard), letter)).decode()
    await h.redis.xadd(h.keys.dead(shard), {"c": "not json", "entry": "2-0", "error": "malformed command"})
    out = io.StringIO()
    assert await operator.cmd_dead_letters(h.redis, h.keys, out) == 0
    assert "RuntimeError: boom" in out.getvalue() and "join" in out.getvalue()
    assert "2 dead letters" in out.getvalue()
    with pytest.raises(operator.OperatorError, match="no such dead letter"):
        await operator.cmd_dead_letters(h.redis, h.keys, io.StringIO(), replay=["9-9"])
    assert await operator.cmd_dead_letters(h.redis, h.keys, io.StringIO(), replay=[dead_id]) == 0
    assert [d.error for d in await operator.dead_letters(h.redis, h.keys)] == ["malformed command"]
    await h.settle()
    t = await load(h.worker.store, table)
    assert [s.player.user for s in t.seats if s.player] == [ANA.user, BEA.user]
    assert await operator.cmd_dead_letters(h.redis, h.keys, io.StringIO(), replay_all=True) == 0
    assert await operator.dead_letters(h.redis, h.keys) == []


async def test_trim_archives_then_deletes_only_finished_and_cancelled(any_redis, tmp_path):
    h = Harness(any_redis)
    ids = await _tables(h)
    archive = tmp_path / "archive.jsonl"
    fin = ids["finished"]
    finished_events = await h.worker.store.events(fin)
    assert await h.redis.exists(h.keys.done(fin))
    # Not old enough: nothing is touched.
    assert await trim.trim(h.redis, h.keys, 1, str(archive), now=h.clock.now + 3600) == []
    assert not archive.exists()
    trimmed = await trim.trim(h.redis, h.keys, 1, str(archive), now=h.clock.now + 2 * 86_400)
    assert sorted(trimmed) == sorted([fin, ids["cancelled"]])
    lines = [json.loads(x) for x in archive.read_text().splitlines()]
    assert {x["table"] for x in lines} == set(trimmed)
    assert next(x for x in lines if x["table"] == fin)["events"] == finished_events
    for t in trimmed:
        assert not await h.redis.exists(h.keys.events(t), h.keys.snap(t), h.keys.done(t))
    # Indexes that pointed at a trimmed table are gone; the others stay.
    assert await h.gateway.table_of(FINISHED_ROOM) is None
    assert await h.gateway.table_of(GROUP) == ids["running"]
    assert await h.gateway.table_of(LOBBY_ROOM) == ids["lobby"]
    for p in (ANA, BEA, CAL):
        members = {m.decode() for m in await h.redis.smembers(h.keys.player_tables(p.platform, p.user))}
        assert not members & set(trimmed)
    # The running match and the lobby are never trimmed, however old.
    rows = {r.id: r.phase for r in await scan.list_tables(h.redis, h.keys)}
    assert rows == {ids["running"]: RUNNING, ids["lobby"]: LOBBY}
    assert await trim.trim(h.redis, h.keys, 0, str(archive), now=h.clock.now + 10**9) == []
    assert len(archive.read_text().splitlines()) == 2


# -- the `cinq` wiring ------------------------------------------------------------------------------


def test_cli_on_the_real_redis(real_redis_url, monkeypatch, capsys, tmp_path):
    async def populate() -> dict[str, str]:
        r = aioredis.from_url(real_redis_url)
        await r.flushdb()
        try:
            return await _tables(Harness(r))
        finally:
            await r.aclose()

    ids = asyncio.run(populate())
    for k, v in {"REDIS_URL": real_redis_url, "CINQ_BUCKETS": "16", "CINQ_COMMAND_SHARDS": "2",
                 "CINQ_LOG_LEVEL": "WARNING", "CINQ_TOKEN_SECRETS": f'["{SECRET.decode()}"]'}.items():
        monkeypatch.setenv(k, v)
    try:
        assert main(["tables"]) == 0
        assert ids["running"] in capsys.readouterr().out
        assert main(["inspect", ids["running"]]) == 0
        assert "--reveal shows them" in capsys.readouterr().out
        assert main(["inspect", "nosuchtable"]) == 1
        assert "no such table: nosuchtable" in capsys.readouterr().err
        assert main(["dead-letters"]) == 0
        assert "0 dead letters" in capsys.readouterr().out
        assert main(["dead-letters", "--replay", "1-1"]) == 1
        assert "no such dead letter" in capsys.readouterr().err
        assert main(["replay", ids["finished"], "--lang", "en"]) == 0
        assert "seed" in capsys.readouterr().out.lower()
        archive = tmp_path / "a.jsonl"
        assert main(["trim", "--days", "1", "--archive", str(archive)]) == 0
        assert "2 tables archived" in capsys.readouterr().out
        # The ratings rebuilt from the archive count its finished match (issue 15).
        assert main(["ratings", "rebuild", "--archive", str(archive)]) == 0
        assert re.search(r"^rated 1 matches, \d+ ratings", capsys.readouterr().out)
        assert main(["ratings", "rebuild", "--archive", str(tmp_path / "none.jsonl")]) == 1
        assert "cannot read the archive" in capsys.readouterr().err
        assert main(["inspect", ids["running"]]) == 0  # still there
        assert main(["replay", ids["running"]]) == 1  # G-1: a running match's seed stays hidden
        assert "not a finished match" in capsys.readouterr().err
        assert main(["stats"]) == 0
        assert re.search(r"live tables:\s+2 ", capsys.readouterr().out)
    finally:
        asyncio.run(_flush(real_redis_url))


async def _flush(url: str) -> None:
    r = aioredis.from_url(url)
    await r.flushdb()
    await r.aclose()


def test_cli_refuses_an_unknown_table_on_the_embedded_store(monkeypatch, capsys):
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("CINQ_LOG_LEVEL", "WARNING")
    with pytest.warns(UserWarning, match="REDIS_URL"):
        assert main(["inspect", "nosuchtable"]) == 1
    assert "no such table" in capsys.readouterr().err
