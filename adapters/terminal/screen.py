"""What ``cinq play`` shows: the table on one 80x24 screen, one line per move of the others, the
moves to pick from (grouped by the kind the service gives each) and, from the service's outcome, a
round's result and the final standings (:mod:`adapters.terminal.results`).  Drawn with ``rich``.

At a terminal (a TTY) the table is redrawn in place: the screen is cleared and drawn again on each
turn, with the latest moves under it, instead of scrolling a new copy of the whole table past after
every AI move.  Piped (a script, a test), nothing is redrawn: plain lines, no colours, no control
codes, the moves numbered ``  1. …``.  Everything shown comes from the messages' views, which the
service filtered for this player (G-1).

Every variant shows what it needs: rounds won, chips and the pot, the teams and the partner,
cabrón's blocked cards (never drawn as if on the table), 535's points with the target and that the
fewest wins.
"""

from __future__ import annotations

from collections import deque
from typing import IO, Any

from rich.cells import cell_len
from rich.console import Console

from adapters.terminal import results
from adapters.terminal.layout import WIDTH, fold, wrap
from service.platform.outbox import Action, Message
from service.protocol.i18n import translate
from service.protocol.i18n.render import SUIT_EMOJI, SUITS, card_name, move_kind, move_text, rank_name
from service.protocol.text import render as render_item

KINDS = ("single", "group", "run", "add")
RECENT = 4  # moves kept under the table: the screen is 24 lines
RANKS = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)
# Lines of the service a chat needs and a terminal does not: how to join, the commitment's 64 hex
# digits (the terminal says the same in one plain sentence, results.fair_deal).  The AI players'
# arrival stays: it says their level ("3 AI players sit down (level hard)").
SKIPPED = frozenset({"table.created", "table.started", "table.finished", "table.room_attached",
                     "table.joined"})


def names_of(msg: Message) -> list[str] | None:
    """The seat names a message draws its view (or its outcome) with."""
    for item in msg.lines or []:
        if isinstance(item, dict):
            for key in ("view", "outcome"):
                if isinstance(item.get(key), list):
                    return [render_item(n, msg.locale) for n in item[key]]
    return None


class Screen:
    """The terminal's picture of one match (see the module docstring)."""

    def __init__(self, out: IO[str], locale: str, *, tty: bool | None = None) -> None:
        self.tty = out.isatty() if tty is None else tty
        self.console = Console(file=out, force_terminal=self.tty, no_color=not self.tty,
                               highlight=False, soft_wrap=True, emoji=False, width=WIDTH)
        self.locale = locale
        self.recent: deque[str] = deque(maxlen=RECENT)
        self.names: list[str] | None = None

    def say(self, text: str) -> None:
        """A plain line (replies, prompts), folded at the screen's 80 columns between words."""
        self.console.print("\n".join(fold(text)), markup=False)

    def t(self, key: str, **params: Any) -> str:
        """A text of the catalogues in the player's language."""
        return translate(self.locale, key, **params)

    # -- what happened --------------------------------------------------------------------------

    def events(self, msg: Message) -> None:
        """The lines of a room's message that are not the view: one per move or event (the chat's
        how-to-join and commitment lines left out), and a round's result when one just ended."""
        self.names = names_of(msg) or self.names
        for item in msg.lines or []:
            if isinstance(item, dict) and ("view" in item or "outcome" in item or item.get("t") in SKIPPED):
                continue
            line = render_item(item, msg.locale, msg.view)
            if line:
                self.recent.append(line)
                if not self.tty:
                    self.say(line)
        if msg.outcome and msg.outcome.get("round") and not msg.outcome["standings"].get("over"):
            for line in results.round_block(msg.outcome, msg.game, self.locale, self.names, msg.view or {}):
                self.say(line)

    # -- the table ------------------------------------------------------------------------------

    def who(self, seat: int, me: int | None) -> str:
        """A seat's name, "(you)" for the player's own."""
        known = self.names is not None and seat < len(self.names)
        name = self.names[seat] if self.names is not None and known else self.t("view.player", n=seat + 1)
        return self.t("view.you", name=name) if seat == me else name

    def board(self, view: dict[str, Any]) -> list[str]:
        """The table: a title with what the match is played to, the cards on it, every seat."""
        game, me = view.get("game"), view.get("seat")
        lines = [results.title(view, self.locale)]
        if game == "cinquillo":
            lines += [self._suit(view, s) for s in SUITS]
        else:
            lines.append(self._pile(view, me))
        last = {h["seat"]: h["move"] for h in view.get("history") or [] if isinstance(h, dict)}
        for i in range(int(view.get("players") or len(view.get("hand_sizes") or []))):
            lines.append(self._seat(view, i, me, last.get(i)))
        hand = view.get("hand")
        if hand:
            # A hand of 20 cards (two players) is wider than the screen: wrapped between suits.
            label = self.t("view.hand", cards="\0").partition("\0")[0].rstrip()
            lines += wrap(self._hand(view), first=label, indent=" " * (cell_len(label) + 1), sep="  ")
            if game == "535":
                lines.append(self._costs(view))
        elif hand is not None:
            lines.append(self.t("view.hand_empty"))
        return lines

    def _costs(self, view: dict[str, Any]) -> str:
        """535: what a card still held costs when the round ends (F-3), ranks of one cost together."""
        points = (view.get("options") or {}).get("points") or {}
        ranks = sorted(int(r) for r in points)
        by_cost: dict[int, list[list[int]]] = {}
        for rank in ranks:  # runs of ranks next to each other in the deck, per cost: "11–13"
            runs = by_cost.setdefault(int(points[str(rank)]), [])
            if runs and ranks.index(runs[-1][-1]) == ranks.index(rank) - 1:
                runs[-1].append(rank)
            else:
                runs.append([rank])
        words = [" ".join(f"{r[0]}–{r[-1]}" if len(r) > 2 else " ".join(map(str, r)) for r in runs)
                 + f": {cost}" for cost, runs in sorted(by_cost.items())]
        return self.t("terminal.costs", costs=" · ".join(words))

    def _suit(self, view: dict[str, Any], suit: str) -> str:
        """One suit as a row of its ten ranks, aligned on the 5 as the table is laid out: the cards on
        the table by name, "·" for the others, "✕" for cabrón's blocked ones (they stay in hands)."""
        run = (view.get("table") or {}).get(suit)
        blocked = set(view.get("blocked") or [])
        cells = []
        for r in RANKS:
            code = f"{r}{suit}"
            lo, hi = (int(run["low"][:-1]), int(run["high"][:-1])) if run else (0, -1)
            if code in blocked:
                cells.append("✕")
            elif lo <= r <= hi:
                cells.append(self.t(f"terminal.rank.{r}") if r in (1, 10, 11, 12) else str(r))
            else:
                cells.append("·")
        # The suit's symbol last: symbols take one or two cells depending on the terminal, and the
        # rows must stay aligned.
        name = self.t(f"card.suit.{suit}")
        return f"{name:<9}" + " ".join(f"{c:>2}" for c in cells) + f"   {SUIT_EMOJI[suit]}"

    def _pile(self, view: dict[str, Any], me: int | None) -> str:
        pile = view.get("pile") or {}
        if pile.get("cards"):
            last = view.get("last_player")
            return self.t("terminal.pile", cards=" ".join(map(str, pile["cards"])),
                          player="?" if last is None else self.who(last, me))
        leader = view.get("leader")
        if view.get("over") or leader is None:
            return ""
        return self.t("view.pile_empty", player=self.who(leader, me))

    def _seat(self, view: dict[str, Any], i: int, me: int | None, last: str | None) -> str:
        """One seat: the turn marker, name, cards left, score, chips, partner, last action."""
        game = view.get("game")
        bits = [self.t("terminal.cards", n=(view.get("hand_sizes") or [0] * (i + 1))[i])]
        score = (view.get("scores") or [None] * (i + 1))[i]
        if game == "535":
            bits.append(self.t("terminal.points", n=score))
        elif view.get("scoring") == "points":
            bits.append(self.t("terminal.points", n=results.shown(score)))
        elif (view.get("rounds_to_win") or 1) > 1:
            bits.append(self.t("terminal.rounds", n=(view.get("round_wins") or [0] * (i + 1))[i]))
        if view.get("chips") is not None:
            bits.append(self.t("terminal.chips", n=view["chips"][i]))
        partner = results.partner(view, i)
        if partner is not None and me is not None and partner == me:
            bits.append(self.t("terminal.your_partner"))  # the partner's own line says who it is
        elif partner is not None and me is None:
            bits.append(self.t("terminal.partner", name=self.who(partner, me)))
        if i in (view.get("passed") or []):
            bits.append(self.t("terminal.passed"))
        elif last is not None:
            bits.append("← " + move_text(game, last, self.locale))
        turn = "▶ " if view.get("to_move") == i else "  "
        line = f"{turn}{self.who(i, me)}: " + " · ".join(bits)
        return line if cell_len(line) <= WIDTH else line[:WIDTH - 1] + "…"

    def _hand(self, view: dict[str, Any]) -> list[str]:
        """The hand in pieces that stay together on a line: a suit's cards, or 535's ranks."""
        loc, hand = self.locale, view.get("hand") or []
        if view.get("game") == "cinquillo":
            groups = []
            for s in SUITS:
                ranks = [rank_name(int(c[:-1]), loc) for c in hand if c.endswith(s)]
                if ranks:
                    groups.append(f"{SUIT_EMOJI[s]} {' '.join(ranks)}")
            return groups
        return [" ".join(str(c) for c in hand)]  # 535: the ranks, what they cost on the next line

    def turn(self, hand: Message) -> list[Action]:
        """The player's turn: the table (redrawn in place at a TTY) and the numbered moves."""
        self.names = names_of(hand) or self.names
        view = hand.view or {}
        if self.tty:
            self.console.clear()
            self.console.print("\n".join(self.board(view)), markup=False)
            if self.recent:
                self.console.print("[dim]" + "\n".join(self.recent).replace("[", r"\[") + "[/dim]")
        else:
            self.say("\n".join(self.board(view)))
        self.recent.clear()
        return self.moves(hand)

    def moves(self, hand: Message) -> list[Action]:
        """The moves, numbered from 1 (535's on a line per kind), side by side so that a turn of 26
        fits the screen; returns them in the order shown: a number typed means the move shown with it."""
        kind = {a.token: a.kind or move_kind(hand.game, a.move) for a in hand.actions}
        if hand.game != "535":
            order = list(hand.actions)
            items = [f"{i:>2}. {self._label(hand, a)}" for i, a in enumerate(order, 1)]
            for line in wrap(items) if self.tty else [f"  {x.strip()}" for x in items]:
                self.say(line)
            return order
        order = [a for k in (*KINDS, "pass") for a in hand.actions if kind[a.token] == k]
        n = 0
        for k in (*KINDS, "pass"):
            these = [a for a in order if kind[a.token] == k]
            if not these:
                continue
            items = []
            for a in these:
                n += 1
                items.append(f"{n:>2}. {self._label(hand, a)}")
            heading = "" if k == "pass" else self.t(f"terminal.kind.{k}")
            if self.tty:
                for line in wrap(items, indent="  ", first=heading):
                    self.say(line)
            else:
                if heading:
                    self.say(heading)
                for item in items:
                    self.say(f"  {item.strip()}")
        return order

    def _label(self, hand: Message, a: Action) -> str:
        if hand.game == "cinquillo" and a.move[-1:] in SUIT_EMOJI and a.move[:-1].isdigit():
            return f"{SUIT_EMOJI[a.move[-1]]} {card_name(a.move, self.locale)}"
        return a.label or move_text(hand.game, a.move, self.locale)

    # -- the end --------------------------------------------------------------------------------

    def end(self, msg: Message, me: int | None = None, checked: bool | None = None) -> None:
        """The end screen: this player's headline, the final standings, the last moves, the check
        of the deal in one plain sentence."""
        self.names = names_of(msg) or self.names
        for line in results.end_block(msg, self.locale, self.names, me, checked):
            self.say(line)

    def help(self, game: str | None) -> None:
        """What can be typed, in plain words."""
        game = game or "cinquillo"
        how = self.t(f"terminal.how.{game}")  # only this game's way of writing a move
        for line in self.t("terminal.help", game=self.t(f"game.{game}"), how=how).splitlines():
            self.say(line)
