"""``cinq play``'s screen: redrawn in place at a TTY, plain when piped; 535's moves grouped and
numbered in the order shown; an end screen with every seat's result, score and cards left."""

from __future__ import annotations

import io

import engine
from adapters.terminal.screen import Screen, kind
from service.platform.outbox import Action, Message, Recipient
from service.protocol.i18n import translate

ME = {"platform": "terminal", "user": "you", "name": "Ana"}


def _hand(game: str, view: dict, moves: list[str]) -> Message:
    return Message(id="c:0", table="t", version=3, to=Recipient.model_validate({"player": ME}), locale="en",
                   kind="hand", game=game, view=view, lines=[{"view": ["Ana", "AI 2", "AI 3"]}],
                   actions=[Action(move=m, token=f"tok{i}", label=m) for i, m in enumerate(moves)])


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_tty_redraws_in_place_and_a_pipe_gets_plain_lines():
    state = engine.new_game("535", players=3, seed=4)
    view = engine.view(state, 0)
    hand = _hand("535", view, engine.legal_moves(state))
    tty, pipe = _Tty(), io.StringIO()
    Screen(tty, "en").turn(hand)
    order = Screen(pipe, "en").turn(hand)
    assert "\x1b[" in tty.getvalue()  # cleared and drawn again: control codes
    assert "\x1b" not in pipe.getvalue()  # piped: none
    # Grouped by kind, numbered in the order shown: number n is order[n - 1].
    kinds = [kind(a.move) for a in order]
    assert kinds == sorted(kinds, key=lambda k: ("single", "group", "run", "add", "pass").index(k))
    assert f"  1. {order[0].move.split(' ', 1)[1]}" in pipe.getvalue()
    assert translate("en", "terminal.kind.run") in pipe.getvalue()
    # 535's hand shows what each card costs if still held (F-3).
    points = view["options"]["points"]
    first = view["hand"][0]
    assert f"{first}({points[str(first)]})" in pipe.getvalue()


def test_the_end_screen_has_every_seats_result_score_and_cards_left():
    view = {"game": "535", "seat": 0, "over": True, "hand_sizes": [1, 4, 0], "scores": [20, 25, 16],
            "result": {"winners": [2]}, "seed": "abc123"}
    out = io.StringIO()
    end = Message(id="c:1", table="t", version=9, to=Recipient.model_validate({"player": ME}), locale="en",
                  kind="match_over", game="535", view=view, lines=[{"view": ["Ana", "AI 2", "AI 3"]}])
    Screen(out, "en").end(end)
    text = out.getvalue()
    assert translate("en", "view.winner", players="AI 3") in text
    results = (translate("en", "terminal.won"), translate("en", "terminal.lost"))
    rows = [line.split() for line in text.splitlines() if any(r in line for r in results)]
    assert [r[-2:] for r in rows] == [["20", "1"], ["25", "4"], ["16", "0"]]
    assert "abc123" in text
