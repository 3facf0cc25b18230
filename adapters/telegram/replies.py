"""Replies with buttons on Telegram: the boards of ``/rating`` and ``/top``, a tournament's
messages.  Pure, like :mod:`adapters.telegram.render`, whose :func:`~adapters.telegram.render.route`
hands every reply here; the content model is :mod:`adapters.telegram.content`'s.

- A reply's ``actions`` are its buttons, three to a row, each carrying its token (a board's view, a
  tournament's join, leave or start, the leaderboard under the standings).
- A reply that ``replaces`` a message (a board button pressed on it; the bot passed that message's id
  with the press) edits that message in place: one board message, whatever is pressed.  If that
  message can no longer be edited (deleted, too old), the board is posted as a new one
  (:class:`~adapters.telegram.content.Edit`'s ``key``).
- A tournament's sign-up is its own slot (the tournament id, :data:`~adapters.telegram.content.MAIN`),
  edited in place as people join and leave, like a table's lobby.
- A round's message links each of its tables ("🃏 Table k": a deep link that opens the private chat
  on that table, where its players have their hands).
"""

from __future__ import annotations

from adapters.telegram.content import MAIN, MAX_TEXT, ROOM_RANK, ROW, Content, Edit, Post, Rows, Show
from adapters.telegram.keyboards import hand_link
from service.platform.outbox import Message
from service.protocol.i18n import translate
from service.tournaments.director import is_tournament


def action_rows(msg: Message) -> Rows:
    """A reply's actions as buttons, :data:`~adapters.telegram.content.ROW` to a row."""
    buttons = [(a.label or a.move, "data", a.token) for a in msg.actions]
    return tuple(tuple(buttons[i:i + ROW]) for i in range(0, len(buttons), ROW))


def table_rows(msg: Message, bot_username: str) -> Rows:
    """A tournament round's tables (its view names them), each a deep link to the private chat."""
    tables = (msg.view or {}).get("tables") if msg.table and is_tournament(msg.table) else None
    if not tables or not bot_username:
        return ()
    buttons = [(translate(msg.locale, "tg.btn.tournament_table", k=k), "url",
                hand_link(msg.locale, bot_username, str(table))[2]) for k, table in enumerate(tables, 1)]
    return tuple(tuple(buttons[i:i + ROW]) for i in range(0, len(buttons), ROW))


def reply_ops(msg: Message, chat: str, web: Rows, bot_username: str) -> list[Show | Post | Edit]:
    """What to do with a reply (see the module docstring); ``web``: the web table's row, if any."""
    text = msg.text if len(msg.text) <= MAX_TEXT else msg.text[: MAX_TEXT - 1] + "…"
    content = Content(text, action_rows(msg) + table_rows(msg, bot_username) + web)
    if msg.replaces and msg.replaces.isdigit():
        return [Edit(chat, int(msg.replaces), content, key=msg.id)]
    if msg.table and is_tournament(msg.table) and any(a.move == "join" for a in msg.actions):
        return [Show(chat, msg.table, MAIN, (msg.version, ROOM_RANK), content, (msg.id,), locale=msg.locale)]
    return [Post(chat, content, msg.id)]
