"""535 rules, one test (or several) per rule id of docs/rules.md (F-1..F-14, G-1..G-3).

Hands are built by hand (``hands=``) and the tests assert exact legal-move lists and outcomes.
Seat 0 leads the first round (F-13).  Cards in no hand are out of play.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest

import engine.five35
from engine import api
from engine.errors import IllegalMove
from engine.five35 import RULES, determinize, unseen_cards, with_hands
from engine.five35.cards import RANKS, deck_ranks
from engine.rng import SplitMix64
from engine.rules import games

ALL = [1, 2, 3, 4, 5, 7, 8, 9, 11, 12, 13, 14, 15]


def new(players: int, *hands: list[int], seed: int | str = 1, **options: Any) -> Any:
    return api.new_game("535", players=players, seed=seed, hands=[list(h) for h in hands], **options)


def run(state: Any, *moves: str) -> Any:
    for m in moves:
        state = api.play(state, m)
    return state


def table(state: Any) -> dict[str, Any]:
    return api.view(state, None)


def pile(state: Any) -> tuple[list[int], str | None]:
    p = table(state)["pile"]
    return p["cards"], p["type"]


def refused(state: Any, move: str, code: str) -> IllegalMove:
    before = api.snapshot(state)
    with pytest.raises(IllegalMove) as info:
        api.play(state, move)
    assert info.value.code == code, info.value.message
    assert info.value.message  # a readable sentence (G-2)
    assert api.snapshot(state) == before  # G-2: nothing changed
    return info.value


def test_registered() -> None:
    assert engine.five35.RULES is RULES
    assert "535" in games()


# --- F-1 deck --------------------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4])
def test_F_1_four_copies_of_13_ranks_with_2_to_4_players(players: int) -> None:
    assert Counter(deck_ranks(players)) == {r: 4 for r in ALL}
    hand_size = 52 // players
    s = api.new_game("535", players=players, seed=3, hand_size=hand_size)
    dealt = Counter(r for seat in range(players) for r in RULES.snapshot(s)["hands"][seat])
    dealt.update(RULES.snapshot(s)["out"])
    assert dealt == {r: 4 for r in ALL}


@pytest.mark.parametrize("players", [5, 6])
def test_F_1_five_copies_with_5_and_6_players(players: int) -> None:
    assert Counter(deck_ranks(players)) == {r: 5 for r in ALL}
    assert len(deck_ranks(players)) == 65
    s = api.new_game("535", players=5, seed=3)  # 5 x 13 = the whole 65-card deck
    snap = RULES.snapshot(s)
    assert Counter(r for h in snap["hands"] for r in h) == {r: 5 for r in ALL}
    assert snap["out"] == []


def test_F_1_hands_cannot_hold_more_copies_than_the_deck() -> None:
    with pytest.raises(ValueError, match="rank 7"):
        new(4, [7, 7, 7], [7, 7], [1], [2])
    new(5, [7, 7, 7], [7, 7], [1], [1], [1])  # five 7s exist with 5 players


def test_F_1_there_is_no_6_and_no_10() -> None:
    s = new(2, [5, 7, 9, 11], [1])
    refused(s, "play 6", "bad_notation")
    refused(s, "play 10", "bad_notation")
    with pytest.raises(ValueError):
        new(2, [6], [1])
    with pytest.raises(ValueError):
        new(2, [10], [1])


# --- F-2 deal --------------------------------------------------------------------------------


@pytest.mark.parametrize(("players", "size"), [(2, 13), (3, 13), (4, 13), (5, 13), (6, 10)])
def test_F_2_thirteen_cards_each_ten_with_six_players(players: int, size: int) -> None:
    s = api.new_game("535", players=players, seed="abc")
    v = api.view(s, 0)
    assert v["hand_sizes"] == [size] * players
    assert len(v["hand"]) == size
    assert v["out_of_play"] == len(deck_ranks(players)) - size * players


def test_F_2_hand_size_option_and_its_limits() -> None:
    s = api.new_game("535", players=3, seed=1, hand_size=5)
    assert api.view(s, 0)["hand_sizes"] == [5, 5, 5]
    assert api.view(s, 0)["out_of_play"] == 52 - 15
    api.new_game("535", players=6, seed=1, hand_size=10)
    api.new_game("535", players=5, seed=1, hand_size=13)
    for bad in (0, -1, 14, True, 2.0, "3"):
        with pytest.raises(ValueError, match="hand_size"):
            api.new_game("535", players=4, seed=1, hand_size=bad)
    with pytest.raises(ValueError, match="hand_size"):
        api.new_game("535", players=6, seed=1, hand_size=11)  # 66 > 65


def test_F_2_the_deal_is_the_documented_shuffle() -> None:
    s = api.new_game("535", players=3, seed=42)
    deck = deck_ranks(3)
    SplitMix64.for_deal(42, "535", 3, 0).shuffle(deck)
    expected = [sorted(deck[i:39:3]) for i in range(3)]  # one at a time from seat 0 (after dealer 2)
    assert RULES.snapshot(s)["hands"] == expected
    assert sorted(RULES.snapshot(s)["out"]) == sorted(deck[39:])
    assert api.snapshot(api.new_game("535", players=3, seed=42)) == api.snapshot(s)
    assert api.snapshot(api.new_game("535", players=3, seed=43)) != api.snapshot(s)


# --- F-3 points ------------------------------------------------------------------------------


def test_F_3_default_point_values() -> None:
    s = new(2, [15], ALL)
    s = run(s, "play 15")  # seat 0 goes out; seat 1 scores its whole hand
    assert api.result(s) is not None
    # 1-5: 5 x 1; 7, 9: 2 + 2; 11, 12, 13: 3 x 3; 14, 15: 4 + 4; 8: 5
    assert api.view(s, 0)["scores"] == [0, 5 + 4 + 9 + 8 + 5]
    assert api.view(s, 0)["options"]["points"]["8"] == 5


def test_F_3_points_option_overrides_the_values() -> None:
    pts = dict.fromkeys(ALL, 1)
    pts[8] = 10
    s = run(new(2, [15], [8, 1, 2], points=pts, target=100), "play 15")
    assert api.view(s, 0)["scores"] == [0, 12]


@pytest.mark.parametrize("points", [
    {r: 1 for r in ALL if r != 8},           # a rank missing
    {**dict.fromkeys(ALL, 1), 6: 1},       # not a rank
    {**dict.fromkeys(ALL, 1), 8: -1},      # negative
    {**dict.fromkeys(ALL, 1), 8: True},    # bool is not int
    {**dict.fromkeys(ALL, 1), 8: 1.5},
    dict.fromkeys(ALL, 0),                  # nobody could ever score
    [1] * 13,
])
def test_F_3_bad_points_option_is_refused(points: Any) -> None:
    with pytest.raises(ValueError, match="points"):
        api.new_game("535", players=2, seed=1, points=points)


# --- F-4 piles -------------------------------------------------------------------------------


def test_F_4_the_leader_may_play_any_single_group_or_run_of_1_to_3_cards() -> None:
    s = new(2, [1, 1, 1, 2, 3, 8, 15], [4])
    assert api.legal_moves(s) == [
        "play 1", "play 2", "play 3", "play 8", "play 15",
        "play 1 1", "play 1 2", "play 2 3",
        "play 1 1 1", "play 1 2 3",
    ]


def test_F_4_not_a_pile_and_too_many_cards() -> None:
    s = new(2, [1, 1, 1, 1, 2, 3, 4, 15], [4])
    refused(s, "play 1 3", "not_a_pile")
    refused(s, "play 1 1 2", "not_a_pile")
    refused(s, "play 1 2 3 4", "too_many_cards")
    refused(s, "play 1 1 1 1", "too_many_cards")


def test_F_4_not_in_hand() -> None:
    s = new(2, [1, 2], [4])
    e = refused(s, "play 4", "not_in_hand")
    assert e.params["cards"] == [4]
    refused(s, "play 1 1", "not_in_hand")


# --- F-5 consecutive ranks -------------------------------------------------------------------


def test_F_5_consecutive_means_adjacent_in_the_deck_order() -> None:
    s = new(2, [4, 5, 7, 9, 11], [1])
    assert api.legal_moves(s) == [
        "play 4", "play 5", "play 7", "play 9", "play 11",
        "play 4 5", "play 5 7", "play 9 11",
        "play 4 5 7",
    ]
    refused(s, "play 7 9", "not_a_pile")  # 8 lies between them


def test_F_5_a_run_can_contain_an_8() -> None:
    s = new(2, [7, 8, 9, 1], [2])
    assert "play 7 8 9" in api.legal_moves(s)
    s = run(s, "play 7 8 9")
    assert pile(s) == ([7, 8, 9], "run")


# --- F-6 ranking -----------------------------------------------------------------------------


def test_F_6_singles_higher_beats_lower() -> None:
    s = run(new(2, [7, 1], [1, 5, 9, 15]), "play 7")
    assert api.legal_moves(s) == ["pass", "play 9", "play 15"]
    refused(s, "play 5", "does_not_beat")


def test_F_6_groups_higher_beats_lower() -> None:
    s = run(new(2, [7, 7, 1], [5, 5, 9, 9, 11]), "play 7 7")
    assert api.legal_moves(s) == ["pass", "play 9 9"]
    refused(s, "play 5 5", "does_not_beat")


def test_F_6_runs_the_lower_run_beats_the_higher_by_default() -> None:
    s = run(new(2, [9, 11, 12, 1], [3, 4, 5, 12, 13, 14]), "play 9 11 12")
    assert api.legal_moves(s) == ["pass", "play 3 4 5", "add 13", "add 13 14"]
    e = refused(s, "play 12 13 14", "does_not_beat")
    assert "lower" in e.message


def test_F_6_runs_low_beats_high_false_makes_the_higher_run_win() -> None:
    s = run(new(2, [9, 11, 12, 1], [3, 4, 5, 12, 13, 14], runs_low_beats_high=False), "play 9 11 12")
    assert api.legal_moves(s) == ["pass", "play 12 13 14", "add 13", "add 13 14"]
    refused(s, "play 3 4 5", "does_not_beat")
    assert table(s)["options"]["runs_low_beats_high"] is False


def test_F_6_equal_piles_do_not_beat() -> None:
    s = run(new(3, [7, 1], [7, 2], [3]), "play 7")
    assert api.legal_moves(s) == ["pass"]
    refused(s, "play 7", "does_not_beat")


def test_F_6_runs_low_beats_high_must_be_a_bool() -> None:
    with pytest.raises(ValueError, match="runs_low_beats_high"):
        api.new_game("535", players=2, seed=1, runs_low_beats_high=1)


# --- F-7 the leader --------------------------------------------------------------------------


def test_F_7_leader_cannot_pass() -> None:
    s = new(2, [1, 2], [3])
    assert "pass" not in api.legal_moves(s)
    refused(s, "pass", "leader_cannot_pass")


def test_F_7_leader_cannot_add() -> None:
    s = new(2, [1, 2], [3])
    refused(s, "add 1", "nothing_to_add_to")


# --- F-8 overwrite, add, pass ---------------------------------------------------------------


def test_F_8_overwrite_replaces_the_pile_with_the_same_type_and_size() -> None:
    s = run(new(3, [3, 4, 1], [1, 2, 15], [5]), "play 3 4")
    assert api.legal_moves(s) == ["pass", "play 1 2", "add 2", "add 1 2"]
    s = run(s, "play 1 2")
    assert pile(s) == ([1, 2], "run")
    v = table(s)
    assert v["last_player"] == 1 and v["to_move"] == 2 and v["leader"] == 0


def test_F_8_overwrite_must_match_type_and_size() -> None:
    s = run(new(2, [7, 1], [9, 9, 11, 12]), "play 7")
    refused(s, "play 9 9", "wrong_type_or_size")
    refused(s, "play 11 12", "wrong_type_or_size")
    s = run(new(2, [7, 7, 1], [9, 9, 9, 11]), "play 7 7")
    refused(s, "play 9 9 9", "wrong_type_or_size")
    refused(s, "play 11", "wrong_type_or_size")


def test_F_8_add_to_a_group_of_the_same_rank() -> None:
    s = run(new(3, [7, 7, 1], [7, 1], [9, 9, 9, 2]), "play 7 7")
    assert api.legal_moves(s) == ["pass", "add 7"]
    s = run(s, "add 7")
    assert pile(s) == ([7, 7, 7], "group")
    # later overwrites must match the new size: a group of three
    assert api.legal_moves(s) == ["pass", "play 9 9 9"]
    refused(s, "add 9", "add_does_not_fit")


def test_F_8_add_to_a_run_at_the_low_end_the_high_end_or_both() -> None:
    s = run(new(2, [4, 5, 1], [2, 3, 7, 9]), "play 4 5")
    assert api.legal_moves(s) == ["pass", "play 2 3", "add 3", "add 7", "add 2 3", "add 3 7",
                                  "add 2 3 7"]
    assert pile(run(s, "add 3")) == ([3, 4, 5], "run")
    assert pile(run(s, "add 7")) == ([4, 5, 7], "run")
    assert pile(run(s, "add 3 7")) == ([3, 4, 5, 7], "run")
    refused(s, "add 9", "add_does_not_fit")
    refused(s, "add 2", "add_does_not_fit")


def test_F_8_a_single_cannot_be_added_to() -> None:
    s = run(new(2, [7, 1], [7, 8, 2]), "play 7")
    assert api.legal_moves(s) == ["pass", "play 8"]
    refused(s, "add 7", "cannot_add_to_single")


def test_F_8_add_may_not_go_beyond_the_trick_ending_size() -> None:
    s = run(new(2, [7, 7, 7, 1], [7, 2]), "play 7 7 7")
    assert api.legal_moves(s) == ["pass", "add 7"]
    s = run(new(2, [7, 7, 1], [7, 7, 2]), "play 7 7")
    assert api.legal_moves(s) == ["pass", "add 7", "add 7 7"]
    s = run(new(2, [3, 4, 5, 1], [1, 2, 7, 8, 9]), "play 3 4 5")
    assert api.legal_moves(s) == ["pass", "add 2", "add 7", "add 1 2", "add 2 7", "add 7 8"]
    refused(s, "add 1 2 7", "too_long")
    refused(s, "add 7 8 9", "too_long")


def test_F_8_a_pile_longer_than_three_can_only_be_added_to() -> None:
    s = run(new(3, [3, 4, 1], [5, 7, 2], [11, 12, 13, 8, 9]), "play 3 4", "add 5 7")
    assert pile(s) == ([3, 4, 5, 7], "run")
    assert api.legal_moves(s) == ["pass", "add 8"]
    refused(s, "play 11 12 13", "wrong_type_or_size")


def test_F_8_pass_takes_the_player_out_of_the_trick() -> None:
    s = run(new(3, [3, 1], [4, 15], [5, 14]), "play 3", "pass", "play 5")
    v = table(s)
    assert v["passed"] == [1]
    assert v["to_move"] == 0  # seat 1 is skipped
    s = run(s, "pass")  # only seat 2 is left in the trick
    assert table(s)["to_move"] == 2


# --- F-9 end of a trick ---------------------------------------------------------------------


def test_F_9_trick_ends_when_all_but_one_passed_and_the_last_player_leads() -> None:
    s = run(new(3, [3, 1, 1], [5, 2], [4, 2]), "play 3", "play 5", "pass")
    assert table(s)["to_move"] == 0
    s = run(s, "pass")
    v = table(s)
    assert v["pile"] == {"cards": [], "type": None, "size": 0}
    assert v["leader"] == 1 and v["to_move"] == 1 and v["passed"] == [] and v["last_player"] is None
    assert api.legal_moves(s) == ["play 2"]


def test_F_9_two_players_a_pass_ends_the_trick() -> None:
    s = run(new(2, [3, 1], [5, 2]), "play 3", "pass")
    v = table(s)
    assert v["leader"] == 0 and v["to_move"] == 0 and v["pile"]["type"] is None
    assert api.legal_moves(s) == ["play 1"]


def test_F_9_group_reaching_four_cards_ends_the_trick() -> None:
    s = run(new(4, [7, 7, 1], [7, 2], [7, 3], [4]), "play 7 7", "add 7")
    assert api.legal_moves(s) == ["pass", "add 7"]
    s = run(s, "add 7")
    v = table(s)
    assert v["pile"]["type"] is None and v["leader"] == 2 and v["to_move"] == 2


def test_F_9_with_five_or_six_players_a_group_ends_at_five_cards() -> None:
    for players in (5, 6):
        hands = [[7, 7, 1], [7, 2], [7, 3], [7, 4], [1, 2]] + [[5]] * (players - 5)
        s = run(new(players, *hands), "play 7 7", "add 7", "add 7")
        assert pile(s) == ([7, 7, 7, 7], "group")
        assert table(s)["to_move"] == 3
        assert api.legal_moves(s) == ["pass", "add 7"]
        s = run(s, "add 7")
        assert table(s)["leader"] == 3 and pile(s) == ([], None)


def test_F_9_five_players_may_add_three_to_a_group_of_two() -> None:
    s = run(new(5, [7, 7, 1], [7, 7, 7, 2], [3], [4], [5]), "play 7 7")
    assert api.legal_moves(s) == ["pass", "add 7", "add 7 7", "add 7 7 7"]
    s = run(s, "add 7 7 7")
    assert table(s)["leader"] == 1 and pile(s) == ([], None)


def test_F_9_run_reaching_five_cards_ends_the_trick() -> None:
    s = run(new(3, [3, 4, 5, 1], [2, 7, 1], [9]), "play 3 4 5", "add 2 7")
    v = table(s)
    assert v["pile"]["type"] is None and v["leader"] == 1 and v["to_move"] == 1
    assert api.legal_moves(s) == ["play 1"]


def test_F_9_run_of_four_does_not_end_the_trick() -> None:
    s = run(new(3, [3, 4, 5, 1], [7, 1], [9]), "play 3 4 5", "add 7")
    assert pile(s) == ([3, 4, 5, 7], "run")
    assert table(s)["to_move"] == 2


# --- F-10 Rule of 8 -------------------------------------------------------------------------


def test_F_10_rule_of_8_ends_the_trick_on_overwrite() -> None:
    s = run(new(3, [5, 1], [8, 2], [9, 3]), "play 5")
    assert api.legal_moves(s) == ["pass", "play 8"]
    s = run(s, "play 8")
    v = table(s)
    assert v["pile"]["type"] is None and v["leader"] == 1 and v["to_move"] == 1
    assert v["trick_moves"] == []
    assert v["history"] == [{"seat": 0, "move": "play 5"}, {"seat": 1, "move": "play 8"}]


def test_F_10_rule_of_8_ends_the_trick_on_add() -> None:
    s = run(new(3, [5, 7, 1], [8, 2], [9, 3]), "play 5 7")
    assert api.legal_moves(s) == ["pass", "add 8"]
    s = run(s, "add 8")
    assert table(s)["leader"] == 1 and pile(s) == ([], None)


def test_F_10_rule_of_8_ends_the_trick_on_a_group_of_eights() -> None:
    s = run(new(3, [8, 8, 1], [8, 2], [9, 3]), "play 8 8")
    assert api.legal_moves(s) == ["pass", "add 8"]
    s = run(s, "add 8")
    assert table(s)["leader"] == 1 and pile(s) == ([], None)


def test_F_10_rule_of_8_does_not_fire_for_the_opening_pile() -> None:
    s = run(new(3, [8, 1], [9, 2], [3]), "play 8")
    assert pile(s) == ([8], "single")
    assert table(s)["to_move"] == 1
    assert api.legal_moves(s) == ["pass", "play 9"]
    s = run(new(3, [7, 8, 1], [9, 2], [3]), "play 7 8")
    s = run(s, "add 9")  # the 8 was in the opening pile; the add has none
    assert pile(s) == ([7, 8, 9], "run") and table(s)["to_move"] == 2


# --- F-11 turn order ------------------------------------------------------------------------


def test_F_11_turn_order_is_clockwise_from_the_leader() -> None:
    s = new(4, [1, 15], [2, 15], [3, 15], [4, 15])
    order = []
    for move in ("play 1", "play 2", "play 3", "play 4"):
        order.append(table(s)["to_move"])
        s = run(s, move)
    assert order == [0, 1, 2, 3]
    assert table(s)["to_move"] == 0


def test_F_11_players_who_passed_are_skipped() -> None:
    s = run(new(4, [1, 14, 15], [2, 15], [3, 15], [4, 15]), "play 1", "pass", "play 3", "pass")
    assert table(s)["to_move"] == 0 and table(s)["passed"] == [1, 3]
    s = run(s, "play 14")
    assert table(s)["to_move"] == 2  # seats 1 and 3 skipped
    s = run(s, "pass")  # only seat 0 left: it leads again
    assert table(s)["leader"] == 0 and table(s)["to_move"] == 0 and table(s)["passed"] == []


def test_F_11_hands_must_not_be_empty() -> None:
    # a seat with no cards never exists during a round (F-12 ends it first), so none is dealt
    with pytest.raises(ValueError, match="non-empty"):
        new(3, [1], [], [2])


# --- F-12 end of a round --------------------------------------------------------------------


def test_F_12_round_ends_when_a_player_plays_the_last_card() -> None:
    s = run(new(3, [3, 15], [5], [1, 8], target=100), "play 3", "play 5")
    v = api.view(s, 1)
    assert v["rounds"] == [{"round": 1, "dealer": 2, "went_out": 1, "cards_left": [1, 0, 2],
                            "points": [4, 0, 6], "scores": [4, 0, 6]}]
    assert v["scores"] == [4, 0, 6]
    assert v["round"] == 2 and v["history"] == []
    assert v["hand_sizes"] == [13, 13, 13]


def test_F_12_a_trick_ending_last_card_still_ends_the_round() -> None:
    s = run(new(2, [5, 1], [8], target=100), "play 5", "play 8")
    v = table(s)
    assert v["rounds"][0]["went_out"] == 1 and v["scores"] == [1, 0] and v["round"] == 2


def test_F_12_leading_the_last_cards_ends_the_round() -> None:
    s = run(new(2, [3, 4, 5], [15, 15], target=100), "play 3 4 5")
    assert table(s)["scores"] == [0, 8]


# --- F-13 dealer and leader -----------------------------------------------------------------


def test_F_13_dealer_rotates_and_the_seat_after_the_dealer_leads() -> None:
    s = api.new_game("535", players=3, seed=5, hand_size=1, target=1000)
    seen = []
    for _ in range(6):
        v = table(s)
        seen.append((v["round"], v["dealer"], v["leader"], v["to_move"]))
        s = api.play(s, api.legal_moves(s)[0])  # one card each: the leader goes out
    assert seen == [(1, 2, 0, 0), (2, 0, 1, 1), (3, 1, 2, 2), (4, 2, 0, 0), (5, 0, 1, 1), (6, 1, 2, 2)]


def test_F_13_later_rounds_are_dealt_from_the_seed_from_the_seat_after_the_dealer() -> None:
    s = run(new(3, [3], [5], [1], seed=9, target=100), "play 3")
    deck = deck_ranks(3)
    SplitMix64.for_deal(9, "535", 3, 1).shuffle(deck)
    hands: list[list[int]] = [[], [], []]
    for i in range(39):
        hands[(1 + i) % 3].append(deck[i])  # dealer 0, so seat 1 gets the first card
    assert RULES.snapshot(s)["hands"] == [sorted(h) for h in hands]


# --- F-14 end of the match ------------------------------------------------------------------


def test_F_14_rounds_continue_until_a_score_reaches_the_target() -> None:
    s = api.new_game("535", players=3, seed=11, hand_size=1)
    while api.to_move(s) is not None:
        assert max(table(s)["scores"]) < 20
        s = api.play(s, api.legal_moves(s)[0])
    res = api.result(s)
    assert res is not None and max(res["scores"]) >= 20
    assert res["winners"] == [i for i, p in enumerate(res["scores"]) if p == min(res["scores"])]
    assert len(res["rounds"]) == table(s)["round"]


def test_F_14_fewest_points_win() -> None:
    s = run(new(3, [1], [15, 15, 15, 15], [14]), "play 1")
    assert api.result(s) is None and api.to_move(s) == 1  # 16 < 20: the match goes on, round 2
    s = run(new(3, [1], [15, 15, 15, 15, 14, 14], [14]), "play 1")
    assert api.result(s) == {"winners": [0], "scores": [0, 24, 4], "target": 20,
                             "rounds": [{"round": 1, "dealer": 2, "went_out": 0, "cards_left": [0, 6, 1],
                                         "points": [0, 24, 4], "scores": [0, 24, 4]}]}


def test_F_14_a_tie_for_fewest_points_is_a_shared_win() -> None:
    pts = {**dict.fromkeys(ALL, 1), 1: 0}
    s = run(new(3, [2], [1, 1], [15] * 4 + [14] * 4 + [13] * 4 + [12] * 4 + [11] * 4, points=pts),
            "play 2")
    res = api.result(s)
    assert res is not None
    assert res["scores"] == [0, 0, 20] and res["winners"] == [0, 1]


def test_F_14_target_option_and_play_after_the_end() -> None:
    s = run(new(2, [1], [2], target=1), "play 1")
    assert api.result(s) is not None and api.to_move(s) is None and api.legal_moves(s) == []
    assert api.view(s, 0)["legal_moves"] == [] and api.view(s, 0)["over"] is True
    refused(s, "play 2", "game_over")
    for bad in (0, True, "20", 1.5):
        with pytest.raises(ValueError, match="target"):
            api.new_game("535", players=2, seed=1, target=bad)


# --- options and notation --------------------------------------------------------------------


def test_unknown_options_and_bad_player_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="colour"):
        api.new_game("535", players=2, seed=1, colour="red")
    for players in (1, 7, True):
        with pytest.raises(ValueError):
            api.new_game("535", players=players, seed=1)
    with pytest.raises(ValueError):
        new(2, [1], [2], [3])  # three hands for two seats
    with pytest.raises(ValueError):
        new(2, [1], [True])


def test_notation_is_canonical_and_decoding_is_lenient_about_spacing_case_and_order() -> None:
    s = run(new(2, [7, 7, 1], [9, 9, 2]), "play 7 7")
    assert table(run(s, "  PLAY\t9   9 "))["pile"]["cards"] == [9, 9]
    s2 = new(2, [4, 5, 1], [3, 7, 2])
    s2 = run(s2, "play 5 4")
    assert table(run(s2, "add 7 3"))["pile"]["cards"] == [3, 4, 5, 7]
    for bad in ("", "   ", "jump", "play", "add", "pass 7", "play 7,7", "play seven", "play ７", "play -1"):
        refused(s, bad, "bad_notation")
    with pytest.raises(IllegalMove) as info:
        api.play(s, 7)  # type: ignore[arg-type]
    assert info.value.code == "bad_notation"


# --- G-1 hidden information ------------------------------------------------------------------


def test_G_1_a_view_shows_only_the_own_hand() -> None:
    s = new(3, [1, 2, 3], [4, 5, 7], [9, 11, 12, 13])
    for seat, hand in enumerate(([1, 2, 3], [4, 5, 7], [9, 11, 12, 13])):
        v = api.view(s, seat)
        json.dumps(v)
        assert v["hand"] == hand and v["hand_sizes"] == [3, 3, 4]
        assert "seed" not in v and "hands" not in v and "out" not in v
        assert v["legal_moves"] == (api.legal_moves(s) if seat == 0 else [])
    spectator = api.view(s, None)
    assert spectator["hand"] is None and spectator["legal_moves"] == []
    with pytest.raises(ValueError):
        api.view(s, 3)


def test_G_1_the_seed_is_shown_only_once_the_match_is_over() -> None:
    s = new(2, [1], [2], target=1, seed="secret")
    assert "secret" not in json.dumps(api.view(s, 0))
    s = run(s, "play 1")
    assert api.view(s, 1)["seed"] == "secret"


# --- G-2 refusals ----------------------------------------------------------------------------


def test_G_2_every_refusal_code_leaves_the_state_unchanged() -> None:
    s0 = new(3, [3, 4, 5, 7, 7, 1], [2, 7, 8, 9, 11, 12, 13], [1, 1, 15])
    codes = {}
    for move, code in [("pass", "leader_cannot_pass"), ("add 3", "nothing_to_add_to"),
                       ("play 3 5", "not_a_pile"), ("play 3 4 5 7", "too_many_cards"),
                       ("play 15", "not_in_hand"), ("x", "bad_notation")]:
        codes[code] = refused(s0, move, code)
    s = run(s0, "play 3 4 5")
    for move, code in [("play 8", "wrong_type_or_size"), ("play 11 12 13", "does_not_beat"),
                       ("add 11", "add_does_not_fit"), ("add 2 7 8", "too_long")]:
        codes[code] = refused(s, move, code)
    s = run(s0, "play 7")
    codes["cannot_add_to_single"] = refused(s, "add 7", "cannot_add_to_single")
    for e in codes.values():
        assert e.message.endswith(".") and e.message[0].isupper(), e.message


# --- G-3 replay ------------------------------------------------------------------------------


def test_G_3_a_finished_match_replays_move_by_move_to_the_same_result() -> None:
    rng = random.Random(3)
    s = api.new_game("535", players=4, seed="replay", target=10)
    moves = []
    while api.to_move(s) is not None:
        m = rng.choice(api.legal_moves(s))
        moves.append(m)
        s = api.play(s, m)
    replay = api.new_game("535", players=4, seed="replay", target=10)
    for m in moves:
        replay = api.play(replay, m)
    assert api.result(replay) == api.result(s)
    assert api.snapshot(replay) == api.snapshot(s)


# --- determinization helpers (for AI players) ------------------------------------------------


def test_determinize_keeps_the_own_hand_the_sizes_and_the_cards() -> None:
    s = new(4, [1, 2, 3], [4, 5, 7], [9, 11, 12], [13, 14, 15], seed=2)
    s = run(s, "play 1")
    assert unseen_cards(s, 1) == sorted((Counter(deck_ranks(4)) - Counter([1, 4, 5, 7])).elements())
    d = determinize(s, 1, random.Random(0))
    assert d.hands[1] == s.hands[1] and d.counts == s.counts and d.played == s.played
    assert api.view(d, 1) == api.view(s, 1)  # seat 1 cannot tell them apart
    assert engine.five35.state.check_conservation(d)
    w = with_hands(s, {0: [15, 15], 2: [8, 8, 8]})
    assert api.view(w, 0)["hand"] == [15, 15] and api.view(w, 2)["hand"] == [8, 8, 8]
    assert api.view(s, 0)["hand"] == [2, 3]  # the original is untouched
    with pytest.raises(ValueError):
        with_hands(s, {0: [1]})  # wrong size
    with pytest.raises(ValueError):
        with_hands(s, {0: [13, 13], 2: [13, 13, 13]})  # five 13s: the deck has four (one in seat 3)
    assert RANKS[6] == 8
