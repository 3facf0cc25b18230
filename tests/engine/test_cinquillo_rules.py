"""One or more tests per Cinquillo rule (docs/rules.md C-1..C-13, G-1..G-3), from hands built by hand."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

import engine
from engine.cinquillo import CODES, PASS, RULES, CinquilloState, card, code, replace_hands
from engine.rng import SplitMix64
from tests.leaks import strings_in

SUITS = "oceb"
RANKS = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)


def suit(letter: str, *ranks: int) -> list[str]:
    """The codes of some ranks of one suit (all ten when no rank is given)."""
    return [f"{r}{letter}" for r in (ranks or RANKS)]


def rest(*hands: list[str]) -> list[str]:
    """The deck's cards that are in none of ``hands``, in canonical order."""
    taken = {c for h in hands for c in h}
    return [c for c in CODES if c not in taken]


def new(players: int, hands: list[list[str]], **options: Any) -> Any:
    return engine.new_game("cinquillo", players=players, seed=1, hands=hands, **options)


def play(state: Any, *moves: str) -> Any:
    for m in moves:
        state = engine.play(state, m)
    return state


def illegal(state: Any, move: str) -> engine.IllegalMove:
    before = engine.snapshot(state)
    with pytest.raises(engine.IllegalMove) as info:
        engine.play(state, move)
    assert engine.snapshot(state) == before  # G-2: an illegal move changes nothing
    assert info.value.message
    return info.value


# --- C-1, C-2: the deck and its order -------------------------------------------------------------

def test_C_1_forty_card_spanish_deck_without_8_and_9() -> None:
    assert len(CODES) == 40 and len(set(CODES)) == 40
    assert CODES[:10] == ("1o", "2o", "3o", "4o", "5o", "6o", "7o", "10o", "11o", "12o")
    assert [c[-1] for c in CODES[::10]] == ["o", "c", "e", "b"]
    assert all(card(code(i)) == i for i in range(40))
    s = engine.new_game("cinquillo", players=4, seed=3)
    assert sorted(c for seat in range(4) for c in engine.view(s, seat)["hand"]) == sorted(CODES)
    for bad in ("8o", "9c", "13e", "0b", "5x", "five", ""):
        assert illegal(s, bad).code == "bad_notation"


def test_C_2_sota_follows_the_7() -> None:
    a = ["5o", "3o", "7o", "5c", "4c", "1e", "12b"]
    s = new(2, [a, rest(a)])
    s = play(s, "5o", "6o", "5c", "4o", "7o")
    assert engine.legal_moves(s) == ["10o", "6c", "5e", "5b"]  # the Sota, not an 8
    err = illegal(s, "11o")
    assert (err.code, err.params["needed"]) == ("not_playable", ["3o", "10o"])
    s = play(s, "10o")
    assert engine.view(s, 0)["table"]["o"] == {"low": "4o", "high": "10o"}


# --- C-3: the 5 de oros opens every round ----------------------------------------------------------

def test_C_3_holder_of_the_5_de_oros_opens_and_the_move_is_forced() -> None:
    hands = [suit("c"), suit("e"), ["5o", "5b", "6b"], rest(suit("c"), suit("e"), ["5o", "5b", "6b"])]
    s = new(4, hands)
    assert engine.to_move(s) == 2
    assert engine.legal_moves(s) == ["5o"]
    assert illegal(s, "5b").code == "must_open_with_5o"
    assert illegal(s, "pass").code == "cannot_pass"
    assert illegal(s, "3o").code == "not_in_hand"
    s = play(s, "5o")
    assert engine.to_move(s) == 3


def test_C_3_every_round_opens_with_the_5_de_oros() -> None:
    s = engine.new_game("cinquillo", players=4, seed=11, preset="tradicional")
    rng = random.Random(5)
    starts = 0
    while engine.to_move(s) is not None:
        st: CinquilloState = s
        if not st.history:
            starts += 1
            assert st.hands[st.turn] >> card("5o") & 1
            assert engine.legal_moves(s) == ["5o"]
        s = engine.play(s, rng.choice(engine.legal_moves(s)))
    assert starts == len(engine.result(s)["rounds"]) >= 5


# --- C-4: open with a 5, extend at either end ------------------------------------------------------

def test_C_4_open_a_suit_with_its_5_or_extend_only_adjacent_to_the_ends() -> None:
    a = ["5o", "3o", "7o", "5c", "4c", "1e", "12b"]
    s = new(2, [a, rest(a)])
    s = play(s, "5o")
    assert engine.legal_moves(s) == ["4o", "6o", "5e", "5b"]
    s = play(s, "6o")
    assert engine.legal_moves(s) == ["7o", "5c"]
    err = illegal(s, "3o")
    assert (err.code, err.params["reason"], err.params["needed"]) == ("not_playable", "not_adjacent",
                                                                      ["4o", "7o"])
    err = illegal(s, "4c")
    assert (err.code, err.params["reason"], err.params["needed"]) == ("not_playable", "suit_not_open",
                                                                      ["5c"])
    assert illegal(s, "1e").code == "not_playable"
    s = play(s, "5c")
    assert engine.legal_moves(s) == ["4o", "6c", "5e", "5b"]
    view = engine.view(s, 1)
    assert view["table"] == {"o": {"low": "5o", "high": "6o"}, "c": {"low": "5c", "high": "5c"},
                             "e": None, "b": None}


def test_C_4_extending_below_down_to_the_1() -> None:
    a = ["5o", "3o", "1o", "12b"]
    s = new(2, [a, rest(a)])
    s = play(s, "5o", "4o", "3o", "2o")
    assert engine.legal_moves(s) == ["1o"]
    s = play(s, "1o")
    assert engine.view(s, 0)["table"]["o"] == {"low": "1o", "high": "5o"}
    assert engine.legal_moves(s) == ["6o", "5c", "5e", "5b"]


# --- C-5: pass only when no card can be played -----------------------------------------------------

def test_C_5_pass_only_without_a_legal_card() -> None:
    a = ["5o", "1c"]
    s = new(2, [a, rest(a)])
    s = play(s, "5o")
    err = illegal(s, "pass")
    assert (err.code, err.params["playable"]) == ("cannot_pass", ["4o", "6o", "5c", "5e", "5b"])
    s = play(s, "4o")
    assert engine.legal_moves(s) == ["pass"]
    assert engine.view(s, 0)["legal_moves"] == ["pass"]
    assert engine.view(s, 1)["legal_moves"] == []
    s = play(s, "pass")
    assert engine.to_move(s) == 1
    assert engine.view(s, 0)["last_move"] == {"seat": 0, "move": "pass"}


# --- C-6: turn order -------------------------------------------------------------------------------

def _four(holder: int) -> list[list[str]]:
    hands = [suit("c"), suit("e"), suit("b"), rest(suit("c"), suit("e"), suit("b"))]
    hands[holder], hands[3] = hands[3], hands[holder]
    return hands


def test_C_6_clockwise_goes_to_the_next_seat() -> None:
    s = new(4, _four(1))
    assert engine.to_move(s) == 1
    s = play(s, "5o")
    assert engine.to_move(s) == 2
    s = play(s, "5b")
    assert engine.to_move(s) == 3
    s = play(s, "5e")
    assert engine.to_move(s) == 0
    s = play(s, "5c")
    assert engine.to_move(s) == 1


def test_C_6_counterclockwise_goes_to_the_previous_seat() -> None:
    for options in ({"preset": "tradicional"}, {"direction": "counterclockwise"}):
        s = new(4, _four(1), **options)
        s = play(s, "5o")
        assert engine.to_move(s) == 0
        s = play(s, "5c")
        assert engine.to_move(s) == 3
        s = play(s, "5e")
        assert engine.to_move(s) == 2
        s = play(s, "5b")
        assert engine.to_move(s) == 1
        assert engine.view(s, None)["direction"] == "counterclockwise"


def test_C_6_a_pass_also_hands_the_turn_on() -> None:
    hands = [["5o", "12e"], ["1c", "2c"], rest(["5o", "12e", "1c", "2c"])]
    s = new(3, hands, preset="tradicional")  # counter-clockwise: 0 -> 2 -> 1 -> 0
    s = play(s, "5o")
    assert engine.to_move(s) == 2
    s = play(s, "5c")
    assert (engine.to_move(s), engine.legal_moves(s)) == (1, ["pass"])
    s = play(s, "pass")
    assert (engine.to_move(s), engine.legal_moves(s)) == (0, ["pass"])


# --- C-7: the round ends when a hand is empty ------------------------------------------------------

def test_C_7_first_player_out_wins_the_round() -> None:
    a = ["5o", "6o"]
    s = new(2, [a, rest(a)])
    s = play(s, "5o", "5c")
    assert engine.result(s) is None
    s = play(s, "6o")
    assert engine.to_move(s) is None and engine.legal_moves(s) == []
    res = engine.result(s)
    assert res["winners"] == [0] and res["scores"] == [1, 0]
    assert res["rounds"][0]["cards_left"] == [0, 37]
    assert res["rounds"][0]["end"] == "out"
    assert "chips" not in res
    assert illegal(s, "5e").code == "game_over"
    assert engine.view(s, 1)["over"] is True


def test_C_7_tradicional_plays_to_five_round_wins() -> None:
    s = engine.new_game("cinquillo", players=3, seed=4, preset="tradicional")
    rng = random.Random(0)
    while engine.to_move(s) is not None:
        s = engine.play(s, rng.choice(engine.legal_moves(s)))
    res = engine.result(s)
    assert max(res["round_wins"]) == 5 and res["winners"] == [res["round_wins"].index(5)]
    assert len(res["rounds"]) == sum(res["round_wins"])
    assert res["scores"] == res["round_wins"]


# --- C-8: reproducible deals -----------------------------------------------------------------------

def _sizes(s: Any) -> list[int]:
    return [h.bit_count() for h in s.hands]


def test_C_8_clasico_deal_sizes() -> None:
    assert _sizes(engine.new_game("cinquillo", players=2, seed=1)) == [20, 20]
    assert _sizes(engine.new_game("cinquillo", players=4, seed=1)) == [10] * 4
    for seed in range(30):
        s = engine.new_game("cinquillo", players=3, seed=seed)
        sizes = _sizes(s)
        assert sorted(sizes) == [13, 13, 14]
        assert sizes[engine.to_move(s)] == 14  # the holder of the 5 de oros took the 40th card


def test_C_8_clasico_three_players_when_the_40th_card_is_the_5_de_oros() -> None:
    seed = next(sd for sd in range(2000) if _shuffled(sd, 3, 0)[39] == card("5o"))
    s = engine.new_game("cinquillo", players=3, seed=seed)
    assert _sizes(s) == [14, 13, 13] and engine.to_move(s) == 0


def _shuffled(seed: int | str, players: int, round_no: int) -> list[int]:
    deck = list(range(40))
    SplitMix64.for_deal(seed, "cinquillo", players, round_no).shuffle(deck)
    return deck


def test_C_8_deal_follows_the_documented_procedure() -> None:
    deck = _shuffled("table-9", 4, 0)
    s = engine.new_game("cinquillo", players=4, seed="table-9")
    for seat in range(4):
        assert sorted(card(c) for c in engine.view(s, seat)["hand"]) == sorted(deck[seat::4])
    # tradicional, 6 players, counter-clockwise: dealer 5, cards go to 4, 3, 2, 1, 0, 5, 4, ...
    deck = _shuffled(8, 6, 0)
    s = engine.new_game("cinquillo", players=6, seed=8, preset="tradicional")
    order = [4, 3, 2, 1, 0, 5]
    for k, seat in enumerate(order):
        assert sorted(card(c) for c in engine.view(s, seat)["hand"]) == sorted(deck[k::6])


def test_C_8_same_seed_same_deal_other_seed_other_deal() -> None:
    a = engine.new_game("cinquillo", players=4, seed=123)
    b = engine.new_game("cinquillo", players=4, seed=123)
    c = engine.new_game("cinquillo", players=4, seed=124)
    assert engine.snapshot(a) == engine.snapshot(b)
    assert a.hands != c.hands
    assert engine.new_game("cinquillo", players=4, seed="123").hands != a.hands


@pytest.mark.parametrize(("players", "sizes"), [
    (2, [20, 20]),
    (3, [13, 14, 13]),          # dealer 2, the deal starts at seat 1 (counter-clockwise)
    (4, [10, 10, 10, 10]),
    (5, [8, 8, 8, 8, 8]),
    (6, [6, 7, 7, 7, 7, 6]),    # dealer 5: seats 4, 3, 2, 1 get the 37th..40th cards
])
def test_C_8_tradicional_deal_sizes(players: int, sizes: list[int]) -> None:
    s = engine.new_game("cinquillo", players=players, seed=2, preset="tradicional")
    assert _sizes(s) == sizes
    assert engine.view(s, None)["dealer"] == players - 1


def test_C_8_tradicional_clockwise_deal_starts_at_seat_0() -> None:
    s = engine.new_game("cinquillo", players=6, seed=2, preset="tradicional", direction="clockwise")
    assert _sizes(s) == [7, 7, 7, 7, 6, 6]


def test_C_8_tradicional_dealer_moves_on_each_round() -> None:
    s = engine.new_game("cinquillo", players=6, seed=21, preset="tradicional")
    rng = random.Random(2)
    seen = []
    while engine.to_move(s) is not None and len(seen) < 3:
        if not s.history:
            dealer = engine.view(s, None)["dealer"]
            seen.append((dealer, _sizes(s)))
            deck = _shuffled(21, 6, len(seen) - 1)
            order = [(dealer - j - 1) % 6 for j in range(6)]  # from the seat after the dealer
            for j, seat in enumerate(order):
                assert sorted(card(c) for c in engine.view(s, seat)["hand"]) == sorted(deck[j::6])
        s = engine.play(s, rng.choice(engine.legal_moves(s)))
    assert seen == [(5, [6, 7, 7, 7, 7, 6]), (4, [7, 7, 7, 7, 6, 6]), (3, [7, 7, 7, 6, 6, 7])]


def test_C_8_given_hands_fix_only_the_first_round() -> None:
    a = ["5o", "6o"]
    s = new(2, [a, rest(a)], points=True, target=50)
    s = play(s, "5o", "5c", "6o")
    assert engine.view(s, None)["round"] == 2
    deck = _shuffled(1, 2, 1)
    assert sorted(card(c) for c in engine.view(s, 0)["hand"]) == sorted(deck[0::2])


# --- C-9: pago -------------------------------------------------------------------------------------

def test_C_9_each_pass_pays_a_chip_and_the_winner_takes_the_pot() -> None:
    hands = [["5o", "6o", "7o"], ["1e", "2e"], rest(["5o", "6o", "7o", "1e", "2e"])]
    s = new(3, hands, chips=True)
    assert engine.view(s, 0)["chips"] == [10, 10, 10] and engine.view(s, 0)["pot"] == 0
    s = play(s, "5o", "pass")
    assert (engine.view(s, 2)["chips"], engine.view(s, 2)["pot"]) == ([10, 9, 10], 1)
    s = play(s, "4o", "6o", "pass", "3o")
    assert (engine.view(s, 2)["chips"], engine.view(s, 2)["pot"]) == ([10, 8, 10], 2)
    s = play(s, "7o")
    res = engine.result(s)
    assert res["winners"] == [0] and res["chips"] == [12, 8, 10] and res["pot"] == 0
    assert res["rounds"][0]["pot_taken"] == [2, 0, 0]


def test_C_9_chips_carry_over_and_never_decide_the_match() -> None:
    hands = [["5o", "6o", "7o"], ["1e", "2e"], rest(["5o", "6o", "7o", "1e", "2e"])]
    s = new(3, hands, chips=True, points=True, target=40)
    s = play(s, "5o", "pass", "4o", "6o", "pass", "3o", "7o")
    view = engine.view(s, 0)
    assert view["round"] == 2 and view["chips"] == [12, 8, 10] and view["pot"] == 0
    assert view["scores"] == [35, 0, 0]  # 2 + 33 cards left in the other hands (C-10)
    rng = random.Random(1)
    while engine.to_move(s) is not None:
        s = engine.play(s, rng.choice(engine.legal_moves(s)))
    res = engine.result(s)
    top = max(res["scores"])
    assert res["winners"] == [i for i, p in enumerate(res["scores"]) if p == top]
    assert sum(res["chips"]) + res["pot"] == 30


def test_C_9_a_player_without_chips_passes_for_free() -> None:
    a = ["5o", "1c"]
    s = new(2, [a, rest(a)], chips=True)
    data = engine.snapshot(play(s, "5o", "4o"))
    data["state"]["chips"] = [0, 20]
    s = engine.restore(data)
    s = play(s, "pass")
    assert (engine.view(s, 0)["chips"], engine.view(s, 0)["pot"]) == ([0, 20], 0)
    assert engine.view(s, 0)["last_move"] == {"seat": 0, "move": "pass"}


def _cabron_tie_hands() -> list[list[str]]:
    b = [*suit("c"), "12b"]
    return [suit("o"), b, rest(suit("o"), b)]


_CABRON_TIE_MOVES = ["5o", "5c", "5e", "1o", "1c", "6e", "12o", "12c", "1e", "pass", "pass", "12e",
                     "pass", "pass", "5b", "pass", "12b", "1b"]


def test_C_9_shared_winners_split_the_pot_and_the_remainder_stays() -> None:
    s = new(3, _cabron_tie_hands(), cabron=True, chips=True)
    s = play(s, *_CABRON_TIE_MOVES)
    record = engine.view(s, 0)["rounds"][0]
    assert record["winners"] == [0, 1]
    assert record["pot_taken"] == [2, 2, 0] and record["pot_left"] == 1
    view = engine.view(s, 0)
    assert view["chips"] == [9, 10, 10] and view["pot"] == 1 and view["round"] == 2


def test_C_9_team_partners_split_the_pot() -> None:
    s = new(4, _team_hands(), preset="tradicional", teams=True, chips=True, rounds_to_win=1)
    s = play(s, *_TEAM_MOVES)
    res = engine.result(s)
    assert res["chips"] == [9, 10, 10, 10] and res["pot"] == 1  # pot of 1 between two: stays


# --- C-10: puntaje ---------------------------------------------------------------------------------

def test_C_10_winner_scores_the_cards_left_in_the_other_hands() -> None:
    a = ["5o", "6o"]
    s = new(2, [a, rest(a)], points=True, target=40)
    s = play(s, "5o", "5c", "6o")
    view = engine.view(s, 1)
    assert view["scores"] == [37, 0] and view["scoring"] == "points" and not view["over"]
    assert view["rounds"][0]["points"] == [37, 0]
    assert view["round_wins"] == [1, 0]


def test_C_10_match_ends_at_the_target() -> None:
    a = ["5o", "6o"]
    s = new(2, [a, rest(a)], points=True)
    s = play(s, "5o", "5c", "6o")
    res = engine.result(s)
    assert res["winners"] == [0] and res["scores"] == [37, 0] and res["scoring"] == "points"


def test_C_10_points_add_up_over_a_long_match() -> None:
    s = engine.new_game("cinquillo", players=4, seed=9, points=True, target=60)
    rng = random.Random(9)
    while engine.to_move(s) is not None:
        s = engine.play(s, rng.choice(engine.legal_moves(s)))
    res = engine.result(s)
    totals = [sum(r["points"][seat] for r in res["rounds"]) for seat in range(4)]
    assert totals == res["scores"] and max(totals) >= 60
    for r in res["rounds"]:
        (w,) = r["winners"]
        assert r["points"][w] == sum(r["cards_left"]) and r["cards_left"][w] == 0


# --- C-11: doble turno -----------------------------------------------------------------------------

def _double_hands() -> list[list[str]]:
    b = [*[c for c in suit("o") if c != "5o"], "1c", "12c"]
    return [rest(b), b]


_DOUBLE_MOVES = ["5o", "6o", "5c", "7o", "5e", "10o", "5b", "11o", "6c", "4o", "7c", "3o", "10c", "2o",
                 "11c"]


def test_C_11_a_1_or_a_rey_plays_again_and_extra_turns_chain() -> None:
    s = new(2, _double_hands(), double_turn=True, chips=True)
    s = play(s, *_DOUBLE_MOVES)
    assert (engine.to_move(s), engine.legal_moves(s)) == (1, ["1o", "12o", "12c"])
    s = play(s, "1o")
    assert (engine.to_move(s), engine.legal_moves(s)) == (1, ["12o", "12c"])
    assert engine.view(s, 1)["extra_turn"] is True
    s = play(s, "12o")
    assert (engine.to_move(s), engine.legal_moves(s)) == (1, ["12c"])
    s = play(s, "12c")
    # no legal card for the extra turn: it just ends, no pass and no chip
    assert engine.to_move(s) == 0 and engine.view(s, 0)["extra_turn"] is False
    view = engine.view(s, 0)
    assert view["chips"] == [10, 10] and view["pot"] == 0
    assert [m["move"] for m in view["history"][-3:]] == ["1o", "12o", "12c"]
    assert "pass" not in [m["move"] for m in view["history"]]


def test_C_11_without_the_variant_the_turn_moves_on() -> None:
    s = new(2, _double_hands())
    s = play(s, *_DOUBLE_MOVES, "1o")
    assert engine.to_move(s) == 0


def test_C_11_other_ranks_do_not_give_an_extra_turn() -> None:
    s = new(2, _double_hands(), double_turn=True)
    s = play(s, "5o", "6o")
    assert engine.to_move(s) == 0


# --- C-12: parejas ---------------------------------------------------------------------------------

def _team_hands() -> list[list[str]]:
    s0 = ["5o", *[c for c in suit("e") if c != "5e"]]
    s1 = [*suit("b"), "5e"]
    s2 = ["6o", "7o"]
    return [s0, s1, s2, rest(s0, s1, s2)]


_TEAM_MOVES = ["5o", "5c", "6o", "5b", "pass", "4c", "7o"]


def test_C_12_partners_sit_apart() -> None:
    s = engine.new_game("cinquillo", players=4, seed=1, teams=True)
    assert engine.view(s, 0)["teams"] == [[0, 2], [1, 3]]
    s = engine.new_game("cinquillo", players=6, seed=1, preset="tradicional", teams=True)
    assert engine.view(s, 0)["teams"] == [[0, 3], [1, 4], [2, 5]]
    assert engine.view(engine.new_game("cinquillo", players=4, seed=1), 0)["teams"] is None


def test_C_12_a_team_wins_when_either_partner_goes_out() -> None:
    s = new(4, _team_hands(), preset="tradicional", teams=True, rounds_to_win=1)
    s = play(s, *_TEAM_MOVES[:4])
    assert engine.legal_moves(s) == ["pass"]
    s = play(s, *_TEAM_MOVES[4:])
    res = engine.result(s)
    assert res["winners"] == [0, 2] and res["round_wins"] == [1, 0, 1, 0]
    assert res["rounds"][0]["cards_left"] == [9, 10, 0, 15]


def test_C_12_team_points_count_the_opponents_cards() -> None:
    s = new(4, _team_hands(), preset="tradicional", teams=True, points=True)
    s = play(s, *_TEAM_MOVES)
    res = engine.result(s)
    assert res["winners"] == [0, 2] and res["scores"] == [25, 0, 25, 0]  # 10 + 15, not the partner's 9


def test_C_12_team_points_below_the_target_continue() -> None:
    s = new(4, _team_hands(), preset="tradicional", teams=True, points=True, target=30)
    s = play(s, *_TEAM_MOVES)
    view = engine.view(s, 3)
    assert view["scores"] == [25, 0, 25, 0] and view["round"] == 2 and not view["over"]


# --- C-13: cabrón ----------------------------------------------------------------------------------

def test_C_13_cabron_plays_beyond_the_ends_and_blocks_the_cards_jumped_over() -> None:
    s = new(3, _cabron_tie_hands(), cabron=True)
    s = play(s, "5o")
    assert engine.legal_moves(s) == ["5c"]  # suits are still opened only by their 5
    s = play(s, "5c")
    assert engine.legal_moves(s) == ["5e", "5b"]
    s = play(s, "5e")
    assert engine.legal_moves(s) == ["1o", "2o", "3o", "4o", "6o", "7o", "10o", "11o", "12o"]
    s = play(s, "1o")
    assert engine.view(s, 2)["blocked"] == ["2o", "3o", "4o"]
    assert engine.view(s, 2)["table"]["o"] == {"low": "1o", "high": "5o"}
    s = play(s, "1c", "6e")
    assert engine.legal_moves(s) == ["6o", "7o", "10o", "11o", "12o"]
    err = illegal(s, "3o")
    assert (err.code, err.params["card"]) == ("blocked", "3o")
    s = play(s, "12o", "12c")
    assert engine.legal_moves(s) == ["1e", "2e", "3e", "4e", "7e", "10e", "11e", "12e", "5b"]


def test_C_13_a_one_card_jump_blocks_that_card_and_adjacent_plays_block_nothing() -> None:
    a = ["5o", "7o", "3o"]
    s = new(2, [a, rest(a)], cabron=True)
    s = play(s, "5o", "5c", "7o")
    assert engine.view(s, 0)["blocked"] == ["6o"]
    assert engine.legal_moves(s) == ["1o", "2o", "4o", "10o", "11o", "12o", "1c", "2c", "3c", "4c", "6c",
                                     "7c", "10c", "11c", "12c", "5e", "5b"]
    assert illegal(s, "6o").code == "blocked"
    s = play(s, "4o", "3o")
    assert engine.view(s, 1)["blocked"] == ["6o"]
    assert engine.result(s)["winners"] == [0]


def test_C_13_no_one_can_move_fewest_cards_win_and_share_the_points_exactly() -> None:
    s = new(3, _cabron_tie_hands(), cabron=True)
    s = play(s, *_CABRON_TIE_MOVES[:-1])
    assert engine.legal_moves(s) == ["1b", "2b", "3b", "4b"]
    s = play(s, "1b")
    view = engine.view(s, 2)
    record = view["rounds"][0]
    assert record["end"] == "blocked" and record["winners"] == [0, 1]
    assert record["cards_left"] == [7, 7, 13]
    assert record["points"] == ["13/2", "13/2", 0]
    assert view["scores"] == ["13/2", "13/2", 0] and view["round"] == 2 and not view["over"]
    assert json.loads(json.dumps(view)) == view
    data = engine.snapshot(s)
    assert engine.snapshot(engine.restore(json.loads(json.dumps(data)))) == data


def test_C_13_a_single_fewest_hand_wins_a_blocked_round() -> None:
    a = [*suit("o"), "12b"]
    b = [*suit("c"), "3e"]
    s = new(3, [a, b, rest(a, b)], cabron=True)
    s = play(s, "5o", "5c", "5e", "1o", "1c", "1e", "12o", "12c", "12e")
    assert engine.legal_moves(s) == ["pass"]
    s = play(s, "pass", "pass", "5b")
    assert engine.legal_moves(s) == ["12b"]
    s = play(s, "12b", "pass", "1b")
    res = engine.result(s)
    record = res["rounds"][0]
    assert (record["end"], record["winners"], record["cards_left"]) == ("blocked", [0], [7, 8, 13])
    assert res["winners"] == [0] and res["scores"] == [21, 0, 0]


def test_C_13_going_out_still_ends_the_round() -> None:
    a = ["5o", "1o"]
    s = new(2, [a, rest(a)], cabron=True)
    s = play(s, "5o", "5c")
    assert engine.legal_moves(s) == ["1o"]
    s = play(s, "1o")
    res = engine.result(s)
    assert res["winners"] == [0] and res["scores"] == [37, 0]
    assert res["rounds"][0]["end"] == "out"


def test_C_13_cabron_is_scored_in_points_and_not_with_teams() -> None:
    s = engine.new_game("cinquillo", players=3, seed=1, cabron=True)
    view = engine.view(s, 0)
    assert view["scoring"] == "points" and view["target"] == 20 and view["options"]["points"] is True
    with pytest.raises(ValueError, match="teams"):
        engine.new_game("cinquillo", players=4, seed=1, cabron=True, teams=True)
    with pytest.raises(ValueError, match="points"):
        engine.new_game("cinquillo", players=4, seed=1, cabron=True, points=False)


# --- presets and options ---------------------------------------------------------------------------

def test_presets_set_defaults_that_options_override() -> None:
    o = engine.view(engine.new_game("cinquillo", players=4), 0)["options"]
    assert o == {"preset": "clasico", "direction": "clockwise", "deal": "clasico", "chips": False,
                 "points": False, "double_turn": False, "teams": False, "cabron": False,
                 "target": None, "rounds_to_win": 1}
    o = engine.view(engine.new_game("cinquillo", players=6, preset="tradicional"), 0)["options"]
    assert (o["direction"], o["deal"], o["rounds_to_win"]) == ("counterclockwise", "tradicional", 5)
    o = engine.view(engine.new_game("cinquillo", players=3, preset="tradicional", points=True,
                                    target=35, direction="clockwise"), 0)["options"]
    assert (o["direction"], o["target"], o["rounds_to_win"]) == ("clockwise", 35, None)


@pytest.mark.parametrize(("players", "options", "word"), [
    (4, {"colour": "red"}, "colour"),
    (4, {"preset": "moderno"}, "preset"),
    (4, {"direction": "left"}, "direction"),
    (4, {"chips": 1}, "chips"),
    (4, {"points": "yes"}, "points"),
    (4, {"points": True, "target": True}, "target"),
    (4, {"points": True, "target": 0}, "target"),
    (4, {"points": True, "target": 2.5}, "target"),
    (4, {"rounds_to_win": 0}, "rounds_to_win"),
    (4, {"points": True, "rounds_to_win": 3}, "rounds_to_win"),
    (4, {"target": 30}, "target"),
    (3, {"teams": True}, "teams"),
    (5, {"preset": "tradicional", "teams": True}, "teams"),
    (5, {}, "5"),
    (1, {"preset": "tradicional"}, "1"),
    (7, {"preset": "tradicional"}, "7"),
    (5, {"preset": "tradicional", "deal": "clasico"}, "deal"),
])
def test_presets_bad_options_raise_value_error(players: int, options: dict[str, Any], word: str) -> None:
    with pytest.raises(ValueError, match=word):
        engine.new_game("cinquillo", players=players, seed=1, **options)


@pytest.mark.parametrize("hands", [
    [suit("o"), suit("c")],                                   # not the whole deck
    [[*suit("o"), "5o"], rest(suit("o"))],                    # a card twice
    [[], list(CODES)],                                        # an empty hand
    [["5o", "8o"], rest(["5o"])],                             # not a card
    [list(CODES)],                                            # one list for two seats
])
def test_hands_are_validated(hands: list[list[str]]) -> None:
    with pytest.raises(ValueError):
        engine.new_game("cinquillo", players=2, seed=1, hands=hands)


def test_seed_must_be_int_or_str() -> None:
    with pytest.raises(ValueError):
        engine.new_game("cinquillo", players=2, seed=1.5)
    with pytest.raises(ValueError):
        engine.new_game("cinquillo", players=2, seed=True)


# --- G-1, G-2, G-3 ---------------------------------------------------------------------------------

def test_G_1_a_view_shows_only_the_own_hand_and_never_the_seed() -> None:
    s = engine.new_game("cinquillo", players=4, seed="very-secret-seed", chips=True)
    s = play(s, *engine.legal_moves(s))
    for seat in (None, 0, 1, 2, 3):
        view = engine.view(s, seat)
        text = json.dumps(view)
        assert "very-secret-seed" not in text and "seed" not in view
        assert view["hand"] == (None if seat is None else [CODES[c] for c in range(40)
                                                           if s.hands[seat] >> c & 1])
        assert view["hand_sizes"] == [h.bit_count() for h in s.hands]
        strings = set(strings_in(view))
        for other in range(4):
            if other != seat:
                assert not strings & {CODES[c] for c in range(40) if s.hands[other] >> c & 1}
    with pytest.raises(ValueError):
        engine.view(s, 4)


def test_G_2_illegal_moves_change_nothing_and_say_why() -> None:
    a = ["5o", "3o", "7o", "5c", "4c", "1e", "12b"]
    s = new(2, [a, rest(a)])
    assert illegal(s, "6o").code == "not_in_hand"
    assert illegal(s, "7o").code == "must_open_with_5o"
    assert illegal(s, "").code == "bad_notation"
    with pytest.raises(engine.IllegalMove) as info:
        engine.play(s, 5)  # type: ignore[arg-type]
    assert info.value.code == "bad_notation"
    assert engine.play(s, " 5O ").history == [card("5o")]  # lenient notation, canonical result
    err = RULES.explain(s, PASS)
    assert isinstance(err, engine.IllegalMove) and err.code == "cannot_pass"


def test_G_3_a_match_replays_from_its_recorded_moves() -> None:
    options = {"preset": "tradicional", "chips": True, "double_turn": True}
    s = engine.new_game("cinquillo", players=5, seed=77, **options)
    rng = random.Random(77)
    while engine.to_move(s) is not None:
        s = engine.play(s, rng.choice(engine.legal_moves(s)))
    res = engine.result(s)
    replay = engine.new_game("cinquillo", players=5, seed=77, **options)
    for record in res["rounds"]:
        for seat, move in record["moves"]:
            assert engine.to_move(replay) == seat
            replay = engine.play(replay, move)
    assert engine.result(replay) == res
    assert engine.snapshot(replay) == engine.snapshot(s)


def test_replace_hands_builds_a_determinized_state() -> None:
    s = engine.new_game("cinquillo", players=3, seed=5)
    s = play(s, "5o")
    clone = RULES.clone(s)
    h = clone.hands
    seat = engine.to_move(s)
    others = [p for p in range(3) if p != seat]
    pool = h[others[0]] | h[others[1]]
    cards = [c for c in range(40) if pool >> c & 1]
    n0 = h[others[0]].bit_count()
    new_hands = list(h)
    new_hands[others[0]] = sum(1 << c for c in cards[:n0])
    new_hands[others[1]] = sum(1 << c for c in cards[n0:])
    replace_hands(clone, new_hands)
    assert clone.hands == new_hands and s.hands == h  # the original is untouched
    with pytest.raises(ValueError):
        replace_hands(clone, [h[0], h[1], h[2] ^ 1])
