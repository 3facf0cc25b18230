"""Waiting in a test for something that happens in another task or process: one poll for every suite."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any


async def eventually(pred: Any, timeout: float = 10.0, what: str = "the condition",
                     every: float = 0.01) -> Any:
    """Poll ``pred`` (sync or async) every ``every`` seconds until it is truthy; returns its value.
    Fails saying ``what`` did not happen once ``timeout`` seconds have passed (a bound on a hang,
    not a claim about speed)."""
    deadline = time.monotonic() + timeout
    while True:
        got = pred()
        if asyncio.iscoroutine(got):
            got = await got
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout:g} s")
        await asyncio.sleep(every)


async def woken(changed: asyncio.Event, pred: Any, timeout: float, tick: float = 0.25) -> Any:
    """``pred()`` once it is truthy, re-checked each time ``changed`` is set (and every ``tick``
    seconds at the latest); its last value once ``timeout`` seconds have passed."""
    deadline = time.monotonic() + timeout
    while True:
        got = pred()
        left = deadline - time.monotonic()
        if got or left <= 0:
            return got
        changed.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(changed.wait(), min(left, tick))
