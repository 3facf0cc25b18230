"""bench/league/levels.py's measurement level ``xprior`` (issue 38): the hard player's 535 search over
the plays ``pimc_race``'s structure score ranks best, and nothing else."""

from __future__ import annotations

import random
import time

import engine
from bench.league import five35_policies, levels
from bench.league.worlds import Five35World
from engine.five35.piles import PASS


def _ranked(view) -> tuple[list[str], bool]:
    """The seat's plays, best first by the structure score, and whether it may pass."""
    world = Five35World(view, random.Random(0))
    st = world.base
    seat = st.to_move
    counts = five35_policies._counts(st.hands[seat])
    danger = five35_policies._danger(st, seat, 2)
    legal = world.rules.legal(st)
    plays = sorted((m for m in legal if m != PASS),
                   key=lambda m: -five35_policies.structure_score(st, m, counts, st.counts[seat], danger))
    return [str(world.rules.encode(st, m)) for m in plays], PASS in legal


def test_xprior_searches_only_the_structure_scores_best_plays():
    state = engine.new_game("535", players=4, seed=9, target=1)
    checked = led = 0
    for ply in range(40):
        seat = engine.to_move(state)
        if seat is None:
            break
        view = engine.view(state, seat)
        if len(view["legal_moves"]) > 3:
            plays, may_pass = _ranked(view)
            move = levels.decide("xprior/k=2", view, ply, budget_ms=10, iterations=None,
                                 clock=time.process_time)
            passes = {str(m) for m in view["legal_moves"]} - set(plays)
            allowed = set(plays[:2]) | (passes if may_pass else set())
            allowed |= {p for p in plays if len(p.split()) - 1 == view["hand_sizes"][seat]}  # going out wins
            assert move in allowed, (move, plays[:3])
            if not may_pass:  # leading with one candidate: it is played without a search
                assert levels.decide("xprior/k=1", view, ply, budget_ms=10, iterations=None,
                                     clock=time.process_time) == plays[0]
                led += 1
            checked += 1
        state = engine.play(state, engine.ai.choose_move(view, level="medium", seed=ply))
    assert checked >= 5 and led >= 1


def test_xis_plays_a_legal_move_and_goes_out_when_it_can():
    # ``xis``: the engine's ISMCTS over hard's 535 game, within the budget, from the seat's view only.
    state = engine.new_game("535", players=3, seed=4, target=1)
    decided = 0
    for ply in range(200):
        seat = engine.to_move(state)
        if seat is None:
            break
        view = engine.view(state, seat)
        if len(view["legal_moves"]) > 1:
            started = time.process_time()
            move = levels.decide("xis", view, ply, budget_ms=10, iterations=None, clock=time.process_time)
            assert time.process_time() - started < 1.0  # the budget holds (a broad bound: CPU time)
            assert move in view["legal_moves"]
            out = [m for m in view["legal_moves"] if len(m.split()) - 1 == view["hand_sizes"][seat]]
            if out:  # a play that empties the hand wins the round (F-12): it is the one played
                assert move in out
            decided += 1
        else:
            move = view["legal_moves"][0]
        state = engine.play(state, move)
    assert engine.to_move(state) is None and decided >= 5
