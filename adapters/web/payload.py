"""What the page is sent: an outbox message reshaped for the browser, and the page's texts.

A message keeps only what the page draws: its kind and version, the view the service addressed to
the viewer (the room's public one, or their own), their actions, and its lines in words without the
text drawing of the view (the page draws the view itself).  Nothing is added (G-1).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from service.domain.identities import Player
from service.platform.outbox import Message
from service.protocol import text
from service.protocol.i18n import msgids, translate
from service.protocol.i18n.render import move_text

_SUITS = "oceb"
_RANKS = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)


def _is_view(item: Any) -> bool:
    return isinstance(item, dict) and "view" in item


def page_message(msg: Message, person: Player | None, locale: str) -> dict[str, Any]:
    """The JSON the page receives for ``msg`` (already addressed to this viewer by the service)."""
    mine = person is not None and (person.same(msg.to.player) or person.same(msg.to.person))
    if msg.lines:
        words = [s for item in msg.lines if not _is_view(item) and (s := text.render(item, locale, None))]
    else:
        words = [msg.text] if msg.text else []
    names = next((item["view"] for item in msg.lines if _is_view(item)), None)
    return {"id": msg.id, "kind": msg.kind, "version": msg.version, "game": msg.game,
            "names": [text.render(n, locale) for n in names] if names is not None else None,
            "to": "me" if mine else "room", "view": msg.view, "lines": words,
            "actions": [{"move": a.move, "token": a.token,
                         "label": a.label or move_text(msg.game, a.move, locale)} for a in msg.actions],
            "deadline": msg.deadline, "code": msg.code}


@cache
def catalogue(locale: str) -> dict[str, Any]:
    """The page's texts (domain ``web``), every Cinquillo card's spoken name and the suits' names."""
    texts = {k: translate(locale, k) for k in sorted(msgids("web", locale))}
    cards = {f"{r}{s}": move_text("cinquillo", f"{r}{s}", locale) for s in _SUITS for r in _RANKS}
    suits = {s: translate(locale, f"card.suit.{s}") for s in _SUITS}
    return {"locale": locale, "t": texts, "cards": cards, "suits": suits,
            "pass": move_text("cinquillo", "pass", locale)}
