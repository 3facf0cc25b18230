"""Deferred text: what a message says, as data, rendered in the reader's language when it is read.

The worker does not format sentences on its hot path: it writes *text items* (message ids with their
parameters, moves, "the view") into the outbox, and :func:`render` turns them into words when an
outbox message is read (:meth:`service.platform.outbox.Message.rendered`).  Rendering is deterministic, from
the message alone, so a message renders the same wherever it is read; and it only ever reads that
message's own view, so it cannot show more than the recipient may see (G-1).

Items (JSON): a string or a number is itself; ``{"t": msgid, "p": {name: item}}`` is a catalogue
message; ``{"move": m, "g": game}`` a move in words; ``{"illegal": code, "g": game, "p": params}``
the engine's reason for refusing a move; ``{"join": [items]}`` a list; ``{"view": [names]}`` the
message's view drawn as text; ``{"outcome": [names]}`` the message's outcome (a round's result, the
standings: ``Message.outcome``) in words.
"""

from __future__ import annotations

from typing import Any

from service.protocol.i18n import translate
from service.protocol.i18n.reasons import illegal_text
from service.protocol.i18n.render import move_text, render_view
from service.protocol.i18n.results import outcome_lines

Item = Any


def t(msgid: str, **params: Item) -> dict[str, Any]:
    """A catalogue message with its parameters (themselves items)."""
    return {"t": msgid, "p": params} if params else {"t": msgid}


def move(game: str | None, m: str) -> dict[str, Any]:
    """A move, to be named in the reader's language."""
    return {"move": m, "g": game}


def illegal(game: str | None, code: str, params: dict[str, Any]) -> dict[str, Any]:
    """The engine's reason for an illegal move (G-2)."""
    return {"illegal": code, "g": game, "p": params}


def joined(items: list[Item]) -> dict[str, Any]:
    """Several items, comma-separated."""
    return {"join": items}


def view(names: list[Item]) -> dict[str, Any]:
    """The message's own view, drawn as text, with these seat names."""
    return {"view": names}


def outcome(names: list[Item]) -> dict[str, Any]:
    """The message's own outcome (a round's result, the standings) in words, with these seat names."""
    return {"outcome": names}


def render(item: Item, locale: str, msg_view: dict[str, Any] | None = None,
           msg_outcome: dict[str, Any] | None = None) -> str:
    """The words of one item in ``locale``."""
    if isinstance(item, str):
        return item
    if not isinstance(item, dict):
        return str(item)
    if "t" in item:
        params = {k: render(v, locale, msg_view) for k, v in (item.get("p") or {}).items()}
        return translate(locale, item["t"], **params)
    if "move" in item:
        return move_text(item.get("g"), item["move"], locale)
    if "illegal" in item:
        return illegal_text(locale, item.get("g"), item["illegal"], item.get("p") or {})
    if "join" in item:
        return ", ".join(render(i, locale, msg_view) for i in item["join"])
    if "view" in item:
        if msg_view is None:
            return ""
        return render_view(msg_view, locale, names=[render(n, locale) for n in item["view"]])
    if "outcome" in item:
        game = (msg_view or {}).get("game")
        names = [render(n, locale) for n in item["outcome"]]
        return "\n".join(outcome_lines(msg_outcome, game, locale, names))
    return ""


def render_lines(items: list[Item], locale: str, msg_view: dict[str, Any] | None = None,
                 msg_outcome: dict[str, Any] | None = None) -> str:
    """Several items, one per line."""
    return "\n".join(s for s in (render(i, locale, msg_view, msg_outcome) for i in items) if s)
