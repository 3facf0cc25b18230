"""Properties of Cinquillo over random seeds, every preset, variant combination and player count."""

from __future__ import annotations

import json
import random
from fractions import Fraction
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.cinquillo import CODES, PASS, RULES, CinquilloState, table_mask
from engine.cinquillo.cards import FULL
from tests.leaks import strings_in

FAST = settings(max_examples=150, deadline=None)


@st.composite
def matches(draw: Any) -> tuple[int, int | str, dict[str, Any], int]:
    """(players, seed, options, seed of the move choices) for any legal option combination."""
    preset = draw(st.sampled_from(["clasico", "tradicional"]))
    players = draw(st.integers(2, 4 if preset == "clasico" else 6))
    options: dict[str, Any] = {"preset": preset}
    direction = draw(st.sampled_from([None, "clockwise", "counterclockwise"]))
    if direction:
        options["direction"] = direction
    for flag in ("chips", "double_turn"):
        if draw(st.booleans()):
            options[flag] = True
    if draw(st.booleans()):
        options["cabron"] = True
    elif draw(st.booleans()):
        options["points"] = True
    if players in (4, 6) and not options.get("cabron") and draw(st.booleans()):
        options["teams"] = True
    if options.get("points") or options.get("cabron"):
        options["target"] = draw(st.integers(1, 40))
    elif draw(st.booleans()):
        options["rounds_to_win"] = draw(st.integers(1, 3))
    seed = draw(st.one_of(st.integers(0, 2**64), st.text(max_size=6)))
    return players, seed, options, draw(st.integers(0, 2**32))


def _check_cards(s: CinquilloState) -> None:
    """No card created or lost: the hands and the table are disjoint and make up the 40 cards."""
    union = 0
    for h in s.hands:
        assert not union & h
        union |= h
    table = table_mask(s)
    assert not union & table and union | table == FULL
    assert s.blocked & union == s.blocked  # blocked cards stay in the hands
    assert sum(h.bit_count() for h in s.hands) + table.bit_count() == 40
    if s.pay:
        assert sum(s.chips) + s.pot == 10 * s.players and min(s.chips) >= 0
    else:
        assert s.chips == [0] * s.players and s.pot == 0


def _check_api(s: CinquilloState, move: int) -> None:
    """The public API agrees with the fast path; views hide other hands; snapshots round-trip."""
    before = engine.snapshot(s)
    text = json.dumps(before)
    assert engine.snapshot(engine.restore(json.loads(text))) == before
    legal = RULES.legal(s)
    assert engine.legal_moves(s) == [RULES.encode(s, m) for m in legal]
    # the one-move check the public API uses (C-4, C-5) agrees with the list, move by move
    assert [m for m in range(-1, PASS + 2) if RULES.is_legal(s, m)] == legal
    after = engine.play(s, RULES.encode(s, move))
    assert engine.snapshot(s) == before  # play leaves the old state untouched
    fast = RULES.clone(s)
    RULES.apply(fast, move)
    assert engine.snapshot(after) == engine.snapshot(fast)
    assert engine.snapshot(s) == before  # and so does clone + apply on the clone
    for seat in [None, *range(s.players)]:
        view = engine.view(s, seat)
        assert json.loads(json.dumps(view)) == view
        assert "seed" not in view
        # "rounds" are earlier deals' public moves, "blocked" the public set of jumped-over cards
        visible = set(strings_in({k: v for k, v in view.items() if k not in ("rounds", "blocked")}))
        hidden = 0
        for other in range(s.players):
            if other != seat:
                hidden |= s.hands[other]
        hidden &= ~s.blocked
        assert not visible & {CODES[c] for c in range(40) if hidden >> c & 1}
        assert view["legal_moves"] == ([RULES.encode(s, m) for m in legal] if seat == s.turn else [])


def _run(players: int, seed: int | str, options: dict[str, Any], choice_seed: int,
         deep_every: int = 0) -> tuple[list[int], CinquilloState]:
    s: CinquilloState = RULES.new(players, seed, None, dict(options))
    rng = random.Random(choice_seed)
    moves: list[int] = []
    in_round = 0
    step = s.step
    while s.turn >= 0:
        _check_cards(s)
        seat = s.turn
        legal = RULES.legal(s)
        can = s.hands[seat] & s.playable
        if can:
            assert PASS not in legal and legal == sorted(legal)
            assert all(s.hands[seat] >> m & 1 for m in legal)
        else:
            assert legal == [PASS]  # pass only when no card can be played, and then alone
        if not s.history:
            assert legal == [4]  # C-3
        move = rng.choice(legal)
        if deep_every and len(moves) % deep_every == 0:
            _check_api(s, move)
        round_before = s.round_index
        RULES.apply(s, move)
        moves.append(move)
        in_round += 1
        assert in_round <= 40 * players  # a card is played at least once every n moves
        if s.turn >= 0 and s.round_index == round_before:
            if s.double_turn and move != PASS and move % 10 in (0, 9) and s.hands[seat] & s.playable:
                assert s.turn == seat  # C-11: the extra turn
            else:
                assert s.turn == (seat + step) % players  # C-6
        if s.round_index != round_before:
            in_round = 0
        assert len(s.rounds) < 300
    _check_cards(s)
    return moves, s


def _check_scores(s: CinquilloState) -> None:
    res = engine.result(s)
    assert res is not None and res["winners"] == s.winners
    n = s.players
    wins = [0] * n
    points = [Fraction(0)] * n
    for r in res["rounds"]:
        left = r["cards_left"]
        for w in r["winners"]:
            wins[w] += 1
        if s.opts.points:
            gained = [Fraction(p) for p in r["points"]]
            losers = [p for p in range(n) if p not in r["winners"]]
            if s.opts.teams:
                assert all(gained[w] == sum(left[p] for p in losers) for w in r["winners"])
            else:
                assert sum(gained) == sum(left[p] for p in losers)
            points = [a + b for a, b in zip(points, gained, strict=True)]
        if r["end"] == "out":
            assert 0 in left
        if s.opts.teams:
            half = n // 2
            assert r["winners"] == [r["winners"][0], r["winners"][0] + half]
    assert wins == res["round_wins"]
    tally = points if s.opts.points else [Fraction(w) for w in wins]
    assert [Fraction(x) for x in res["scores"]] == tally
    goal = s.opts.target if s.opts.points else s.opts.rounds_to_win
    assert goal is not None and max(tally) >= goal
    assert res["winners"] == [p for p in range(n) if tally[p] == max(tally)]
    if s.pay:
        assert sum(res["chips"]) + res["pot"] == 10 * n
    else:
        assert "chips" not in res


@FAST
@given(matches())
def test_every_match_ends_and_keeps_its_invariants(match: tuple[int, Any, dict[str, Any], int]) -> None:
    players, seed, options, choice_seed = match
    _moves, s = _run(players, seed, options, choice_seed)
    _check_scores(s)


@settings(max_examples=35, deadline=None)
@given(matches())
def test_public_api_agrees_with_the_fast_path(match: tuple[int, Any, dict[str, Any], int]) -> None:
    players, seed, options, choice_seed = match
    _run(players, seed, options, choice_seed, deep_every=9)


@settings(max_examples=50, deadline=None)
@given(matches())
def test_the_same_seed_and_moves_replay_to_the_same_states(
        match: tuple[int, Any, dict[str, Any], int]) -> None:
    players, seed, options, choice_seed = match
    moves, s = _run(players, seed, options, choice_seed)
    replay = engine.new_game("cinquillo", players=players, seed=seed, **options)
    for i, m in enumerate(moves):
        replay = engine.play(replay, RULES.encode(replay, m))
        if i == len(moves) // 2:
            mid = engine.snapshot(replay)
    assert engine.snapshot(replay) == engine.snapshot(s)
    assert engine.result(replay) == engine.result(s)
    again = engine.new_game("cinquillo", players=players, seed=seed, **options)
    for m in moves[: len(moves) // 2 + 1]:
        again = engine.play(again, RULES.encode(again, m))
    assert engine.snapshot(again) == mid


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 6), st.permutations(list(range(40))), st.data())
def test_given_hands_are_dealt_and_the_5_de_oros_opens(players: int, deck: list[int], data: Any) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(1, 39), min_size=players - 1, max_size=players - 1,
                                     unique=True)))
    bounds = [0, *cuts, 40]
    hands = [[CODES[c] for c in deck[bounds[i]:bounds[i + 1]]] for i in range(players)]
    s = engine.new_game("cinquillo", players=players, seed=0, preset="tradicional", hands=hands)
    holder = next(i for i, h in enumerate(hands) if "5o" in h)
    assert engine.to_move(s) == holder and engine.legal_moves(s) == ["5o"]
    for seat in range(players):
        assert engine.view(s, seat)["hand"] == sorted(hands[seat], key=CODES.index)


def test_the_literal_constants_are_what_they_stand_for() -> None:  # C-1
    # The compiled engine reads Final literals as constants; they must equal what they abbreviate.
    from engine.cinquillo import cards as C

    assert C.FULL == (1 << C.DECK_SIZE) - 1 and C.PASS == C.DECK_SIZE
    assert C.RANKS.index(5) == C.FIVE and C.card("5o") == C.FIVE_OROS


@settings(max_examples=30, deadline=None)
@given(matches())
def test_a_version_1_snapshot_still_restores_to_the_same_state(
        match: tuple[int, Any, dict[str, Any], int]) -> None:
    """Snapshots of version 2 keep a finished round's moves as history entries; the tables stored
    before (version 1: ``[seat, code]`` pairs) load to the same state, whose views and result spell
    the moves as pairs, as they always did."""
    players, seed, options, choice_seed = match
    moves, s = _run(players, seed, options, choice_seed)
    replay = engine.new_game("cinquillo", players=players, seed=seed, **options)
    for m in moves:
        replay = engine.play(replay, RULES.encode(replay, m))
        if not replay.rounds:
            continue
        now = json.loads(json.dumps(engine.snapshot(replay)))
        state = now["state"]
        assert state["version"] == 2
        assert all(type(h) is int for r in state["rounds"] for h in r["moves"])
        pairs = [{**r, "moves": [[h >> 6, "pass" if h & 63 == PASS else CODES[h & 63]] for h in r["moves"]]}
                 for r in state["rounds"]]
        old = {**now, "state": {**state, "version": 1, "rounds": pairs}}
        back = engine.restore(old)
        assert engine.snapshot(back) == engine.snapshot(replay)
        public = [{k: v for k, v in r.items() if k != "moves"} for r in pairs]
        assert engine.view(back, None)["rounds"] == engine.view(replay, None)["rounds"] == public
        if engine.to_move(replay) is None:
            assert engine.result(back)["rounds"] == engine.result(replay)["rounds"] == pairs
    assert engine.result(replay) == engine.result(s)
    if replay.rounds:
        assert all(type(m) is list and len(m) == 2 and type(m[1]) is str
                   for r in engine.result(replay)["rounds"] for m in r["moves"])
