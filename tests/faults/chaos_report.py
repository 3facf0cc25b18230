"""What a chaos run found, read back from Redis and from the platform: the report and its accounting.

- *acknowledged*: requests answered 2xx; *lost*: acknowledged, yet their command id is in no event
  and no outbox entry (never acted on; answered "already received" counts as never acted on);
- *twice*: a command id whose events form two runs, or with two events of a kind one decision makes
  once, or a table message (version > 0) written twice to the outbox;
- *callbacks missing*: outbox messages the platform never received;
- tables *unfinished* (their match never ended) and tables whose replay fails
  (``service.domain.tables.replay.verify``).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from service.domain.events import decode
from service.domain.tables.replay import verify
from service.store.event_store import EventStore
from service.store.keys import Keys
from service.store.repository import history

# One decision makes at most one of each of these per command.
_ONCE = frozenset({"TableCreated", "PlayerJoined", "MatchStarted", "MovePlayed", "BotsAdded", "PlayerLeft",
                   "MatchFinished", "TableCancelled"})


@dataclass
class ChaosReport:
    """The outcome of :func:`tests.faults.chaos.run` (see the module docstring)."""

    seed: int
    tables: int
    requests: int = 0
    attempts: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    acknowledged: int = 0
    unacknowledged: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    answered_duplicate: list[str] = field(default_factory=list)
    twice: list[str] = field(default_factory=list)
    callbacks_expected: int = 0
    callbacks_missing: list[str] = field(default_factory=list)
    callbacks_duplicated: int = 0
    tables_created: int = 0
    tables_unfinished: list[str] = field(default_factory=list)
    replay_failed: list[str] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)
    latency_s: dict[str, float] = field(default_factory=dict)
    latency_across_restart_s: dict[str, float] = field(default_factory=dict)
    latency_from_accept_s: dict[str, float] = field(default_factory=dict)
    latency_from_accept_across_restart_s: dict[str, float] = field(default_factory=dict)
    slowest: list[str] = field(default_factory=list)
    quiesced: bool = False
    elapsed_s: float = 0.0

    def summary(self) -> str:
        """A few lines for a test's failure message or a benchmark's output."""
        return (f"seed {self.seed}: {self.tables} tables, {self.requests} requests "
                f"({self.attempts} attempts, "
                f"statuses {self.statuses}), {self.acknowledged} acknowledged, {len(self.lost)} lost "
                f"({len(self.answered_duplicate)} answered as duplicates), {len(self.twice)} twice, "
                f"{len(self.unacknowledged)} never acknowledged; "
                f"callbacks {self.callbacks_expected} expected, "
                f"{len(self.callbacks_missing)} missing, {self.callbacks_duplicated} redelivered; tables "
                f"{self.tables_created} created, {len(self.tables_unfinished)} unfinished, "
                f"{len(self.replay_failed)} failing replay; quiesced={self.quiesced}; "
                f"latency from the first attempt {self.latency_s}, across the restart "
                f"{self.latency_across_restart_s}; from the accepted attempt {self.latency_from_accept_s}, "
                f"across the restart {self.latency_from_accept_across_restart_s}; "
                f"{self.elapsed_s:.0f} s\nfaults: {'; '.join(self.faults)}\nlost: {self.lost[:10]}\n"
                f"twice: {self.twice[:10]}\nmissing callbacks: {self.callbacks_missing[:10]}\n"
                f"unfinished: {self.tables_unfinished[:10]}\nslowest: {'; '.join(self.slowest)}")


def percentiles(values: list[float]) -> dict[str, float]:
    """p50, p99 and max of ``values`` (empty: nothing)."""
    if not values:
        return {}
    v = sorted(values)
    return {"p50": round(v[len(v) // 2], 3), "p99": round(v[min(len(v) - 1, int(len(v) * 0.99))], 3),
            "max": round(v[-1], 3), "n": len(v)}


async def outbox(redis: Any, keys: Keys) -> list[tuple[str, dict[str, Any]]]:
    """Every outbox entry: (command id, message)."""
    out = []
    for b in range(keys.buckets):
        for _, f in await redis.xrange(keys.outbox(b)):
            out.append((f[b"c"].decode(), json.loads(f[b"m"])))
    return out


async def tables(redis: Any, keys: Keys) -> list[str]:
    """Every table with an event stream."""
    found = []
    async for k in redis.scan_iter(match=f"{keys.prefix}t:*:events", count=1000):
        found.append(k.decode().rsplit(":", 2)[-2])
    return sorted(set(found))


async def account(report: ChaosReport, redis: Any, keys: Keys, acked: dict[str, float],
                  delivered: dict[str, float]) -> None:
    """Fill the accounting of ``report`` (see the module docstring); ``acked``: command id → time of
    its first attempt, ``delivered``: message id → when the platform first received it."""
    entries = await outbox(redis, keys)
    acted: set[str] = {c for c, _ in entries}
    ids = Counter(m["id"] for _, m in entries if m.get("version", 0) > 0)
    report.twice += [f"message {i} written {n} times" for i, n in ids.items() if n > 1]
    store = EventStore(redis, keys)
    all_tables = await tables(redis, keys)
    for t in all_tables:
        stored = await history(store, t)
        runs: dict[str, list[int]] = defaultdict(list)
        kinds: dict[str, Counter[str]] = defaultdict(Counter)
        for v, st in enumerate(stored, 1):
            runs[st.cmd].append(v)
            kinds[st.cmd][type(st.event).__name__] += 1
        acted |= set(runs)
        for cid, vs in runs.items():
            many = [k for k, n in kinds[cid].items() if n > 1 and k in _ONCE]
            if vs != list(range(vs[0], vs[0] + len(vs))) or many:
                report.twice.append(f"{t}: {cid} at versions {vs} {many}")
        report.tables_created += any(type(s.event).__name__ == "TableCreated" for s in stored)
        if not any(type(s.event).__name__ in ("MatchFinished", "TableCancelled") for s in stored):
            report.tables_unfinished.append(t)
        elif any(type(s.event).__name__ == "MatchFinished" for s in stored) and not verify(stored).ok:
            report.replay_failed.append(t)
        assert [decode(e).event for e in await store.events(t)] == [s.event for s in stored]
    report.lost = sorted(c for c in acked if c not in acted)
    report.answered_duplicate = [c for c in report.lost if f"{c}:dup" in acted]
    expected = {m["id"] for _, m in entries}
    report.callbacks_expected = len(expected)
    report.callbacks_missing = sorted(expected - set(delivered))
