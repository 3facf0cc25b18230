"""Outgoing Telegram messages: one queue per chat that keeps under Telegram's flood limits.

- One queue per chat, in order.  An edit of a slot that is still waiting in the queue is *merged*:
  only its latest content goes out (a burst of AI moves becomes one edit; :mod:`adapters.telegram.queue`).
- Edits wait :attr:`Limits.coalesce_s` before going out, so that a burst has time to merge, and a
  group's running table its edit budget (:mod:`adapters.telegram.flood`, which also keeps the
  per-chat, per-group and overall limits), except content that waits on a person's move
  (:attr:`~adapters.telegram.content.Show.turn`: their hand offering moves, the group's table of that
  version, :meth:`Sender.turn_given`), which goes as soon as the limits allow (a person's turn is
  not held back to merge: ``bench/results/taps.txt``).  What each operation calls is
  :mod:`adapters.telegram.perform` (no edit to what a message shows).
- ``TelegramRetryAfter`` pauses the chat for the time Telegram asks, then the latest content goes.
- ``TelegramForbiddenError`` in a private chat (the user never started the bot, or blocked it) is
  handed to ``on_forbidden`` and the operation is finished: retrying cannot help.  Nothing more is
  sent to that chat until the person writes to the bot (:meth:`Sender.allow`): a silent player's
  hands would only be refused again, each a wasted call.
- ``TelegramMigrateToChat`` (a group became a supergroup) is handed to ``on_migrate`` and the call is
  made again to the new id.  Queues, limits and everything in Redis stay under the chat id the service
  knows the room by; only the calls use the chat's id on Telegram now (:attr:`Sender.moved`, else
  :meth:`service.platform.platform_state.PlatformState.moved_to`, asked once per chat and process).
- Network errors and Telegram's 5xx are tried again a few times, with a growing pause.
- An :class:`~adapters.telegram.content.Edit` (a settings keyboard: one given message, no slot) goes
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
from collections import OrderedDict
from collections.abc import Awaitable, Callable

from aiogram import Bot
from aiogram.exceptions import (
    TelegramBadRequest,
    TelegramForbiddenError,
    TelegramMigrateToChat,
    TelegramNetworkError,
    TelegramRetryAfter,
    TelegramServerError,
)

from adapters.telegram.config import Limits
from adapters.telegram.content import PLATFORM, Content, Edit, Op, Show, is_group
from adapters.telegram.flood import Flood
from adapters.telegram.perform import Performer
from adapters.telegram.queue import ChatQueue, Item, merge, settle
from service.foundation import logs
from service.platform.platform_state import PlatformState

MAX_TRANSIENT = 5
# Every this many submissions, the state of chats idle for a whole window is dropped.
PRUNE_EVERY = 1000
# How many settings keyboards' latest contents (and tables' turns) are remembered (a keyboard lives a
# few minutes; a table's turn matters until its edit went out).
EDITS_KEPT = 2000


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
        self.chats: dict[str, ChatQueue] = {}
        # Private chats that refused a message (the person never started the bot, or blocked it):
        # nothing more is tried there until the person writes to the bot (:meth:`allow`).
        self.forbidden: set[str] = set()
        # The latest content of each message edited by Edit (settings keyboards), newest last.
        self.edits: OrderedDict[tuple[str, int], Content] = OrderedDict()
        # The latest version of each table at which a person was given their turn (:meth:`turn_given`).
        self.turns: OrderedDict[str, int] = OrderedDict()
        self.flood = Flood(self.limits, clock)
        self.performer = Performer(bot, state, self.flood)
        self.log = logs.get("telegram.sender")
        self.submitted = 0

    @property
    def calls(self) -> int:
        """Bot API calls made by the queues."""
        return self.flood.calls

    @property
    def skipped(self) -> int:
        """Operations that needed no call (already shown or posted, outdated, a forbidden chat)."""
        return self.performer.skipped

    # -- enqueueing ---------------------------------------------------------------------------------

    def submit(self, op: Op) -> asyncio.Future[None]:
        """Queue ``op``; the future is done when it (or a later content of its slot) went out."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.submitted += 1
        if self.submitted % PRUNE_EVERY == 0:
            self._prune()
        chat = self.chats.setdefault(op.chat, ChatQueue())
        if isinstance(op, Show) and op.linger and self.turns.get(op.table) == op.rank[0]:
            op = dataclasses.replace(op, turn=True)
        if isinstance(op, Edit):
            self._remember(op)
        if merge(chat.queue, op, fut, self.clock()):
            return fut
        now = self.clock()
        chat.queue.append(Item(op, now, [fut], touched=now))
        if chat.task is None or chat.task.done():
            chat.task = asyncio.create_task(self._drain(op.chat, chat))
        return fut

    def _remember(self, op: Edit) -> None:
        self.edits[(op.chat, op.message_id)] = op.content
        self.edits.move_to_end((op.chat, op.message_id))
        while len(self.edits) > EDITS_KEPT:
            self.edits.popitem(last=False)

    def turn_given(self, table: str, version: int) -> None:
        """A person's hand offers moves at ``version`` of ``table``: a group's table of that version
        waits on them, so it goes without waiting for an AI player's answer to merge (queued or not)."""
        self.turns[table] = version
        self.turns.move_to_end(table)
        while len(self.turns) > EDITS_KEPT:
            self.turns.popitem(last=False)
        settle(self.chats.values(), table, version)

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
        for chat_id in [c for c, st in self.chats.items()
                        if not st.queue and self.flood.quiet_since(st, horizon)
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
        self.flood.hurry.set()
        for item in (i for c in self.chats.values() for i in c.queue):
            item.wake.set()

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

    async def _drain(self, chat_id: str, chat: ChatQueue) -> None:
        while chat.queue:
            item = chat.queue[0]
            if isinstance(item.op, Show) and item.op.linger:
                await self.flood.hold_table(chat, (item.op.table, item.op.slot), item)
            elif isinstance(item.op, Show | Edit):
                await self.flood.hold_edit(item)
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

    async def _attempt(self, chat_id: str, chat: ChatQueue, item: Item) -> bool:
        """One try at the queue's head: True when it is finished (sent, or given up), False to retry."""
        if chat_id in self.forbidden:
            self.performer.skipped += 1  # refused already: not tried again until the person writes to the bot
            return True
        await self.flood.wait_turn(chat_id, chat, count=False)
        item.busy = True
        try:
            await self.performer.perform(await self._api_chat(chat_id, chat), chat_id, chat, item.op)
        except TelegramRetryAfter as e:
            self.log.warning("retry_after", chat=chat_id, seconds=e.retry_after)
            self.flood.pause(chat, e.retry_after)
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

    async def _api_chat(self, chat_id: str, chat: ChatQueue) -> int:
        """The chat's id on Telegram now (a group that became a supergroup has a new one)."""
        if chat_id not in self.moved and not chat.looked_up and is_group(chat_id):
            chat.looked_up = True
            moved = await self.state.moved_to(PLATFORM, chat_id)
            if moved:
                self.moved.setdefault(chat_id, moved)
        return int(self.moved.get(chat_id, chat_id))
