"""Issue 34 (10): every variant's table on an 80x24 terminal.  Whole matches of every variant at
every seat count the engine allows, played at random, in both languages: each turn's screen (as a
TTY is left after the redraw, with the four latest moves under the table and the prompt), each
round's result (with "Press Enter"), and the end screen (with "Play again?") are counted in rows of
an 80-column terminal (a line wider than 80 cells would take two rows; none may be)."""

from __future__ import annotations

import io
import random
import re

import pytest
from rich.cells import cell_len

import engine
from adapters.terminal.screen import WIDTH, Screen
from service.domain.tables.outcome import outcome, round_ended
from service.platform.outbox import Action, Message, Recipient
from service.protocol.parse import parse_command

ME = {"platform": "terminal", "user": "you", "name": "Guillermina"}
# Long names, the worst case: the player's own name is $USER, the others' the service's.
NAMES = ["Guillermina", "IA 2", "IA 3", "IA 4", "IA 5", "IA 6"]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
RECENT = ("AI 2: run 12–13–14", "AI 3: pass", "AI 4: 5 of coins", "AI 5: pair of 9s")
VARIANTS = ["cinquillo", "cinquillo tradicional pago", "cinquillo parejas", "cinquillo cabron",
            "cinquillo tradicional puntos objetivo=12", "535"]


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _rows(text: str) -> list[str]:
    lines = ANSI.sub("", text).splitlines()
    assert all(cell_len(line) <= WIDTH for line in lines), max(lines, key=cell_len)
    return lines


def _msg(kind: str, game: str, view: dict, n: int, locale: str, **more) -> Message:
    key = "outcome" if kind == "match_over" else "view"
    return Message(id="c:0", table="t0", version=3, to=Recipient.model_validate({"player": ME}),
                   locale=locale, kind=kind, game=game, view=view, lines=[{key: NAMES[:n]}],
                   **more).rendered()


def _seat_counts(game: str, options: dict) -> list[int]:
    counts = []
    for n in range(2, 7):
        try:
            engine.new_game(game, players=n, seed=0, **options)
        except ValueError:
            continue
        counts.append(n)
    return counts


@pytest.mark.parametrize("words", VARIANTS)
def test_every_variant_at_every_seat_count_fits_80x24(words):
    args = parse_command("/play " + words).args
    game, options = args["game"], args["options"]
    seen = {"turn": 0, "round": 0, "end": 0}
    for n in _seat_counts(game, options):
        locale = "es" if n % 2 else "en"
        state = engine.new_game(game, players=n, seed=n, **options)
        rng = random.Random(n)
        while (seat := engine.to_move(state)) is not None:
            moves = engine.legal_moves(state)
            out = _Tty()
            screen = Screen(out, locale)
            screen.recent.extend(RECENT)
            screen.turn(_msg("hand", game, engine.view(state, seat), n, locale,
                             actions=[Action(move=m, token=f"t{i}") for i, m in enumerate(moves)]))
            drawn = out.getvalue()
            rows = len(_rows(drawn[drawn.rfind("\x1b[2J"):])) + 1  # and the prompt
            assert rows <= 24, (n, rows, ANSI.sub("", drawn))
            seen["turn"] = max(seen["turn"], rows)
            state = engine.play(state, rng.choice(moves))
            public = engine.view(state, None)
            if round_ended(public) and engine.to_move(state) is not None:
                out = io.StringIO()
                Screen(out, locale).events(_msg("table", game, engine.view(state, 0), n, locale,
                                                outcome=outcome(public)))
                rows = len(_rows(out.getvalue())) + 1  # and "Press Enter for the next deal."
                assert 8 <= rows <= 24, (n, out.getvalue())
                seen["round"] = max(seen["round"], rows)
        out = io.StringIO()
        Screen(out, locale).end(_msg("match_over", game, engine.view(state, 0), n, locale,
                                     outcome=outcome(engine.view(state, None))), me=0, checked=True)
        rows = len(_rows(out.getvalue())) + 1  # and "Play again?"
        assert n + 6 <= rows <= 24, (n, out.getvalue())
        seen["end"] = max(seen["end"], rows)
    print(words, seen)
    assert seen["turn"] > 10 and seen["end"] > 10
    assert seen["round"] > 0 or words in ("cinquillo", "cinquillo parejas")  # one round each


def test_a_two_players_hand_of_20_cards_wraps_between_suits():
    state = engine.new_game("cinquillo", players=2, seed=0)
    out = io.StringIO()
    seat = engine.to_move(state)
    Screen(out, "en").turn(_msg("hand", "cinquillo", engine.view(state, seat), 2, "en",
                                actions=[Action(move=m, token="t") for m in engine.legal_moves(state)]))
    lines = out.getvalue().splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("Your hand: "))
    assert lines[first + 1].startswith(" " * len("Your hand: ")) and lines[first + 1].strip()[0] in "🪙🏆⚔🪵"
    assert all(cell_len(line) <= WIDTH for line in lines)
    cards = sum(len(line.split()) for line in lines[first:first + 2]) - 2 - 4  # the label, four suits
    assert cards >= 20 - 4  # every card is there ("Knight" and the like are one word each)
