"""The daily deal in words: a person's standing, the share text, a day's board, a person's week.

Every text is put together here from stored attempts (:mod:`service.daily.store`) in the reader's
language.  None of them names a card: an attempt holds its score and its turn marks (played, passed,
went out), never a move (G-1: the share text goes to groups while others still play the deal).
"""

from __future__ import annotations

from service.daily.store import Attempt
from service.domain import daily
from service.protocol.i18n import translate

GAME_NAMES = {"cinquillo": "Cinquillo", "535": "535"}
MEDALS = {1: "🥇", 2: "🥈", 3: "🥉"}


def result_text(locale: str, score: daily.Score) -> str:
    """An attempt's result in a few words: ``1st, 0 cards left`` (Cinquillo), ``12 points, 2nd`` (535)."""
    return translate(locale, f"daily.result.{score.game}", place=score.place, left=score.left)


def standing_line(locale: str, st: daily.Standing) -> str:
    """``Rank 12 of 340 · better than 96% of the others``."""
    return translate(locale, "daily.rank", rank=st.rank, of=st.of, pct=st.percentile)


def streak_line(locale: str, s: daily.Streaks) -> str:
    """``🔥 5 days in a row · 🏆 2 won in a row``."""
    return translate(locale, "daily.streaks", played=s.played, won=s.won)


def share_text(locale: str, game: str, day: int, att: Attempt, st: daily.Standing, s: daily.Streaks) -> str:
    """The spoiler-free result to post in a group: the deal, one mark per turn, the place, the rank
    and the streak.  No card, no move: only whether each turn was a play or a pass."""
    head = translate(locale, "daily.share.head", game=GAME_NAMES[game], day=daily.day_name(day))
    medal = MEDALS.get(att.score.place, "🃏")
    lines = [head, att.marks, f"{medal} {result_text(locale, att.score)} · {standing_line(locale, st)}",
             streak_line(locale, s)]
    return "\n".join(line for line in lines if line)


def standing_text(locale: str, game: str, day: int, att: Attempt, st: daily.Standing, s: daily.Streaks,
                  reveal: float) -> str:
    """``/daily`` once played: the result, rank and percentile, streaks, when the deal is shown,
    and the share text to post."""
    return "\n".join([
        translate(locale, "daily.standing.head", game=GAME_NAMES[game], day=daily.day_name(day)),
        result_text(locale, att.score), standing_line(locale, st), streak_line(locale, s),
        translate(locale, "daily.reveal", reveal=daily.clock_text(reveal)),
        "", translate(locale, "daily.share.intro"), share_text(locale, game, day, att, st, s)])


def board_text(locale: str, game: str, day: int, rows: list[tuple[str, Attempt]], of: int,
               where: str) -> str:
    """A day's board: the best attempts (``where``: ``global``, or ``group`` for the members of a
    group who played it), with how many played it in all."""
    title = translate(locale, f"daily.board.{where}", game=GAME_NAMES[game], day=daily.day_name(day), of=of)
    if not rows:
        return f"{title}\n{translate(locale, 'daily.board.empty')}"
    lines = [title]
    rank, last = 0, None
    for i, (_, att) in enumerate(rows, 1):
        v = att.score.value()
        if v != last:  # equal scores share a rank
            rank, last = i, v
        lines.append(translate(locale, "daily.board.row", n=rank, name=att.name,
                               result=result_text(locale, att.score)))
    return "\n".join(lines)


def week_text(locale: str, game: str, days: list[tuple[int, Attempt | None, daily.Standing | None]],
              s: daily.Streaks) -> str:
    """``/daily week``: each of the last seven days, the attempt's result and rank (or nothing)."""
    lines = [translate(locale, "daily.week.head", game=GAME_NAMES[game])]
    for day, att, st in days:
        if att is None or st is None:
            lines.append(translate(locale, "daily.week.none", day=daily.day_name(day)))
        else:
            lines.append(translate(locale, "daily.week.row", day=daily.day_name(day),
                                   result=result_text(locale, att.score), rank=st.rank, of=st.of))
    lines.append(streak_line(locale, s))
    return "\n".join(lines)
