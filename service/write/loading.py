"""The tables a worker decides on: its cache of them, and what it reads before deciding.

The cache holds each table as last appended, by version: a shortcut, never the truth (a conflict at
the append drops the table, which is loaded again).  A batch's tables come from the cache, else from
the store (the latest snapshot and the events after it, all in one round trip); the events of the
tables a ``/replay`` shows are read here too, and whether their deal may be shown, so that deciding
does no IO.
"""

from __future__ import annotations

from collections import OrderedDict

from service.domain.events import Stored
from service.domain.tables.state import CANCELLED, FINISHED, Table
from service.store.event_store import EventStore
from service.store.repository import from_loaded, history
from service.tournaments.embargoes import Embargoes
from service.write.planning import TableBatch

CACHE_SIZE = 20_000


class Loader:
    """Loads a batch's tables (see the module docstring)."""

    def __init__(self, store: EventStore, embargoes: Embargoes, size: int = CACHE_SIZE) -> None:
        self.store, self.embargoes, self.size = store, embargoes, size
        self.cache: OrderedDict[str, Table] = OrderedDict()

    async def load(self, batches: list[TableBatch]) -> None:
        """Each batch's table as it is: from the cache, else from the store (one round trip)."""
        missing = []
        for b in batches:
            t = self.cache.get(b.table)
            if t is not None:
                b.before = t
            else:
                missing.append(b)
        if missing:
            loaded = await self.store.load_many([(b.table, None) for b in missing])
            for b, ld in zip(missing, loaded, strict=True):
                b.before = from_loaded(b.table, ld)

    async def histories(self, batches: list[TableBatch]) -> dict[str, list[Stored]]:
        """The events of the tables a ``/replay`` of this batch shows, and whether their deal may be
        shown (``TableBatch.lifted``)."""
        wanted = [b for b in batches if b.before is not None
                  and any(e.cmd is not None and e.cmd.name == "replay" for e in b.entries)]
        for b in wanted:
            assert b.before is not None
            b.lifted = await self.embargoes.lifted(b.before)
        return {b.table: await history(self.store, b.table) for b in wanted}

    def keep(self, table: str, t: Table) -> None:
        """A table as just appended.  One that is over is dropped instead: few commands will come
        (a /replay loads it again), so the worker's memory follows the live tables, not every table
        it ever served."""
        if t.status in (FINISHED, CANCELLED):
            self.cache.pop(table, None)
            return
        self.cache[table] = t
        self.cache.move_to_end(table)
        while len(self.cache) > self.size:
            self.cache.popitem(last=False)

    def drop(self, table: str) -> None:
        """Forget a table (its append conflicted: another writer went first, or the copy was stale)."""
        self.cache.pop(table, None)
