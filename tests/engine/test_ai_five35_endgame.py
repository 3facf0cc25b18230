"""engine.ai.five35_endgame: the end of a 535 round searched exactly on one deal (issue 38), checked
against a plain minimax written here without memo or pruning, on a position whose one winning line
is known, and with the node limit that hands the deal back to the playouts."""

from __future__ import annotations

import random

import engine
from engine.ai import five35_endgame, five35_pimc, five35_playout
from engine.ai.games import Five35Game, game_for
from engine.five35.cards import RANK_INDEX
from engine.five35.game import Five35Rules
from engine.five35.piles import MOVES, PASS

RULES = Five35Rules()
STRONG2 = (five35_playout.STRONG, five35_playout.STRONG)


def _game(state, seed=1):
    game = game_for(engine.view(state, engine.to_move(state)), random.Random(seed), heuristic_playouts=True,
                    weights=five35_playout.STRONG)
    assert isinstance(game, Five35Game)
    return game


def test_the_one_winning_lead_is_found():  # F-7, F-8, F-9, F-10, F-12
    # seat 0 holds 5 5 8, seat 1 one 14: any single lead is overwritten by the 14, which goes out;
    # the pair of 5s cannot be answered (a single is not added to a group), so seat 0 leads again
    # and goes out with the 8
    state = engine.new_game("535", players=2, seed=1, target=1, hands=[[5, 5, 8], [14]])
    game = _game(state)
    deal = state.clone()  # the true deal
    legal = RULES.legal(deal)
    search = five35_endgame.Search(deal, STRONG2, game.outcome, 10_000, 3)
    values = five35_endgame.solve_moves(deal, legal, search)
    assert values is not None
    wins = [m for m, v in zip(legal, values, strict=True) if v == 1.0]
    five = RANK_INDEX[5]
    assert [MOVES[m][1] for m in wins] == [(five, five)]
    assert all(v == 0.0 for m, v in zip(legal, values, strict=True) if m not in wins)


def test_the_search_scores_each_deal_by_its_exact_end():
    # evaluate, with the end searched, sums solve_moves over the deals it draws (the same draws)
    state = engine.new_game("535", players=3, seed=8, target=1, hands=[[1, 5, 9], [2, 8, 14], [4, 4, 12]])
    game = _game(state)
    legal = RULES.legal(game.base)
    game.endgame_cards = 9
    stats = five35_pimc.evaluate(game, legal, random.Random(6), iterations=5)
    rng = random.Random(6)
    want = [0.0] * len(legal)
    models = (five35_playout.STRONG,) * 3
    for _ in range(5):
        deal = game.sample(rng)
        tie = rng.getrandbits(30)
        values = five35_endgame.solve_moves(deal, legal, five35_endgame.Search(deal, models, game.outcome,
                                                                                game.endgame_nodes, tie))
        assert values is not None
        want = [w + v for w, v in zip(want, values, strict=True)]
    assert [stats[m] for m in legal] == [(5, w) for w in want]


def _minimax(st, outcome):
    """Two seats, one winner: seat 0's reward when seat 0 maximizes it and seat 1 minimizes it,
    by brute force over every line."""
    values = []
    for m in RULES.legal(st):
        child = st.clone()
        RULES.apply(child, m)
        values.append(outcome.rewards(child)[0] if outcome.over(child) else _minimax(child, outcome))
    return max(values) if st.to_move == 0 else min(values)


def test_two_seats_agree_with_a_brute_force_minimax():  # F-8, F-9, F-12
    # with two seats and one winner max-n is minimax: each seat's gain is the other's loss
    checked = 0
    for seed in range(30):
        rng = random.Random(seed)
        ranks = [1, 2, 3, 4, 5, 7, 8, 9, 11, 12, 13, 14, 15] * 2
        rng.shuffle(ranks)
        hands = [sorted(ranks[:3]), sorted(ranks[3:6])]
        state = engine.new_game("535", players=2, seed=seed, target=1, hands=hands)
        game = _game(state)
        deal = state.clone()
        legal = RULES.legal(deal)
        search = five35_endgame.Search(deal, STRONG2, game.outcome, 100_000, seed)
        values = five35_endgame.solve_moves(deal, legal, search)
        assert values is not None
        for m, v in zip(legal, values, strict=True):
            child = deal.clone()
            RULES.apply(child, m)
            over = game.outcome.over(child)
            want = game.outcome.rewards(child)[0] if over else _minimax(child, game.outcome)
            assert v == want, (hands, MOVES[m])
            checked += 1
    assert checked > 60


def test_a_search_over_its_limit_gives_the_deal_back_to_the_playouts():
    state = engine.new_game("535", players=4, seed=3, target=1)
    game = _game(state)
    deal = game.sample(random.Random(1))
    legal = RULES.legal(deal)
    search = five35_endgame.Search(deal, (five35_playout.STRONG,) * 4, game.outcome, 50, 1)
    assert five35_endgame.solve_moves(deal, legal, search) is None
    assert search.nodes == 51
    # and the hard player's search then plays every deal out: a full hand is far above the cards
    # the exact end is tried from, so the setting changes nothing there
    game.endgame_cards = 20
    plain = five35_pimc.evaluate(game, legal, random.Random(5), iterations=6)
    game.endgame_cards = 52
    game.endgame_nodes = 50
    fallback = five35_pimc.evaluate(game, legal, random.Random(5), iterations=6)
    assert plain == fallback
    assert PASS not in legal


def _best_against_policies(st, seat, outcome, rows, tie):
    """``seat``'s best reward when it alone chooses and every other seat plays its policy's move."""
    if st.to_move == seat:
        moves = RULES.legal(st)
    else:
        moves = [five35_playout.choose(st, rows, tie, five35_playout.STRONG)]
    values = []
    for m in moves:
        child = st.clone()
        RULES.apply(child, m)
        over = outcome.over(child)
        values.append(outcome.rewards(child)[seat] if over else _best_against_policies(child, seat, outcome,
                                                                                        rows, tie))
    return max(values)


def test_the_own_seat_alone_searches_against_the_others_policies():
    rows = five35_playout.rows_for(engine.new_game("535", players=3, seed=0, target=1).tables,
                                   five35_playout.STRONG)
    checked = 0
    for seed in range(20):
        rng = random.Random(seed)
        ranks = [1, 2, 3, 4, 5, 7, 8, 9, 11, 12, 13, 14, 15] * 2
        rng.shuffle(ranks)
        hands = [sorted(ranks[:3]), sorted(ranks[3:6]), sorted(ranks[6:9])]
        state = engine.new_game("535", players=3, seed=seed, target=1, hands=hands)
        game = _game(state)
        legal = RULES.legal(state)
        search = five35_endgame.Search(state, (five35_playout.STRONG,) * 3, game.outcome, 100_000, seed, 0)
        values = five35_endgame.solve_moves(state.clone(), legal, search)
        assert values is not None
        for m, v in zip(legal, values, strict=True):
            child = state.clone()
            RULES.apply(child, m)
            over = game.outcome.over(child)
            assert v == (game.outcome.rewards(child)[0] if over else
                         _best_against_policies(child, 0, game.outcome, rows, seed))
            checked += 1
    assert checked > 40
