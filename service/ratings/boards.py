"""``/rating`` and ``/top`` in words and buttons: read from the ratings' keys, answered by the gateway
(:func:`register` puts them in its table of handlers).

A group's board lists the people who played there (``rt:{ratings}:grp:…``) with their current
ratings; a private chat's is the global board (``rt:{ratings}:top:…``).  ``week`` and ``month`` rank
by the rating points won in the current ISO week or calendar month (UTC) instead.

**One message.**  Each answer carries buttons: the game (Cinquillo, 535, both) and the window (all
time, week, month) of the board, and "my rating" / "leaderboard" to switch between the two views.
A button is an action token whose "table" is :data:`BOARD` and whose move names the view
(:func:`view_move`); pressing it answers with that view, marked as *replacing* the message pressed
(``Message.replaces``, the platform's own reference to it, passed by the adapter with the press), so
a platform that can edit a message redraws that one in place instead of posting another.  The view
is read for whoever presses (their rating, their group's board), never for the message's first reader.
"""

from __future__ import annotations

from typing import Any

from service.domain.identities import Player, Room
from service.domain.inputs import Handlers, Received, Reply
from service.domain.messages import Action
from service.domain.tokens import Claims, issue
from service.protocol.i18n import translate
from service.ratings.model import Rating
from service.ratings.store import RatingStore, month, week
from service.store.decoding import as_text

GAMES = ("cinquillo", "535")
BOARD_SIZE = 10
GAME_NAMES = {"cinquillo": "Cinquillo", "535": "535"}
# The "table" of a board button's token (tables are lowercase base32, tournaments start with "T").
BOARD = "B"
# A view's move: "rating", or "top <game> <window>" with these short words (a token holds 64 bytes).
_GAME_CODE = {None: "a", "cinquillo": "c", "535": "5"}
_WINDOW_CODE = {None: "a", "week": "w", "month": "m"}


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
        rank = await store.redis.zrevrank(store.keys.rating_top(game), person)
        of = await store.redis.zcard(store.keys.rating_top(game))
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
            group = k.rating_group(f"{room.platform}:{room.chat}", g)
            members = [as_text(m) for m in await redis.smembers(group)]
            if period is None:
                ratings = await store.get(g, members)
                rows = [(p, float(r.points)) for p, r in ratings.items()]
            else:
                scores = await redis.zmscore(k.rating_window(g, period), members) if members else []
                rows = [(p, float(s)) for p, s in zip(members, scores, strict=True) if s is not None]
            rows.sort(key=lambda x: (-x[1], x[0]))
            rows = rows[:BOARD_SIZE]
        else:
            key = k.rating_top(g) if period is None else k.rating_window(g, period)
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


def view_move(name: str, game: str | None = None, window: str | None = None, *, anew: bool = False) -> str:
    """The move of a board button: ``rating``, or ``top`` with a game and a window code; ``anew``: the
    view is posted as a message of its own (a button on a message that is not a board: standings)."""
    move = "rating" if name == "rating" else f"top {_GAME_CODE[game]} {_WINDOW_CODE[window]}"
    return f"{move} n" if anew else move


def parse_view(move: str) -> tuple[str, dict[str, Any]] | None:
    """The view a board button's move names, as ``(name, args)`` of :func:`answer` (``args["anew"]``
    for a view posted anew); None: no view."""
    words = move.split(" ")
    anew = len(words) > 1 and words[-1] == "n"
    if anew:
        words = words[:-1]
    games = {v: k for k, v in _GAME_CODE.items()}
    windows = {v: k for k, v in _WINDOW_CODE.items()}
    if words == ["rating"]:
        return "rating", {"anew": True} if anew else {}
    if len(words) != 3 or words[0] != "top" or words[1] not in games or words[2] not in windows:
        return None
    args: dict[str, Any] = {"game": games[words[1]], "window": windows[words[2]]}
    return "top", {**args, "anew": True} if anew else args


def buttons(secret: bytes, locale: str, name: str, args: dict[str, Any]) -> list[Action]:
    """The buttons of a view: the board's game and window (the one shown marked), and the other view."""
    def button(label: str, move: str, on: bool = False) -> Action:
        token = issue(secret, table=BOARD, seat=0, version=0, move=move)
        return Action(move=move, token=token, label=f"• {label}" if on else label)

    if name == "rating":
        return [button(translate(locale, "board.btn.top"), view_move("top"))]
    game, window = args.get("game"), args.get("window")
    out = [button(translate(locale, f"board.btn.game.{g or 'all'}"), view_move("top", g, window), g == game)
           for g in (None, *GAMES)]
    out += [button(translate(locale, f"board.btn.window.{w or 'all'}"), view_move("top", game, w),
                   w == window) for w in (None, "week", "month")]
    return [*out, button(translate(locale, "board.btn.rating"), view_move("rating"))]


async def answer(store: RatingStore, name: str, args: dict[str, Any], user: Player, room: Room,
                 locale: str, now: float, secret: bytes | None = None) -> dict[str, Any]:
    """The gateway's reply to ``/rating`` or ``/top`` (or a board button): its ``text``, and its
    ``actions`` (the buttons, when ``secret`` is given to sign them)."""
    if name == "rating":
        text = await rating_text(store, user, locale)
    else:
        text = await board_text(store, room, locale, args.get("game"), args.get("window"), now)
    return {"text": text, "actions": buttons(secret, locale, name, args) if secret else []}


async def press(store: RatingStore, move: str, user: Player, room: Room, locale: str, now: float,
                secret: bytes) -> dict[str, Any]:
    """The answer to a board button: its view (an unknown one, from an older version: the default
    board), with ``redraw`` set when it replaces the message pressed (see the module docstring)."""
    name, args = parse_view(move) or ("top", {})
    out = await answer(store, name, args, user, room, locale, now, secret)
    return {**out, "redraw": not args.get("anew")}


def register(handlers: Handlers, store: RatingStore, secret: bytes) -> None:
    """Answer ``/rating`` and ``/top``, and the board buttons (tokens naming :data:`BOARD`), in the
    gateway's table of handlers."""

    async def command(inp: Received, name: str, args: dict[str, Any], reply: Reply) -> str:
        return await reply(**await answer(store, name, args, inp.user, inp.room, inp.locale, inp.at, secret))

    async def pressed(inp: Received, claims: Claims, token: str, reply: Reply) -> str:
        return await reply(**await press(store, claims.move, inp.user, inp.room, inp.locale, inp.at, secret))

    for name in ("rating", "top"):
        handlers.command(name, command)
    handlers.press(lambda table: table == BOARD, pressed)
