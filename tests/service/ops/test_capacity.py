"""``cinq stats`` (``service.ops.capacity``): bytes of Redis per live and per finished table, measured with
MEMORY USAGE on a real Redis (DUMP lengths, said so, on fakeredis), and the shared keys apart."""

from __future__ import annotations

import io
import re

import pytest

from service.domain.identities import Room
from service.ops import capacity
from service.ops.cli import main
from tests.service.support import ANA, BEA, GROUP, Harness, play_with_bots


async def _two_of_each(h: Harness) -> None:
    await play_with_bots(h, ANA, "cinquillo", 2, GROUP)  # running, Ana's turn
    await h.send(ANA, "/new 535", room=Room(platform="tg", chat="-2", kind="group"))  # a lobby
    for chat in ("-3", "-4"):
        room = Room(platform="tg", chat=chat, kind="group")
        await play_with_bots(h, BEA, "cinquillo", 3, room)
        await h.send(BEA, "/leave", room=room)


async def test_stats_measures_live_and_finished_tables_with_memory_usage(real_redis):
    h = Harness(real_redis)
    await _two_of_each(h)
    rep = await capacity.measure(h.redis, h.keys)
    assert (rep.live, rep.finished, rep.exact) == (2, 2, True)
    assert len(rep.live_bytes) == 2 and len(rep.finished_bytes) == 2
    # A table's figure is the sum of its own keys' MEMORY USAGE (plus its deadline entry, if any).
    table = await h.table_of(Room(platform="tg", chat="-3", kind="group"))
    own = [await h.redis.memory_usage(k, samples=0) for k in
           (h.keys.events(table), h.keys.snap(table), h.keys.done(table))]
    assert await capacity.table_bytes(h.redis, h.keys, table) == sum(x or 0 for x in own)
    assert sum(x or 0 for x in own) in rep.finished_bytes
    outbox_keys, outbox_bytes = rep.shared["outbox"]
    assert outbox_keys >= 1 and outbox_bytes > 0
    assert rep.shared["command streams"][0] == h.keys.shards
    # the ratings' keys are a family of their own (issue 33: what a trimmed table leaves is there)
    assert rep.shared["ratings"][0] >= 1 and rep.shared["ratings"][1] > 0
    assert rep.players == 2 and rep.used_memory and rep.used_memory > outbox_bytes
    out = io.StringIO()
    capacity.print_report(rep, out)
    text = out.getvalue()
    assert re.search(r"live tables:\s+2\s+[\d.,]+ KB each", text)
    assert re.search(r"finished tables:\s+2\s+[\d.,]+ KB each", text)
    # by key family: a finished table keeps its events and (for an hour) its command ids, no snapshot
    # (issue 33); a running one its events and ids (these few events had no snapshot yet)
    assert sum(rep.finished_families.values()) == sum(rep.finished_bytes)
    assert rep.finished_families["snap"] == 0 < rep.finished_families["events"]
    assert rep.finished_families["done"] > 0 and rep.live_families["done"] > 0
    assert re.search(r"a finished table's keys: events [\d.,]+ KB, snap 0\.0 KB, done [\d.,]+ KB", text)
    assert "MEMORY USAGE" in text and "outbox" in text and "used_memory" in text


async def test_stats_samples_and_estimates_on_fakeredis(fake_redis):
    h = Harness(fake_redis)
    await _two_of_each(h)
    rep = await capacity.measure(h.redis, h.keys, sample=1)
    assert (rep.live, rep.finished) == (2, 2)
    assert len(rep.live_bytes) == 1 and len(rep.finished_bytes) == 1 and rep.finished_bytes[0] > 0
    assert rep.exact is False
    out = io.StringIO()
    assert await capacity.cmd_stats(h.redis, h.keys, out, sample=1) == 0
    assert "DUMP length" in out.getvalue() and "sample of 1" in out.getvalue()


async def test_stats_of_an_empty_store(fake_redis):
    h = Harness(fake_redis)
    rep = await capacity.measure(h.redis, h.keys)
    assert (rep.live, rep.finished, rep.live_bytes) == (0, 0, [])
    out = io.StringIO()
    capacity.print_report(rep, out)
    assert "0.0 KB each" in out.getvalue()


def test_cinq_stats_refuses_a_sample_below_one(monkeypatch, capsys):
    monkeypatch.delenv("REDIS_URL", raising=False)
    with pytest.warns(UserWarning, match="REDIS_URL"):
        assert main(["stats", "--sample", "0"]) == 1
    assert "--sample must be 1 or more" in capsys.readouterr().err
