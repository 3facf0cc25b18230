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
from service.domain.embargo import deal_shown, withheld
from service.domain.identities import Player
from service.domain.messages import Wire, recipient_wire
from service.domain.tables import notify, rematch
from service.domain.tables.announce import finished_line
from service.domain.tables.outcome import outcome, round_ended
from service.domain.tables.state import FINISHED, RUNNING, Table
from service.protocol import text


def current_messages(t: Table, person: Player | None, secret: bytes, locale: str, *,
                     lifted: bool = True, auto_pass: bool = False) -> list[Wire]:
    """The room's message and, when ``person`` sits at the table, their hand message (ids
    ``now:<table>:<version>:<n>``: they are not in any outbox).  ``lifted``: whether the embargo on a
    deal the table shares has lifted (:mod:`service.domain.embargo`); if not, no seed is shown."""
    cmd = TableCommand(id=f"now:{t.id}:{t.version}", table=t.id, name="hand", locale=locale)
    out = notify._Out(cmd, t.id, t.version, t.game)
    out.deadline = notify.turn_deadline(t)
    out.auto_pass = auto_pass
    running = t.status == RUNNING
    seat_names = notify.names(t) if t.status in (RUNNING, FINISHED) else None
    lines: list[text.Item] = []
    result = None
    over = t.status == FINISHED
    if t.engine is not None and t.status in (RUNNING, FINISHED):
        view = engine.view(t.engine, None)
        # At the end, or right after a round ended: its result and the standings, as notify sent them.
        if over or round_ended(view):
            result = outcome(view)
        if not deal_shown(t, lifted):
            view = withheld(view)  # 535's end view carries the seed
    else:
        view = notify.lobby_view(t)
    if over and t.result is not None:
        lines.append(finished_line(t, shown=deal_shown(t, lifted)))
    if result is not None and seat_names is not None:
        lines.append(text.outcome(seat_names))
    if running and seat_names is not None:
        lines.append(text.view(seat_names))
    shown = {**result, "seed": t.seed} if result is not None and over and deal_shown(t, lifted) else result
    out.add(recipient_wire(), locale, "match_over" if over else "table", lines, view,
            seats=notify.seat_people(t) if over else None, result=shown)
    seat = t.seat_of(person)
    if seat is not None and (running or (over and rematch.offered(t))):
        # Their hand, and at the end of a table with a rematch, their "Play again" (notify's end message).
        notify._hand_message(out, t, seat, secret, locale, seat_names=seat_names, result=result)
    return out.messages
