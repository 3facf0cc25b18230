"""engine.ai.five35_style's reading of the whole table and engine.ai.hard's own-seat weights chosen by
it (issue 38): the weights that beat medium best when every other seat reads as medium."""

from __future__ import annotations

import random

import engine
from engine.ai import choose_move, five35_playout, five35_style
from engine.ai.games import Five35Game, game_for
from engine.ai.hard import HARD, HardSettings, own_weights


def _positions(seed, plies=16, hard_seat=None):
    """Per ply, a four-player 535 position's rebuilt state and the seat to move: medium plays every
    seat but ``hard_seat`` (the hard player at 20 iterations, a searcher to read)."""
    state = engine.new_game("535", players=4, seed=seed, target=1)
    out = []
    for ply in range(plies):
        seat = engine.to_move(state)
        if seat is None:
            break
        view = engine.view(state, seat)
        game = game_for(view, random.Random(1), heuristic_playouts=True)
        assert isinstance(game, Five35Game)
        out.append((game.base, seat))
        level = "hard" if seat == hard_seat else "medium"
        state = engine.play(state, choose_move(view, level=level, seed=seed * 100 + ply, iterations=20))
    return out


def _odds(st):
    return [five35_style.searcher_log_odds(c) for c in five35_style.counts(st)]


def test_a_table_of_medium_players_reads_all_medium_and_one_searcher_breaks_it():
    # four medium players: every reading after the first plies takes the whole table for medium
    medium_only = _positions(3)
    assert all(five35_style.all_read_medium(st, seat) for st, seat in medium_only)
    # a hard seat leads singles: once it has led, no other seat reads the whole table as medium
    mixed = [(st, seat) for st, seat in _positions(0, hard_seat=0) if seat != 0]
    for st, seat in mixed:
        odds = _odds(st)
        assert five35_style.all_read_medium(st, seat) == all(o < 0 for s, o in enumerate(odds) if s != seat)
    assert not all(five35_style.all_read_medium(st, seat) for st, seat in mixed)


def test_the_own_seat_plays_out_with_the_medium_weights_only_at_a_medium_table():
    settings = HardSettings(five35_own_medium=five35_playout.HARD)
    assert HARD.five35_own_medium is five35_playout.HARD  # the service's hard player (issue 38)
    before = HardSettings(five35_own_medium=None)
    for st, seat in _positions(3):
        assert own_weights(st, seat, before) is five35_playout.STRONG
        assert own_weights(st, seat, settings) is five35_playout.HARD
    seen_searcher = False
    for st, seat in _positions(0, hard_seat=0):
        if seat == 0:
            continue
        medium_table = five35_style.all_read_medium(st, seat)
        want = five35_playout.HARD if medium_table else five35_playout.STRONG
        assert own_weights(st, seat, settings) is want
        seen_searcher |= not medium_table
    assert seen_searcher
    # the table's threshold is the own setting's, not the one the seats are modelled with: a
    # reading that models every seat as a searcher still lets a medium table choose HARD
    wary = HardSettings(five35_own_medium=five35_playout.HARD,
                        five35_reading=five35_style.Reading(medium_below=-1000.0))
    strict = HardSettings(five35_own_medium=five35_playout.HARD, five35_own_medium_below=-1000.0)
    for st, seat in _positions(3):
        assert own_weights(st, seat, wary) is five35_playout.HARD
        assert own_weights(st, seat, strict) is five35_playout.STRONG
        models = five35_style.seat_weights(st, seat, five35_playout.HARD, wary.five35_reading)
        assert models.count(five35_style.READING.searcher) == 3


def test_below_read_from_seats_every_seat_plays_out_with_the_plain_model():
    # issue 38, tenth pass: with 2 seats the reading costs more against a searcher written apart
    # from hard than it wins against medium, so a 2-seat table is played out with the plain model
    # (every seat with five35_own, no reading); from 3 seats on the reading models the seats
    from engine.ai import hard

    for players, read in ((2, False), (3, True), (4, True)):
        state = engine.new_game("535", players=players, seed=5, target=1)
        view = engine.view(state, engine.to_move(state))
        game = game_for(view, random.Random(1), heuristic_playouts=True, weights=HARD.five35_own)
        assert isinstance(game, Five35Game)
        hard.five35_models(game, HARD)
        assert (game.seat_weights is not None) == read
        if not read:
            assert game.seat_models is None and game.weights is HARD.five35_own
        # a setting of 2 reads every table, as the hard player did before the tenth pass
        hard.five35_models(game, HardSettings(five35_read_from=2))
        assert game.seat_weights is not None
