"""A cinq callback as a Matrix message: a plain ``body`` and formatted HTML.

Matrix has no inline buttons, so a message's choices are numbered after its text and a person answers
with the number (the bridge maps it back to the action token).  In the HTML the cards' suit names get
their symbol, as in cinq's own texts.
"""

from __future__ import annotations

import html
import re
from typing import Any

SUITS = {
    "oros": "🪙",
    "coins": "🪙",
    "copas": "🏆",
    "cups": "🏆",
    "espadas": "⚔️",
    "swords": "⚔️",
    "bastos": "🪵",
    "clubs": "🪵",
}
_SUIT_WORD = re.compile(r"\b(?:de |of )?(" + "|".join(SUITS) + r")\b")

TEXTS = {
    "es": {
        "hint": "Responde con el número de tu elección.",
        "no_choice": "No hay ninguna opción {n}: responde con un número del 1 al {k}.",
        "stale_choice": "Esa opción era de un turno anterior: ya no vale. "
        "Mira las opciones del último mensaje.",
    },
    "en": {
        "hint": "Answer with the number of your choice.",
        "no_choice": "There is no option {n}: answer with a number from 1 to {k}.",
        "stale_choice": "That choice is from an earlier turn: it no longer counts. "
        "See the latest message's choices.",
    },
}


def lang(locale: str | None) -> str:
    """The language of the bridge's own lines (Spanish unless the locale is English)."""
    return "en" if (locale or "").lower().startswith("en") else "es"


def text(locale: str | None, key: str, **params: Any) -> str:
    """One of the bridge's own lines, in the recipient's language."""
    return TEXTS[lang(locale)][key].format(**params)


def _suited(label: str) -> str:
    """``5 de oros`` as HTML with the suit's symbol: ``5 🪙 oros``."""
    return _SUIT_WORD.sub(lambda m: f"{SUITS[m.group(1)]} {m.group(1)}", html.escape(label))


def content(msg: dict[str, Any]) -> dict[str, Any]:
    """The ``m.room.message`` content of a callback (``msg`` is the OutboundMessage document)."""
    labels = [b["label"] for b in msg.get("buttons") or []]
    body = msg["text"]
    formatted = html.escape(msg["text"]).replace("\n", "<br>")
    if labels:
        hint = text(msg.get("locale"), "hint")
        body += "\n\n" + "\n".join(f"{i}. {label}" for i, label in enumerate(labels, 1)) + "\n" + hint
        formatted += "<ol>" + "".join(f"<li>{_suited(label)}</li>" for label in labels) + "</ol>"
        formatted += f"<i>{html.escape(hint)}</i>"
    return {
        "msgtype": "m.text",
        "body": body,
        "format": "org.matrix.custom.html",
        "formatted_body": formatted,
    }


def replacement(original_event: str, new: dict[str, Any]) -> dict[str, Any]:
    """A message that replaces ``original_event`` in place (``m.replace``): clients show the new content."""
    return {
        "msgtype": new["msgtype"],
        "body": "* " + new["body"],
        "format": new["format"],
        "formatted_body": "* " + new["formatted_body"],
        "m.new_content": new,
        "m.relates_to": {"rel_type": "m.replace", "event_id": original_event},
    }


def notice(body: str) -> dict[str, Any]:
    """A plain line of the bridge's own (a refused number)."""
    return {"msgtype": "m.notice", "body": body}
