"""engine.ai.five35_pimc, the hard 535 player's search: it wins when it can, compares every legal
move on shared deals within its budget, and sees only the seat's view (G-1)."""

from __future__ import annotations

import random

import pytest
from ai_positions import CONFIGS, position
from hypothesis import given, settings
from hypothesis import strategies as st
from test_ai_infoset import _shuffle_hidden

import engine
from engine.ai import choose_move, five35_pimc, five35_playout, hard
from engine.ai.games import Five35Game, game_for
from engine.ai.hard import HardSettings
from engine.five35.piles import PASS

F535 = [c for c in CONFIGS if c[0] == "535"]


def _game(state, seed=1):
    game = game_for(engine.view(state, engine.to_move(state)), random.Random(seed), heuristic_playouts=True)
    assert isinstance(game, Five35Game)
    return game


def test_putting_down_the_last_card_is_played_at_once():  # F-12
    state = engine.new_game("535", players=4, seed=1, target=1,
                            hands=[[7, 7], [1, 2, 3], [4, 5, 9], [11, 12, 13]])
    view = engine.view(state, 0)
    assert choose_move(view, level="hard", seed=1, iterations=5) == "play 7 7"
    game = _game(state)
    win = five35_pimc.winning_move(game, game.rules.legal(game.base))
    assert win == game.rules.decode(game.base, "play 7 7")


@settings(max_examples=30, deadline=None)
@given(config=st.sampled_from(F535), seed=st.integers(0, 2**32), steps=st.integers(1, 60))
def test_the_candidates_are_every_legal_move_with_pass_last(config, seed, steps):  # F-8
    state = position(config, seed, steps)
    game = _game(state)
    legal = game.rules.legal(game.base)
    moves = five35_pimc.candidates(game, legal)
    assert sorted(moves) == sorted(legal)
    assert (moves[-1] == PASS) == (PASS in legal)  # passing is compared whenever it is allowed


@pytest.mark.parametrize("own_tree", [(0, 0.0, 0.0), (2, 0.5, 0.5)])  # the policy's, or the own tree
@settings(max_examples=15, deadline=None)
@given(config=st.sampled_from(F535), seed=st.integers(0, 2**32), steps=st.integers(1, 60))
def test_every_candidate_is_played_on_the_same_deals(config, seed, steps, own_tree):
    state = position(config, seed, steps)
    game = _game(state)
    moves = five35_pimc.candidates(game, game.rules.legal(game.base))
    stats = five35_pimc.evaluate(game, moves, random.Random(seed), iterations=24, own_tree=own_tree)
    if len(moves) > 1:
        assert {n for n, _ in stats.values()} == {24}
    assert all(0.0 <= total <= n for n, total in stats.values())


def test_the_move_chosen_has_the_best_total_over_the_same_deals():
    # Seat 0 leads with 8 8 8 7 and 1: the same rng gives the same deals to evaluate and choose
    state = engine.new_game("535", players=4, seed=3, target=1,
                            hands=[[1, 7, 8, 8, 8], [2, 3, 4, 5, 9, 11, 12, 13, 14, 15, 2, 3, 4],
                                   [2, 3, 4, 5, 9, 11, 12, 13, 14, 15, 5, 9, 11],
                                   [2, 3, 4, 5, 9, 11, 12, 13, 14, 15, 12, 13, 14]])
    game = _game(state)
    moves = five35_pimc.candidates(game, game.rules.legal(game.base))
    stats = five35_pimc.evaluate(game, moves, random.Random(1), iterations=200)
    chosen = five35_pimc.choose(game, random.Random(1), iterations=200, budget_s=None, clock=None)
    assert stats[chosen][1] == max(total for _, total in stats.values())


@settings(max_examples=20, deadline=None)
@given(config=st.sampled_from(F535), seed=st.integers(0, 2**32), steps=st.integers(1, 60))
def test_shuffling_the_hidden_hands_changes_nothing(config, seed, steps):  # G-1
    state = position(config, seed, steps)
    seat = engine.to_move(state)
    twin = _shuffle_hidden(state, seat, random.Random(seed))
    a = choose_move(engine.view(state, seat), level="hard", seed=seed, iterations=10)
    b = choose_move(engine.view(twin, seat), level="hard", seed=seed, iterations=10)
    assert a == b
    assert a in engine.legal_moves(state)


def test_a_clock_budget_stops_the_search():
    state = position(F535[2], 5, 4)
    game = _game(state)
    moves = five35_pimc.candidates(game, game.rules.legal(game.base))
    ticks = iter(range(10**6))
    stats = five35_pimc.evaluate(game, moves, random.Random(2), iterations=None, budget_s=0.02,
                                 clock=lambda: next(ticks) / 1000)
    assert max(n for n, _ in stats.values()) <= 21


@settings(max_examples=30, deadline=None)
@given(config=st.sampled_from(F535), seed=st.integers(0, 2**32), steps=st.integers(1, 60),
       k=st.integers(1, 8))
def test_the_shortlist_keeps_the_policys_best_plays_and_pass(config, seed, steps, k):  # F-8
    state = position(config, seed, steps)
    game = _game(state)
    moves = five35_pimc.candidates(game, game.rules.legal(game.base))
    short = five35_pimc.shortlist(game, moves, k)
    plays = [m for m in moves if m != PASS]
    kept = [m for m in short if m != PASS]
    assert len(kept) == min(k, len(plays)) and set(kept) <= set(plays)
    assert (PASS in short) == (PASS in moves)  # passing is always compared when it is allowed
    scores = five35_playout.move_scores(game.base, game.weights)
    dropped = [scores[m] for m in plays if m not in kept]
    assert not dropped or min(scores[m] for m in kept) >= max(dropped)
    assert five35_pimc.shortlist(game, moves, 0) == moves


def _many_moves():
    """A four-player round's first lead: some twenty legal plays, unequal ones."""
    return _game(engine.new_game("535", players=4, seed=1, target=1))


def test_a_shortlist_of_one_plays_the_policys_best_play():  # F-8
    game = _many_moves()
    legal = game.rules.legal(game.base)
    assert len(legal) > 5 and PASS not in legal  # a lead: every play, no pass
    scores = five35_playout.move_scores(game.base, game.weights)
    chosen = five35_pimc.choose(game, random.Random(1), iterations=50, budget_s=None, clock=None, top=1)
    assert scores[chosen] == max(scores.values())
    # with every move compared the search finds another one here (the shortlist changes the move)
    everything = five35_pimc.choose(game, random.Random(1), iterations=50, budget_s=None, clock=None)
    assert scores[everything] < max(scores.values())


def test_overruling_keeps_the_policys_move_unless_the_search_clearly_beats_it():
    game = _many_moves()
    st, w = game.base, five35_pimc.own_policy(game)
    scores = five35_playout.move_scores(st, w)
    searched = five35_pimc.choose(game, random.Random(1), iterations=50, budget_s=None, clock=None)
    kept = five35_pimc.choose(game, random.Random(1), iterations=50, budget_s=None, clock=None,
                              overrule_z=100.0)
    assert scores[searched] < max(scores.values())  # the search alone plays another move here
    assert scores[kept] == max(scores.values())  # no search beats the policy by 100 errors
    # with a small threshold the search's move is played when it beats the policy's clearly
    moves = five35_pimc.candidates(game, game.rules.legal(st))
    history: dict[int, list[float]] = {}
    stats = five35_pimc.evaluate(game, moves, random.Random(1), iterations=50, history=history)
    assert all(len(history[m]) == 50 and sum(history[m]) == stats[m][1] for m in moves)
    loose = five35_pimc.choose(game, random.Random(1), iterations=50, budget_s=None, clock=None,
                               overrule_z=0.01)
    assert loose == searched or scores[loose] == max(scores.values())


def test_racing_drops_trailing_moves_and_chooses_among_the_rest():
    game = _many_moves()
    moves = five35_pimc.candidates(game, game.rules.legal(game.base))
    stats = five35_pimc.evaluate(game, moves, random.Random(1), iterations=200, race_z=1.0)
    counts = {m: n for m, (n, _) in stats.items()}
    most = max(counts.values())
    assert min(counts.values()) < most  # some move was dropped before the end
    assert all(n >= five35_pimc.RACE_MIN for n in counts.values())  # none before the first look
    plain = five35_pimc.evaluate(game, moves, random.Random(1), iterations=200)
    assert {n for n, _ in plain.values()} == {200}  # without racing every move plays every deal
    chosen = five35_pimc.choose(game, random.Random(1), iterations=200, budget_s=None, clock=None,
                                race_z=1.0)
    assert counts[chosen] == most
    assert stats[chosen][1] == max(t for n, t in stats.values() if n == most)


def assert_in_budget_and_blind(state, settings: HardSettings) -> None:
    """The hard player with ``settings`` stays within a 25 ms budget on a clock that moves 1 ms a
    reading, plays a legal move, and plays the same move when the hidden hands are shuffled (G-1)."""
    seat = engine.to_move(state)
    ticks = iter(range(10**6))
    clock = lambda: next(ticks) / 1000  # noqa: E731 (a clock that moves 1 ms a reading)
    started = clock()
    move = choose_move(engine.view(state, seat), level="hard", seed=3, budget_ms=25, clock=clock,
                       settings=settings)
    assert move in engine.legal_moves(state)
    assert clock() - started <= 0.025 + 0.002  # the budget, and the reading that ends it
    twin = _shuffle_hidden(state, seat, random.Random(5))
    a = choose_move(engine.view(state, seat), level="hard", seed=7, iterations=40, settings=settings)
    b = choose_move(engine.view(twin, seat), level="hard", seed=7, iterations=40, settings=settings)
    assert a == b


def test_the_root_settings_stay_in_the_budget_and_see_only_the_view():  # G-1
    tuned = HardSettings(five35_shortlist=4, five35_race_z=2.5, five35_overrule_z=1.0,
                         five35_shaping=0.3)
    assert_in_budget_and_blind(position(F535[2], 5, 4), tuned)


def _safe_game(state):
    """The game of the seat to move with the seats modelled as medium players and the plain model
    (every seat played as STRONG) for safe play."""
    game = _game(state)
    game.seat_weights = (five35_playout.MEDIUM,) * game.base.players
    game.plain_weights = (five35_playout.STRONG,) * game.base.players
    return game


@settings(max_examples=15, deadline=None)
@given(config=st.sampled_from(F535), seed=st.integers(0, 2**32), steps=st.integers(1, 60))
def test_safe_play_keeps_to_the_moves_near_the_plain_models_best(config, seed, steps):
    # With a margin near 0 the move chosen is one of the plain model's best on the same deals; with
    # a margin no difference can exceed it, the move is the one chosen without safe play (the plain
    # playouts draw nothing from the search's generator, so both see the same deals).
    state = position(config, seed, steps)
    if five35_pimc.winning_move(_game(state), engine.rules_for(state).legal(state)) is not None:
        return
    game = _safe_game(state)
    moves = five35_pimc.candidates(game, game.rules.legal(game.base))
    plain: dict[int, float] = {}
    five35_pimc.evaluate(game, moves, random.Random(seed), iterations=12, plain_totals=plain)
    if len(moves) > 1:
        assert set(plain) == set(moves)
    def choose(**safe: float) -> int:
        return five35_pimc.choose(game, random.Random(seed), iterations=12, budget_s=None, clock=None, **safe)

    chosen = choose(safe=1e-9)
    assert len(moves) == 1 or plain[chosen] == max(plain.values())
    assert choose(safe=2.0) == choose()


def test_the_hard_player_sets_up_safe_play_only_when_asked():
    state = engine.new_game("535", players=4, seed=3, target=1)
    game = _game(state)
    hard.five35_models(game, HardSettings())
    assert game.plain_weights is None
    hard.five35_models(game, HardSettings(five35_safe=0.05))
    assert game.plain_weights == (five35_playout.STRONG,) * 4
