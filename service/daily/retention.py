"""The daily deal's days leave Redis as finished tables do: archived to a file, then deleted.

Retention (:mod:`service.ops.retention`, every ``CINQ_RETAIN_INTERVAL_S`` in the worker role) calls
:func:`archive_days`: a day whose deal was revealed more than ``CINQ_RETAIN_FINISHED_DAYS`` ago has
its board and attempts written to ``cinq-daily-YYYY-MM-DD.jsonl`` under ``CINQ_ARCHIVE_DIR`` (one
JSON line a day and game: ``daily``, ``day``, ``board`` as ``[member, score]`` best first,
``attempts`` member → the stored attempt; appended, flushed and fsynced), and only then are its keys
deleted.  An interrupted run archives the day again next time (the last line of a day wins).  Each
person's own days (``dly:{<p>:<user>}:hist``, their streaks) are kept.
"""

from __future__ import annotations

import os
import time
from typing import Any

import orjson

from service.domain import daily
from service.store.decoding import as_text
from service.store.keys import Keys


def archive_file(archive_dir: str, now: float) -> str:
    """The daily archive file of the UTC day ``now`` falls in."""
    return os.path.join(archive_dir, time.strftime("cinq-daily-%Y-%m-%d.jsonl", time.gmtime(now)))


def _day_of_key(keys: Keys, key: str) -> tuple[str, str, int] | None:
    tag = key[len(keys.prefix):].removeprefix("dly:{").partition("}")[0]
    game, _, date = tag.partition(":")
    day = daily.parse_day(date)
    return None if game not in daily.GAMES or day is None else (game, date, day)


async def archive_days(redis: Any, keys: Keys, archive_dir: str, retain_days: float, now: float,
                       grace_s: float = daily.GRACE_S) -> list[str]:
    """Archive and delete the days revealed more than ``retain_days`` before ``now``; their
    ``<game>:<date>``, in the order archived."""
    cutoff = now - retain_days * daily.DAY_S
    lines: list[bytes] = []
    done: list[tuple[str, str]] = []
    async for raw in redis.scan_iter(match=keys.daily_boards(), count=1000):
        found = _day_of_key(keys, as_text(raw))
        if found is None:
            continue
        game, date, day = found
        if daily.day_end(day) + grace_s > cutoff:
            continue
        board = await redis.zrange(keys.daily_board(game, date), 0, -1, withscores=True)
        attempts = await redis.hgetall(keys.daily_attempts(game, date))
        lines.append(orjson.dumps({
            "daily": game, "day": date, "archived_at": now,
            "board": [[as_text(m), s] for m, s in board],
            "attempts": {as_text(m): orjson.loads(a) for m, a in attempts.items()}}) + b"\n")
        done.append((game, date))
    if not lines:
        return []
    path = archive_file(archive_dir, now)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "ab") as f:
        f.writelines(lines)
        f.flush()
        os.fsync(f.fileno())
    for game, date in done:  # only once the file holds them
        await redis.delete(keys.daily_board(game, date), keys.daily_attempts(game, date),
                           keys.daily_commit(game, date))
    return [f"{g}:{d}" for g, d in done]
