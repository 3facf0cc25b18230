"""Rendering of cards, moves and engine views in both languages; G-1: no other hand ever shows."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

import engine
from service.protocol.i18n import SUPPORTED
from service.protocol.i18n.render import card_name, join, move_kind, move_text, player_name, render_view

_LEAK = re.compile(r"\{\w*\}|\b(?:view|card|move|game|join)\.[a-z_]+")


def playout(game: str, players: int, seed: int, steps: int, **options: Any) -> list[Any]:
    """States of a match played with seeded random legal moves (the first ``steps`` of them)."""
    rng = random.Random(seed)
    state = engine.new_game(game, players=players, seed=seed, **options)
    states = [state]
    for _ in range(steps):
        if engine.to_move(state) is None:
            break
        state = engine.play(state, rng.choice(engine.legal_moves(state)))
        states.append(state)
    return states


@pytest.mark.parametrize(("code", "es", "en"), [
    ("5o", "5 de oros", "5 of coins"), ("1c", "As de copas", "Ace of cups"),
    ("10c", "Sota de copas", "Jack of cups"), ("11e", "Caballo de espadas", "Knight of swords"),
    ("12b", "Rey de bastos", "King of clubs"), ("7b", "7 de bastos", "7 of clubs"),
])
def test_card_names(code: str, es: str, en: str) -> None:
    assert (card_name(code, "es"), card_name(code, "en")) == (es, en)


def test_card_name_leaves_anything_else_alone() -> None:
    assert card_name("pass", "es") == "pass" and card_name("5x", "en") == "5x"


@pytest.mark.parametrize(("game", "move", "es", "en"), [
    ("535", "pass", "paso", "pass"), ("cinquillo", "pass", "paso", "pass"),
    # 535 in words, never the engine's notation (issue 34, 15: "AI 4: play 13 13")
    ("535", "play 7 7", "pareja de 7", "pair of 7s"), ("535", "add 2 7", "añade 2 7", "add 2 7"),
    ("535", "play 13", "un 13", "a 13"), ("535", "play 9 9 9", "trío de 9", "three 9s"),
    ("535", "play 3 4 5", "escalera 3–4–5", "run 3–4–5"),
    ("cinquillo", "10o", "Sota de oros", "Jack of coins"), (None, "play 8", "un 8", "a 8"),
    (None, "5o", "5 de oros", "5 of coins"),
])
def test_move_text(game: str | None, move: str, es: str, en: str) -> None:
    assert (move_text(game, move, "es"), move_text(game, move, "en")) == (es, en)


@pytest.mark.parametrize(("game", "move", "kind"), [
    ("535", "pass", "pass"), ("535", "play 13", "single"), ("535", "play 7 7", "group"),
    ("535", "play 7 7 7", "group"), ("535", "play 3 4 5", "run"), ("535", "add 9", "add"),
    ("cinquillo", "5o", "card"), ("cinquillo", "pass", "pass"),
])
def test_move_kind_groups_a_turns_choices_once_for_every_surface(game: str, move: str, kind: str) -> None:
    assert move_kind(game, move) == kind


def test_join_and_player_names() -> None:
    assert join(["a", "b", "c"], "es") == "a, b y c"
    assert join(["a", "b"], "en", word="or") == "a or b"
    assert join([], "es") == "" and join(["a"], "en") == "a"
    assert player_name(0, "es") == "Jugador 1"
    assert player_name(1, "en", ["Ana", "Bo"], me=1) == "Bo (you)"


def test_cinquillo_view_in_both_languages() -> None:
    state = engine.new_game("cinquillo", players=3, seed=1, preset="tradicional", chips=True)
    for _ in range(6):
        state = engine.play(state, engine.legal_moves(state)[0])
    seat = engine.to_move(state)
    es = render_view(engine.view(state, seat), "es")
    en = render_view(engine.view(state, seat), "en")
    assert "oros" in es and "coins" in en
    assert "Te toca." in es and "Your turn." in en
    assert "Tu mano:" in es and "Your hand:" in en
    assert "Puedes jugar:" in es and "You can play:" in en
    assert "bote:" in es and "pot:" in en
    assert re.search(r"🪙 oros: \w+(–\w+)?", es)


def test_535_view_in_both_languages() -> None:
    states = playout("535", 3, seed=4, steps=3)
    state = states[-1]
    seat = engine.to_move(state)
    es = render_view(engine.view(state, seat), "es", names=["Ana", "Bea", "Carlos"])
    en = render_view(engine.view(state, seat), "en", names=["Ana", "Bea", "Carlos"])
    assert es.startswith("535 · ronda 1") and en.startswith("535 · round 1")
    assert "(tú)" in es and "(you)" in en
    assert "Puntos (hasta 20)" in es and "Points (to 20)" in en
    assert "Tu mano:" in es and "Your hand:" in en


def test_a_spectator_view_has_no_hand_and_no_moves() -> None:
    for game in ("cinquillo", "535"):
        state = playout(game, 4, seed=2, steps=5)[-1]
        for locale in SUPPORTED:
            text = render_view(engine.view(state, None), locale)
            assert "Tu mano" not in text and "Your hand" not in text
            assert "Puedes jugar" not in text and "You can play" not in text
            assert "(tú)" not in text and "(you)" not in text


@pytest.mark.parametrize(("game", "players", "options"), [
    ("cinquillo", 4, {}), ("cinquillo", 4, {"preset": "tradicional", "teams": True, "double_turn": True}),
    ("cinquillo", 3, {"cabron": True, "chips": True}), ("cinquillo", 5, {"preset": "tradicional"}),
    ("535", 3, {}), ("535", 6, {"target": 5}),
])
def test_every_view_of_a_whole_match_renders_cleanly(game: str, players: int,
                                                     options: dict[str, Any]) -> None:
    states = playout(game, players, seed=11, steps=2000, **options)
    for state in states[::5] + states[-1:]:  # every 5th keeps it quick; the final state always
        for seat in (*range(players), None):
            for locale in SUPPORTED:
                text = render_view(engine.view(state, seat), locale)
                assert not _LEAK.search(text), text


def test_a_finished_match_shows_the_winner() -> None:
    for game, players in (("cinquillo", 3), ("535", 3)):
        final = playout(game, players, seed=5, steps=5000)[-1]
        assert engine.to_move(final) is None
        es = render_view(engine.view(final, 0), "es")
        assert "La partida ha terminado." in es and re.search(r"Gana", es)


@pytest.mark.parametrize("options", [{}, {"cabron": True}, {"preset": "tradicional", "chips": True}])
def test_g1_cinquillo_text_never_names_another_seats_card(options: dict[str, Any]) -> None:
    for state in playout("cinquillo", 4, seed=3, steps=60, **options):
        for seat in range(4):
            view = engine.view(state, seat)
            public = set(view.get("blocked") or [])  # blocked cards are shown as such, not by holder
            for locale in SUPPORTED:
                text = render_view(view, locale)
                for other in range(4):
                    if other == seat:
                        continue
                    for code in engine.view(state, other)["hand"]:
                        if code not in public:
                            assert card_name(code, locale) not in text, (code, text)


def test_g1_text_is_the_same_whatever_the_other_hands_are() -> None:
    # Seat 0's text must depend only on what seat 0 may know: swap two hidden hands, nothing changes.
    base = engine.new_game("cinquillo", players=4, seed=9)
    hands = [engine.view(base, s)["hand"] for s in range(4)]
    holder = next(s for s in range(4) if "5o" in hands[s])
    hands[0], hands[holder] = hands[holder], hands[0]
    swapped = [hands[0], hands[2], hands[1], hands[3]]
    a = engine.new_game("cinquillo", players=4, seed=9, hands=hands)
    b = engine.new_game("cinquillo", players=4, seed=9, hands=swapped)
    for locale in SUPPORTED:
        assert render_view(engine.view(a, 0), locale) == render_view(engine.view(b, 0), locale)
        assert render_view(engine.view(a, 1), locale) != render_view(engine.view(b, 1), locale)

    t = engine.new_game("535", players=3, seed=9)
    hands535 = [engine.view(t, s)["hand"] for s in range(3)]
    a = engine.new_game("535", players=3, seed=9, hands=hands535)
    b = engine.new_game("535", players=3, seed=9, hands=[hands535[0], hands535[2], hands535[1]])
    for locale in SUPPORTED:
        assert render_view(engine.view(a, 0), locale) == render_view(engine.view(b, 0), locale)
