"""What a person or a spectator would be shown of a table now: the messages the notifier sends,
built on demand.  Pure.

A web page opened in the middle of a match (or opened again after the outbox it followed was
trimmed) starts from these: the room's message (the public view, ``engine.view(state, None)``) and,
for a seated person, their hand message (their own view and, on their turn, one signed action per
legal move), exactly as :mod:`service.domain.tables.notify` would write them; nothing else (G-1).
"""

from __future__ import annotations

import engine
from service.domain.commands import TableCommand
from service.domain.identities import Player
from service.domain.messages import Wire, recipient_wire
from service.domain.tables import notify
from service.domain.tables.state import FINISHED, RUNNING, Table
from service.protocol import text


def current_messages(t: Table, person: Player | None, secret: bytes, locale: str) -> list[Wire]:
    """The room's message and, when ``person`` sits at the table, their hand message (ids
    ``now:<table>:<version>:<n>``: they are not in any outbox)."""
    cmd = TableCommand(id=f"now:{t.id}:{t.version}", table=t.id, name="hand", locale=locale)
    out = notify._Out(cmd, t.id, t.version, t.game)
    out.deadline = notify.turn_deadline(t)
    running = t.status == RUNNING
    seat_names = notify.names(t) if t.status in (RUNNING, FINISHED) else None
    lines: list[text.Item] = []
    if t.engine is not None and t.status in (RUNNING, FINISHED):
        view = engine.view(t.engine, None)
        if running and seat_names is not None:
            lines.append(text.view(seat_names))
    else:
        view = notify.lobby_view(t)
    over = t.status == FINISHED
    if over and t.result is not None:
        winners = [notify.seat_name(t, w) for w in t.result.get("winners", [])]
        lines.append(text.t("table.finished", winners=text.joined(winners), seed=t.seed or "",
                            commitment=t.commitment or ""))
    out.add(recipient_wire(), locale, "match_over" if over else "table", lines, view,
            seats=notify.seat_people(t) if over else None)
    seat = t.seat_of(person)
    if running and seat is not None:
        notify._hand_message(out, t, seat, secret, locale, seat_names=seat_names)
    return out.messages
