"""The tournament aggregate, pure: ``decide`` and ``evolve`` without Redis, as the tables' are
(``tests/service/domain/test_decide.py``).  Every refusal of a tournament command is here."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from service.domain.commands import TableCommand
from service.domain.identities import Player, Room
from service.domain.tables.decide import Refused
from service.domain.visitor import method_name
from service.tournaments.commands import Begin, Enter, Open, TableFinished, Unknown, request_of
from service.tournaments.decide import MAX_ENTRANTS, Context, decide
from service.tournaments.events import (
    EVENT_TYPES,
    EntrantJoined,
    EntrantLeft,
    RoundFinished,
    RoundStarted,
    TableScored,
    TournamentCancelled,
    TournamentFinished,
    TournamentOpened,
    TournamentVisitor,
)
from service.tournaments.state import CANCELLED, FINISHED, RUNNING, SIGNUP, Tournament, _Evolve, evolve
from tests.service.support import ANA, BEA, CAL, DAN, GROUP, OTHER_GROUP, SECRET, private

TID = "Ttest00001"


def ctx(**kw: Any) -> Context:
    n = iter(range(1000))
    return Context(now=kw.pop("now", 1000.0), new_seed=lambda: f"seed{next(n)}", secret=SECRET, **kw)


def tcmd(action: str | None, actor: Player | None = ANA, room: Room | None = GROUP, cid: str = "c1",
         **args: Any) -> TableCommand:
    if action is None:  # a table's report
        return TableCommand(id=cid, table=TID, name="table_finished", args=args, at=1000.0)
    return TableCommand(id=cid, table=TID, name="tournament", args={"action": action, **args}, actor=actor,
                        room=room, locale="en", at=1000.0, moderator=args.pop("moderator", False))


def opened(*people: Player, rounds: int = 2, seats: int = 4) -> Tournament:
    d = decide(None, tcmd("open", game="cinquillo", rounds=rounds, players=seats), ctx())
    t = d.after
    for i, p in enumerate(people[1:]):
        t = decide(t, tcmd("join", actor=p, cid=f"j{i}"), ctx()).after
    assert t is not None
    return t


def started(*people: Player, rounds: int = 2) -> tuple[Tournament, list[TableCommand]]:
    d = decide(opened(*people, rounds=rounds), tcmd("start", cid="s"), ctx())
    assert d.after is not None
    return d.after, d.tables


def refused(t: Tournament | None, command: TableCommand, code: str, **kw: Any) -> Refused:
    with pytest.raises(Refused) as e:
        decide(t, command, ctx(**kw))
    assert e.value.code == code
    return e.value


def report(t: Tournament, table: str, ranks: list[int]) -> TableCommand:
    return tcmd(None, cid=f"fin:{table}", table=table,
                record={"table": table, "seats": [{"rank": r} for r in ranks]})


def test_commands_are_typed_once_by_their_action():
    assert isinstance(request_of(tcmd("open", game="535", rounds=2)), Open)
    assert isinstance(request_of(tcmd("join")), Enter)
    assert isinstance(request_of(tcmd("start")), Begin)
    assert isinstance(request_of(report(opened(ANA), "tab1", [1, 2])), TableFinished)
    assert request_of(tcmd("dance")) == Unknown(action="dance")
    assert request_of(tcmd("open", rounds="many")).error == "open.rounds"


def test_open_signs_the_creator_up_and_posts_the_signup_with_its_buttons():
    d = decide(None, tcmd("open", game="535", rounds=3, options={"turn": 30}), ctx(bot_level="hard"))
    assert [type(e) for e in d.events] == [TournamentOpened, EntrantJoined]
    t = d.after
    assert t is not None and t.status == SIGNUP and t.entrants == (ANA,) and t.version == 2
    assert (t.game, t.rounds, t.seats, t.turn_seconds, t.level) == ("535", 3, 4, 30.0, "hard")
    (msg,) = d.messages
    assert msg["kind"] == "reply" and [a["move"] for a in msg["actions"]] == ["join", "leave", "start"]
    assert d.tables == []


@pytest.mark.parametrize(("room", "code"), [(private(ANA), "wrong_chat"), (None, "wrong_chat")])
def test_a_tournament_belongs_to_a_group(room, code):
    refused(None, tcmd("open", game="cinquillo", room=room), code)
    refused(opened(ANA), tcmd("join", actor=BEA, room=room), code)


def test_open_is_refused_while_the_group_shows_a_running_one_or_with_bad_options():
    current = opened(ANA, BEA)
    refused(None, tcmd("open", game="cinquillo"), "tournament_exists", current=current)
    refused(current, tcmd("open", game="cinquillo"), "tournament_exists")
    # a finished or cancelled one does not stand in the way
    over = decide(current, tcmd("cancel"), ctx()).after
    assert decide(None, tcmd("open", game="cinquillo"), ctx(current=over)).events
    refused(None, tcmd("open", game="cinquillo", options={"turn": -1}), "bad_options")
    refused(None, tcmd("open", game="cinquillo", options={"turn": True}), "bad_options")
    refused(None, tcmd("open", game="chess"), "bad_options")
    refused(None, tcmd("open", game="cinquillo", players=9), "bad_options")


def test_without_a_tournament_or_with_an_unknown_action_nothing_is_done():
    refused(None, tcmd("join", actor=BEA), "no_tournament_here")
    refused(opened(ANA), tcmd("dance"), "no_tournament_here")


def test_join_and_leave_while_signing_up():
    t = opened(ANA)
    d = decide(t, tcmd("join", actor=BEA), ctx())
    assert [type(e) for e in d.events] == [EntrantJoined] and d.after.entrants == (ANA, BEA)
    refused(d.after, tcmd("join", actor=BEA), "already_entered")
    d = decide(d.after, tcmd("leave", actor=BEA), ctx())
    assert [type(e) for e in d.events] == [EntrantLeft] and d.after.entrants == (ANA,)
    refused(d.after, tcmd("leave", actor=BEA), "not_entered")


def test_a_full_tournament_takes_nobody_else():
    t = opened(ANA)
    for i in range(MAX_ENTRANTS - 1):
        t = evolve(t, EntrantJoined(player=Player(platform="tg", user=f"u{i}"), locale="en"), tid=TID)
    refused(t, tcmd("join", actor=BEA), "tournament_full")


def test_only_the_creator_or_a_moderator_of_its_group_starts_or_cancels():
    t = opened(ANA, BEA)
    refused(t, tcmd("start", actor=BEA), "not_tournament_creator")
    refused(t, tcmd("cancel", actor=BEA), "not_tournament_creator")
    # a moderator of another group is no moderator here
    refused(t, tcmd("start", actor=BEA, room=OTHER_GROUP, moderator=True), "not_tournament_creator")
    d = decide(t, tcmd("start", actor=BEA, moderator=True), ctx())
    assert d.after.status == RUNNING


def test_start_needs_two_entrants_and_draws_round_one_on_one_committed_seed():
    refused(opened(ANA), tcmd("start"), "too_few_entrants")
    t, tables = started(ANA, BEA, CAL, DAN)
    assert t.status == RUNNING and t.round == 1
    assert t.commitment == hashlib.sha256(t.seed.encode()).hexdigest()
    (draw,) = t.tables()
    assert sorted(s for s in draw.seats if s is not None) == [0, 1, 2, 3]
    (tc,) = tables
    assert (tc.id, tc.table, tc.name) == (f"tt:{draw.table}", draw.table, "tournament_table")
    assert tc.args["seed"] == t.seed and tc.args["round"] == 1
    # the round's message shows the commitment, never the seed
    assert t.seed not in str(decide(opened(ANA, BEA), tcmd("start"), ctx()).messages)


def test_no_signup_once_started_and_no_second_start():
    t, _ = started(ANA, BEA)
    refused(t, tcmd("join", actor=CAL), "tournament_started")
    refused(t, tcmd("leave", actor=BEA), "tournament_started")
    refused(t, tcmd("start"), "tournament_started")


def test_cancel_ends_it_and_then_nothing_more_is_accepted():
    d = decide(opened(ANA, BEA), tcmd("cancel"), ctx())
    assert [type(e) for e in d.events] == [TournamentCancelled] and d.after.status == CANCELLED
    refused(d.after, tcmd("cancel"), "tournament_over")
    refused(d.after, tcmd("join", actor=CAL), "tournament_over")


def test_reports_score_the_tables_then_the_next_round_then_the_podium():
    t, _ = started(ANA, BEA, CAL, rounds=2)
    (draw,) = t.tables()
    ranks = [1 if s == 2 else 2 if s is not None else 4 for s in draw.seats]  # Cal wins, the AI last
    d = decide(t, report(t, draw.table, ranks), ctx())
    assert [type(e) for e in d.events] == [TableScored, RoundFinished, RoundStarted]
    t = d.after
    assert t.round == 2 and t.order()[0] == 2 and len(d.tables) == 1
    # A copy of the report, or a report of a table of another round, does nothing.
    again = decide(t, report(t, draw.table, ranks), ctx())
    assert again.events == [] and again.messages == []
    (draw2,) = t.tables()
    d = decide(t, report(t, draw2.table, [1 if s == 2 else 3 for s in draw2.seats]), ctx())
    assert [type(e) for e in d.events] == [TableScored, RoundFinished, TournamentFinished]
    assert d.after.status == FINISHED and d.after.podium[0] == 2 and d.tables == []


def test_a_report_of_another_seat_count_is_a_bug_not_a_score():
    t, _ = started(ANA, BEA)
    (draw,) = t.tables()
    with pytest.raises(ValueError, match="reported 1 seats"):
        decide(t, report(t, draw.table, [1]), ctx())


def test_a_report_without_a_tournament_does_nothing():
    d = decide(None, report(opened(ANA), "tab1", [1, 2]), ctx())
    assert d.after is None and d.events == [] and d.messages == []


def test_every_tournament_event_has_its_visitor_method_and_the_fold_handles_every_one():
    names = {method_name(cls) for cls in EVENT_TYPES.values()}
    declared = {n for n, v in vars(TournamentVisitor).items() if callable(v)}
    assert declared == names
    assert {n for n in names if getattr(_Evolve, n) is getattr(TournamentVisitor, n)} == set()
    with pytest.raises(ValueError, match="before TournamentOpened"):
        evolve(None, EntrantJoined(player=BEA, locale="en"), tid=TID)
