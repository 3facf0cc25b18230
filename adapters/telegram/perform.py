"""One operation carried out on Telegram: the Bot API calls of a :class:`Show`, :class:`Post` or
:class:`Edit`, each made when the flood limits allow it (:mod:`adapters.telegram.flood`).

- A :class:`Show` edits its slot's message, or sends one (none yet, or ``fresh``: the old one is
  then deleted, so that one message shows the slot); an edit to the content the message already
  shows is never sent (a digest per slot in :mod:`service.platform.platform_state`), nor a content
  older than the one the slot now wants.  "Message is not modified" counts as done; a message that
  is gone (deleted, too old to edit) is sent again.
- A :class:`Post` is sent once: its key is marked in Redis first (a redelivery sends nothing), and
  unmarked if the call failed.
- An :class:`Edit` edits one given message (a settings keyboard, a board); a board's (it has a
  ``key``) whose message is gone is posted anew instead, as a :class:`Post` with that key.

Errors other than these go up to the sender, which decides whether to try again.
"""

from __future__ import annotations

import contextlib
from typing import Any

from aiogram import Bot
from aiogram.exceptions import TelegramAPIError, TelegramBadRequest

from adapters.telegram.content import PLATFORM, Content, Edit, Op, Post
from adapters.telegram.flood import ChatFlood, Flood
from service.platform.platform_state import PlatformState

# A redelivered post is recognised for this long (redeliveries come within minutes).
POST_TTL_S = 24 * 3600


def gone(e: TelegramBadRequest) -> bool:
    """Whether an edit was refused because the message can no longer be edited (deleted: "message to
    edit not found"; too old, or not the bot's: "message can't be edited")."""
    text = e.message.lower()
    return "not found" in text or "can't be edited" in text


class Performer:
    """Carries out operations on one :class:`aiogram.Bot` (see the module docstring)."""

    def __init__(self, bot: Bot, state: PlatformState, flood: Flood) -> None:
        self.bot, self.state, self.flood = bot, state, flood
        self.skipped = 0  # operations that needed no call (already shown, already posted, outdated)

    async def perform(self, api: int, chat_id: str, chat: ChatFlood, op: Op) -> None:
        """Carry out ``op`` in the chat the service knows as ``chat_id`` (``api``: its id on Telegram)."""
        if isinstance(op, Edit):
            edit = op
            try:
                await self.flood.call(chat_id, chat, lambda: self.bot.edit_message_text(
                    chat_id=api, message_id=edit.message_id, text=edit.content.text,
                    reply_markup=edit.content.markup()))
            except TelegramBadRequest as e:
                if "not modified" in e.message.lower():
                    return
                if not (edit.key and gone(e)):
                    raise
                # A board whose message was deleted or is too old: shown anew, not dropped.
                await self.perform(api, chat_id, chat, Post(edit.chat, edit.content, edit.key))
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
            self.flood.spend(chat, (op.table, op.slot))
        if mid is not None:
            try:
                await self.flood.call(chat_id, chat, lambda: self.bot.edit_message_text(
                    chat_id=api, message_id=mid, text=content.text, reply_markup=content.markup()))
            except TelegramBadRequest as e:
                text = e.message.lower()
                if "not modified" in text:
                    pass
                elif gone(e):
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
                await self.flood.call(chat_id, chat,
                                      lambda: self.bot.delete_message(chat_id=api, message_id=old))

    async def _send(self, api: int, chat_id: str, chat: ChatFlood, content: Content) -> int:
        sent: Any = await self.flood.call(chat_id, chat, lambda: self.bot.send_message(
            chat_id=api, text=content.text, reply_markup=content.markup()))
        return int(sent.message_id)
