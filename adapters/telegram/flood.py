"""Telegram's flood limits, kept per chat and overall: when the sender's next call may go.

- About one call a second per chat (:attr:`Limits.chat_interval_s`), at most ``group_per_window``
  calls per window in a group, at most ``global_per_s`` a second overall.
- A group's running table has an edit budget, a token bucket per slot: ``group_burst`` edits at
  once, refilled one per ``group_interval_s``.  While it lasts a move shows at once; when play is
  faster, the moves merge until an edit's worth has refilled.
- Out of budget, the table waits for a fresher move rather than going at the refill
  (:meth:`Flood.table_due`), so that more of its edits come right after a move.
- A call is counted when it *returned*: Telegram counts it when it arrived, which is between the
  two, so the windows kept here are never shorter than the ones Telegram sees.

No Bot API here: :class:`Flood` only waits and counts (:mod:`adapters.telegram.sender` calls).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from adapters.telegram.config import Limits
from adapters.telegram.content import is_group


class Held(Protocol):
    """Queued content that waits: when it was queued and when its latest content came, whether that
    content waits on a person's move (nothing more comes to merge until they act), and an event set
    when fresher content merges into it (and when the process stops)."""

    since: float
    touched: float
    wake: asyncio.Event

    @property
    def turn(self) -> bool:
        """Whether the content waits on a person's move."""


@dataclass
class ChatFlood:
    """One chat's counts: its last call, its window of calls (groups), its tables' edit budgets."""

    last: float = -1e9
    window: deque[float] = field(default_factory=deque)
    # Each lingering slot's (a group's running table) edit budget: (tokens, when counted).
    edited: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)


class Flood:
    """The limits of every chat of one bot (see the module docstring)."""

    def __init__(self, limits: Limits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self.clock = clock
        self.recent: deque[float] = deque()  # the calls of the last second, every chat
        self.calls = 0
        # Set when the process stops: what is queued goes now instead of waiting to merge with later
        # content that will not come (SIGTERM must not hold a group's table back for group_interval_s).
        self.hurry = asyncio.Event()

    def quiet_since(self, chat: ChatFlood, horizon: float) -> bool:
        """Whether the chat made no call since ``horizon`` (its limits are met: it may be forgotten)."""
        return chat.last < horizon

    def pause(self, chat: ChatFlood, seconds: float) -> None:
        """Telegram asked to wait ``seconds`` (``retry_after``): no call to the chat before then."""
        chat.last = self.clock() + seconds - self.limits.chat_interval_s

    def tokens(self, chat: ChatFlood, slot: tuple[str, str]) -> tuple[float, float]:
        """The slot's edit tokens now, and the time they were counted."""
        now, lim = self.clock(), self.limits
        tokens, since = chat.edited.get(slot, (float(lim.group_burst), now))
        if lim.group_interval_s > 0:
            tokens = min(float(lim.group_burst), tokens + (now - since) / lim.group_interval_s)
        else:
            tokens = float(lim.group_burst)
        return tokens, now

    def spend(self, chat: ChatFlood, slot: tuple[str, str]) -> None:
        """One edit of the slot's budget is used."""
        tokens, now = self.tokens(chat, slot)
        chat.edited[slot] = (max(tokens - 1.0, 0.0), now)

    def table_at(self, chat: ChatFlood, slot: tuple[str, str]) -> float:
        """When a group's running table may be edited next: at once while its budget has an edit
        left, else when the next edit's worth has refilled (the moves meanwhile merge into one
        edit).  On average at most one edit per group_interval_s."""
        tokens, now = self.tokens(chat, slot)
        return now if tokens >= 1.0 else now + (1.0 - tokens) * self.limits.group_interval_s

    def table_due(self, chat: ChatFlood, slot: tuple[str, str], fresh: float) -> float:
        """When a group's running table should be edited, its latest content ready at ``fresh`` (when
        it came, plus coalesce_s): then, if the budget has an edit by then; else ``group_hold_s``
        after the refill, unless fresher content comes after the refill (a new move: it goes at
        once).  Out of budget, an edit spent right after a move serves that move at once and the
        older ones as soon as the refill would have; spent at the refill, it serves only the older
        ones, and the next move waits a whole interval (bench/telegram.py measures it: docs/telegram.md)."""
        ready = self.table_at(chat, slot)
        # (a budget with an edit now serves content that was ready earlier at once: content that waits
        # on a person is ready when it came, and an edit tried again is ready since its first try)
        return fresh if ready <= max(fresh, self.clock()) else ready + self.limits.group_hold_s

    async def hold_edit(self, held: Held) -> None:
        """Hold an edit ``coalesce_s`` for later content to merge into it, unless it waits (or comes
        to wait, by a merge) on a person's move, or the process is stopping."""
        while not held.turn and not self.hurry.is_set():
            delay = held.since + self.limits.coalesce_s - self.clock()
            if delay <= 0:
                return
            held.wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(held.wake.wait(), delay)

    async def hold_table(self, chat: ChatFlood, slot: tuple[str, str], held: Held) -> None:
        """Hold a group's running table until its edit is due (:meth:`table_due`), recomputed each
        time fresher content merges into it.  Its content is ready ``coalesce_s`` after it came (for
        an AI player's answer to merge), or at once when it waits on a person's move."""
        while not self.hurry.is_set():
            fresh = held.touched + (0.0 if held.turn else self.limits.coalesce_s)
            delay = self.table_due(chat, slot, fresh) - self.clock()
            if delay <= 0:
                return
            held.wake.clear()
            try:
                await asyncio.wait_for(held.wake.wait(), delay)
            except TimeoutError:
                return  # due: the budget has an edit (asked again, it would say "in hold_s")

    async def wait_turn(self, chat_id: str, chat: ChatFlood, count: bool = True) -> None:
        """Wait until a call to this chat keeps every limit, then count it (unless ``count`` is False:
        the queue waits for its turn before it fixes what it sends, so that edits merge meanwhile)."""
        lim = self.limits
        while True:
            now = self.clock()
            waits = [chat.last + lim.chat_interval_s - now]
            if is_group(chat_id):
                while chat.window and chat.window[0] <= now - lim.window_s:
                    chat.window.popleft()
                if len(chat.window) >= lim.group_per_window:
                    waits.append(chat.window[0] + lim.window_s - now)
            while self.recent and self.recent[0] <= now - 1.0:
                self.recent.popleft()
            if len(self.recent) >= lim.global_per_s:
                waits.append(self.recent[0] + 1.0 - now)
            wait = max(waits)
            if wait <= 0:
                break
            await asyncio.sleep(wait)
        if not count:
            return
        now = self.clock()
        chat.last = now
        if is_group(chat_id):
            chat.window.append(now)
        self.recent.append(now)
        self.calls += 1

    async def call(self, chat_id: str, chat: ChatFlood, call: Callable[[], Awaitable[Any]]) -> Any:
        """Make one Bot API call when the limits allow it, counted at the time it returned."""
        try:
            await self.wait_turn(chat_id, chat)
            return await call()
        finally:
            now = self.clock()
            chat.last = max(chat.last, now)
            if is_group(chat_id) and chat.window:
                chat.window[-1] = now
            if self.recent:
                self.recent[-1] = now
