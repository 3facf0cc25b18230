"""The daily deal's pure rules (service.domain.daily): days, seeds, ids, scores, ranks, streaks,
the share line (rules D-1 to D-5 of docs/rules.md)."""

from __future__ import annotations

import engine
import engine.ai
from service.domain import daily
from service.domain.identities import Player
from tests.service.daily.support import DAY

ANA = Player(platform="tg", user="1", name="Ana")
ANA_ON_MATRIX = Player(platform="matrix", user="1", name="Ana")
SECRET = b"s" * 32


def test_d1_a_day_is_a_utc_date_and_its_seed_depends_on_the_secret_game_and_date():
    assert daily.day_name(DAY) == "2026-12-06"
    assert daily.parse_day("2026-12-06") == DAY
    assert daily.day_of(DAY * 86400) == DAY and daily.day_of(DAY * 86400 - 0.001) == DAY - 1
    assert daily.day_end(DAY) == (DAY + 1) * 86400
    assert daily.parse_day("2026-02-30") is None and daily.parse_day("yesterday") is None
    s = daily.seed(SECRET, "cinquillo", DAY)
    assert s == daily.seed(SECRET, "cinquillo", DAY)  # everyone, every surface: the same deal
    assert len({s, daily.seed(SECRET, "535", DAY), daily.seed(SECRET, "cinquillo", DAY + 1),
                daily.seed(b"t" * 32, "cinquillo", DAY)}) == 4


def test_d1_the_deals_are_cinquillo_clasico_and_one_round_of_535_for_four():
    for game in daily.GAMES:
        st = engine.new_game(game, players=daily.PLAYERS, seed=daily.seed(SECRET, game, DAY),
                             **daily.OPTIONS[game])
        turn = 0
        while engine.to_move(st) is not None:
            seat = engine.to_move(st)
            st = engine.play(st, engine.ai.choose_move(engine.view(st, seat), level="medium", seed=turn))
            turn += 1
        assert len(engine.result(st)["rounds"]) == 1  # one round decides it


def test_d3_the_attempt_is_named_by_the_person_game_and_day_only():
    t = daily.table_id(SECRET, ANA, "cinquillo", DAY)
    assert t == daily.table_id(SECRET, Player(platform="tg", user="1", name="renamed"), "cinquillo", DAY)
    assert len({t, daily.table_id(SECRET, ANA, "535", DAY), daily.table_id(SECRET, ANA, "cinquillo", DAY + 1),
                daily.table_id(SECRET, ANA_ON_MATRIX, "cinquillo", DAY)}) == 4
    assert t == t.lower() and len(t) == 10  # a table id (a tournament's starts with "T")


def test_d5_the_embargo_lifts_the_grace_after_the_day_ends():
    e = daily.embargo("535", DAY)
    assert (e.kind, e.key, e.until) == ("daily", "535:2026-12-06", daily.day_end(DAY) + daily.GRACE_S)
    assert daily.daily_of(e) == ("535", DAY)
    assert not daily.expired(e, daily.day_end(DAY) + 1)  # after midnight: still playable, still secret
    assert daily.expired(e, e.until)
    assert daily.daily_of(daily.Embargo(kind="tournament", key="T1")) is None


def test_d2_the_ai_seed_is_the_deals_not_the_tables():
    e = daily.embargo("cinquillo", DAY)
    assert daily.bot_seed(e, 7) == daily.bot_seed(daily.embargo("cinquillo", DAY), 7)
    assert daily.bot_seed(e, 7) != daily.bot_seed(e, 8) != daily.bot_seed(daily.embargo("535", DAY), 8)


def test_d4_scores_cinquillo_by_place_then_cards_left_and_535_by_points_then_place():
    cin = {"rounds": [{"cards_left": [3, 0, 3, 5]}]}
    assert daily.score_of("cinquillo", cin) == daily.Score("cinquillo", 2, 3)
    assert daily.score_of("cinquillo", cin, 1).won and daily.score_of("cinquillo", cin, 3).place == 4
    f35 = {"scores": [12, 0, 30, 12], "rounds": [{"went_out": 1, "points": [12, 0, 30, 12]}]}
    assert daily.score_of("535", f35) == daily.Score("535", 2, 12)
    # lower is better, in the order the rule says
    assert daily.Score("cinquillo", 1, 0).value() < daily.Score("cinquillo", 2, 1).value() \
        < daily.Score("cinquillo", 2, 4).value() < daily.Score("cinquillo", 3, 0).value()
    assert daily.Score("535", 1, 3).value() < daily.Score("535", 2, 3).value() \
        < daily.Score("535", 1, 4).value()


def test_d4_rank_ties_share_and_the_percentile_is_the_share_of_others_beaten():
    assert daily.standing(better=0, worse=0, of=1) == daily.Standing(1, 1, 100)
    assert daily.standing(better=0, worse=9, of=10) == daily.Standing(1, 10, 100)
    assert daily.standing(better=9, worse=0, of=10) == daily.Standing(10, 10, 0)
    assert daily.standing(better=3, worse=4, of=10) == daily.Standing(4, 10, 44)  # 2 tied beside


def test_d4_streaks_count_days_in_a_row_up_to_today_or_yesterday():
    days = [(DAY - 5, True), (DAY - 3, True), (DAY - 2, True), (DAY - 1, False)]
    assert daily.streaks(days, DAY) == daily.Streaks(played=3, won=0, days=4)  # today still to play
    assert daily.streaks([*days, (DAY, True)], DAY) == daily.Streaks(4, 1, 5)
    assert daily.streaks(days, DAY + 1).played == 0  # a day missed: the streak is over
    assert daily.streaks([(DAY - 2, True), (DAY - 1, True)], DAY).won == 2
    assert daily.streaks([], DAY) == daily.Streaks(0, 0, 0)


def test_d5_the_turn_marks_say_played_passed_and_out_and_never_a_card():
    history = [{"seat": 0, "move": "5o"}, {"seat": 1, "move": "pass"}, {"seat": 0, "move": "pass"},
               *({"seat": 0, "move": "play 7 7"} for _ in range(5)), {"seat": 2, "move": "4e"}]
    marks = daily.turn_marks(history, 0, went_out=True)
    assert marks == "🟩⬜🟩🟩🟩🟩\n🏁"
    assert set(marks) <= {daily.PLAYED, daily.PASSED, daily.OUT, "\n"}
