"""engine.ai.five35_pimc, the hard 535 player: it wins when it can, compares the heuristic's best
moves and pass on shared deals, prunes the clearly worse, and sees only the seat's view (G-1)."""

from __future__ import annotations

import random

from ai_positions import CONFIGS, position
from hypothesis import given, settings
from hypothesis import strategies as st
from test_ai_infoset import _shuffle_hidden

import engine
from engine.ai import choose_move, five35_pimc
from engine.ai.games import Five35Game, game_for
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
def test_candidates_are_the_heuristics_best_plays_and_pass(config, seed, steps):  # F-8
    state = position(config, seed, steps)
    game = _game(state)
    legal = game.rules.legal(game.base)
    top = five35_pimc.candidates(game, legal, 3)
    assert set(top) <= set(legal)
    assert len([m for m in top if m != PASS]) == min(3, len([m for m in legal if m != PASS]))
    assert (PASS in top) == (PASS in legal)  # passing is compared whenever it is allowed
    assert sorted(five35_pimc.candidates(game, legal, 0)) == sorted(legal)


@settings(max_examples=15, deadline=None)
@given(config=st.sampled_from(F535), seed=st.integers(0, 2**32), steps=st.integers(1, 60))
def test_every_candidate_is_played_on_the_same_deals_until_pruned(config, seed, steps):
    state = position(config, seed, steps)
    game = _game(state)
    moves = five35_pimc.candidates(game, game.rules.legal(game.base), 0)
    flat = five35_pimc.evaluate(game, moves, random.Random(seed), iterations=24, prune=False)
    if len(moves) > 1:
        assert {n for n, _ in flat.values()} == {24}
    assert all(0.0 <= total <= n for n, total in flat.values())
    pruned = five35_pimc.evaluate(game, moves, random.Random(seed), iterations=24)
    most = max(n for n, _ in pruned.values())
    assert all(n <= most for n, _ in pruned.values())
    assert sum(n for n, _ in pruned.values()) <= sum(n for n, _ in flat.values())


def test_a_move_that_is_always_worse_is_pruned():
    # Seat 0 leads with 8 8 8 7 and 1: leading the lone 1 keeps the 8s to take every trick back;
    # some of the moves are so much worse that the search stops spending deals on them.
    state = engine.new_game("535", players=4, seed=3, target=1,
                            hands=[[1, 7, 8, 8, 8], [2, 3, 4, 5, 9, 11, 12, 13, 14, 15, 2, 3, 4],
                                   [2, 3, 4, 5, 9, 11, 12, 13, 14, 15, 5, 9, 11],
                                   [2, 3, 4, 5, 9, 11, 12, 13, 14, 15, 12, 13, 14]])
    game = _game(state)
    moves = five35_pimc.candidates(game, game.rules.legal(game.base), 0)
    stats = five35_pimc.evaluate(game, moves, random.Random(1), iterations=200)
    assert min(n for n, _ in stats.values()) < max(n for n, _ in stats.values())


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
    moves = five35_pimc.candidates(game, game.rules.legal(game.base), 0)
    ticks = iter(range(10**6))
    stats = five35_pimc.evaluate(game, moves, random.Random(2), iterations=None, budget_s=0.02,
                                 clock=lambda: next(ticks) / 1000, prune=False)
    assert max(n for n, _ in stats.values()) <= 21


def test_halving_rounds_leave_two_moves_for_the_last_share():
    ks = (1, 2, 3, 4, 5, 8, 9, 16, 17)
    assert [five35_pimc.halving_rounds(k) for k in ks] == [1, 1, 2, 2, 3, 3, 4, 4, 5]


def _lead_with_many_moves():
    state = position(F535[2], 11, 0)  # seat to lead a full hand: many plays
    game = _game(state)
    moves = five35_pimc.candidates(game, game.rules.legal(game.base), 0)
    assert len(moves) >= 5
    return game, moves


def test_sequential_halving_keeps_the_better_half_on_the_same_deals():
    game, moves = _lead_with_many_moves()
    rounds = five35_pimc.halving_rounds(len(moves))
    share = 20
    stats = five35_pimc.evaluate(game, moves, random.Random(3), iterations=share * rounds,
                                 prune=False, halving=True)
    counts = sorted(n for n, _ in stats.values())
    assert max(counts) == share * rounds  # the last two were played on every deal
    assert counts.count(share * rounds) == 2
    alive = len(moves)
    for r in range(rounds):  # each share's end leaves ceil(half) of the moves
        assert sum(1 for c in counts if c > share * r) == alive
        alive = (alive + 1) // 2
    # the survivors were the better half on the deals they shared: the two played longest have
    # means no lower than every move dropped at the first halving, on those first deals
    flat = five35_pimc.evaluate(game, moves, random.Random(3), iterations=share, prune=False)
    first_dropped = [m for m, (n, _) in stats.items() if n == share]
    kept = [m for m, (n, _) in stats.items() if n > share]
    assert min(flat[m][1] for m in kept) >= max(flat[m][1] for m in first_dropped)


def test_sequential_halving_splits_a_clock_budget_into_equal_shares():
    game, moves = _lead_with_many_moves()
    rounds = five35_pimc.halving_rounds(len(moves))
    ticks = iter(range(10**6))  # one tick a clock read: a deal costs one tick
    stats = five35_pimc.evaluate(game, moves, random.Random(2), iterations=None, budget_s=0.06 * rounds,
                                 clock=lambda: next(ticks) / 1000, prune=False, halving=True)
    counts = sorted({n for n, _ in stats.values()})
    assert len(counts) == rounds  # one deal count per share of the budget
    assert counts[-1] <= 60 * rounds + 1
