"""How every role runs: until SIGTERM/SIGINT, then stopped in its own order; and what an adapter's
``cinq.adapters`` entry point names.

One loop for the worker (``cinq serve|worker``), the Telegram bot, the webhook adapter and the web
table, so that they all stop the same way: the first signal asks the role to stop once (by default
its task is cancelled, and its ``finally`` stops the input and flushes what it owes); a second signal
does not cut that short (compose's SIGKILL, 30 s later, does).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Adapter:
    """What an adapter's entry point (group ``cinq.adapters``) names: how ``cinq serve`` runs it on
    the process's runtime (``serve``, until cancelled; None: not a role of ``cinq serve``, like the
    terminal), and how ``cinq <name> ...`` runs it alone (``run``, returning an exit status)."""

    run: Callable[..., int]
    serve: Callable[[Any], Coroutine[Any, Any, None]] | None = None
    # Refuses an unsafe or wrong configuration of the adapter (raises SystemExit with one line):
    # `cinq serve` asks every adapter before it starts any role.
    check: Callable[[], None] | None = None


async def run_until_stopped(role: Awaitable[T], stop: Callable[[], None] | None = None) -> T | None:
    """Run ``role`` until it ends, or until SIGTERM/SIGINT asks it to stop; its result (None when the
    signal cancelled it).

    ``stop`` is how the signal asks (default: cancel the role's task); it is called once, whatever
    the number of signals, so that a role's orderly stop is not cut short by a second one.
    """
    task = asyncio.ensure_future(role)
    loop = asyncio.get_running_loop()
    stopping: list[bool] = []

    def on_signal() -> None:
        if stopping:
            return
        stopping.append(True)
        (stop or task.cancel)()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal)
    try:
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            # Cancelled by the signal (the task is done) or from outside (cancel the role too, and let
            # its `finally` run before this one returns).
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                raise
            if not task.cancelled():
                return task.result()
            return None
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)


async def until_cancelled() -> None:
    """Wait for ever (a role's body that only ends when its task is cancelled)."""
    await asyncio.Event().wait()
