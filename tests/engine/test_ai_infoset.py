"""engine.ai.infoset: the constraints a seat derives from its view are true (the real hidden hands
satisfy them) and depend on nothing hidden (G-1)."""

from __future__ import annotations

import json
import random

from ai_positions import CONFIGS, position
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.ai.games import game_for
from engine.ai.infoset import CinquilloInfo, Five35Info, info_from_view
from engine.cinquillo import PASS, card, replace_hands
from engine.five35 import cards as D
from engine.five35 import with_hands

CINQ = [c for c in CONFIGS if c[0] == "cinquillo"]
F535 = [c for c in CONFIGS if c[0] == "535"]


def _shuffle_hidden(state, seat, rng):
    """A state equal to ``state`` in everything public, the other seats' cards shuffled among them."""
    others = [s for s in range(state.players) if s != seat]
    if state.game == "cinquillo":
        pool = [c for s in others for c in range(40) if state.hands[s] >> c & 1]
        rng.shuffle(pool)
        hands = state.hands[:]
        at = 0
        for s in others:
            n = state.hands[s].bit_count()
            hands[s] = sum(1 << c for c in pool[at:at + n])
            at += n
        new = engine.rules_for(state).clone(state)
        replace_hands(new, hands)
        return new
    pool = [r for s in others for r in D.unpack(state.hands[s])]
    rng.shuffle(pool)
    hands = {}
    at = 0
    for s in others:
        hands[s] = pool[at:at + state.counts[s]]
        at += state.counts[s]
    return with_hands(state, hands)


@settings(max_examples=40, deadline=None)
@given(config=st.sampled_from(CONFIGS), seed=st.integers(0, 2**32), steps=st.integers(1, 90))
def test_hiding_or_shuffling_other_hands_changes_nothing(config, seed, steps):  # G-1
    state = position(config, seed, steps)
    if state.game == "cinquillo" and not state.history:
        return  # before the first move the opener's 5 de oros is public: it cannot move
    seat = engine.to_move(state)
    twin = _shuffle_hidden(state, seat, random.Random(seed))
    a, b = engine.view(state, seat), engine.view(twin, seat)
    assert info_from_view(a) == info_from_view(b)
    assert info_from_view(json.loads(json.dumps(a))) == info_from_view(a)
    ga, gb = game_for(a, random.Random(7)), game_for(b, random.Random(7))
    for _ in range(5):
        sa, sb = ga.sample(random.Random(3)), gb.sample(random.Random(3))
        assert sa.hands == sb.hands


@settings(max_examples=60, deadline=None)
@given(config=st.sampled_from(CINQ), seed=st.integers(0, 2**32), steps=st.integers(0, 90))
def test_cinquillo_constraints_are_true(config, seed, steps):  # C-3, C-5, C-11
    state = position(config, seed, steps)
    for seat in range(state.players):
        info = info_from_view(engine.view(state, seat))
        assert isinstance(info, CinquilloInfo)
        assert info.hand == state.hands[seat]
        hidden = 0
        for s in range(state.players):
            if s != seat:
                hidden |= state.hands[s]
                assert state.hands[s] & info.voids[s] == 0, "a void the seat does not have"
                assert info.musts[s] & ~state.hands[s] == 0
                assert info.sizes[s] == state.hands[s].bit_count()
        assert info.unseen == hidden


def test_a_cinquillo_pass_proves_a_void():  # C-5
    state = engine.new_game("cinquillo", players=4, seed=3, preset="clasico")
    rng = random.Random(1)
    while not any(h & 63 == PASS for h in state.history):
        state = engine.play(state, rng.choice(engine.legal_moves(state)))
    passer = next(h >> 6 for h in state.history if h & 63 == PASS)
    seat = (passer + 1) % 4
    info = info_from_view(engine.view(state, seat))
    assert info.voids[passer] != 0
    # the 5s are playable once the 5 de oros is down: a passer holds no unplayed 5
    fives = [card(f"5{s}") for s in "ceb"]
    assert all(info.voids[passer] >> c & 1 for c in fives if info.unseen >> c & 1)


def test_double_turn_end_proves_a_void():  # C-11
    # seat 0 opens, plays 4o then 3o... we only need: a 1 or Rey played, then the turn moved on
    found = False
    for seed in range(200):
        state = engine.new_game("cinquillo", players=3, seed=seed, preset="clasico", double_turn=True)
        rng = random.Random(seed)
        while engine.to_move(state) is not None and not state.rounds:
            if state.history:
                last = state.history[-1]
                who, move = last >> 6, last & 63
                if move != PASS and move % 10 in (0, 9) and state.turn != who and state.hands[who]:
                    seat = state.turn
                    info = info_from_view(engine.view(state, seat))
                    if who != seat:
                        found = True
                        assert info.voids[who] & state.playable == info.unseen & state.playable
            state = engine.play(state, rng.choice(engine.legal_moves(state)))
        if found:
            break
    assert found


@settings(max_examples=40, deadline=None)
@given(config=st.sampled_from(F535), seed=st.integers(0, 2**32), steps=st.integers(0, 120))
def test_535_constraints_are_true(config, seed, steps):
    state = position(config, seed, steps)
    seat = engine.to_move(state)
    info = info_from_view(engine.view(state, seat))
    assert isinstance(info, Five35Info)
    assert info.hand == state.hands[seat]
    assert info.unseen == sum(h for s, h in enumerate(state.hands) if s != seat) + state.out
    assert info.out_count == D.size(state.out)
    assert list(info.sizes) == state.counts
