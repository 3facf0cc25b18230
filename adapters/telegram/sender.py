"""Outgoing Telegram messages: one queue per chat that keeps under Telegram's flood limits.

- One queue per chat, in order.  An edit of a slot that is still waiting in the queue is *merged*:
  only its latest content goes out (a burst of AI moves becomes one edit).
- Edits wait :attr:`Limits.coalesce_s` before going out, so that a burst has time to merge; a
  group's running table has a budget of edits (a token bucket: :attr:`Limits.group_burst` at once,
  refilled one per :attr:`Limits.group_interval_s`): a move shows within ``coalesce_s`` while the
  budget lasts, and when play is faster than the budget the moves merge until an edit's worth has
  refilled.
- About one call a second per chat, at most ``group_per_window`` per window in a group, at most
  ``global_per_s`` a second overall.
- An edit to the content a message already shows is never sent (a digest of text and keyboard is
  kept per slot in :mod:`service.platform.platform_state`); "message is not modified" counts as done.
- ``TelegramRetryAfter`` pauses the chat for the time Telegram asks, then the latest content goes.
- ``TelegramForbiddenError`` in a private chat (the user never started the bot, or blocked it) is
  handed to ``on_forbidden`` and the operation is finished: retrying cannot help.  Nothing more is
  sent to that chat until the person writes to the bot (:meth:`Sender.allow`): a silent player's
  hands would only be refused again, each a wasted call.
- ``TelegramMigrateToChat`` (a group became a supergroup) is handed to ``on_migrate`` and the call is
  made again to the new id.  Queues, limits and everything in Redis stay under the chat id the service
  knows the room by; only the calls use the chat's id on Telegram now (:attr:`Sender.moved`, else
  :meth:`service.platform.platform_state.PlatformState.moved_to`, asked once per chat and process).
- An :class:`~adapters.telegram.render.Edit` (a settings keyboard: one given message, no slot) goes
  through the same queue and limits; a queued edit of the same message is merged.
- A stopping process flushes its queues (:meth:`Sender.flush`): the waits that only serve merging
  (``coalesce_s``, ``group_interval_s``) are cut short, Telegram's limits are still kept.

Which message shows which slot, and what each slot wants to show, live in Redis; a slot stays
*dirty* there until its content went out, so the queues are only a buffer: after a restart the
dirty slots are sent again (:meth:`adapters.telegram.consumer.OutboxHandler.recover`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiogram import Bot
from aiogram.exceptions import (
    TelegramAPIError,
    TelegramBadRequest,
    TelegramForbiddenError,
    TelegramMigrateToChat,
    TelegramNetworkError,
    TelegramRetryAfter,
    TelegramServerError,
)

from adapters.telegram.config import Limits
from adapters.telegram.render import PLATFORM, Content, Edit, Post, Show
from service.ops import logs
from service.platform.platform_state import PlatformState

Op = Show | Post | Edit
MAX_TRANSIENT = 5
# A redelivered post is recognised for this long (redeliveries come within minutes).
POST_TTL_S = 24 * 3600
# Every this many submissions, the state of chats idle for a whole window is dropped.
PRUNE_EVERY = 1000
# How many settings keyboards' latest contents are remembered (a keyboard lives a few minutes).
EDITS_KEPT = 2000


@dataclass
class _Item:
    op: Op
    since: float
    done: list[asyncio.Future[None]] = field(default_factory=list)
    busy: bool = False  # going out now: a newer content queues behind it instead of merging
    attempts: int = 0


@dataclass
class _Chat:
    queue: deque[_Item] = field(default_factory=deque)
    last: float = -1e9
    window: deque[float] = field(default_factory=deque)
    task: asyncio.Task[None] | None = None
    looked_up: bool = False  # whether Redis was asked if the chat moved
    # Each lingering slot's (a group's running table) edit budget: (tokens, when counted), a token
    # bucket that refills one edit per group_interval_s up to group_burst (see Sender._table_at).
    edited: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)


def is_group(chat: str) -> bool:
    """Telegram group and supergroup ids are negative; private chats have the user's positive id."""
    return chat.startswith("-")


class Sender:
    """Per-chat queues over one :class:`aiogram.Bot`."""

    def __init__(self, bot: Bot, state: PlatformState, limits: Limits | None = None, *,
                 on_forbidden: Callable[[Op], Awaitable[None]] | None = None,
                 on_migrate: Callable[[str, str], Awaitable[None]] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.bot = bot
        self.state = state
        self.limits = limits or Limits()
        self.on_forbidden = on_forbidden
        self.on_migrate = on_migrate
        self.moved: dict[str, str] = {}  # a room's chat id -> its id on Telegram now (a supergroup's)
        self.clock = clock
        self.chats: dict[str, _Chat] = {}
        # Private chats that refused a message (the person never started the bot, or blocked it):
        # nothing more is tried there until the person writes to the bot (:meth:`allow`).
        self.forbidden: set[str] = set()
        # The latest content of each message edited by Edit (settings keyboards), newest last.
        self.edits: OrderedDict[tuple[str, int], Content] = OrderedDict()
        self.recent: deque[float] = deque()
        self.log = logs.get("telegram.sender")
        self.calls = 0
        self.skipped = 0
        self.submitted = 0
        # Set when the process stops: what is queued goes now instead of waiting to merge with later
        # content that will not come (SIGTERM must not hold a group's table back for group_interval_s).
        self._hurry = asyncio.Event()

    # -- enqueueing ---------------------------------------------------------------------------------

    def submit(self, op: Op) -> asyncio.Future[None]:
        """Queue ``op``; the future is done when it (or a later content of its slot) went out."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.submitted += 1
        if self.submitted % PRUNE_EVERY == 0:
            self._prune()
        chat = self.chats.setdefault(op.chat, _Chat())
        if isinstance(op, Show) and not op.fresh:
            for item in chat.queue:
                old = item.op
                if isinstance(old, Show) and not old.fresh and not item.busy \
                        and (old.table, old.slot) == (op.table, op.slot):
                    if op.rank >= old.rank:
                        item.op = dataclasses.replace(op, ids=old.ids + op.ids)
                    item.done.append(fut)
                    return fut
        if isinstance(op, Edit):
            self._remember(op)
            for item in chat.queue:
                if isinstance(item.op, Edit) and not item.busy and item.op.message_id == op.message_id:
                    item.op = op
                    item.done.append(fut)
                    return fut
        chat.queue.append(_Item(op, self.clock(), [fut]))
        if chat.task is None or chat.task.done():
            chat.task = asyncio.create_task(self._drain(op.chat, chat))
        return fut

    def _remember(self, op: Edit) -> None:
        self.edits[(op.chat, op.message_id)] = op.content
        self.edits.move_to_end((op.chat, op.message_id))
        while len(self.edits) > EDITS_KEPT:
            self.edits.popitem(last=False)

    def allow(self, chat: str) -> None:
        """The person of a private chat wrote to the bot: it may write to them again."""
        self.forbidden.discard(chat)

    def latest_edit(self, chat: str, message_id: int) -> Content | None:
        """The content last asked of a given message (a settings keyboard), sent yet or not: quick
        presses on an older keyboard apply to this one (None: not known to this process)."""
        return self.edits.get((chat, message_id))

    def _prune(self) -> None:
        """Forget chats with nothing queued and no call in the last window (their limits are met)."""
        horizon = self.clock() - max(self.limits.window_s, self.limits.chat_interval_s)
        for chat_id in [c for c, st in self.chats.items() if not st.queue and st.last < horizon
                        and (st.task is None or st.task.done())]:
            del self.chats[chat_id]

    async def deliver(self, op: Op) -> None:
        """Queue ``op`` and wait until it went out."""
        await self.submit(op)

    async def idle(self) -> None:
        """Wait until every queue is empty (tests, shutdown)."""
        while any(c.queue for c in self.chats.values()):
            await asyncio.sleep(0.01)

    def hurry(self) -> None:
        """From now on, send what is queued without waiting for more content to merge (stopping)."""
        self._hurry.set()

    async def flush(self, timeout: float) -> bool:
        """Send everything queued (see :meth:`hurry`), for at most ``timeout`` seconds; True when every
        queue emptied.  What is left is cancelled by :meth:`close`: a slot stays dirty in Redis and a
        post unmarked, so the next process sends them."""
        self.hurry()
        if timeout <= 0:
            return not any(c.queue for c in self.chats.values())
        try:
            await asyncio.wait_for(self.idle(), timeout)
        except TimeoutError:
            left = sum(len(c.queue) for c in self.chats.values())
            self.log.warning("flush_incomplete", queued=left, timeout_s=timeout)
            return False
        return True

    async def close(self) -> None:
        """Stop every queue at once (what is left is redelivered by the outbox consumer after a restart;
        :meth:`flush` first to send it now)."""
        for c in self.chats.values():
            if c.task is not None:
                c.task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await c.task

    # -- one chat -----------------------------------------------------------------------------------

    async def _drain(self, chat_id: str, chat: _Chat) -> None:
        while chat.queue:
            item = chat.queue[0]
            if isinstance(item.op, Show | Edit):
                at = item.since + self.limits.coalesce_s
                if isinstance(item.op, Show) and item.op.linger:
                    at = max(at, self._table_at(chat, (item.op.table, item.op.slot)))
                await self._hold_until(at)
            if not await self._attempt(chat_id, chat, item):
                continue  # wait and try again, with whatever merged into the item meanwhile
            if isinstance(item.op, Show):
                op = item.op
                try:
                    await self.state.clear_dirty(PLATFORM, op.chat, op.table, op.slot, op.rank)
                except Exception as exc:  # only a restart would send it again: harmless
                    self.log.warning("clear_dirty_failed", chat=chat_id, error=logs.error_text(exc, 200))
            chat.queue.popleft()
            for fut in item.done:
                if not fut.done():
                    fut.set_result(None)

    async def _attempt(self, chat_id: str, chat: _Chat, item: _Item) -> bool:
        """One try at the queue's head: True when it is finished (sent, or given up), False to retry."""
        if chat_id in self.forbidden:
            self.skipped += 1  # refused already: not tried again until the person writes to the bot
            return True
        await self._wait_turn(chat_id, chat, count=False)
        item.busy = True
        try:
            await self._perform(chat_id, chat, item)
        except TelegramRetryAfter as e:
            self.log.warning("retry_after", chat=chat_id, seconds=e.retry_after)
            chat.last = self.clock() + e.retry_after - self.limits.chat_interval_s
            item.busy = False  # while it waits, newer content of the slot merges into it
            return False
        except TelegramMigrateToChat as e:
            new = str(e.migrate_to_chat_id)
            if self.moved.get(chat_id) == new:
                self.log.error("migrate_loop", chat=chat_id, to=new)
                return True
            self.log.info("migrated", chat=chat_id, to=new)
            self.moved[chat_id] = new
            if self.on_migrate is not None:
                try:
                    await self.on_migrate(chat_id, new)
                except Exception as exc:  # the call is made to the new id anyway
                    self.log.warning("migrate_failed", chat=chat_id, error=logs.error_text(exc, 200))
            item.busy = False
            return False  # again, to the new id
        except TelegramForbiddenError:
            if not is_group(chat_id):
                self.forbidden.add(chat_id)
            if self.on_forbidden is not None:
                try:
                    await self.on_forbidden(item.op)
                except Exception as exc:  # the notice is best effort; the queue goes on
                    self.log.warning("forbidden_notice_failed", chat=chat_id, error=logs.error_text(exc, 200))
        except (TelegramNetworkError, TelegramServerError) as e:
            item.attempts += 1
            if item.attempts < MAX_TRANSIENT:
                item.busy = False
                await asyncio.sleep(min(0.2 * 2 ** item.attempts, 5.0))
                return False
            self.log.error("gave_up", chat=chat_id, error=logs.error_text(e, 200))
        except TelegramBadRequest as e:
            self.log.error("bad_request", chat=chat_id, error=e.message[:200])
        except asyncio.CancelledError:
            raise
        except Exception as e:  # anything else: logged, and the queue goes on
            self.log.error("send_failed", chat=chat_id, error=logs.error_text(e, 200))
        return True

    def _tokens(self, chat: _Chat, slot: tuple[str, str]) -> tuple[float, float]:
        """The slot's edit tokens now, and the time they were counted."""
        now, lim = self.clock(), self.limits
        tokens, since = chat.edited.get(slot, (float(lim.group_burst), now))
        if lim.group_interval_s > 0:
            tokens = min(float(lim.group_burst), tokens + (now - since) / lim.group_interval_s)
        else:
            tokens = float(lim.group_burst)
        return tokens, now

    def _table_at(self, chat: _Chat, slot: tuple[str, str]) -> float:
        """When a group's running table may be edited next: at once while its budget has an edit
        left (a move shows within coalesce_s), else when the next edit's worth has refilled (the
        moves meanwhile merge into one edit).  On average at most one edit per group_interval_s."""
        tokens, now = self._tokens(chat, slot)
        return now if tokens >= 1.0 else now + (1.0 - tokens) * self.limits.group_interval_s

    async def _hold_until(self, t: float) -> None:
        """Hold an edit back until ``t`` so that later content merges into it, unless the process is
        stopping (:meth:`hurry`): then no later content is coming, and the edit goes now."""
        delay = t - self.clock()
        if delay > 0 and not self._hurry.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._hurry.wait(), delay)

    async def _wait_turn(self, chat_id: str, chat: _Chat, count: bool = True) -> None:
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

    async def _api_chat(self, chat_id: str, chat: _Chat) -> int:
        """The chat's id on Telegram now (a group that became a supergroup has a new one)."""
        if chat_id not in self.moved and not chat.looked_up and is_group(chat_id):
            chat.looked_up = True
            moved = await self.state.moved_to(PLATFORM, chat_id)
            if moved:
                self.moved.setdefault(chat_id, moved)
        return int(self.moved.get(chat_id, chat_id))

    async def _perform(self, chat_id: str, chat: _Chat, item: _Item) -> None:
        op = item.op
        api = await self._api_chat(chat_id, chat)
        if isinstance(op, Edit):
            edit = op
            try:
                await self._call(chat_id, chat, lambda: self.bot.edit_message_text(
                    chat_id=api, message_id=edit.message_id, text=edit.content.text,
                    reply_markup=edit.content.markup()))
            except TelegramBadRequest as e:
                if "not modified" not in e.message.lower():
                    raise
            return
        if isinstance(op, Post):
            if not await self.state.mark_once(PLATFORM, f"post:{op.key}", POST_TTL_S):
                self.skipped += 1
                return
            try:
                await self._send(api, chat_id, chat, op.content)
            except BaseException:
                await self.state.unmark(PLATFORM, f"post:{op.key}")
                raise
            return
        ref = await self.state.get_message_ref(PLATFORM, chat_id, op.table, op.slot)
        content = op.content
        if ref is not None and ref.rank > op.rank:
            self.skipped += 1  # a newer content is wanted: whoever wanted it sends it
            return
        digest = content.digest()
        mid = ref.message_id if ref is not None and not op.fresh else None
        if mid is not None and ref is not None and ref.sent == digest:
            self.skipped += 1
            return
        if op.linger:
            tokens, _ = self._tokens(chat, (op.table, op.slot))
            chat.edited[(op.table, op.slot)] = (max(tokens - 1.0, 0.0), self.clock())
        if mid is not None:
            try:
                await self._call(chat_id, chat, lambda: self.bot.edit_message_text(
                    chat_id=api, message_id=mid, text=content.text, reply_markup=content.markup()))
            except TelegramBadRequest as e:
                text = e.message.lower()
                if "not modified" in text:
                    pass
                elif "not found" in text or "can't be edited" in text:
                    mid = await self._send(api, chat_id, chat, content)
                else:
                    raise
        else:
            mid = await self._send(api, chat_id, chat, content)
        await self.state.set_message_ref(PLATFORM, chat_id, op.table, op.slot, message_id=mid, sent=digest)
        if op.fresh and ref is not None and ref.message_id is not None and ref.message_id != mid:
            # The slot's old message goes: one message shows the slot (no second set of buttons).
            old = ref.message_id
            with contextlib.suppress(TelegramAPIError):
                await self._call(chat_id, chat, lambda: self.bot.delete_message(chat_id=api, message_id=old))

    async def _send(self, api: int, chat_id: str, chat: _Chat, content: Content) -> int:
        sent: Any = await self._call(chat_id, chat, lambda: self.bot.send_message(
            chat_id=api, text=content.text, reply_markup=content.markup()))
        return int(sent.message_id)

    async def _call(self, chat_id: str, chat: _Chat, call: Callable[[], Awaitable[Any]]) -> Any:
        """Make one Bot API call when the limits allow it.  The call is counted at the time it
        *returned*: Telegram counts it when it arrived, which is between the two, so the windows
        kept here are never shorter than the ones Telegram sees."""
        try:
            await self._wait_turn(chat_id, chat)
            return await call()
        finally:
            now = self.clock()
            chat.last = max(chat.last, now)
            if is_group(chat_id) and chat.window:
                chat.window[-1] = now
            if self.recent:
                self.recent[-1] = now
