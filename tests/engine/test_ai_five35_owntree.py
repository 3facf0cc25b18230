"""engine.ai.five35_owntree, the own seat's next decisions searched inside the hard 535 player's
playouts: its order is the policy's, it widens only with visits, it keeps its statistics, and the
hard player using it stays in its budget and sees only the view (G-1)."""

from __future__ import annotations

import random

from ai_positions import CONFIGS, position
from hypothesis import given, settings
from hypothesis import strategies as st
from test_ai_five35_pimc import assert_in_budget_and_blind

import engine
from engine.ai import five35_owntree, five35_pimc, five35_playout
from engine.ai.games import Five35Game, game_for
from engine.ai.hard import HardSettings
from engine.five35.piles import PASS

F535 = [c for c in CONFIGS if c[0] == "535"]


def _game(state, seed=1):
    game = game_for(engine.view(state, engine.to_move(state)), random.Random(seed), heuristic_playouts=True)
    assert isinstance(game, Five35Game)
    return game


@settings(max_examples=40, deadline=None)
@given(config=st.sampled_from(F535), seed=st.integers(0, 2**32), steps=st.integers(0, 60),
       strong=st.booleans())
def test_the_order_is_every_legal_move_with_the_policys_move_first(config, seed, steps, strong):  # F-8
    state = position(config, seed, steps)
    base = _game(state).base
    w = five35_playout.STRONG if strong else five35_playout.MEDIUM
    order = five35_owntree.ordered(base, w)
    assert sorted(order) == sorted(engine.rules_for("535").legal(base))
    policy = five35_playout.choose(base, five35_playout.rows_for(base.tables, w), seed % (1 << 30), w)
    if policy == PASS:
        assert order[0] == PASS
    else:  # the policy's move or one it scores the same (it breaks ties at random)
        scores = five35_playout.move_scores(base, w)
        assert order[0] != PASS and scores[order[0]] == scores[policy]


def test_a_node_plays_the_policys_move_first_and_widens_with_its_visits():
    state = position(F535[2], 1, 0)  # the round's first lead: 23 moves
    base = _game(state).base
    w = five35_playout.STRONG
    order = five35_owntree.ordered(base, w)
    assert len(order) >= 4
    node = five35_owntree.Node()
    assert five35_owntree.select(node, base, w, 0.5, 0.5) == order[0]
    # 16 visits, widening 0.5: the best 1 + 0.5 * 4 = 3 moves; the two played, the third is next
    node.visits = 16
    node.moves = {order[0]: [10.0, 5.0], order[1]: [6.0, 1.0]}
    assert five35_owntree.select(node, base, w, 0.5, 0.5) == order[2]
    # no widening: only the policy's move, however many visits
    assert five35_owntree.select(node, base, w, 0.0, 0.5) == order[0]
    # every considered move played, no exploration: the best mean among them (not order[3])
    node.moves[order[2]] = [2.0, 1.9]
    node.moves[order[3]] = [1.0, 1.0]
    assert five35_owntree.select(node, base, w, 0.5, 0.0) == order[2]


@settings(max_examples=15, deadline=None)
@given(config=st.sampled_from(F535), seed=st.integers(0, 2**32), steps=st.integers(0, 50),
       depth=st.integers(1, 3))
def test_the_tree_counts_each_playout_once_per_own_decision(config, seed, steps, depth):
    state = position(config, seed, steps)
    game = _game(state, seed)
    seat = game.base.to_move
    rng = random.Random(seed)
    root = five35_owntree.Node()
    move = five35_pimc.candidates(game, game.rules.legal(game.base))[0]
    for _ in range(20):
        st_ = game.sample(rng).clone()
        game.rules.apply(st_, move)
        r = five35_owntree.play(game, st_, rng.getrandbits(30), seat, root, depth, 0.5, 0.5)
        assert st_.rounds or st_.over
        assert r == game.rewards(st_)[seat]

    def walk(node: five35_owntree.Node, level: int) -> None:
        assert level <= depth
        assert sum(n for n, _ in node.moves.values()) == node.visits
        assert all(0.0 <= total <= n for n, total in node.moves.values())
        for child in node.children.values():
            walk(child, level + 1)
        # a child is reached only through a move of this node, at most once per visit
        assert sum(c.visits for c in node.children.values()) <= node.visits

    assert root.visits <= 20
    walk(root, 1)


def test_the_own_tree_stays_in_the_budget_and_sees_only_the_view():  # G-1
    assert_in_budget_and_blind(position(F535[2], 5, 4), HardSettings(five35_own_tree=2))
    assert_in_budget_and_blind(position(F535[0], 8, 9), HardSettings(five35_own_tree=1, five35_own_c=0.2))
