"""What ``cinq play`` shows: a compact table, one line per move of the others, the moves to pick
from (535's grouped by kind) and an end screen with every seat's result.  Drawn with ``rich``.

At a terminal (a TTY) the table is redrawn in place: the screen is cleared and drawn again on each
turn, with the latest moves under it, instead of scrolling a new copy of the whole table past after
every AI move.  Piped (a script, a test), nothing is redrawn: plain lines, no colours, no control
codes, the moves numbered ``  1. …`` as before.  Everything shown comes from the messages' views,
which the service filtered for this player (G-1).
"""

from __future__ import annotations

from collections import deque
from typing import IO, Any

from rich.console import Console
from rich.table import Table as Grid

from service.platform.outbox import Action, Message
from service.protocol.i18n import translate
from service.protocol.i18n.render import SUIT_EMOJI, SUITS, card_name, join, move_text, rank_name
from service.protocol.text import render as render_item

KINDS = ("single", "group", "run", "add")
RECENT = 8  # moves kept under the table


def kind(move: str) -> str:
    """The kind of a 535 move (as Telegram groups them): single, group, run, add, or pass."""
    verb, _, rest = move.partition(" ")
    ranks = rest.split()
    if verb == "add":
        return "add"
    if verb != "play" or not ranks:
        return "pass"
    return "single" if len(ranks) == 1 else "group" if len(set(ranks)) == 1 else "run"


def names_of(msg: Message) -> list[str] | None:
    """The seat names a message draws its view with."""
    for item in msg.lines or []:
        if isinstance(item, dict) and isinstance(item.get("view"), list):
            return [render_item(n, msg.locale) for n in item["view"]]
    return None


class Screen:
    """The terminal's picture of one match (see the module docstring)."""

    def __init__(self, out: IO[str], locale: str, *, tty: bool | None = None) -> None:
        self.tty = out.isatty() if tty is None else tty
        self.console = Console(file=out, force_terminal=self.tty, no_color=not self.tty,
                               highlight=False, soft_wrap=True, emoji=False)
        self.locale = locale
        self.recent: deque[str] = deque(maxlen=RECENT)
        self.names: list[str] | None = None

    def say(self, text: str) -> None:
        """A plain line (replies, prompts)."""
        self.console.print(text, markup=False)

    # -- what happened --------------------------------------------------------------------------

    def events(self, msg: Message) -> None:
        """The lines of a room's message that are not the view: one per move or event."""
        self.names = names_of(msg) or self.names
        for item in msg.lines or []:
            if isinstance(item, dict) and "view" in item:
                continue
            line = render_item(item, msg.locale, msg.view)
            if line:
                self.recent.append(line)
                if not self.tty:
                    self.say(line)

    # -- the table ------------------------------------------------------------------------------

    def _who(self, seat: int, me: int | None) -> str:
        name = self.names[seat] if self.names and seat < len(self.names) else \
            translate(self.locale, "view.player", n=seat + 1)
        return translate(self.locale, "view.you", name=name) if seat == me else name

    def _board(self, view: dict[str, Any]) -> list[str]:
        loc, me = self.locale, view.get("seat")
        lines = [translate(loc, "view.title", game=translate(loc, f"game.{view.get('game')}"),
                           round=view.get("round", 1))]
        if view.get("game") == "cinquillo":
            runs = []
            for s in SUITS:
                run = (view.get("table") or {}).get(s)
                span = "—" if not run else rank_name(int(run["low"][:-1]), loc) if run["low"] == run["high"] \
                    else f"{rank_name(int(run['low'][:-1]), loc)}–{rank_name(int(run['high'][:-1]), loc)}"
                runs.append(f"{SUIT_EMOJI[s]} {span}")
            lines.append("   ".join(runs))
        else:
            pile = view.get("pile") or {}
            if pile.get("cards"):
                last = view.get("last_player")
                lines.append(translate(loc, "terminal.pile", cards=" ".join(map(str, pile["cards"])),
                                       player="?" if last is None else self._who(last, me)))
        seats = []
        for i, n in enumerate(view.get("hand_sizes") or []):
            score = (view.get("scores") or [None] * (i + 1))[i]
            turn = "▶ " if view.get("to_move") == i else "  "
            seats.append(f"{turn}{self._who(i, me)}: {translate(loc, 'terminal.cards', n=n)}"
                         + (f", {translate(loc, 'terminal.points', n=score)}"
                            if score is not None and view.get("game") == "535" else ""))
        lines += seats
        hand = view.get("hand")
        if hand is not None:
            lines.append(translate(loc, "view.hand", cards=self._hand(view)))
        return lines

    def _hand(self, view: dict[str, Any]) -> str:
        loc, hand = self.locale, view.get("hand") or []
        if view.get("game") == "cinquillo":
            groups = []
            for s in SUITS:
                ranks = [rank_name(int(c[:-1]), loc) for c in hand if c.endswith(s)]
                if ranks:
                    groups.append(f"{SUIT_EMOJI[s]} {' '.join(ranks)}")
            return "  ".join(groups)
        points = (view.get("options") or {}).get("points") or {}
        # 535: each card with the points it costs if still held when the round ends (F-3)
        return " ".join(f"{c}({points[str(c)]})" if str(c) in points else str(c) for c in hand)

    def turn(self, hand: Message) -> list[Action]:
        """The player's turn: the table (redrawn in place at a TTY) and the numbered moves."""
        self.names = names_of(hand) or self.names
        view = hand.view or {}
        if self.tty:
            self.console.clear()
            self.console.print("\n".join(self._board(view)), markup=False)
            if self.recent:
                self.console.print("[dim]" + "\n".join(self.recent) + "[/dim]")
        else:
            self.say("\n".join(self._board(view)))
        self.recent.clear()
        return self.moves(hand)

    def moves(self, hand: Message) -> list[Action]:
        """The moves, numbered from 1 (535's under a heading per kind); returns them in the order
        shown, so that a number typed means the move shown with it."""
        order = list(hand.actions) if hand.game != "535" else \
            [a for k in (*KINDS, "pass") for a in hand.actions if kind(a.move) == k]
        heading = None
        for i, a in enumerate(order, 1):
            k = kind(a.move) if hand.game == "535" else None
            if k not in (None, "pass", heading):
                self.say(translate(self.locale, f"terminal.kind.{k}"))
            heading = k
            self.say(f"  {i}. {self._label(hand, a.move, a.label)}")
        return order

    def _label(self, hand: Message, move: str, label: str) -> str:
        if hand.game == "cinquillo" and move[-1:] in SUIT_EMOJI and move[:-1].isdigit():
            return f"{SUIT_EMOJI[move[-1]]} {card_name(move, self.locale)}"
        if hand.game == "535" and move != "pass":
            verb, _, ranks = move.partition(" ")
            return f"+ {ranks}" if verb == "add" else ranks
        return label or move_text(hand.game, move, self.locale)

    # -- the end --------------------------------------------------------------------------------

    def end(self, msg: Message, seed: str | None = None) -> None:
        """The end screen: who won, every seat's score and cards left, the seed."""
        view, loc = msg.view or {}, self.locale
        self.names = names_of(msg) or self.names
        winners = list(view.get("winners") or (view.get("result") or {}).get("winners") or [])
        self.say(translate(loc, "view.over"))
        if winners:
            who = join([self._who(w, view.get("seat")) for w in winners], loc)
            self.say(translate(loc, "view.winner" if len(winners) == 1 else "view.winners", players=who))
        grid = Grid(show_header=True, header_style="bold" if self.tty else None, box=None, pad_edge=False)
        for col in ("terminal.col.seat", "terminal.col.result", "terminal.col.score", "terminal.col.left"):
            grid.add_column(translate(loc, col))
        scores = view.get("scores") or []
        for i, n in enumerate(view.get("hand_sizes") or []):
            result = translate(loc, "terminal.won" if i in winners else "terminal.lost")
            grid.add_row(self._who(i, view.get("seat")), result,
                         str(scores[i]) if i < len(scores) else "", str(n))
        self.console.print(grid)
        if view.get("seed") is not None or seed:
            self.say(translate(loc, "view.seed", seed=view.get("seed") or seed))
