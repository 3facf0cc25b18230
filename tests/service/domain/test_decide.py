"""The table domain, pure: ``decide`` and ``evolve`` without Redis.  Every refusal is here."""

from __future__ import annotations

import pytest

import engine
from service.domain.events import (
    BotsAdded,
    MatchFinished,
    MatchStarted,
    MovePlayed,
    PlayerJoined,
    PlayerLeft,
    RoomAttached,
    SeatTakenByBot,
    TableCancelled,
    TableCreated,
)
from service.domain.tables.decide import Refused, commitment, decide
from service.domain.tables.state import CANCELLED, FINISHED, LOBBY, RUNNING
from service.domain.tokens import issue
from tests.service.support import ANA, BEA, CAL, DAN, OTHER_GROUP, SECRET, cmd, context, private


def run(table, command, **kw):
    return decide(table, command, context(**kw))


def lobby(*players, game="cinquillo", **args):
    options = args.pop("options", {})
    t = run(None, cmd("new", actor=players[0], game=game, options=options, players=None)).after
    for p in players[1:]:
        t = run(t, cmd("join", actor=p)).after
    return t


def started(*players, game="cinquillo"):
    t = lobby(*players, game=game)
    return run(t, cmd("start", actor=players[0])).after


def refused(table, command, code, **kw):
    with pytest.raises(Refused) as e:
        run(table, command, **kw)
    assert e.value.code == code
    return e.value


def test_new_creates_a_lobby_with_its_creator_seated():
    d = run(None, cmd("new", game="cinquillo", options={"preset": "tradicional"}, players=None))
    assert [type(e) for e in d.events] == [TableCreated, PlayerJoined]
    assert d.after.status == LOBBY and d.after.max_seats == 6 and d.after.seat_of(ANA) == 0


def test_play_seats_ai_players_and_starts_at_once():
    d = run(None, cmd("play", room=private(ANA), game="535", options={}, players=3))
    assert [type(e) for e in d.events] == [TableCreated, PlayerJoined, BotsAdded, MatchStarted]
    assert d.after.status == RUNNING and [s.human for s in d.after.seats] == [True, False, False]


def test_match_start_commits_to_the_seed():
    t = started(ANA, BEA)
    assert t.commitment == commitment(t.seed) and len(t.commitment) == 64


@pytest.mark.parametrize("options", [{"colour": "red"}, {"turn": -1}, {"turn": True}])
def test_refusal_bad_options(options):
    refused(None, cmd("new", game="cinquillo", options=options, players=None), "bad_options")


def test_refusal_bad_player_count():
    refused(None, cmd("play", room=private(ANA), game="cinquillo", options={}, players=9), "bad_options")


def test_refusal_no_table():
    refused(None, cmd("join"), "no_table")


def test_refusal_table_exists():
    refused(lobby(ANA), cmd("new", game="cinquillo", options={}, players=None), "table_exists")


def test_join_from_another_room_attaches_it():
    d = run(lobby(ANA), cmd("join", actor=BEA, room=OTHER_GROUP))
    assert [type(e) for e in d.events] == [RoomAttached, PlayerJoined]
    assert len(d.after.rooms) == 2


def test_refusal_already_seated():
    refused(lobby(ANA), cmd("join", actor=ANA), "already_seated")


def test_refusal_table_full():
    t = lobby(ANA, BEA, CAL, DAN)
    refused(t, cmd("join", actor=ANA.model_copy(update={"user": "99"})), "table_full")
    refused(t, cmd("bots", n=1, level="easy"), "table_full")


def test_refusal_already_started():
    refused(started(ANA, BEA), cmd("join", actor=CAL), "already_started")


def test_refusal_not_creator():
    t = lobby(ANA, BEA)
    for name, args in (("start", {}), ("bots", {"n": 1}), ("cancel", {})):
        refused(t, cmd(name, actor=BEA, **args), "not_creator")


def test_refusal_player_count_at_start():
    refused(lobby(ANA), cmd("start"), "player_count")


def test_leave_in_the_lobby_frees_the_seat():
    d = run(lobby(ANA, BEA), cmd("leave", actor=BEA))
    assert isinstance(d.events[0], PlayerLeft) and len(d.after.seats) == 1


def test_the_last_person_leaving_the_lobby_closes_it():
    # Only AI players left (or nobody): nobody could start it, and retention can free a closed table.
    t = run(lobby(ANA), cmd("bots", n=2)).after
    d = run(t, cmd("leave", actor=ANA))
    assert [type(e) for e in d.events] == [PlayerLeft, TableCancelled]
    assert d.events[1].reason == "empty" and d.after.status == CANCELLED


def test_a_lobby_nobody_changes_for_lobby_idle_s_closes_at_its_tick():
    # Forgotten lobbies must not stay in Redis for ever (storage is bounded).
    t = lobby(ANA, BEA)  # every event at now=1000
    assert t.turn_since == 1000.0
    tick = cmd("tick", actor=None, version=t.version)
    assert run(t, tick, now=1000 + 3599, lobby_idle_s=3600).events == []  # not yet
    assert run(t, cmd("tick", actor=None, version=t.version - 1), now=9999, lobby_idle_s=3600).events == []
    assert run(t, tick, now=9999, lobby_idle_s=0).events == []  # 0: never
    d = run(t, tick, now=1000 + 3600, lobby_idle_s=3600)
    assert [type(e) for e in d.events] == [TableCancelled]
    assert d.events[0].reason == "idle" and d.after.status == CANCELLED
    # A join resets the clock: the lobby's last change is what counts.
    later = run(t, cmd("join", actor=CAL), now=3000).after
    assert run(later, cmd("tick", actor=None, version=later.version), now=1000 + 3600,
               lobby_idle_s=3600).events == []


def test_leave_in_a_match_hands_the_seat_to_an_ai_player():
    d = run(started(ANA, BEA), cmd("leave", actor=BEA))
    assert isinstance(d.events[0], SeatTakenByBot) and not d.after.seats[1].human


def test_refusal_not_seated():
    t = started(ANA, BEA)
    for name in ("leave", "hand", "move"):
        refused(t, cmd(name, actor=CAL, move="5o"), "not_seated")


def test_refusal_not_your_turn():
    t = started(ANA, BEA)
    other = [ANA, BEA][1 - t.to_move()]
    refused(t, cmd("move", actor=other, move="5o"), "not_your_turn")


def test_refusal_illegal_move_carries_the_engine_reason():
    t = started(ANA, BEA)
    mover = [ANA, BEA][t.to_move()]
    e = refused(t, cmd("move", actor=mover, move="pass"), "illegal")
    assert e.illegal  # the engine's code, translated as illegal.<code>


def test_a_legal_move_is_played():
    t = started(ANA, BEA)
    mover = [ANA, BEA][t.to_move()]
    d = run(t, cmd("move", actor=mover, move="5o"))
    assert d.events == [MovePlayed(seat=t.to_move(), move="5o", cause="player")]
    assert d.after.version == t.version + 1


def test_refusal_not_started():
    refused(lobby(ANA, BEA), cmd("move", move="5o"), "not_started")


def test_cancel_then_refusal_table_cancelled():
    t = run(lobby(ANA, BEA), cmd("cancel")).after
    assert t.status == CANCELLED
    refused(t, cmd("join", actor=CAL), "table_cancelled")


def _token(t, seat, move, version=None, table=None, secret=SECRET):
    return issue(secret, table=table or t.id, seat=seat, version=t.version if version is None else version,
                 move=move)


def test_an_action_token_plays_its_move():
    t = started(ANA, BEA)
    seat = t.to_move()
    d = run(t, cmd("action", actor=[ANA, BEA][seat], token=_token(t, seat, "5o")))
    assert d.events[0] == MovePlayed(seat=seat, move="5o", cause="player")


def test_refusal_stale_token():
    t = started(ANA, BEA)
    seat = t.to_move()
    refused(t, cmd("action", actor=[ANA, BEA][seat], token=_token(t, seat, "5o", version=1)), "stale_token")


def test_refusal_forged_token():
    t = started(ANA, BEA)
    seat = t.to_move()
    refused(t, cmd("action", actor=[ANA, BEA][seat], token=_token(t, seat, "5o", secret=b"evil")),
            "token_forged")
    other_table = _token(t, seat, "5o", table="zzz")
    refused(t, cmd("action", actor=[ANA, BEA][seat], token=other_table), "token_forged")


def test_refusal_malformed_token():
    refused(started(ANA, BEA), cmd("action", token="garbage"), "token_malformed")


def test_refusal_wrong_seat():
    t = started(ANA, BEA)
    seat = t.to_move()
    refused(t, cmd("action", actor=[ANA, BEA][1 - seat], token=_token(t, seat, "5o")), "wrong_seat")


def test_a_press_the_gateway_opened_carries_its_claims_and_decide_checks_them_still_hold():
    # The gateway opens a token once and sends its claims; decide opens nothing, it checks the
    # seat, the version and the turn against the table (the tests above: a command that carries
    # only its token, as written before, is opened here and checked the same way).
    t = started(ANA, BEA)
    seat = t.to_move()
    mover, other = [ANA, BEA][seat], [ANA, BEA][1 - seat]
    d = run(t, cmd("action", actor=mover, seat=seat, version=t.version, move="5o"))
    assert d.events[0] == MovePlayed(seat=seat, move="5o", cause="player")
    refused(t, cmd("action", actor=mover, seat=seat, version=1, move="5o"), "stale_token")
    refused(t, cmd("action", actor=other, seat=seat, version=t.version, move="5o"), "wrong_seat")
    refused(t, cmd("action", actor=other, seat=1 - seat, version=t.version, move="5o"), "not_your_turn")
    refused(t, cmd("action", actor=mover, seat="x", version=t.version, move="5o"), "bad_options")


def test_refusal_not_finished_for_replay():
    refused(started(ANA, BEA), cmd("replay"), "not_finished")


def test_refusal_unknown_command():
    refused(lobby(ANA), cmd("dance"), "unknown_command")


def test_ai_tick_plays_the_ai_seat_and_a_stale_tick_does_nothing():
    t = run(None, cmd("play", room=private(ANA), game="cinquillo", options={}, players=2)).after
    if t.seats[t.to_move()].human:
        t = run(t, cmd("move", move=engine.legal_moves(t.engine)[0])).after
    assert not t.seats[t.to_move()].human
    assert run(t, cmd("tick", actor=None, room=None, version=t.version - 1)).events == []
    d = run(t, cmd("tick", actor=None, room=None, version=t.version))
    assert d.events[0].cause == "bot"


def test_turn_timer_plays_for_the_person_and_hands_the_seat_over_after_k_timeouts():
    t = run(None, cmd("play", room=private(ANA), game="cinquillo", options={"turn": 30}, players=2),
            now=0).after
    now, timeouts = 0.0, 0
    while t.status == RUNNING and timeouts < 2:
        mover = t.to_move()
        if not t.seats[mover].human:
            t = run(t, cmd("tick", actor=None, room=None, version=t.version), now=now).after
            continue
        # Not yet due: nothing happens.
        early = cmd("tick", actor=None, room=None, version=t.version)
        assert run(t, early, now=t.turn_since + 29).events == []
        now = t.turn_since + 30
        d = run(t, cmd("tick", actor=None, room=None, version=t.version), now=now, timeouts_to_bot=2)
        assert d.events[0].cause == "timeout"
        timeouts += 1
        t = d.after
        if timeouts == 2 and t.status == RUNNING:
            assert isinstance(d.events[-1], SeatTakenByBot) and not t.seats[0].human


def test_a_whole_match_ends_with_match_finished():
    t = run(None, cmd("play", room=private(ANA), game="535", options={}, players=2)).after
    for _ in range(2000):
        if t.status != RUNNING:
            break
        mover = t.to_move()
        if t.seats[mover].human:
            t = run(t, cmd("move", move=engine.legal_moves(t.engine)[0])).after
        else:
            t = run(t, cmd("tick", actor=None, room=None, version=t.version)).after
    assert t.status == FINISHED and t.result == engine.result(t.engine)


def test_evolve_refuses_events_before_creation():
    from service.domain.tables.state import evolve

    with pytest.raises(ValueError):
        evolve(None, TableCancelled(by=ANA))
    with pytest.raises(ValueError):
        evolve(None, MatchFinished(result={}))


PEOPLE = [ANA, BEA, CAL, DAN]


def _random_command(draw, t):
    from hypothesis import strategies as st

    who = draw(st.sampled_from(PEOPLE))
    names = ["join", "leave", "bots", "start", "cancel", "move", "hand", "tick", "action"]
    name = draw(st.sampled_from(names))
    if name == "move":
        legal = engine.legal_moves(t.engine) if t is not None and t.engine is not None else ["5o"]
        return cmd("move", actor=who, move=draw(st.sampled_from([*legal, "pass", "5o", "play 7"])))
    if name == "bots":
        return cmd("bots", actor=who, n=draw(st.integers(1, 3)), level="easy")
    if name == "tick":
        return cmd("tick", actor=None, room=None, version=t.version if t else 0)
    if name == "action":
        seat = t.to_move() if t is not None and t.status == RUNNING else 0
        move = engine.legal_moves(t.engine)[0] if t is not None and t.status == RUNNING else "5o"
        return cmd("action", actor=who, token=issue(SECRET, table="tab1", seat=seat or 0,
                                                     version=t.version if t else 0, move=move))
    return cmd(name, actor=who)


def test_any_sequence_of_commands_keeps_the_table_consistent():
    """Property: whatever people send, a command is refused or its events fold to the table it
    returned, versions grow by the number of events, and no seat is held twice."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from service.domain.tables.state import evolve

    @settings(max_examples=60, deadline=None)
    @given(st.data())
    def check(data):
        t = run(None, cmd("new", game=data.draw(st.sampled_from(["cinquillo", "535"])), options={},
                          players=None))
        t = t.after
        for _ in range(data.draw(st.integers(1, 40))):
            c = _random_command(data.draw, t)
            try:
                d = run(t, c)
            except Refused:
                continue
            folded = t
            for e in d.events:
                folded = evolve(folded, e, at=1000.0)
            assert folded.version == t.version + len(d.events) == d.after.version
            assert folded.status == d.after.status and folded.seats == d.after.seats
            people = [s.player.user for s in d.after.seats if s.human and s.player]
            assert len(people) == len(set(people))
            t = d.after

    check()
