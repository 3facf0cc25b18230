"""``cinq stats``: how many bytes of Redis a table costs, live and finished, so that memory can be planned.

Each key's size is Redis's own ``MEMORY USAGE <key> SAMPLES 0`` (every element counted; the store
without it, the embedded fakeredis, is measured by the length of ``DUMP`` instead, and the report
says so).  A table's own keys (``events``, ``snap``, ``done``, its deadline) are measured on a sample
of the live tables (lobby or running) and of the finished ones (finished or cancelled); the keys that
tables share (outboxes, command streams, the gateway's and the webhook's 24-hour ``seen:``/``in:``
keys, platform state, player indexes) are measured in full and reported apart, because their
retention is their own: the per-table share printed beside them is their total divided by the tables.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, TextIO

from redis.exceptions import ResponseError

from service.domain.tables.state import CANCELLED, FINISHED
from service.store.decoding import as_text
from service.store.keys import Keys
from service.store.scan import list_tables

# Shared keys grouped by what they are (the prefix after CINQ_KEY_PREFIX), in the report's order.
SHARED = {"outbox": ("out:",), "command streams": ("cmd:", "dead:"), "seen:/in: (24 h)": ("seen:", "in:"),
          "platform state": ("pf:",), "players": ("player:",), "rooms": ("room:",),
          "deadlines": ("due:",), "delivery, workers, doorbell, rate": ("dlv:", "wrk:", "bell:", "rl:"),
          # the people's ratings (kept), the matches queued to rate, and a member per table rated
          "ratings": ("rt:",)}
# A deadline is one member of a bucket's sorted set: ~ the table id plus the score and skiplist node.
DUE_MEMBER_BYTES = 64



class Sizer:
    """Bytes of keys: MEMORY USAGE, or the DUMP length on a store without it (pipelined)."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis
        self.exact: bool | None = None

    async def many(self, names: list[str]) -> list[int]:
        """The bytes of each key (0 for a key that does not exist)."""
        if not names:
            return []
        if self.exact is not False:
            pipe = self.redis.pipeline(transaction=False)
            for k in names:
                pipe.memory_usage(k, samples=0)
            try:
                got = await pipe.execute()
                self.exact = True
                return [int(n or 0) for n in got]
            except ResponseError:
                self.exact = False
        pipe = self.redis.pipeline(transaction=False)
        for k in names:
            pipe.dump(k)
        return [len(d) if d else 0 for d in await pipe.execute()]

    async def __call__(self, key: str) -> int:
        """The bytes of one key."""
        return (await self.many([key]))[0]


@dataclass
class Report:
    """What ``cinq stats`` prints."""

    live: int = 0
    finished: int = 0
    live_bytes: list[int] = field(default_factory=list)
    finished_bytes: list[int] = field(default_factory=list)
    # the samples' bytes summed by key family (FAMILIES), live and finished
    live_families: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FAMILIES, 0))
    finished_families: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FAMILIES, 0))
    shared: dict[str, tuple[int, int]] = field(default_factory=dict)  # group -> (keys, bytes)
    players: int = 0
    used_memory: int | None = None
    exact: bool = True

    @staticmethod
    def mean(xs: list[int]) -> float:
        """The mean of a sample (0 when empty)."""
        return sum(xs) / len(xs) if xs else 0.0


#: a table's own keys, as cinq stats splits them
FAMILIES: tuple[str, ...] = ("events", "snap", "done", "deadline")


async def table_families(redis: Any, keys: Keys, table: str, size: Sizer | None = None) -> dict[str, int]:
    """The bytes of each of a table's own keys (:data:`FAMILIES`; the deadline: its entry, if any)."""
    size = size or Sizer(redis)
    own = await size.many([keys.events(table), keys.snap(table), keys.done(table)])
    due = await redis.zscore(keys.due_for(table), table)
    return dict(zip(FAMILIES, [*own, DUE_MEMBER_BYTES if due is not None else 0], strict=True))


async def table_bytes(redis: Any, keys: Keys, table: str, size: Sizer | None = None) -> int:
    """The bytes of a table's own keys: events, snapshot, done set, and its deadline entry if any."""
    return sum((await table_families(redis, keys, table, size)).values())


async def measure(redis: Any, keys: Keys, sample: int = 200, seed: int = 0) -> Report:
    """Measure a deployment (see the module docstring); ``sample`` tables of each kind at most."""
    size = Sizer(redis)
    rep = Report()
    live: list[str] = []
    done: list[str] = []
    for info in await list_tables(redis, keys):
        (done if info.phase in (FINISHED, CANCELLED) else live).append(info.id)
    rep.live, rep.finished = len(live), len(done)
    rng = random.Random(seed)
    for ids, out, families in ((live, rep.live_bytes, rep.live_families),
                               (done, rep.finished_bytes, rep.finished_families)):
        for t in rng.sample(ids, min(sample, len(ids))):
            split = await table_families(redis, keys, t, size)
            out.append(sum(split.values()))
            for family, b in split.items():
                families[family] += b
    totals = {group: [0, 0] for group in SHARED}
    players: set[str] = set()
    chunk: list[tuple[str, str]] = []

    async def count(chunk: list[tuple[str, str]]) -> None:
        for (group, _), b in zip(chunk, await size.many([k for _, k in chunk]), strict=True):
            totals[group][0] += 1
            totals[group][1] += b

    async for raw in redis.scan_iter(match=f"{keys.prefix}*", count=1000):
        key = as_text(raw)[len(keys.prefix):]
        group = next((g for g, ps in SHARED.items() if key.startswith(ps)), None)
        if group is None:
            continue
        if group == "players":
            players.add(key.split("}", 1)[0])
        chunk.append((group, as_text(raw)))
        if len(chunk) >= 500:
            await count(chunk)
            chunk = []
    await count(chunk)
    rep.shared = {g: (n, b) for g, (n, b) in totals.items()}
    rep.players = len(players)
    rep.exact = size.exact is not False
    try:
        rep.used_memory = int((await redis.info("memory"))["used_memory"])
    except (ResponseError, KeyError):
        rep.used_memory = None
    return rep


def _kb(n: float) -> str:
    return f"{n / 1024:,.1f} KB"


def print_report(rep: Report, out: TextIO) -> None:
    """The report, for an operator: per-table bytes first, then the shared keys."""
    how = "MEMORY USAGE" if rep.exact else "DUMP length (this store has no MEMORY USAGE: an estimate)"
    print(f"bytes of Redis per table ({how}; own keys: events, snap, done, deadline)", file=out)
    print(f"  live tables:     {rep.live:>7}   {_kb(rep.mean(rep.live_bytes))} each "
          f"(sample of {len(rep.live_bytes)})", file=out)
    print(f"  finished tables: {rep.finished:>7}   {_kb(rep.mean(rep.finished_bytes))} each "
          f"(sample of {len(rep.finished_bytes)}; `cinq trim` archives and removes them)", file=out)
    for kind, sample, families in (("live", rep.live_bytes, rep.live_families),
                                   ("finished", rep.finished_bytes, rep.finished_families)):
        n = max(len(sample), 1)
        split = ", ".join(f"{f} {_kb(b / n)}" for f, b in families.items())
        print(f"    a {kind} table's keys: {split}", file=out)
    tables = max(rep.live + rep.finished, 1)
    print("shared keys (their own retention)          keys        bytes   per table", file=out)
    for group, (n, b) in rep.shared.items():
        print(f"  {group:<36} {n:>8} {_kb(b):>12} {_kb(b / tables):>11}", file=out)
    pl = rep.shared.get("players", (0, 0))[1]
    print(f"  players: {rep.players}, {_kb(pl / max(rep.players, 1))} each (stats, prefs, tables; kept)",
          file=out)
    if rep.used_memory is not None:
        print(f"used_memory: {_kb(rep.used_memory)}", file=out)


async def cmd_stats(redis: Any, keys: Keys, out: TextIO, sample: int = 200) -> int:
    """``cinq stats``: measure and print."""
    print_report(await measure(redis, keys, sample), out)
    return 0
