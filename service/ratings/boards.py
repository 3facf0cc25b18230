"""``/rating`` and ``/top`` in words: read from the ratings' keys, answered by the gateway.

A group's board lists the people who played there (``rt:{ratings}:grp:…``) with their current
ratings; a private chat's is the global board (``rt:{ratings}:top:…``).  ``week`` and ``month`` rank
by the rating points won in the current ISO week or calendar month (UTC) instead.
"""

from __future__ import annotations

from typing import Any

from service.domain.identities import Player, Room
from service.protocol.i18n import translate
from service.ratings.model import Rating
from service.ratings.store import RatingStore, month, week
from service.store.decoding import as_text

GAMES = ("cinquillo", "535")
BOARD_SIZE = 10
GAME_NAMES = {"cinquillo": "Cinquillo", "535": "535"}


def _trend(trend: list[int]) -> str:
    return " ".join(f"{d:+d}" for d in trend)


async def rating_text(store: RatingStore, user: Player, locale: str) -> str:
    """``/rating``: the person's rating per game, rank, matches, win rate and last changes."""
    person = f"{user.platform}:{user.user}"
    lines = []
    for game in GAMES:
        found = await store.get(game, [person])
        r = found.get(person)
        if r is None:
            continue
        rank = await store.redis.zrevrank(store.keys.top(game), person)
        of = await store.redis.zcard(store.keys.top(game))
        lines.append(translate(locale, "rating.line", game=GAME_NAMES[game], points=r.points,
                               rank=(rank or 0) + 1, of=of, matches=r.matches,
                               rate=round(100 * r.wins / max(r.matches, 1)), trend=_trend(r.trend) or "—"))
    if not lines:
        return translate(locale, "rating.none")
    return "\n".join([translate(locale, "rating.title"), *lines])


async def _names(store: RatingStore, game: str, people: list[str]) -> dict[str, Rating]:
    return await store.get(game, people)


async def board_text(store: RatingStore, room: Room, locale: str, game: str | None, window: str | None,
                     now: float) -> str:
    """``/top [game] [week|month]``: the group's board in a group, the global one in a private chat."""
    k, redis = store.keys, store.redis
    period = week(now) if window == "week" else month(now) if window == "month" else None
    where = "group" if room.kind == "group" else "global"
    parts = []
    for g in [game] if game else list(GAMES):
        rows: list[tuple[str, float]]
        if room.kind == "group":
            members = [as_text(m) for m in await redis.smembers(k.group(f"{room.platform}:{room.chat}", g))]
            if period is None:
                ratings = await store.get(g, members)
                rows = [(p, float(r.points)) for p, r in ratings.items()]
            else:
                scores = await redis.zmscore(k.window(g, period), members) if members else []
                rows = [(p, float(s)) for p, s in zip(members, scores, strict=True) if s is not None]
            rows.sort(key=lambda x: (-x[1], x[0]))
            rows = rows[:BOARD_SIZE]
        else:
            key = k.top(g) if period is None else k.window(g, period)
            top = await redis.zrevrange(key, 0, BOARD_SIZE - 1, withscores=True)
            rows = [(as_text(p), float(s)) for p, s in top]
        title = translate(locale, f"top.title.{where}.{window or 'all'}", game=GAME_NAMES[g])
        if not rows:
            parts.append(f"{title}\n{translate(locale, 'top.empty')}")
            continue
        known = await _names(store, g, [p for p, _ in rows])
        lines = [title]
        for i, (p, score) in enumerate(rows, 1):
            r = known.get(p)
            name = (r.name if r else "") or p.partition(":")[2]
            if period is None:
                lines.append(translate(locale, "top.row", n=i, name=name, points=int(score),
                                       matches=r.matches if r else 0))
            else:
                lines.append(translate(locale, "top.row_window", n=i, name=name, gain=f"{int(score):+d}"))
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


async def answer(store: RatingStore, name: str, args: dict[str, Any], user: Player, room: Room,
                 locale: str, now: float) -> str:
    """The gateway's reply to ``/rating`` or ``/top``."""
    if name == "rating":
        return await rating_text(store, user, locale)
    return await board_text(store, room, locale, args.get("game"), args.get("window"), now)
