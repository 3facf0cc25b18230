"""Plain-text rendering of cards, moves and engine views, in the reader's language.

Everything here reads only its arguments: :func:`render_view` shows what the view holds and
nothing else, and the view was already filtered for its seat by the engine (G-1).  The text reads
well in any chat, without assuming a monospace font.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from service.protocol.i18n import translate as _t

__all__ = ["card_name", "join", "move_kind", "move_text", "player_name", "render_view"]

SUITS = "oceb"
SUIT_EMOJI = {"o": "🪙", "c": "🏆", "e": "⚔️", "b": "🪵"}
_NAMED_RANKS = frozenset({1, 10, 11, 12})
_CARD_RE = re.compile(r"(\d{1,2})([oceb])", re.ASCII)


def rank_name(rank: int, locale: str | None) -> str:
    """A Cinquillo rank as players say it: ``1`` -> "As"/"Ace", ``10`` -> "Sota"/"Jack", ``5`` -> "5"."""
    return _t(locale, f"card.rank.{rank}") if rank in _NAMED_RANKS else str(rank)


def card_name(code: str, locale: str | None) -> str:
    """The name of a Cinquillo card code: ``"5o"`` -> "5 de oros" / "5 of coins",
    ``"10c"`` -> "Sota de copas" / "Jack of cups".  Anything else comes back unchanged."""
    m = _CARD_RE.fullmatch(code)
    if not m:
        return code
    rank, suit = int(m.group(1)), m.group(2)
    return _t(locale, "card.name", rank=rank_name(rank, locale), suit=_t(locale, f"card.suit.{suit}"))


def join(items: Sequence[str], locale: str | None, *, word: str = "and") -> str:
    """``["a", "b", "c"]`` -> "a, b y c" (``word="or"``: "a, b o c"); one item alone; "" for none."""
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    return _t(locale, f"join.{word}", a=", ".join(items[:-1]), b=items[-1])


def move_text(game: str | None, move: str, locale: str | None) -> str:
    """A move in words: ``"pass"`` -> "paso"/"pass", ``"play 7 7"`` -> "pareja de 7"/"pair of 7s",
    ``"play 3 4 5"`` -> "escalera 3–4–5"/"run 3–4–5", ``"add 2 7"`` -> "añade 2 7"/"add 2 7",
    ``"5o"`` -> "5 de oros"/"5 of coins".

    ``game`` may be None: the notations of the two games do not overlap.
    """
    if move in ("pass", "rematch", "accept", "decline"):  # a pass; a rematch's ask and answers
        return _t(locale, f"move.{move}")
    verb, _, rest = move.partition(" ")
    if verb in ("join", "leave", "start") and not rest:  # a tournament's sign-up button
        return _t(locale, f"tournament.btn.{verb}")
    if verb in ("top", "rating"):  # a board button on a tournament's standings (service.ratings.boards)
        return _t(locale, "board.btn.rating" if verb == "rating" else "board.btn.top")
    if verb in ("play", "add") and rest and game != "cinquillo":
        return _five35_words(verb, rest.split(), locale)
    if game != "535" and _CARD_RE.fullmatch(move):
        return card_name(move, locale)
    return move


def move_kind(game: str | None, move: str) -> str:
    """What kind of move it is, for grouping a turn's choices the same way on every surface:
    ``pass``; a Cinquillo ``card``; a 535 ``single``, ``group`` (cards of one rank), ``run`` or
    ``add`` (cards put onto the pile to make it longer); or no move: ``rematch`` (the end's "Play
    again"), ``accept`` and ``decline`` (a rematch's invitation)."""
    if move in ("pass", "rematch", "accept", "decline"):
        return move
    verb, _, rest = move.partition(" ")
    ranks = rest.split()
    if verb == "add" and ranks:
        return "add"
    if verb != "play" or not ranks:
        return "card" if game != "535" and _CARD_RE.fullmatch(move) else "other"
    return "single" if len(ranks) == 1 else "group" if len(set(ranks)) == 1 else "run"


def _five35_words(verb: str, ranks: list[str], locale: str | None) -> str:
    """A 535 move as players say it: "a 14", "pair of 7s", "three 7s", "run 3–4–5", "add 9 9"."""
    if verb == "add":
        return _t(locale, "move.add", cards=" ".join(ranks))
    if len(ranks) == 1:
        return _t(locale, "move.single", rank=ranks[0])
    if len(set(ranks)) == 1:
        # a play is at most 3 cards (F-4): a pair or three of a rank
        return _t(locale, "move.pair" if len(ranks) == 2 else "move.group", rank=ranks[0])
    return _t(locale, "move.run", ranks="–".join(ranks))


def player_name(seat: int, locale: str | None, names: Sequence[str] | None = None,
                me: int | None = None) -> str:
    """How a seat is called: its name when known, else "Jugador 2"/"Player 2" (seats count from 1),
    marked "(tú)"/"(you)" for the reader's own seat ``me``."""
    name = names[seat] if names is not None and 0 <= seat < len(names) else _t(
        locale, "view.player", n=seat + 1)
    return _t(locale, "view.you", name=name) if seat == me else name


def render_view(view: Mapping[str, Any], locale: str | None, *,
                names: Sequence[str] | None = None) -> str:
    """A plain-text picture of an engine view (``engine.view(state, seat)``) for a chat.

    ``names`` are the players' display names by seat (default "Jugador 1"...).  The hand and the
    legal moves appear only when the view has them (a private view of the seat to move).
    """
    game = view.get("game")
    if game == "cinquillo":
        lines = _cinquillo(view, locale, names)
    elif game == "535":
        lines = _five35(view, locale, names)
    else:
        lines = [str(game)]
    return "\n".join(line for line in lines if line)


def _who(view: Mapping[str, Any], locale: str | None, names: Sequence[str] | None,
         seat: int) -> str:
    return player_name(seat, locale, names, view.get("seat"))


def _per_seat(view: Mapping[str, Any], locale: str | None, names: Sequence[str] | None,
              values: Sequence[Any]) -> str:
    return " · ".join(f"{_who(view, locale, names, i)} {v}" for i, v in enumerate(values))


def _title(view: Mapping[str, Any], locale: str | None) -> str:
    return _t(locale, "view.title", game=_t(locale, f"game.{view.get('game')}"),
              round=view.get("round", 1))


def _status(view: Mapping[str, Any], locale: str | None, names: Sequence[str] | None,
            winners: Sequence[int] | None) -> list[str]:
    """Whose turn it is, or who won."""
    if view.get("over"):
        lines = [_t(locale, "view.over")]
        if winners:
            who = join([_who(view, locale, names, w) for w in winners], locale)
            lines.append(_t(locale, "view.winner" if len(winners) == 1 else "view.winners", players=who))
        if view.get("seed") is not None:
            lines.append(_t(locale, "view.seed", seed=view["seed"]))
        return lines
    to_move = view.get("to_move")
    if to_move is None:
        return []
    extra = bool(view.get("extra_turn"))
    if to_move == view.get("seat"):
        return [_t(locale, "view.your_extra_turn" if extra else "view.your_turn")]
    return [_t(locale, "view.extra_turn" if extra else "view.turn",
               player=_who(view, locale, names, to_move))]


def _private(view: Mapping[str, Any], locale: str | None, hand_text: str | None) -> list[str]:
    """The reader's hand and legal moves: present only in a private view."""
    lines: list[str] = []
    if view.get("hand") is not None:
        lines.append(_t(locale, "view.hand", cards=hand_text) if hand_text
                     else _t(locale, "view.hand_empty"))
    legal = view.get("legal_moves") or []
    if legal:
        moves = [move_text(view.get("game"), m, locale) for m in legal]
        lines.append(_t(locale, "view.legal", moves=join(moves, locale, word="or")))
    return lines


def _last_move(view: Mapping[str, Any], locale: str | None, names: Sequence[str] | None) -> str:
    history = view.get("history") or []
    last = view.get("last_move") or (history[-1] if history else None)
    if not last:
        return ""
    return _t(locale, "view.last_move", player=_who(view, locale, names, last["seat"]),
              move=move_text(view.get("game"), last["move"], locale))


def _cinquillo(view: Mapping[str, Any], locale: str | None, names: Sequence[str] | None) -> list[str]:
    lines = [_title(view, locale)]
    table = view.get("table") or {}
    for s in SUITS:
        suit = f"{SUIT_EMOJI[s]} {_t(locale, f'card.suit.{s}')}"
        run = table.get(s)
        if not run:
            lines.append(_t(locale, "view.suit_closed", suit=suit))
        elif run["low"] == run["high"]:
            lines.append(_t(locale, "view.suit_one", suit=suit, card=_rank_of(run["low"], locale)))
        else:
            lines.append(_t(locale, "view.suit_open", suit=suit, low=_rank_of(run["low"], locale),
                            high=_rank_of(run["high"], locale)))
    if view.get("blocked"):
        lines.append(_t(locale, "view.blocked",
                        cards=join([card_name(c, locale) for c in view["blocked"]], locale)))
    if view.get("teams"):
        teams = [join([_who(view, locale, names, s) for s in team], locale) for team in view["teams"]]
        lines.append(_t(locale, "view.teams", teams=" · ".join(teams)))
    lines.append(_t(locale, "view.hand_sizes", sizes=_per_seat(view, locale, names, view["hand_sizes"])))
    lines.append(_scores(view, locale, names))
    if view.get("chips") is not None:
        lines.append(_t(locale, "view.chips", chips=_per_seat(view, locale, names, view["chips"]),
                        pot=view.get("pot", 0)))
    lines.append(_last_move(view, locale, names))
    lines += _status(view, locale, names, view.get("winners"))
    hand = view.get("hand")
    lines += _private(view, locale, _cinquillo_hand(hand, locale) if hand else None)
    return lines


def _rank_of(code: str, locale: str | None) -> str:
    m = _CARD_RE.fullmatch(code)
    return rank_name(int(m.group(1)), locale) if m else code


def _cinquillo_hand(hand: Sequence[str], locale: str | None) -> str:
    """The hand grouped by suit ("🪙 5, 6, Sota · 🏆 Rey"): shorter than naming every card."""
    groups = []
    for s in SUITS:
        ranks = [_rank_of(c, locale) for c in hand if c.endswith(s)]
        if ranks:
            groups.append(f"{SUIT_EMOJI[s]} {_t(locale, f'card.suit.{s}')} {', '.join(ranks)}")
    return " · ".join(groups)


def _scores(view: Mapping[str, Any], locale: str | None, names: Sequence[str] | None) -> str:
    scores = view.get("scores")
    if not scores:
        return ""
    text = _per_seat(view, locale, names, scores)
    target = view.get("target")
    # A target means a points match (C-10, C-13); the engine may label cabrón "round_wins".
    if view.get("scoring", "points") == "points" or target is not None:
        if target is None:
            return _t(locale, "view.points", scores=text)
        return _t(locale, "view.points_target", scores=text, target=target)
    rounds_to_win = view.get("rounds_to_win")
    if rounds_to_win is None:
        return _t(locale, "view.round_wins", scores=text)
    if rounds_to_win <= 1:
        return ""  # a one-round match: "rounds won" says nothing
    return _t(locale, "view.round_wins_target", scores=text, target=rounds_to_win)


def _five35(view: Mapping[str, Any], locale: str | None, names: Sequence[str] | None) -> list[str]:
    lines = [_title(view, locale)]
    pile = view.get("pile") or {}
    if pile.get("cards"):
        last = view.get("last_player")
        lines.append(_t(locale, "view.pile", cards=" ".join(map(str, pile["cards"])),
                        kind=_t(locale, f"view.kind.{pile.get('type')}"),
                        player="?" if last is None else _who(view, locale, names, last)))
    elif not view.get("over") and view.get("leader") is not None:
        lines.append(_t(locale, "view.pile_empty", player=_who(view, locale, names, view["leader"])))
    if view.get("passed"):
        lines.append(_t(locale, "view.passed",
                        players=join([_who(view, locale, names, s) for s in view["passed"]], locale)))
    lines.append(_t(locale, "view.hand_sizes", sizes=_per_seat(view, locale, names, view["hand_sizes"])))
    target = (view.get("options") or {}).get("target")
    text = _per_seat(view, locale, names, view.get("scores") or [])
    lines.append(_t(locale, "view.points_target", scores=text, target=target) if target
                 else _t(locale, "view.points", scores=text))
    lines.append(_last_move(view, locale, names))
    result = view.get("result") or {}
    lines += _status(view, locale, names, result.get("winners") or view.get("winners"))
    hand = view.get("hand")
    lines += _private(view, locale, " ".join(map(str, hand)) if hand else None)
    return lines
