"""The outbox handler of the Telegram adapter: one outbox message in, sender operations out.

:class:`service.platform.delivery.Delivery` reads the outbox for the platform ``telegram`` (consumer group,
order per recipient, retries, dead letters) and calls :class:`OutboxHandler` with each message.

A *post* (a reply, a summary) is awaited: the message is acknowledged once it went out.  A *show*
(an edit in place) is not: it is recorded in Redis as the slot's wanted content (and the slot
marked dirty) and queued, and the handler returns, so that the next messages of the same slot can
merge into the queued edit — a burst of AI moves becomes one edit.  A restart loses nothing: the
dirty slots are sent again by :meth:`OutboxHandler.recover` before delivery resumes.

A message that answers a button press this process is waiting on (:mod:`adapters.telegram.presses`)
is offered to it first: a refusal becomes the press's alert and is not posted.

A group that became a supergroup (:meth:`OutboxHandler.migrated`) keeps its room id in the service;
the sender addresses Telegram with the new id, and the table is shown again in the new chat.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from adapters.telegram.content import MAIN, PLATFORM, Content, Edit, Op, Post, Show, is_group
from adapters.telegram.keyboards import hand_link
from adapters.telegram.presses import PREFIX, Presses
from adapters.telegram.render import milestones, route, seat_names
from adapters.telegram.sender import Sender
from service.foundation import logs
from service.platform.outbox import Message
from service.platform.platform_state import PlatformState
from service.protocol.i18n import translate


class OutboxHandler:
    """Routes outbox messages for Telegram to the sender (see the module docstring)."""

    def __init__(self, state: PlatformState, sender: Sender, *, bot_username: str, turn_seconds: float = 0.0,
                 clock: Callable[[], float] = time.time, presses: Presses | None = None) -> None:
        self.state = state
        self.sender = sender
        self.bot_username = bot_username
        self.turn_seconds = turn_seconds
        self.clock = clock
        self.presses = presses
        self.log = logs.get("telegram.outbox")
        # The language each table's group is written in (the table's, or the group's /lang), so that
        # a notice about one person is in the group's language, not that person's.
        self.group_locales: dict[str, str] = {}
        self.countdowns: dict[tuple[str, str], asyncio.Task[None]] = {}  # (chat, table) -> its countdown
        sender.on_forbidden = self.on_forbidden
        sender.on_migrate = self.migrated

    async def __call__(self, msg: Message) -> None:
        """Deliver one message (the :data:`service.platform.delivery.Handler`)."""
        if self.presses is not None and msg.id.startswith(PREFIX) and self.presses.offer(msg.rendered()):
            return  # a refused button press: its answer is the alert
        room = msg.to.room
        if room is not None and room.platform == PLATFORM and room.kind == "group":
            # A group's /lang wins over the table's language: the text is rendered here, per reader.
            msg = msg.rendered(await self.state.chat_locale(PLATFORM, room.chat) or None)
        else:
            msg = msg.rendered()
        names = seat_names(msg)
        if names and msg.table:
            await self.state.set_table_names(PLATFORM, msg.table, names)
        elif msg.kind == "match_over" and msg.table:
            names = await self.state.table_names(PLATFORM, msg.table)
        now = self.clock()
        routed = route(msg, bot_username=self.bot_username, now=now, written_at=now,
                       turn_seconds=self.turn_seconds, seat_names=names)
        if routed.group_table is not None:
            await self.state.add_table_chat(PLATFORM, routed.group_table[1], routed.group_table[0])
            self._countdown(msg, names, routed.group_table)
            self.group_locales[routed.group_table[1]] = msg.locale  # for the group's notices
        if routed.group_result is not None:
            await self.state.record_group_match(PLATFORM, *routed.group_result, now=now)
        posts = []
        for op in routed.ops:
            if isinstance(op, Show) and op.turn:  # a person's turn: the group's table waits on them
                self.sender.turn_given(op.table, op.rank[0])
        for op in routed.ops:
            if isinstance(op, Post | Edit):  # an Edit: a board redrawn in the message pressed
                posts.append(self.sender.submit(op))
            elif await self.state.want_content(PLATFORM, op.chat, op.table, op.slot, op.rank,
                                               op.content.to_json()):
                self.sender.submit(op)
        await asyncio.gather(*posts)

    def _countdown(self, msg: Message, names: list[str] | None, where: tuple[str, str]) -> None:
        """Edit a group's table again as its time left crosses each milestone (60, 30, 10 s), so that
        "under N s" stays true; a newer message of the table replaces the countdown."""
        old = self.countdowns.pop(where, None)
        if old is not None:
            old.cancel()
        at = milestones(msg, self.clock())
        if not at:
            return

        async def tick() -> None:
            for t in at:
                await asyncio.sleep(max(t - self.clock(), 0.0))
                now = self.clock()
                routed = route(msg, bot_username=self.bot_username, now=now + 0.001, written_at=now,
                               turn_seconds=self.turn_seconds, seat_names=names)
                for op in routed.ops:
                    if isinstance(op, Show) and await self.state.want_content(
                            PLATFORM, op.chat, op.table, op.slot, op.rank, op.content.to_json()):
                        self.sender.submit(op)

        self.countdowns[where] = asyncio.create_task(tick())

    async def recover(self) -> int:
        """Queue again every slot whose wanted content may not have gone out (after a restart)."""
        n = 0
        for chat, table, slot in await self.state.dirty_slots(PLATFORM):
            ref = await self.state.get_message_ref(PLATFORM, chat, table, slot)
            if ref is None or ref.want is None:
                continue
            self.sender.submit(Show(chat, table, slot, ref.rank, Content.from_json(ref.want)))
            n += 1
        return n

    async def migrated(self, old: str, new: str) -> None:
        """The group ``old`` is now the supergroup ``new`` (Telegram said so in an update, or refused a
        call with the new id).  The service keeps the room as ``old``; the sender writes to ``new``; the
        first time, the table the group shows is sent again as a new message of the new chat (its old
        message stays in the old group's history)."""
        room = await self.state.room_chat(PLATFORM, old)
        self.sender.moved[room] = new
        if not await self.state.record_move(PLATFORM, old, new):
            return
        self.log.info("group_migrated", chat=room, to=new)
        table = await self.state.room_table(PLATFORM, room)
        if table is None:
            return
        ref = await self.state.get_message_ref(PLATFORM, room, table, MAIN)
        await self.state.forget_message(PLATFORM, room, table, MAIN)
        if ref is not None and ref.want is not None:
            self.sender.submit(Show(room, table, MAIN, ref.rank, Content.from_json(ref.want)))

    async def on_forbidden(self, op: Op) -> None:
        """A player's private chat refused a hand: tell them in the table's group, once, how to fix it."""
        if not isinstance(op, Show) or is_group(op.chat):
            return
        for chat in await self.state.table_chats(PLATFORM, op.table):
            key = f"told:{op.table}:{op.chat}"
            if not await self.state.mark_once(PLATFORM, key):
                return
            locale = await self.state.chat_locale(PLATFORM, chat) or self.group_locales.get(op.table) \
                or op.locale
            text = translate(locale, "tg.start_me", name=op.who or op.chat)
            content = Content(text, ((hand_link(locale, self.bot_username, op.table),),))
            self.sender.submit(Post(chat, content, key))
            return


async def resend_slot(state: PlatformState, sender: Sender, chat: str, table: str) -> bool:
    """Send the slot's wanted content again as a new message (the deep link "My hand"); False if none."""
    ref = await state.get_message_ref(PLATFORM, chat, table, MAIN)
    if ref is None or ref.want is None:
        return False
    await sender.deliver(Show(chat, table, MAIN, ref.rank, Content.from_json(ref.want), fresh=True))
    return True
