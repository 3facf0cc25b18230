"""A round's result and the standings (issue 34, 6-7): drawn from the public view only (G-1), the
same structured part of every message at that moment, in words for the text surfaces."""

from __future__ import annotations

import random

import pytest

import engine
from service.domain.tables.outcome import outcome, round_ended, shown, standings
from service.protocol.i18n.results import outcome_lines
from tests.service.support import ANA, GROUP, Harness, card_tokens, private


def _play_round(state, rng):
    """Random legal moves until a round ends (or the match)."""
    start = engine.view(state, None)["round"]
    while engine.to_move(state) is not None and engine.view(state, None)["round"] == start:
        state = engine.play(state, rng.choice(engine.legal_moves(state)))
    return state


@pytest.mark.parametrize("shown_as,value", [("16½", "33/2"), ("⅔", "2/3"), ("3 2/7", "23/7"), ("5", 5),
                                            ("0", 0), ("20⅔", "62/3")])
def test_cabron_split_points_read_as_people_write_them(shown_as, value):
    # C-13: a cabrón tie splits points exactly; "33/2" is how JSON carries it, not how anyone reads it.
    assert shown(value) == shown_as


def test_c9_chips_of_a_round_are_what_each_seat_took_or_paid():
    rng = random.Random(3)
    state = engine.new_game("cinquillo", players=4, seed=11, preset="tradicional", chips=True)
    before = engine.view(state, None)["chips"]
    state = _play_round(state, rng)
    view = engine.view(state, None)
    assert round_ended(view)
    r = outcome(view)["round"]
    assert r["n"] == 1 and r["chips"] == [a - b for a, b in zip(view["chips"], before, strict=True)]
    # Chips move between seats and the pot only: what the seats gained, the pot lost, and back.
    assert sum(r["chips"]) == -view["pot"] + 0
    assert set(r["winners"]) == set(view["rounds"][-1]["winners"])


def test_f14_535_standings_put_the_fewest_points_first_and_say_so():
    view = {"game": "535", "players": 3, "scores": [12, 4, 30], "options": {"target": 30}, "over": True,
            "result": {"winners": [1]}, "rounds": [], "hand_sizes": [0, 0, 0]}
    st = standings(view)
    assert st["order"] == [1, 0, 2] and st["lower_wins"] and st["winners"] == [1]
    assert [r["rank"] for r in st["rows"]] == [2, 1, 3]
    words = " ".join(outcome_lines({"round": None, "standings": st}, "535", "en", ["Ana", "Bea", "Cal"]))
    assert "1. Bea" in words and "Fewest points wins" in words and "30" in words


def test_c10_tied_scores_share_a_rank():
    view = {"game": "cinquillo", "players": 3, "scores": [5, 9, 5], "scoring": "points", "target": 30,
            "over": False, "rounds": [], "hand_sizes": [1, 1, 1], "round_wins": [1, 1, 0]}
    assert [r["rank"] for r in standings(view)["rows"]] == [2, 1, 2]


def test_the_moment_after_a_round_and_not_during_one():
    rng = random.Random(5)
    state = engine.new_game("535", players=3, seed=2)
    assert not round_ended(engine.view(state, None))  # no round finished yet
    state = _play_round(state, rng)
    view = engine.view(state, None)
    assert round_ended(view) != (engine.to_move(state) is not None and bool(view["history"]))
    if engine.to_move(state) is not None:
        state = engine.play(state, rng.choice(engine.legal_moves(state)))
        assert not round_ended(engine.view(state, None))  # the next deal's first move: over


@pytest.mark.parametrize("locale", ["es", "en"])
@pytest.mark.parametrize("words", ["cinquillo tradicional pago", "535", "cinquillo cabron",
                                   "cinquillo parejas puntos"])
async def test_every_round_end_carries_its_result_to_the_room_and_each_hand_and_shows_no_card(
        fake_redis, words, locale):
    h = Harness(fake_redis)
    await h.send(ANA, f"/lang {locale}", room=private(ANA))
    await h.send(ANA, f"/new {words}")
    await h.send(ANA, "/bots 3")
    await h.send(ANA, "/start")
    rng = random.Random(1)
    while not h.over():
        await h.send(ANA, token=rng.choice(h.last_hand().actions).token, room=private(ANA))
    with_outcome = [m for m in h.messages if m.outcome is not None]
    rounds = {m.outcome["round"]["n"] for m in with_outcome if m.outcome["round"]}
    final = [m for m in with_outcome if m.outcome["standings"]["over"]]
    assert final and {m.kind for m in final} == {"match_over", "hand"}
    # Every round's end told once to the room and once to Ana's hand, the last one with the end.
    for n in rounds:
        told = [m for m in with_outcome if (m.outcome["round"] or {}).get("n") == n]
        assert {("room" if m.to.room else "hand") for m in told} == {"room", "hand"}
    assert max(rounds) == max(r["round"] for r in final[0].view["rounds"])
    for m in with_outcome:
        # G-1: the outcome and its words name no card (hands, left cards: counts only).
        assert not card_tokens(str(m.outcome)), m.outcome
        assert m.text.count("\n") > 1
    mine = [m for m in final if m.to.player is not None]
    headline = {"es": ("¡Has ganado!", "Esta vez has perdido."),
                "en": ("You won!", "You lost this one.")}[locale]
    assert any(h in mine[0].text for h in headline)
    assert GROUP


async def test_play_seats_ai_players_of_the_level_asked_and_refuses_another(fake_redis):
    # Issue 34 (12): the AI level of /play (cinq play 535 hard, the web before the deal).
    from service.domain.requests import Create
    h = Harness(fake_redis)
    await h.send(ANA, "/play 535 hard", room=private(ANA))
    t = await h.table_of(private(ANA))
    from service.store.repository import load
    table = await load(h.worker.store, t)
    assert [s.bot for s in table.seats[1:]] == ["hard"] * (len(table.seats) - 1)
    # A typed request with a level no AI player has is refused, nothing created.
    msgs = await h.send(ANA, request=Create(name="play", game="535").model_copy(update={"level": "godlike"}),
                        room=private(ANA))
    assert any(m.kind == "reply" for m in msgs)
