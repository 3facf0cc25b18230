"""bench/league/runlog.py: a league run's log lets a rerun play only the deals it lacks (issue 38)."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

from bench import league_report as report
from bench import tournament
from bench.league import levels, runlog
from bench.tournament import Job


def _job(level: str = "hard", first: int = 0, count: int = 4, budget_ms: int | None = 25) -> Job:
    return Job("535", 4, "round", level, "medium", first, count, 38, None, budget_ms, False)


def test_a_rerun_plays_only_the_deals_the_log_lacks(tmp_path):
    log = tmp_path / "l.jsonl"
    job = _job()
    with log.open("w") as f:
        for deal in (0, 2):
            f.write(json.dumps(runlog.record(job, deal, 0.25, [0.0243, 0.001])) + "\n")
        f.write('{"row": "535 hard:medium", "deal"')  # a torn last line: a run killed mid-write
    held = runlog.done(log)
    assert len(held) == 2
    (left,) = runlog.missing([job, _job(first=4, count=2)], held)[:1]
    assert left.deal_list == (1, 3)
    assert runlog.missing([_job(first=4, count=2)], held)[0].deal_list == (4, 5)
    # another budget, or another make-up of the hard player, is another row: nothing is held for it
    assert runlog.missing([_job(budget_ms=100)], held)[0].deal_list == (0, 1, 2, 3)
    variant = _job(level="hard/five35_reading.plain=0.5")
    assert runlog.missing([variant], held)[0].deal_list == (0, 1, 2, 3)
    rec = runlog.load([log])[0]
    assert rec["cpu_ms"] == [24.3, 1.0] and rec["score"] == 0.25 and rec["seed"] == 38


def test_the_fingerprint_names_the_hard_players_make_up():
    assert levels.fingerprint("hard") == levels.fingerprint("hard")
    assert levels.fingerprint("hard") != levels.fingerprint("hard/five35_reading.plain=0.5")
    assert levels.fingerprint("hard") != levels.fingerprint("hard/ms=50")
    # a robust setting left at its neutral value is the hard player as it was before it existed
    assert levels.fingerprint("hard") == levels.fingerprint("hard/five35_reading.plain=0")
    assert levels.fingerprint("hard") == levels.fingerprint("hard/cinquillo_belief_plain=0")


def test_the_report_marks_what_a_row_lacks_and_pairs_the_variants():
    hard, plain = _job(), _job(level="hard/five35_reading.plain=0.5")
    full = _job(budget_ms=100, count=1000)
    recs = [runlog.record(hard, d, s, [0.0243]) for d, s in enumerate([1.0, 0.75, 1.0, 0.5])]
    recs += [runlog.record(plain, d, s, [0.0244]) for d, s in enumerate([0.75, 0.75, 0.5, 0.5])]
    recs += [runlog.record(full, d, 1.0, [0.0971]) for d in range(1000)]
    text = report.report(recs)
    lines = {line.split()[3] + " " + line.split()[6]: line for line in text.splitlines()[1:5] if line}
    assert "FEW DEALS (4/1000)" in lines["hard 25ms"] and "LOW BUDGET (25 ms cpu)" in lines["hard 25ms"]
    assert "81.2%" in lines["hard 25ms"] and "BELOW GOAL" in lines["hard 25ms"]  # 535 vs medium: 85%
    assert "FEW DEALS" not in lines["hard 100ms"] and "BELOW GOAL" not in lines["hard 100ms"]
    assert "LOW BUDGET" not in lines["hard 100ms"] and "100.0%" in lines["hard 100ms"]
    paired = [line for line in text.splitlines() if "hard/five35_reading.plain=0.5 - hard" in line]
    assert len(paired) == 1 and "-18.8 points" in paired[0] and "over 4 deals" in paired[0]


def test_a_variant_is_paired_with_every_make_up_the_hard_player_has_had():
    # "hard" played at 25 ms when it was make-up A; a variant K later became the hard player
    # (make-up K, named "hard" in its 100 ms row); a new variant V is compared with both.
    def recs(level, fp, scores, budget_ms=25):
        job = _job(level=level, budget_ms=budget_ms)
        out = [runlog.record(job, d, s, [0.0243]) for d, s in enumerate(scores)]
        for r in out:
            r["level_fp"] = fp
        return out

    text = report.report(recs("hard", "aaaaaaaaaa", [0.5, 0.5, 0.5, 0.5])
                         + recs("hard/five35_own=fitted", "kkkkkkkkkk", [0.75, 0.5, 0.75, 0.5])
                         + recs("hard", "kkkkkkkkkk", [1.0, 1.0], budget_ms=100)
                         + recs("hard/five35_own_medium=hard", "vvvvvvvvvv", [1.0, 1.0, 0.75, 0.5]))
    paired = [line for line in text.splitlines() if " - hard (make-up " in line]
    v = [line for line in paired if "five35_own_medium=hard - hard" in line]
    assert len(v) == 2
    assert "(make-up aaaaaaaaaa) +31.2 points" in v[0] and "(make-up kkkkkkkkkk) +18.8 points" in v[1]
    k = [line for line in paired if "five35_own=fitted - hard" in line]
    assert len(k) == 1 and "(make-up aaaaaaaaaa) +12.5 points" in k[0]  # never with itself


def test_a_team_row_is_held_to_one_teams_share():
    # C-12: partners are pairs, so six seats of parejas are three teams (a third each), four are two;
    # a report that took every team row's fair share for a half marked 6-seat parejas BELOW GOAL at 34%
    def row(players: int, variant: str) -> dict:
        job = Job("cinquillo", players, variant, "hard", "medium", 0, 1, 38, None, 100, False)
        return runlog.record(job, 0, 0.34, [0.01])

    assert report.fair(row(6, "parejas")) == report.goal(row(6, "parejas")) == 2 / 6
    assert report.fair(row(4, "parejas")) == 0.5 and report.fair(row(6, "clasico")) == 1 / 6
    lines = report.report([row(6, "parejas")]).splitlines()
    line = next(x for x in lines if "parejas, 6p" in x)
    assert " 33.3 " in line and "BELOW GOAL" not in line


def test_a_mixed_table_gives_each_opponent_seat_its_level_in_turn():
    # Issue 38's mixed table: after the tested seat, A, then B, then C, wherever the tested seat sits.
    mixed = "pimc_race+pimc_ucb+ismcts"
    assert [levels.seat_level(mixed, k) for k in range(3)] == ["pimc_race", "pimc_ucb", "ismcts"]
    assert [levels.seat_level("medium", k) for k in range(5)] == ["medium"] * 5
    assert levels.seat_level("medium+ismcts", 3) == "ismcts"  # more seats than levels: in turn again
    # the make-up of a mixed table follows its levels and their order (another order is another row)
    assert levels.fingerprint(mixed) != levels.fingerprint("pimc_ucb+pimc_race+ismcts")
    assert levels.fingerprint("hard+medium") != levels.fingerprint("hard/ms=50+medium")


def test_a_mixed_table_seats_its_levels_after_the_tested_seat_wherever_it_sits():
    job = Job("535", 4, "round", "hard", "pimc_race+pimc_ucb+ismcts", 0, 1, 38, None, 100, False)
    assert tournament.seat_levels(job, 0) == ["hard", "pimc_race", "pimc_ucb", "ismcts"]
    assert tournament.seat_levels(job, 2) == ["pimc_ucb", "ismcts", "hard", "pimc_race"]
    plain = Job("535", 3, "round", "hard", "medium", 0, 1, 38, None, 100, False)
    assert tournament.seat_levels(plain, 1) == ["medium", "hard", "medium"]


def test_a_mixed_table_with_more_levels_than_opponent_seats_is_refused_before_any_deal(tmp_path):
    log = tmp_path / "l.jsonl"
    run = subprocess.run([sys.executable, "bench/tournament.py", "--games", "535", "--players", "3",
                          "--deals", "1", "--matchups", "hard:pimc_race+pimc_ucb+ismcts", "--log", str(log)],
                         capture_output=True, text=True, cwd=pathlib.Path(__file__).parents[2])
    assert run.returncode == 2
    assert "pimc_race+pimc_ucb+ismcts: more levels than the 2 opponent seats" in run.stderr
    assert not log.exists()  # nothing was played
