"""Property tests of the 535 engine: random playouts over every player count and the options.

Moves are chosen by a seeded ``random.Random`` from the legal moves; hypothesis picks the table
(players, seed, options) and the chooser's seed.
"""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import engine.five35  # noqa: F401  (registers the game even if engine/__init__ cannot import yet)
from engine import api
from engine.errors import IllegalMove
from engine.five35 import RULES, State
from engine.five35.cards import EIGHT, RANKS, holds, pack_indices, points_of
from engine.five35.piles import MOVES, NMOVES, PASS, PILES, judge
from engine.five35.state import check_conservation

MAX_MOVES = 20_000  # far above any real match; reaching it means a match did not end


@st.composite
def tables(draw: st.DrawFn) -> tuple[int, int, dict[str, Any]]:
    players = draw(st.integers(2, 6))
    seed = draw(st.integers(0, 2**40))
    options: dict[str, Any] = {}
    if draw(st.booleans()):
        options["runs_low_beats_high"] = draw(st.booleans())
    if draw(st.booleans()):
        options["hand_size"] = draw(st.integers(1, (65 if players >= 5 else 52) // players))
    if draw(st.booleans()):
        options["target"] = draw(st.integers(1, 30))
    if draw(st.booleans()):
        values = draw(st.lists(st.integers(0, 6), min_size=13, max_size=13).filter(any))
        options["points"] = dict(zip(RANKS, values, strict=True))
    return players, seed, options


def reference_legal(s: State) -> list[int]:
    """Legality from first principles (judge + hand), for comparison with the fast tables."""
    if s.over:
        return []
    out = []
    for m in range(NMOVES):
        kind, ranks = MOVES[m]
        if m and not holds(s.hands[s.to_move], pack_indices(ranks)):
            continue
        err, _, _ = judge(PILES[s.pile], kind, ranks, s.options.runs_low_beats_high, s.tables.group_end)
        if err is None:
            out.append(m)
    return out


@settings(max_examples=150, deadline=None)
@given(tables(), st.integers(0, 2**32))
def test_fast_path_playouts_keep_every_invariant(table: tuple[int, int, dict[str, Any]],
                                                 chooser: int) -> None:
    _playout_invariants(*table, chooser)


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 6), st.integers(0, 2**40), st.integers(0, 2**32))
def test_full_matches_with_default_options_keep_every_invariant(players: int, seed: int,
                                                                chooser: int) -> None:
    _playout_invariants(players, seed, {}, chooser)


def _playout_invariants(players: int, seed: int, options: dict[str, Any], chooser: int) -> None:
    rng = random.Random(chooser)
    s = RULES.new(players, seed, None, options)
    moves = 0
    while not s.over:
        assert moves < MAX_MOVES, "the match did not end"
        legal = RULES.legal(s)
        assert legal == reference_legal(s)
        # the one-move check the public API uses agrees with the list, move by move
        assert [m for m in range(-1, NMOVES + 1) if RULES.is_legal(s, m)] == legal
        assert legal, "the seat to move always has a move"
        if s.pile == 0:
            assert PASS not in legal  # F-7: the leader never passes
        m = rng.choice(legal)
        seat, pile_before, rounds_before = s.to_move, s.pile, len(s.rounds)
        hands_before, scores_before = s.hands[:], s.scores[:]
        RULES.apply(s, m)
        moves += 1
        assert check_conservation(s)  # hands + played + out of play == deck
        ranks = MOVES[m][1]
        if len(s.rounds) > rounds_before:  # F-12: the round ended: the mover went out
            assert hands_before[seat] == pack_indices(ranks)
            gains = [0 if i == seat else points_of(h, s.options.points)
                     for i, h in enumerate(hands_before)]
            assert [a - b for a, b in zip(s.rounds[-1]["scores"], scores_before, strict=True)] == gains
            assert s.rounds[-1]["points"] == gains
        elif m != PASS and pile_before != 0 and EIGHT in ranks:  # F-10
            assert s.pile == 0 and s.leader == seat and s.to_move == seat
    res = RULES.result(s)
    assert res is not None and max(res["scores"]) >= s.options.target
    assert all(max(r["scores"]) < s.options.target for r in res["rounds"][:-1])
    assert res["winners"] == [i for i, p in enumerate(res["scores"]) if p == min(res["scores"])]


def _views_hide_other_hands(s: Any) -> None:
    """G-1: every seat's view differs from the spectator's only by its own hand (and its moves)."""
    spectator = api.view(s, None)
    json.dumps(spectator)
    assert "seed" not in spectator or spectator["over"]
    for seat in range(s.players):
        v = api.view(s, seat)
        assert v["hand"] == sorted(v["hand"]) and len(v["hand"]) == v["hand_sizes"][seat]
        assert v["hand"] == api.view(s, seat)["hand"]
        assert v["hand"] == RULES.snapshot(s)["hands"][seat]
        if v["legal_moves"]:
            assert seat == v["to_move"]
        assert {**v, "seat": None, "hand": None, "legal_moves": []} == spectator


@settings(max_examples=60, deadline=None)
@given(tables(), st.integers(0, 2**32))
def test_public_api_agrees_with_the_fast_path_and_is_safe(table: tuple[int, int, dict[str, Any]],
                                                          chooser: int) -> None:
    players, seed, options = table
    options.setdefault("target", 8)  # keep the public-API runs short
    rng = random.Random(chooser)
    public = api.new_game("535", players=players, seed=seed, **options)
    fast = RULES.new(players, seed, None, options)
    moves: list[str] = []
    step = 0
    while api.to_move(public) is not None:
        assert step < MAX_MOVES
        legal_text = api.legal_moves(public)
        assert legal_text == [RULES.encode(fast, m) for m in RULES.legal(fast)]
        assert [RULES.decode(fast, t) for t in legal_text] == RULES.legal(fast)
        text = rng.choice(legal_text)
        before = api.snapshot(public)
        new = api.play(public, text)
        assert api.snapshot(public) == before  # play leaves the old state untouched
        RULES.apply(fast, RULES.decode(fast, text))
        assert new == fast
        moves.append(text)
        public = new
        if step % 7 == 0 or api.to_move(public) is None:
            _views_hide_other_hands(public)
            data = json.loads(json.dumps(api.snapshot(public)))
            assert api.restore(data) == public  # exact round trip through JSON
        step += 1
    # same seed + same moves -> same states (G-3)
    replay = api.new_game("535", players=players, seed=seed, **options)
    for text in moves:
        replay = api.play(replay, text)
    assert replay == public and api.result(replay) == api.result(public)


@settings(max_examples=40, deadline=None)
@given(tables(), st.integers(0, 2**32), st.integers(0, 2**32))
def test_illegal_moves_are_refused_with_a_reason_and_change_nothing(
        table: tuple[int, int, dict[str, Any]], chooser: int, prober: int) -> None:
    players, seed, options = table
    rng, probe = random.Random(chooser), random.Random(prober)
    s = api.new_game("535", players=players, seed=seed, **options)
    for _ in range(60):
        if api.to_move(s) is None:
            break
        legal = set(api.legal_moves(s))
        for _ in range(5):
            kind = probe.choice(["play", "add", "pass"])
            text = kind if kind == "pass" else " ".join(
                [kind, *map(str, sorted(probe.choices(RANKS, k=probe.randint(1, 4))))])
            if text in legal:
                continue
            before = api.snapshot(s)
            try:
                api.play(s, text)
            except IllegalMove as e:
                assert e.code != "illegal" and e.message
            else:
                raise AssertionError(f"{text} was accepted but is not in {sorted(legal)}")
            assert api.snapshot(s) == before
        s = api.play(s, rng.choice(sorted(legal)))


def test_the_literal_constants_are_what_they_stand_for():  # F-1
    # The compiled engine reads Final literals as constants; they must equal what they abbreviate.
    from engine.five35 import cards as D
    from engine.five35 import piles as P

    assert len(D.RANKS) == D.NRANKS and D.RANK_INDEX[8] == D.EIGHT
    assert D.FIELD_MASK == (1 << D.FIELD_BITS) - 1
    assert sum(1 << (D.FIELD_BITS - 1) << (D.FIELD_BITS * i) for i in range(D.NRANKS)) == D.GUARD
    assert sum(D.UNIT) == D.ONES and D.TWOS == 2 * D.ONES and D.THREES == 3 * D.ONES
    assert P.EXT_BASE == 1 << 16
