"""The settings keyboard of a new table (``/play`` in private, ``/new`` in a group).  Pure.

It only ever offers what the engine accepts (:mod:`service.tables.choices`): the player counts
button cycles through the counts the chosen options allow, and an option whose toggle no player
count allows is not offered at all; toggling one moves the player count to the nearest allowed.
Every button carries the keyboard's whole state (:class:`~adapters.telegram.callbacks.Cfg`) and
what it does (``op``); the handler applies ``op`` to the *latest* state the keyboard was given (the
sender remembers it), not to the state of the keyboard the press came from, so that quick taps
each count once.  The message says what each offered option means, in the reader's language.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from adapters.telegram.callbacks import FLAGS, GAMES, Cfg
from adapters.telegram.content import Content
from service.domain.tables.choices import seat_counts
from service.protocol.i18n import translate
from service.protocol.parse import ProtocolError, parse_command

# The player count a game's keyboard opens with.
FIRST_PLAYERS = {"c": 4, "5": 3}


@lru_cache(maxsize=256)
def _options(game: str, flags: int) -> tuple[tuple[str, Any], ...]:
    words = " ".join(w for i, (_, w) in enumerate(FLAGS[game]) if flags >> i & 1)
    try:
        parsed = parse_command(f"/new {GAMES[game]} {words}")
    except ProtocolError:  # our own words: cannot happen, but an impossible keyboard offers nothing
        return (("?", True),)
    return tuple(sorted(parsed.args["options"].items()))


def engine_options(cfg: Cfg) -> dict[str, Any]:
    """The engine options a keyboard state stands for."""
    return dict(_options(cfg.game, cfg.flags))


def counts(game: str, flags: int) -> list[int]:
    """The player counts the engine accepts for ``game`` with the option ``flags``."""
    return seat_counts(GAMES[game], dict(_options(game, flags)))


def valid(cfg: Cfg) -> bool:
    """Whether the engine starts the match this keyboard state stands for."""
    return cfg.game in GAMES and cfg.players in counts(cfg.game, cfg.flags)


def _nearest(n: int, allowed: list[int]) -> int:
    return min(allowed, key=lambda k: (abs(k - n), -k))


def first(where: str, game: str) -> Cfg:
    """The keyboard's state when a game is picked."""
    allowed = counts(game, 0)
    return Cfg(where=where, game=game, players=_nearest(FIRST_PLAYERS[game], allowed), flags=0, op="show")


def apply(state: Cfg, op: str) -> Cfg:
    """``op`` applied to ``state``: the next allowed player count (``n``), option ``i`` toggled
    (``t<i>``: the count moves to the nearest one allowed), anything else leaves it.  An op the state
    does not allow (a button of an older keyboard) changes nothing."""
    if op == "n":
        allowed = counts(state.game, state.flags)
        if not allowed:
            return state
        later = [k for k in allowed if k > state.players]
        return state.model_copy(update={"players": later[0] if later else allowed[0]})
    if op.startswith("t") and op[1:].isdigit() and int(op[1:]) < len(FLAGS[state.game]):
        flags = state.flags ^ (1 << int(op[1:]))
        allowed = counts(state.game, flags)
        if not allowed:
            return state
        return state.model_copy(update={"flags": flags, "players": _nearest(state.players, allowed)})
    return state


def state_of(content: Content) -> Cfg | None:
    """The keyboard state a settings message shows (any of its buttons carries it whole)."""
    for row in content.rows:
        for _, kind, data in row:
            if kind == "data" and data.startswith(f"{Cfg.__prefix__}{Cfg.__separator__}"):
                try:
                    return Cfg.unpack(data).model_copy(update={"op": "show"})
                except (ValueError, TypeError):
                    continue
    return None


def settings_content(locale: str, cfg: Cfg) -> Content:
    """The settings keyboard for ``cfg``: only what the engine accepts, each option explained."""
    game = GAMES[cfg.game]

    def data(op: str) -> str:
        return cfg.model_copy(update={"op": op}).pack()

    rows: list[tuple[tuple[str, str, str], ...]] = []
    lines = [translate(locale, "tg.settings", game=translate(locale, f"game.{game}"), players=cfg.players)]
    if len(counts(cfg.game, cfg.flags)) > 1:
        rows.append(((translate(locale, "tg.btn.players", n=cfg.players), "data", data("n")),))
    for i, (label, _) in enumerate(FLAGS[cfg.game]):
        if not counts(cfg.game, cfg.flags ^ (1 << i)):
            continue  # no player count allows it with the other options: not offered
        on = bool(cfg.flags >> i & 1)
        name = translate(locale, label)
        rows.append(((translate(locale, "tg.btn.on" if on else "tg.btn.off", option=name), "data",
                      data(f"t{i}")),))
        meaning = translate(locale, label.replace(".opt.", ".optdesc."))
        lines.append(f"{'✅' if on else '▫️'} {name}: {meaning}")
    go = "tg.btn.play" if cfg.where == "p" else "tg.btn.open"
    rows.append(((translate(locale, go), "data", data("go")),))
    return Content("\n".join(lines), tuple(rows))


def games_content(locale: str, where: str, text: str) -> Content:
    """A text with one button per game, each opening the settings keyboard."""
    row = tuple((translate(locale, f"game.{g}"), "data", first(where, k).pack()) for k, g in GAMES.items())
    return Content(text, (row,))
