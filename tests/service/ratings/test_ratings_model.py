"""The rating update (service.ratings.model) against openskill's own results for hand-built outcomes:
2, 4 and 6 players, teams, ties, AI seats at their fixed ratings, leavers last."""

from __future__ import annotations

import json

import pytest
from openskill.models import PlackettLuce

from service.domain.identities import Player, Room
from service.domain.tables.state import FINISHED, Seat, Table
from service.ratings.model import (
    BOT_RATINGS,
    MatchRecord,
    Rating,
    SeatRecord,
    from_json,
    points,
    rate,
    record_of,
    seat_ranks,
    to_json,
)

LIB = PlackettLuce()


def person(i: int, rank: int, team: int | None = None, left: bool = False) -> SeatRecord:
    return SeatRecord(rank=rank, team=i if team is None else team, platform="tg", user=str(i), name=f"P{i}",
                      left=left)


def close(r: Rating, lib) -> None:
    assert r.mu == pytest.approx(lib.mu, abs=1e-9) and r.sigma == pytest.approx(lib.sigma, abs=1e-9)


@pytest.mark.parametrize("n", [2, 4, 6])
def test_free_for_all_matches_the_library(n):
    before = {f"tg:{i}": Rating(mu=20 + 2 * i, sigma=6 - 0.5 * i, matches=3) for i in range(n)}
    ranks = [(i * 7) % n + 1 for i in range(n)]  # a shuffled order of finish
    rec = MatchRecord("t", "535", 1.0, tuple(person(i, ranks[i]) for i in range(n)))
    after = rate(rec, before)
    lib = LIB.rate([[LIB.rating(mu=before[f"tg:{i}"].mu, sigma=before[f"tg:{i}"].sigma)] for i in range(n)],
                   ranks=ranks)
    for i in range(n):
        close(after[f"tg:{i}"], lib[i][0])
        assert after[f"tg:{i}"].matches == 4
    assert [after[f"tg:{i}"].wins for i in range(n)] == [int(r == 1) for r in ranks]


def test_teams_match_the_library():
    # Cinquillo teams: seats 0 and 2 against 1 and 3; the first pair won.
    before = {"tg:0": Rating(mu=27, sigma=4), "tg:2": Rating(mu=22, sigma=5)}
    rec = MatchRecord("t", "cinquillo", 1.0, (person(0, 1, team=10), person(1, 2, team=11),
                                              person(2, 1, team=10), person(3, 2, team=11)))
    after = rate(rec, before)
    lib = LIB.rate([[LIB.rating(mu=27, sigma=4), LIB.rating(mu=22, sigma=5)],
                    [LIB.rating(), LIB.rating()]], ranks=[1, 2])
    close(after["tg:0"], lib[0][0])
    close(after["tg:2"], lib[0][1])
    close(after["tg:1"], lib[1][0])
    close(after["tg:3"], lib[1][1])
    assert after["tg:0"].wins == after["tg:2"].wins == 1 and after["tg:1"].wins == 0


def test_a_shared_win_is_a_tie():
    rec = MatchRecord("t", "535", 1.0, (person(0, 1), person(1, 1), person(2, 2)))
    after = rate(rec, {})
    lib = LIB.rate([[LIB.rating()], [LIB.rating()], [LIB.rating()]], ranks=[1, 1, 2])
    for i in range(3):
        close(after[f"tg:{i}"], lib[i][0])
    assert after["tg:0"].mu == pytest.approx(after["tg:1"].mu)
    assert after["tg:0"].wins == after["tg:1"].wins == 1


def test_ai_seats_take_part_at_their_fixed_rating_and_are_not_rated():
    rec = MatchRecord("t", "cinquillo", 1.0, (person(0, 2), SeatRecord(rank=1, team=1, bot="hard"),
                                              SeatRecord(rank=3, team=2, bot="easy")))
    after = rate(rec, {})
    assert set(after) == {"tg:0"}
    lib = LIB.rate([[LIB.rating()], [LIB.rating(*BOT_RATINGS["hard"])], [LIB.rating(*BOT_RATINGS["easy"])]],
                   ranks=[2, 1, 3])
    close(after["tg:0"], lib[0][0])
    # One person against AI players is a rated match.
    assert rec.rated and not MatchRecord("t", "535", 1.0, (SeatRecord(rank=1, team=0, bot="easy"),
                                                          SeatRecord(rank=2, team=1, bot="easy"))).rated


def test_ranks_from_results_winners_scores_and_leavers():
    # 535: fewest points wins; ties share; the leaver (seat 3) is last whatever the AI made of it.
    assert seat_ranks("535", {"winners": [1], "scores": [25, 4, 12, 0]}, 4, {3}) == [3, 1, 2, 4]
    assert seat_ranks("535", {"winners": [0, 2], "scores": [3, 20, 3]}, 3, set()) == [1, 2, 1]
    # Cinquillo: more is better (round wins, points as fractions).
    result = {"winners": [2], "scores": ["1", "7/2", "5", "7/2"]}
    assert seat_ranks("cinquillo", result, 4, set()) == [3, 2, 1, 2]


def test_record_of_a_table_rates_the_leaver_last_and_names_the_groups():
    ana, bea = Player(platform="tg", user="1", name="Ana"), Player(platform="tg", user="2", name="Bea")
    group, dm = Room(platform="tg", chat="-5", kind="group"), Room(platform="tg", chat="dm1")
    t = Table(id="tab", version=9, game="535", options={}, max_seats=3, creator=ana, rooms=(group, dm),
              locale="en", turn_seconds=0, status=FINISHED,
              seats=(Seat(player=ana), Seat(player=bea, bot="medium"), Seat(bot="easy")))
    rec = record_of(t, {"winners": [1], "scores": [10, 2, 30]}, 55.0)
    assert [s.rank for s in rec.seats] == [1, 3, 2]  # Bea left: her seat's win is the AI's, not hers
    assert rec.seats[1].left and rec.people() == ["tg:1", "tg:2"] and rec.groups == ("tg:-5",)
    assert from_json(to_json(rec)) == rec
    after = rate(rec, {})
    assert after["tg:1"].points > 1000 > after["tg:2"].points and after["tg:2"].wins == 0


def test_shown_rating_and_trend():
    assert points(25, 25 / 3) == 1000
    r = Rating()
    for i in range(12):
        r = rate(MatchRecord(f"t{i}", "535", float(i), (person(0, 1), person(1, 2))), {"tg:0": r})["tg:0"]
    assert r.matches == 12 and r.wins == 12 and len(r.trend) == 10 and all(d > 0 for d in r.trend)


def test_the_rebuilds_seat_fold_agrees_with_the_tables_own_fold():
    from service.domain import events as ev
    from service.ratings.rebuild import record_from_events
    from service.store.repository import fold

    p = [Player(platform="tg", user=str(i), name=f"P{i}") for i in range(5)]
    group, other = Room(platform="tg", chat="-1", kind="group"), Room(platform="web", chat="g", kind="group")
    events = [ev.TableCreated(game="535", options={}, max_seats=5, creator=p[0], room=group, locale="es",
                           turn_seconds=0), ev.RoomAttached(room=other)]
    events += [ev.PlayerJoined(seat=i, player=p[i], locale="es") for i in range(5)]
    events += [ev.PlayerLeft(seat=1, player=p[1]), ev.PlayerKicked(seat=2, player=p[3], by=p[0]),
               ev.BotsAdded(seats=[3], level="hard"), ev.MatchStarted(seed="s", commitment="c", players=4),
               ev.SeatTakenByBot(seat=1, level="medium", reason="left", player=p[2]),
               ev.PlayerKicked(seat=2, player=p[4], by=p[0], level="easy"),
               ev.MatchFinished(result={"winners": [3], "scores": [5, 9, 9, 1]})]
    raws = [ev.encode(e, at=float(i), cmd=f"c{i}") for i, e in enumerate(events)]
    t = fold("tab", None, raws)
    assert t is not None
    want = record_of(t, t.result or {}, float(len(events) - 1))
    got = record_from_events("tab", raws)
    assert got == want
    assert [s.left for s in got.seats] == [False, True, True, False] and got.groups == ("tg:-1", "web:g")
    assert record_from_events("tab", raws[:-1]) is None  # not finished: no record
    # the moves are skipped however they were written: compact (issue 33) or in the old envelope
    move = ev.encode(ev.MovePlayed(seat=0, move="7 7", cause="bot"), at=9.5, cmd="m1")
    old = json.dumps(ev.envelope(json.loads(move)), separators=(",", ":"))
    assert move.startswith('{"M":') and old.startswith('{"type":"MovePlayed"')
    assert record_from_events("tab", [*raws[:-2], move, old, *raws[-2:]]) == want


def test_the_fast_update_is_the_library_s_own_to_the_bit():
    # plackett_luce skips rate()'s checks and deep copy; the numbers must not move at all.
    import random

    from service.ratings.model import plackett_luce

    rng = random.Random(15)
    for _ in range(300):
        n = rng.randint(2, 6)
        sizes = [rng.choice((1, 1, 1, 2)) for _ in range(n)]
        teams = [[(rng.uniform(10, 40), rng.uniform(0.5, 9)) for _ in range(k)] for k in sizes]
        ranks = [float(rng.randint(1, n)) for _ in range(n)]  # ties included
        lib = LIB.rate([[LIB.rating(mu=mu, sigma=sg) for mu, sg in t] for t in teams], ranks=list(ranks))
        assert plackett_luce(teams, ranks) == [[(p.mu, p.sigma) for p in t] for t in lib]
