"""The settings keyboard of a new table (``/play`` in private, ``/new`` in a group).  Pure.

It only ever offers what the engine accepts (:mod:`service.domain.tables.choices`): the player
count button cycles through the counts the chosen options allow; an option whose toggle no player
count allows is not offered at all, and toggling one moves the player count to the nearest
allowed.  The direction of play and the target score step through the values the engine accepts
with the other choices (a game or a variant without them shows no such button: 535 has no
direction, a Cinquillo match without points or cabrón no target); the turn timer steps through a
few durations.  Every button carries the keyboard's whole state
(:class:`~adapters.telegram.callbacks.Cfg`) and what it does (``op``); the handler applies ``op``
to the *latest* state the keyboard was given (the sender remembers it), not to the state of the
keyboard the press came from, so that quick taps each count once.  The message says what each
offered option means, in the reader's language; ``go`` becomes a typed command (:func:`request`).
"""

from __future__ import annotations

from typing import Any

from adapters.telegram.callbacks import DIRECTIONS, FLAGS, GAMES, TARGETS, TURNS, Cfg, Daily
from adapters.telegram.content import Button, Content
from service.domain.requests import Create
from service.domain.tables.choices import in_force, seat_counts
from service.protocol.i18n import translate

# The player count a game's keyboard opens with.
FIRST_PLAYERS = {"c": 4, "5": 3}
# The stepping buttons: (op, Cfg field, engine option, its values).
CYCLES: tuple[tuple[str, str, str, tuple[Any, ...]], ...] = (
    ("d", "dir", "direction", DIRECTIONS), ("g", "target", "target", TARGETS))


def _engine_options(game: str, flags: int, direction: int = 0, target: int = 0) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for i, (_, opts) in enumerate(FLAGS[game]):
        if flags >> i & 1:
            options.update(opts)
    for (_, _, key, values), index in zip(CYCLES, (direction, target), strict=True):
        if 0 < index < len(values):
            options[key] = values[index]
    return options


def engine_options(cfg: Cfg) -> dict[str, Any]:
    """The engine options a keyboard state stands for."""
    return _engine_options(cfg.game, cfg.flags, cfg.dir, cfg.target)


def counts(game: str, flags: int, direction: int = 0, target: int = 0) -> list[int]:
    """The player counts the engine accepts for ``game`` with these choices."""
    return seat_counts(GAMES[game], _engine_options(game, flags, direction, target))


def _counts(cfg: Cfg) -> list[int]:
    return counts(cfg.game, cfg.flags, cfg.dir, cfg.target)


def valid(cfg: Cfg) -> bool:
    """Whether the engine starts the match this keyboard state stands for."""
    return cfg.game in GAMES and cfg.players in _counts(cfg)


def _nearest(n: int, allowed: list[int]) -> int:
    return min(allowed, key=lambda k: (abs(k - n), -k))


def first(where: str, game: str) -> Cfg:
    """The keyboard's state when a game is picked."""
    allowed = counts(game, 0)
    return Cfg(where=where, game=game, players=_nearest(FIRST_PLAYERS[game], allowed), flags=0, op="show")


def _in_force(cfg: Cfg) -> dict[str, Any]:
    allowed = _counts(cfg)
    return in_force(GAMES[cfg.game], _nearest(cfg.players, allowed), engine_options(cfg)) if allowed else {}


def _step(state: Cfg, field: str, key: str, values: tuple[Any, ...]) -> Cfg:
    """The next value of a stepping option the engine accepts that changes what is in force."""
    now = _in_force(state).get(key)
    index = getattr(state, field)
    for k in range(1, len(values)):
        nxt = state.model_copy(update={field: (index + k) % len(values)})
        allowed = _counts(nxt)
        if allowed and _in_force(nxt).get(key) != now:
            return nxt.model_copy(update={"players": _nearest(state.players, allowed)})
    return state


def _next_turn(state: Cfg, default_turn: float) -> Cfg:
    for k in range(1, len(TURNS)):
        index = (state.turn + k) % len(TURNS)
        if index == 0 or TURNS[index] != default_turn:  # the default's own value: the same choice
            return state.model_copy(update={"turn": index})
    return state


def apply(state: Cfg, op: str, default_turn: float = 0.0) -> Cfg:
    """``op`` applied to ``state``: the next allowed player count (``n``), option ``i`` toggled
    (``t<i>``: the count moves to the nearest one allowed; a direction or target the toggle makes
    impossible goes back to the default), the next direction, target or turn timer (``d``, ``g``,
    ``s``); anything else leaves it.  An op the state does not allow changes nothing."""
    if op == "n":
        allowed = _counts(state)
        if not allowed:
            return state
        later = [k for k in allowed if k > state.players]
        return state.model_copy(update={"players": later[0] if later else allowed[0]})
    if op.startswith("t") and op[1:].isdigit() and int(op[1:]) < len(FLAGS[state.game]):
        toggled = state.model_copy(update={"flags": state.flags ^ (1 << int(op[1:]))})
        for nxt in (toggled, toggled.model_copy(update={"dir": 0, "target": 0})):
            allowed = _counts(nxt)
            if allowed:
                return nxt.model_copy(update={"players": _nearest(state.players, allowed)})
        return state
    for cycle_op, field, key, values in CYCLES:
        if op == cycle_op:
            return _step(state, field, key, values)
    if op == "s":
        return _next_turn(state, default_turn)
    return state


def request(cfg: Cfg) -> Create:
    """The typed command a keyboard's ``go`` stands for: ``/play`` in private, ``/new`` in a group."""
    options = engine_options(cfg)
    turn = TURNS[cfg.turn] if 0 <= cfg.turn < len(TURNS) else None
    if turn is not None:
        options["turn"] = turn
    return Create(name="play" if cfg.where == "p" else "new", game=GAMES[cfg.game], options=options,
                  players=cfg.players)


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


def _turn_text(locale: str, seconds: float | None, default_turn: float) -> str:
    if seconds is None:
        return translate(locale, "tg.turn.default", value=_turn_text(locale, default_turn, default_turn))
    if seconds <= 0:
        return translate(locale, "tg.turn.off")
    return translate(locale, "tg.turn.seconds", seconds=int(seconds))


def settings_content(locale: str, cfg: Cfg, default_turn: float = 0.0) -> Content:
    """The settings keyboard for ``cfg``: only what the engine accepts, each option explained.
    ``default_turn``: the service's turn timer, in force unless another is chosen."""
    game = GAMES[cfg.game]

    def data(op: str) -> str:
        return cfg.model_copy(update={"op": op}).pack()

    rows: list[tuple[Button, ...]] = []
    lines = [translate(locale, "tg.settings", game=translate(locale, f"game.{game}"), players=cfg.players)]
    if len(_counts(cfg)) > 1:
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
    now = _in_force(cfg)
    for op, field, key, values in CYCLES:
        if _step(cfg, field, key, values) == cfg or now.get(key) is None:
            continue  # no other value the engine accepts here: nothing to choose
        value = now[key]
        shown = translate(locale, f"tg.{key}.{value}") if isinstance(value, str) else str(value)
        text = translate(locale, f"tg.btn.{key}", value=shown)
        rows.append(((text, "data", data(op)),))
        lines.append(f"{text}: {translate(locale, f'tg.optdesc.{key}')}")
    turn = TURNS[cfg.turn] if 0 <= cfg.turn < len(TURNS) else None
    turn_text = translate(locale, "tg.btn.turn", value=_turn_text(locale, turn, default_turn))
    rows.append(((turn_text, "data", data("s")),))
    lines.append(f"{turn_text}: {translate(locale, 'tg.optdesc.turn')}")
    go = "tg.btn.play" if cfg.where == "p" else "tg.btn.open"
    rows.append(((translate(locale, go), "data", data("go")),))
    return Content("\n".join(lines), tuple(rows))


def games_content(locale: str, where: str, text: str) -> Content:
    """A text with one button per game, each opening the settings keyboard."""
    row = tuple((translate(locale, f"game.{g}"), "data", first(where, k).pack()) for k, g in GAMES.items())
    return Content(text, (row,))


def greeting_content(locale: str, text: str) -> Content:
    """The private chat's greeting: a button per game (a match against AI players) and, below, the
    deal of the day of each game (``/daily``)."""
    games = games_content(locale, "p", text)
    daily = tuple((translate(locale, f"tg.daily.{g}"), "data", Daily(game=k).pack())
                  for k, g in GAMES.items())
    return Content(games.text, (*games.rows, daily))
