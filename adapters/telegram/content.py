"""What the bot shows on Telegram, as data: a message's content and the sender's three operations.

:class:`Content` is a message's text and inline keyboard (kept in Redis as JSON, compared by digest);
:class:`Show` puts content in a slot (a message edited in place), :class:`Post` sends a new message
once, :class:`Edit` edits one given message (a settings keyboard, a board).  No IO;
:mod:`adapters.telegram.render` builds these from outbox messages and :mod:`adapters.telegram.sender`
carries them out.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup, WebAppInfo

PLATFORM = "telegram"
MAX_TEXT = 4096
ROW = 3
# Slots: the one message of a table in a chat.
MAIN = "main"
# Ranks break ties between contents of one version: a hand beats the room's view of the same version.
ROOM_RANK, HAND_RANK, FINAL_RANK = 0, 1, 2
# The command id prefix of a typed /hand: the hand it causes is sent anew, at the bottom of the chat.
HAND_PREFIX = "tg:h:"

Button = tuple[str, str, str]
Rows = tuple[tuple[Button, ...], ...]


@dataclass(frozen=True)
class Content:
    """A message's text and inline keyboard (rows of ``(text, "data"|"url"|"web_app", value)``).
    ``pages``: other keyboards the message can switch to (a two-step pick of a move,
    :mod:`adapters.telegram.keyboards`), by name; kept with the content in Redis."""

    text: str
    rows: Rows = ()
    pages: tuple[tuple[str, Rows], ...] = ()

    def markup(self) -> InlineKeyboardMarkup | None:
        """The aiogram keyboard (None: no keyboard)."""
        if not self.rows:
            return None
        keyboard = [[_button(t, k, v) for t, k, v in row] for row in self.rows]
        return InlineKeyboardMarkup(inline_keyboard=keyboard)

    def digest(self) -> str:
        """A digest of text and keyboard: an edit to identical content is never sent."""
        return hashlib.sha256(json.dumps(self.to_json(), sort_keys=True).encode()).hexdigest()[:32]

    def to_json(self) -> dict[str, Any]:
        """A JSON form (kept in Redis, to send again later)."""
        out: dict[str, Any] = {"text": self.text, "rows": [[list(b) for b in row] for row in self.rows]}
        if self.pages:
            out["pages"] = [[name, [[list(b) for b in row] for row in rows]] for name, rows in self.pages]
        return out

    @classmethod
    def of_message(cls, text: str | None, markup: InlineKeyboardMarkup | None) -> Content:
        """What a message received from Telegram shows (to compare with what it should show)."""
        def one(b: InlineKeyboardButton) -> Button:
            if b.url:
                return b.text, "url", b.url
            if b.web_app:
                return b.text, "web_app", b.web_app.url
            return b.text, "data", b.callback_data or ""
        rows = tuple(tuple(one(b) for b in row) for row in (markup.inline_keyboard if markup else []))
        return cls(text or "", rows)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Content:
        """Read :meth:`to_json` back."""
        def rows(raw: Any) -> Rows:
            return tuple(tuple((b[0], b[1], b[2]) for b in row) for row in raw)

        pages = tuple((str(name), rows(r)) for name, r in data.get("pages") or [])
        return cls(data["text"], rows(data.get("rows", [])), pages)


def _button(text: str, kind: str, value: str) -> InlineKeyboardButton:
    if kind == "url":
        return InlineKeyboardButton(text=text, url=value)
    if kind == "web_app":
        return InlineKeyboardButton(text=text, web_app=WebAppInfo(url=value))
    return InlineKeyboardButton(text=text, callback_data=value)


def clip(text: str) -> str:
    """``text`` cut to what Telegram accepts in one message."""
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


@dataclass(frozen=True)
class Show:
    """Show ``content`` in the slot ``(chat, table, slot)``: edit its message, or send one."""

    chat: str
    table: str
    slot: str
    rank: tuple[int, int]
    content: Content
    ids: tuple[str, ...] = ()
    fresh: bool = False  # send a new message even if the slot has one (the hand, brought to the bottom)
    who: str = ""  # the player's name, for a hand (to tell them in the group how to start the bot)
    linger: bool = False  # a group's running table: waits longer, so that several moves merge
    locale: str = "en"
    # A hand that gives the person their turn: nothing more comes to the slot until they act, so it goes
    # at once instead of waiting coalesce_s for content to merge (and cuts short such a wait when it
    # merges into an edit already waiting).
    turn: bool = False


@dataclass(frozen=True)
class Post:
    """Send a new message; ``key`` (the outbox message id) makes a redelivery send nothing twice."""

    chat: str
    content: Content
    key: str


@dataclass(frozen=True)
class Edit:
    """Edit one given message (a settings keyboard, a board redrawn): no slot, nothing kept in Redis.
    With a ``key`` (a board's: the outbox message id), a message that can no longer be edited (deleted,
    too old) gets the content as a new message instead, sent once as a :class:`Post` with that key."""

    chat: str
    message_id: int
    content: Content
    key: str = ""


Op = Show | Post | Edit


def is_group(chat: str) -> bool:
    """Telegram group and supergroup ids are negative; private chats have the user's positive id."""
    return chat.startswith("-")
