"""A message's outcome in words: a round's result and the standings, for the text surfaces (a chat,
a webhook's ``text``, the terminal piped, Matrix).  Reads only the outcome it is given, which the
service drew from the public view (:mod:`service.domain.tables.outcome`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from service.protocol.i18n import translate as _t
from service.protocol.i18n.render import join

__all__ = ["outcome_lines", "round_lines", "standings_lines"]


def _name(names: Sequence[str] | None, seat: int, locale: str) -> str:
    if names is not None and 0 <= seat < len(names):
        return names[seat]
    return _t(locale, "view.player", n=seat + 1)


def _signed(v: Any) -> str:
    text = str(v)
    return text if text.startswith(("-", "+")) or text in ("0", "") else f"+{text}"


def round_lines(r: Mapping[str, Any], game: str | None, locale: str,
                names: Sequence[str] | None) -> list[str]:
    """How a round ended: who went out or won it, then what each seat gained or paid."""
    who = join([_name(names, s, locale) for s in r.get("winners") or []], locale)
    n = r.get("n", 1)
    if game == "535":
        lines = [_t(locale, "result.round_535", round=n, player=who)]
        if r.get("points") is not None:
            per = " · ".join(f"{_name(names, s, locale)}: {_signed(p)}" for s, p in enumerate(r["points"]))
            lines.append(_t(locale, "result.points_535", points=per))
        return lines
    pair = len(r.get("winners") or []) > 1
    key = "result.round_blocked" if r.get("end") == "blocked" else \
        "result.round_out_pair" if pair else "result.round_out"
    lines = [_t(locale, key, round=n, players=who)]
    if r.get("points") is not None:
        per = " · ".join(f"{_name(names, s, locale)}: {_signed(p)}" for s, p in enumerate(r["points"]))
        lines.append(_t(locale, "result.points", points=per))
    else:
        left = " · ".join(f"{_name(names, s, locale)}: {c}" for s, c in enumerate(r.get("cards_left") or []))
        lines.append(_t(locale, "result.cards_left", cards=left))
    if r.get("chips") is not None:
        per = " · ".join(f"{_name(names, s, locale)}: {_signed(c)}" for s, c in enumerate(r["chips"]))
        lines.append(_t(locale, "result.chips", chips=per, pot=r.get("pot") or 0))
    return lines


def standings_lines(st: Mapping[str, Any], locale: str, names: Sequence[str] | None) -> list[str]:
    """The score table, best first: "1. Ana 31 · 2. Bea 12", and what the score means."""
    rows = st.get("rows") or []
    by_seat = {r["seat"]: r for r in rows}
    parts = []
    for s in st.get("order") or []:
        r = by_seat.get(s)
        if r is None:
            continue
        unit = "result.unit.rounds" if st.get("scoring") == "round_wins" else "result.unit.points"
        bits = [_t(locale, unit, n=r["shown"])]
        if r.get("chips") is not None:
            bits.append(_t(locale, "result.unit.chips", n=r["chips"]))
        parts.append(f"{r['rank']}. {_name(names, s, locale)} ({', '.join(bits)})")
    key = "result.final" if st.get("over") else "result.standings"
    lines = [_t(locale, key, table=" · ".join(parts))]
    if st.get("lower_wins"):
        lines.append(_t(locale, "result.lower_wins", target=st.get("target")))
    elif st.get("target") and st.get("target", 0) > 1:
        unit = "result.to_points" if st.get("scoring") == "points" else "result.to_rounds"
        lines.append(_t(locale, unit, target=st["target"]))
    return lines


def outcome_lines(outcome: Mapping[str, Any] | None, game: str | None, locale: str,
                  names: Sequence[str] | None) -> list[str]:
    """The outcome in words: the round's result (when one just ended) then the standings."""
    if not outcome:
        return []
    lines: list[str] = []
    st = outcome.get("standings") or {}
    if outcome.get("round") is not None and not (st.get("over") and _one_round(st)):
        lines += round_lines(outcome["round"], game, locale, names)
    if st:
        if _one_round(st) and st.get("over"):
            return lines  # a one-round match: the winner's line says it all
        lines += standings_lines(st, locale, names)
    return lines


def _one_round(st: Mapping[str, Any]) -> bool:
    return st.get("scoring") == "round_wins" and (st.get("target") or 1) <= 1
