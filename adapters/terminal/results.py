"""The terminal's round result and end screen, drawn from the service's outcome (``Message.outcome``:
the round's result and the standings, already public, :mod:`service.domain.tables.outcome`) and the
final public view.  Pure: lines of text."""

from __future__ import annotations

from typing import Any

from service.domain.tables.outcome import shown
from service.platform.outbox import Message
from service.protocol.i18n import translate
from service.protocol.i18n.render import join, move_text
from service.protocol.i18n.results import round_lines

__all__ = ["end_block", "partner", "round_block", "shown", "title"]


def partner(view: dict[str, Any], seat: int) -> int | None:
    """The partner of ``seat`` in a match of pairs (C-12), or None."""
    for team in view.get("teams") or []:
        if seat in team:
            return next((s for s in team if s != seat), None)
    return None


def title(view: dict[str, Any], locale: str) -> str:
    """The first line: the game, the round, what the match is played to, the pot."""
    t = translate
    game = view.get("game")
    bits = [t(locale, "view.title", game=t(locale, f"game.{game}"), round=view.get("round", 1))]
    if game == "535":
        bits.append(t(locale, "terminal.lower_wins", target=(view.get("options") or {}).get("target")))
    elif view.get("scoring") == "points" and view.get("target"):
        bits.append(t(locale, "terminal.to_points", target=view["target"]))
    elif (view.get("rounds_to_win") or 1) > 1:
        bits.append(t(locale, "terminal.to_rounds", target=view["rounds_to_win"]))
    if view.get("pot") is not None:
        bits.append(t(locale, "terminal.pot", n=view["pot"]))
    return " · ".join(bits)


def _name(names: list[str] | None, seat: int, locale: str, me: int | None = None) -> str:
    name = names[seat] if names and 0 <= seat < len(names) else translate(locale, "view.player", n=seat + 1)
    return translate(locale, "view.you", name=name) if seat == me else name


def round_block(outcome: dict[str, Any], game: str | None, locale: str, names: list[str] | None,
                view: dict[str, Any]) -> list[str]:
    """A round that just ended: who won it, what each seat gained or paid, the score table."""
    me = view.get("seat")
    shown_names = [_name(names, i, locale, me) for i in range(len(names or []))] or None
    lines = ["", "─" * 40, *round_lines(outcome["round"], game, locale, shown_names)]
    lines += _table(outcome["standings"], locale, names, me)
    lines.append("─" * 40)
    return lines


def _table(st: dict[str, Any], locale: str, names: list[str] | None, me: int | None,
           left: list[int] | None = None) -> list[str]:
    """The standings as rows, best first: rank, name, score (and chips, cards left)."""
    rows = {r["seat"]: r for r in st.get("rows") or []}
    unit = "result.unit.rounds" if st.get("scoring") == "round_wins" else "result.unit.points"
    table = []
    for s in st.get("order") or []:
        r = rows[s]
        cells = [f"{r['rank']}.", _name(names, s, locale, me), translate(locale, unit, n=r["shown"])]
        if r.get("chips") is not None:
            cells.append(translate(locale, "result.unit.chips", n=r["chips"]))
        if left is not None and s < len(left):
            cells.append(translate(locale, "terminal.cards", n=left[s]))
        cells.append("🏆" if s in (st.get("winners") or []) else "")
        table.append(cells)
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))] if table else []
    out = ["  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in table]
    if st.get("lower_wins"):
        out.append("  " + translate(locale, "result.lower_wins", target=st.get("target")))
    return out


def end_block(msg: Message, locale: str, names: list[str] | None, me: int | None,
              checked: bool | None) -> list[str]:
    """The end: a headline for this player, the last round, the final standings, the last moves
    (the winning one first), and the check of the deal in one plain sentence."""
    view = msg.view or {}
    outcome = msg.outcome or {}
    st = outcome.get("standings") or {}
    result = view.get("result") or {}
    winners = list(st.get("winners") or view.get("winners") or result.get("winners") or [])
    lines = ["", "═" * 40, translate(locale, "view.over")]
    if me is not None:
        lines.append(translate(locale, "table.you_won" if me in winners else "table.you_lost"))
    else:
        who = join([_name(names, w, locale) for w in winners], locale)
        lines.append(translate(locale, "view.winner" if len(winners) == 1 else "view.winners", players=who))
    history = [h for h in view.get("history") or [] if isinstance(h, dict)]
    if history:
        last = history[-1]
        lines.append(translate(locale, "terminal.last_move", player=_name(names, last["seat"], locale, me),
                               move=move_text(view.get("game"), last["move"], locale)))
        before = [f"{_name(names, h['seat'], locale, me)}: {move_text(view.get('game'), h['move'], locale)}"
                  for h in history[-4:-1]]
        if before:
            lines.append(translate(locale, "terminal.before", moves=" · ".join(before)))
    if outcome.get("round") and not (st.get("scoring") == "round_wins" and (st.get("target") or 1) <= 1):
        shown_names = [_name(names, i, locale, me) for i in range(len(names or []))] or None
        lines += round_lines(outcome["round"], view.get("game"), locale, shown_names)
    lines.append(translate(locale, "terminal.final"))
    lines += _table(st, locale, names, me, left=view.get("hand_sizes"))
    lines.append("═" * 40)
    if checked is not None:
        # One plain sentence, with the seed when this deal is the table's own (the room's outcome
        # carries it then), and how to check it again.
        seed = outcome.get("seed")
        key = "terminal.unfair" if not checked else "terminal.fair_seed" if seed else "terminal.fair"
        lines.append(translate(locale, key, table=msg.table or "", seed=seed or ""))
    return lines
