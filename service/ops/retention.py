"""Automatic retention of finished tables: what ``cinq trim`` does, every so often, in the worker role.

With ``CINQ_RETAIN_FINISHED_DAYS`` = N (default 30; 0 turns it off) the tables finished or cancelled
more than N days ago are archived to ``CINQ_ARCHIVE_DIR`` (one file per UTC day,
``cinq-archive-YYYY-MM-DD.jsonl``, the format of :mod:`service.store.archive`) and every key of theirs is
removed.  :func:`retain_loop` runs :func:`retain_once` every ``CINQ_RETAIN_INTERVAL_S``; several
workers share one run per interval through a lock key ``wrk:{workers}:retain`` (a single-holder
lease of one interval, :func:`service.store.leases.hold`), so a table is archived by one of them.
A run costs a SCAN of the tables, like ``cinq tables``, and one of the daily deal's boards: a day
revealed N days ago is archived too (``cinq-daily-YYYY-MM-DD.jsonl``, :mod:`service.daily.retention`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import time
from collections.abc import Callable
from typing import Any

from redis.exceptions import RedisError

from service.daily.retention import archive_days
from service.foundation import logs
from service.foundation.settings import Settings
from service.ops.trim import trim
from service.store import leases
from service.store.keys import Keys


def archive_path(settings: Settings, now: float) -> str:
    """The archive file of the UTC day ``now`` falls in, under ``settings.archive_dir``."""
    return os.path.join(settings.archive_dir, time.strftime("cinq-archive-%Y-%m-%d.jsonl", time.gmtime(now)))


async def retain_once(redis: Any, keys: Keys, settings: Settings, now: float) -> int:
    """Archive and remove the tables finished more than ``retain_finished_days`` before ``now``.

    Returns how many tables were removed (0 when retention is off).
    """
    days = settings.retain_finished_days
    if not days:
        return 0
    tables = await trim(redis, keys, days, archive_path(settings, now), now=now)
    # the deal of the day's boards go the same way, to a file of their own (service.daily.retention)
    await archive_days(redis, keys, settings.archive_dir, days, now, settings.daily_grace_s)
    return len(tables)


def lock_key(keys: Keys) -> str:
    """The key that lets one worker of all run retention in an interval."""
    return keys.retain_lock()


async def retain_loop(redis: Any, keys: Keys, settings: Settings, stop: asyncio.Event,
                      clock: Callable[[], float] = time.time, owner: str | None = None) -> None:
    """Run :func:`retain_once` every ``retain_interval_s`` until ``stop`` is set (one worker per
    interval: the others find the lease held; ``owner`` names this loop in it, random by default).
    A Redis or file error is logged and retried next time."""
    log = logs.get("retention")
    owner = owner or f"retain-{secrets.token_hex(4)}"
    if not settings.retain_finished_days:
        return
    while not stop.is_set():
        try:
            ttl_ms = int(settings.retain_interval_s * 1000)
            if await leases.hold(redis, lock_key(keys), owner, ttl_ms):
                n = await retain_once(redis, keys, settings, clock())
                if n:
                    log.info("retained", tables=n, archive=archive_path(settings, clock()))
        except (RedisError, OSError) as e:
            log.warning("retention_failed", error=repr(e)[:200])
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), settings.retain_interval_s)
