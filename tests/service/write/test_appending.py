"""The appends of a batch go out in chunks while the rest is decided (service.write.appending).

On fakeredis and a real Redis: a batch of many tables, sent in many pipelines, has every table's
command applied once, its messages in the outbox, and every result given to its own table.
"""

from __future__ import annotations

import pytest

from service.domain.events import TableCreated, decode
from service.domain.identities import Player, Room
from service.domain.inputs import Input
from tests.service.support import Harness


@pytest.fixture
def h(any_redis):
    return Harness(any_redis)


async def test_a_batch_of_many_tables_in_many_pipelines_applies_each_once_in_its_own_table(h):
    h.worker.appender.chunk = 3
    people = [Player(platform="test", user=f"p{n}", name=f"P{n}") for n in range(11)]
    for n, p in enumerate(people):  # all written before the worker reads: one batch of 11 tables
        await h.gateway.submit(Input(p, Room(platform="test", chat=f"dm{n}", kind="private")),
                               "/play cinquillo 2")
    await h.settle()
    tables = set()
    for n, p in enumerate(people):
        table = await h.gateway.table_of(Room(platform="test", chat=f"dm{n}", kind="private"))
        assert table is not None
        tables.add(table)
        created = [s for s in map(decode, await h.events(table)) if isinstance(s.event, TableCreated)]
        assert len(created) == 1
        hands = [m for m in h.messages if m.kind == "hand" and m.to.player is not None
                 and m.to.player.same(p)]
        assert hands and all(m.table == table for m in hands)  # each person's hand is of their table
    assert len(tables) == 11
