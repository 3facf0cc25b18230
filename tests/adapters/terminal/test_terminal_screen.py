"""``cinq play``'s screen: redrawn in place at a TTY, plain when piped; everything a variant needs on
one 80x24 screen; 535's moves grouped by the kind the service gives them and numbered in the order
shown; a round's result and an end screen with this player's headline and the final standings."""

from __future__ import annotations

import io
import random
import re

import pytest
from rich.cells import cell_len

import engine
from adapters.terminal.screen import Screen
from service.domain.tables.outcome import outcome
from service.platform.outbox import Action, Message, Recipient
from service.protocol.i18n import translate
from service.protocol.i18n.render import move_kind

ME = {"platform": "terminal", "user": "you", "name": "Ana"}
NAMES = ["Ana", "AI 2", "AI 3", "AI 4", "AI 5", "AI 6"]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _hand(game: str, view: dict, moves: list[str], names: list[str] | None = None) -> Message:
    n = view.get("players", 3)
    return Message(id="c:0", table="t", version=3, to=Recipient.model_validate({"player": ME}), locale="en",
                   kind="hand", game=game, view=view, lines=[{"view": (names or NAMES)[:n]}],
                   actions=[Action(move=m, token=f"tok{i}") for i, m in enumerate(moves)]).rendered()


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _screen_lines(out: _Tty) -> list[str]:
    """What the last redraw left on the terminal, control codes removed."""
    text = out.getvalue()
    last = max(text.rfind("\x1b[2J"), text.rfind("\x1b[H"))
    return ANSI.sub("", text[last:] if last >= 0 else text).splitlines()


def test_a_tty_redraws_in_place_and_a_pipe_gets_plain_lines():
    state = engine.new_game("535", players=3, seed=4)
    view = engine.view(state, 0)
    hand = _hand("535", view, engine.legal_moves(state))
    tty, pipe = _Tty(), io.StringIO()
    Screen(tty, "en").turn(hand)
    order = Screen(pipe, "en").turn(hand)
    assert "\x1b[" in tty.getvalue()  # cleared and drawn again: control codes
    assert "\x1b" not in pipe.getvalue()  # piped: none
    # Grouped by the service's kinds, numbered in the order shown: number n is order[n - 1].
    kinds = [a.kind for a in order]
    assert kinds == [move_kind("535", a.move) for a in order]
    assert kinds == sorted(kinds, key=lambda k: ("single", "group", "run", "add", "pass").index(k))
    assert f"  1. {order[0].label}" in pipe.getvalue() and order[0].label.startswith("a ")  # words
    assert translate("en", "terminal.kind.run") in pipe.getvalue()
    # 535's hand shows what each card costs if still held (F-3): ranks of one cost together.
    costs = next(line for line in pipe.getvalue().splitlines() if line.startswith("Cards left"))
    assert costs.endswith("1–5: 1 · 7 9: 2 · 11–13: 3 · 14 15: 4 · 8: 5"), costs


def _cabron_view_with_blocked() -> tuple[dict, list[str]]:
    """A cabrón table where a card jumped over others (C-13): some cards are blocked."""
    rng = random.Random(0)
    for seed in range(200):
        state = engine.new_game("cinquillo", players=4, seed=seed, cabron=True)
        for _ in range(30):
            if engine.to_move(state) is None:
                break
            state = engine.play(state, rng.choice(engine.legal_moves(state)))
            view = engine.view(state, engine.to_move(state))
            if view["blocked"] and engine.to_move(state) is not None:
                return view, engine.legal_moves(state)
    raise AssertionError("no blocked card in 200 deals")


def test_c13_blocked_cards_are_marked_never_drawn_as_on_the_table():
    # Issue 34 (bug 2): "🪙 3–Jack" while the 6 and 7 of coins were blocked.
    view, moves = _cabron_view_with_blocked()
    out = io.StringIO()
    Screen(out, "en").turn(_hand("cinquillo", view, moves))
    rows = {line.split()[0]: line for line in out.getvalue().splitlines()
            if line.split() and line.split()[0] in ("coins", "cups", "swords", "clubs")}
    suits = {"o": "coins", "c": "cups", "e": "swords", "b": "clubs"}
    for code in view["blocked"]:
        rank, suit = int(code[:-1]), code[-1]
        cells = rows[suits[suit]].split()[1:11]
        assert cells[(1, 2, 3, 4, 5, 6, 7, 10, 11, 12).index(rank)] == "✕", rows[suits[suit]]


@pytest.mark.parametrize("game,players,options", [
    ("535", 4, {}), ("535", 6, {}), ("cinquillo", 4, {"preset": "tradicional", "chips": True, "teams": True}),
    ("cinquillo", 6, {"preset": "tradicional", "teams": True, "points": True}),
    ("cinquillo", 4, {"cabron": True})])
def test_every_variants_turn_fits_an_80x24_terminal(game, players, options):
    # Issue 34 (10): with 21-26 numbered choices at a 535 lead the table scrolled off the screen.
    state = engine.new_game(game, players=players, seed=7, **options)
    rng = random.Random(1)
    worst = 0
    screen = Screen(out := _Tty(), "en")
    for _ in range(40):
        seat = engine.to_move(state)
        if seat is None:
            break
        view = engine.view(state, seat)
        for line in ("AI 2: a 7", "AI 3: pass", "AI 4: pair of 9s", "AI 5: 5 of coins", "AI 6: pass"):
            screen.recent.append(line)
        screen.turn(_hand(game, view, engine.legal_moves(state)))
        lines = _screen_lines(out)
        assert all(cell_len(line) <= 80 for line in lines), max(lines, key=cell_len)
        worst = max(worst, len(lines) + 1)  # and the prompt
        state = engine.play(state, rng.choice(engine.legal_moves(state)))
    assert 0 < worst <= 24


def test_each_variant_shows_what_it_needs():
    state = engine.new_game("cinquillo", players=4, seed=3, preset="tradicional", chips=True, teams=True)
    out = io.StringIO()
    seat = engine.to_move(state)
    Screen(out, "en").turn(_hand("cinquillo", engine.view(state, seat), engine.legal_moves(state)))
    text = out.getvalue()
    partner = NAMES[(seat + 2) % 4]
    assert "0 rounds won" in text and "10 chips" in text and "pot: 0" in text
    # Who the partner is: "your partner" on their line (C-12).
    lines = text.splitlines()
    assert any(line.strip().startswith(f"{partner}:") and "your partner" in line for line in lines)
    assert translate("en", "terminal.to_rounds", target=5) in text
    state = engine.new_game("535", players=3, seed=3)
    out = io.StringIO()
    Screen(out, "en").turn(_hand("535", engine.view(state, engine.to_move(state)), engine.legal_moves(state)))
    assert "0 pts" in out.getvalue() and translate("en", "terminal.lower_wins", target=20) in out.getvalue()


def _finished(game: str, **options) -> dict:
    rng = random.Random(2)
    state = engine.new_game(game, players=3, seed=5, **options)
    while engine.to_move(state) is not None:
        state = engine.play(state, rng.choice(engine.legal_moves(state)))
    return engine.view(state, 0)


def test_the_end_screen_has_a_headline_the_standings_and_the_last_moves():
    view = _finished("535")
    winners = view["result"]["winners"]
    end = Message(id="c:1", table="t", version=9, to=Recipient.model_validate({"player": ME}), locale="en",
                  kind="match_over", game="535", view=view, lines=[{"outcome": NAMES[:3]}],
                  outcome=outcome({**view, "seat": None}))
    out = io.StringIO()
    Screen(out, "en").end(end, me=0, checked=True)
    text = out.getvalue()
    assert translate("en", "table.you_won" if 0 in winners else "table.you_lost") in text
    last = view["history"][-1]
    assert "Last move: " + NAMES[last["seat"]].replace("Ana", "Ana (you)") in text
    rows = [line for line in text.splitlines() if re.match(r"\s+[1-3]\.\s", line)]
    assert len(rows) == 3 and [r.split()[0] for r in rows] == sorted(r.split()[0] for r in rows)
    for seat in range(3):
        row = next(r for r in rows if f" {NAMES[seat]} " in r or f" {NAMES[seat]}  " in r)
        assert ("🏆" in row) == (seat in winners), row
    assert "Fewest points wins" in text
    # The check in one plain sentence, with the seed when the room's outcome carries it, folded at
    # the screen's 80 columns.
    assert translate("en", "terminal.fair", table="t") in " ".join(text.split())
    end = end.model_copy(update={"outcome": {**end.outcome, "seed": "5eed" * 8}})
    out = io.StringIO()
    Screen(out, "en").end(end, me=0, checked=True)
    words = " ".join(out.getvalue().split())
    assert translate("en", "terminal.fair_seed", table="t", seed="5eed" * 8) in words
    assert all(cell_len(line) <= 80 for line in out.getvalue().splitlines())
    assert "cinq verify t " in words


def test_help_is_plain_words_without_chat_commands():
    out = io.StringIO()
    Screen(out, "es").help("535")
    assert "/" not in out.getvalue() and "número" in out.getvalue()
    # Only this game's way of writing a move.
    assert "añade 9" in out.getvalue() and "oros" not in out.getvalue()
    out = io.StringIO()
    Screen(out, "en").help("cinquillo")
    assert "5 oros" in out.getvalue() and "add 9" not in out.getvalue()
