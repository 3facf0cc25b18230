"""What the page is sent: an outbox message reshaped for the browser, and the page's texts.

A message keeps only what the page draws: its kind and version, the view the service addressed to
the viewer (the room's public one, or their own), their actions (each with its label and the kind
the service gives it), its outcome (a round's result, the standings), the seat names, and its lines
in words without the text drawing of the view (the page draws the view itself).  ``last`` puts each
seat's last action of the round into words (from the view's public history).  Nothing is added that
the message does not hold (G-1).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from service.domain.identities import Player
from service.platform.outbox import Message
from service.protocol import text
from service.protocol.i18n import msgids, plural_templates, translate
from service.protocol.i18n.render import move_kind, move_text

_SUITS = "oceb"
_RANKS = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)
# How many of the round's moves a page opened (or reloaded) mid-match gets in words.
RECENT = 12


# Lines a chat needs and the page does not: how to join with /join, the commitment's 64 hex digits
# and "check it with /replay" (the page's end says the fair deal in one plain sentence and links
# the replay), which chat the table is shown in.
CHAT_ONLY = frozenset({"table.created", "table.started", "table.finished", "table.room_attached"})


def _drawn(item: Any) -> bool:
    """An item the page draws itself (the view, the outcome) or says its own way, not a line of words."""
    return isinstance(item, dict) and ("view" in item or "outcome" in item or item.get("t") in CHAT_ONLY)


def _names(msg: Message, locale: str) -> list[str] | None:
    for item in msg.lines:
        if isinstance(item, dict):
            for key in ("view", "outcome"):
                if isinstance(item.get(key), list):
                    return [text.render(n, locale) for n in item[key]]
    return None


def page_message(msg: Message, person: Player | None, locale: str, *, recent: bool = False) -> dict[str, Any]:
    """The JSON the page receives for ``msg`` (already addressed to this viewer by the service).
    ``recent``: also the round's last moves in words (a page that opens mid-match has no log)."""
    # A room's table is the room's, even in a private chat whose messages name their person (so
    # that they keep their order with that person's hand): only hands and replies are "me".
    room = msg.to.room is not None and msg.kind in ("table", "match_over")
    mine = not room and person is not None and (person.same(msg.to.player) or person.same(msg.to.person))
    if msg.lines:
        words = [s for item in msg.lines if not _drawn(item) and (s := text.render(item, locale, None))]
    else:
        words = [msg.text] if msg.text else []
    view = msg.view or {}
    history = [h for h in view.get("history") or [] if isinstance(h, dict)]
    last: dict[int, str] = {}
    for h in history:
        last[h["seat"]] = move_text(msg.game, h["move"], locale)
    out = {"id": msg.id, "kind": msg.kind, "version": msg.version, "game": msg.game,
           "names": _names(msg, locale), "to": "me" if mine else "room", "view": msg.view, "lines": words,
           "actions": [{"move": a.move, "token": a.token, "kind": a.kind or move_kind(msg.game, a.move),
                        "label": a.label or move_text(msg.game, a.move, locale)} for a in msg.actions],
           "deadline": msg.deadline, "code": msg.code, "outcome": msg.outcome, "last": last}
    if recent:
        out["recent"] = [[h["seat"], move_text(msg.game, h["move"], locale)] for h in history[-RECENT:]]
    return out


@cache
def catalogue(locale: str) -> dict[str, Any]:
    """The page's texts (domain ``web``; a plural entry as its two forms, ``key`` and ``key.plural``),
    every Cinquillo card's spoken name and the suits' names."""
    texts = {}
    for k in sorted(msgids("web", locale)):
        forms = plural_templates(locale, k)
        if forms is None:
            texts[k] = translate(locale, k)
        else:  # the page fills the count: "{n} card" for 1, "{n} cards" for any other (table.js trn)
            texts[k], texts[f"{k}.plural"] = forms
    cards = {f"{r}{s}": move_text("cinquillo", f"{r}{s}", locale) for s in _SUITS for r in _RANKS}
    suits = {s: translate(locale, f"card.suit.{s}") for s in _SUITS}
    return {"locale": locale, "t": texts, "cards": cards, "suits": suits,
            "pass": move_text("cinquillo", "pass", locale)}
