"""Event envelopes: round trips, and old schema versions still load (upcasting)."""

from __future__ import annotations

import json

import engine
from service.domain.events import MovePlayed, PlayerJoined, TableCreated, decode, encode, envelope
from service.domain.tables.decide import decide
from service.domain.tables.state import evolve, from_snapshot, to_snapshot
from tests.service.support import ANA, GROUP, cmd, context, private


def test_every_event_round_trips_through_its_envelope():
    ev = TableCreated(game="cinquillo", options={"preset": "clasico"}, max_seats=4, creator=ANA, room=GROUP,
                      locale="es", turn_seconds=30)
    stored = decode(encode(ev, at=12.5, cmd="c1"))
    assert (stored.event, stored.at, stored.cmd) == (ev, 12.5, "c1")


def test_envelopes_carry_the_schema_version():
    env = json.loads(encode(PlayerJoined(seat=0, player=ANA, locale="en"), at=0, cmd="c"))
    assert env["type"] == "PlayerJoined" and env["v"] == 2


def test_a_v1_player_joined_is_upcast_to_the_current_model():
    old = json.dumps({"type": "PlayerJoined", "v": 1, "at": 1.0, "cmd": "c0",
                      "data": {"seat": 1, "platform": "tg", "user": "7", "name": "Eva"}})
    ev = decode(old).event
    assert isinstance(ev, PlayerJoined)
    assert (ev.seat, ev.player.user, ev.player.name, ev.locale) == (1, "7", "Eva", "es")


def test_an_envelope_without_a_version_is_read_as_v1():
    ev = decode(json.dumps({"type": "MovePlayed", "data": {"seat": 0, "move": "5o", "cause": "bot"}})).event
    assert ev == MovePlayed(seat=0, move="5o", cause="bot")


def test_a_table_snapshot_restores_an_equal_table():
    t = decide(None, cmd("play", room=private(ANA), game="cinquillo", options={}, players=4), context()).after
    t = evolve(t, MovePlayed(seat=t.to_move(), move=engine.legal_moves(t.engine)[0], cause="player"))
    back = from_snapshot(json.loads(json.dumps(to_snapshot(t))))
    assert engine.snapshot(back.engine) == engine.snapshot(t.engine)
    assert back.seats == t.seats and back.version == t.version and back.rooms == t.rooms


def test_the_messages_notify_writes_are_valid_outbox_messages():
    from service.domain.tables.decide import Refused
    from service.domain.tables.notify import messages_for, refusal_messages
    from service.platform.outbox import Message

    c = cmd("play", room=private(ANA), game="535", options={}, players=2)
    d = decide(None, c, context())
    wires = messages_for(d, c, b"k") + refusal_messages(c, Refused("not_your_turn", table="t"), d.after)
    msgs = [Message.model_validate(json.loads(json.dumps(w))).rendered() for w in wires]
    assert {m.kind for m in msgs} >= {"table", "hand", "reply"}
    assert all(m.text for m in msgs)
    assert any(m.actions and all(a.label and a.token for a in m.actions) for m in msgs)


def test_the_wire_notify_writes_is_the_message_model_field_for_field():
    # One model of the message (service.domain.messages): the worker's dicts carry only its fields,
    # and reading one as a Message and writing back the fields it had gives the same JSON.
    from dataclasses import replace

    from service.domain.messages import Message, wire_json
    from service.domain.tables.current import current_messages
    from service.domain.tables.decide import Refused
    from service.domain.tables.notify import messages_for, refusal_messages, replay_messages
    from service.domain.tables.state import FINISHED

    c = cmd("play", room=private(ANA), game="cinquillo", options={}, players=2)
    d = decide(None, c, context())
    t = d.after
    over = replace(t, status=FINISHED, result={"winners": [0]})
    wires = (messages_for(d, c, b"k") + refusal_messages(c, Refused("not_your_turn", table="t"), t)
             + replay_messages(c, t, ["x"]) + current_messages(over, ANA, b"k", "en")
             + current_messages(t, t.seats[t.to_move()].player, b"k", "en"))
    assert any(w.get("seats") for w in wires) and any(w["actions"] for w in wires)
    assert any(w["to"].get("person") for w in wires)
    for w in wires:
        assert set(w) <= set(Message.model_fields) - {"link"}
        raw = wire_json(w)
        back = Message.model_validate_json(raw).model_dump_json(exclude_unset=True)
        assert json.loads(back) == json.loads(raw)


def test_a_fold_from_a_cached_table_does_not_change_the_cached_table():
    from service.domain.events import MovePlayed as Moved
    from service.store.repository import fold

    t = decide(None, cmd("play", room=private(ANA), game="cinquillo", options={}, players=2), context()).after
    before = engine.snapshot(t.engine)
    played = Moved(seat=t.to_move(), move=engine.legal_moves(t.engine)[0], cause="player")
    move = encode(played, at=1, cmd="x")
    after = fold("x", t, [move])
    assert engine.snapshot(t.engine) == before  # the cached copy is untouched
    assert after.version == t.version + 1 and engine.snapshot(after.engine) != before


def test_the_fast_encodings_equal_pydantics():
    # events.encode writes the flat events' __dict__, notify the rooms' and players' __dict__:
    # both must be what model_dump gives.
    from service.domain.events import _FLAT, MatchStarted
    from service.domain.messages import wire_of as _plain

    for ev in (MatchStarted(seed="s", commitment="c", players=3),):
        assert type(ev) in _FLAT
        assert json.loads(encode(ev, at=1.0, cmd="c"))["data"] == ev.model_dump(mode="json")
    # a move is written by position (compact): spelled out, it is pydantic's dump
    move = MovePlayed(seat=2, move="play 7 7", cause="timeout")
    assert envelope(json.loads(encode(move, at=1.0, cmd="c")))["data"] == move.model_dump(mode="json")
    for m in (ANA, GROUP):
        assert _plain(m) == m.model_dump() and _plain(m) is not m.__dict__


def test_every_event_type_has_its_visitor_method_and_the_fold_handles_every_one():
    # One dispatch (service.domain.visitor) for the fold and every projection: a new event type
    # needs a method there, and the fold may leave none to ``other`` (which raises).
    from service.domain.events import EVENT_TYPES
    from service.domain.tables.state import _Evolve
    from service.domain.visitor import EventVisitor, method_name

    names = {method_name(cls) for cls in EVENT_TYPES.values()}
    assert len(names) == len(EVENT_TYPES)
    assert all(callable(getattr(EventVisitor, n, None)) for n in names)
    assert {n for n in names if getattr(_Evolve, n) is getattr(EventVisitor, n)} == set()
    declared = {n for n, v in vars(EventVisitor).items() if callable(v)} - {"visit", "other"}
    assert declared == names


def test_a_move_is_written_compactly_and_reads_back_as_a_move():
    """Issue 33: a move need not cost 177 B: ``{"M": [seat, move, cause], "at", "cmd"}``."""
    move = MovePlayed(seat=3, move="10c", cause="player")
    raw = encode(move, at=1765000000.123456, cmd="tg:12345:67890")
    env = json.loads(raw)
    assert env == {"M": [3, "10c", "player"], "at": 1765000000.123456, "cmd": "tg:12345:67890"}
    old = json.dumps({"type": "MovePlayed", "v": 1, "at": 1765000000.123456, "cmd": "tg:12345:67890",
                      "data": {"seat": 3, "move": "10c", "cause": "player"}}, separators=(",", ":"))
    assert len(raw) < len(old) - 40
    stored = decode(raw)
    assert (stored.event, stored.at, stored.cmd) == (move, 1765000000.123456, "tg:12345:67890")
    # readers of raw events see the envelope either way; an envelope is left as it is
    assert envelope(env) == json.loads(old) and envelope(json.loads(old)) == json.loads(old)


def test_a_table_of_old_and_compact_moves_folds_to_the_same_table():
    """Events written before the compact form (envelopes) still load, mixed with new ones, and the
    fold's fast path and decode agree."""
    from service.store.repository import fold

    c = cmd("play", room=private(ANA), game="cinquillo", options={}, players=4)
    d = decide(None, c, context())
    raws = [encode(e, at=1.0, cmd=c.id) for e in d.events]
    state = engine.restore(engine.snapshot(d.after.engine))
    olds, news = list(raws), list(raws)
    for i in range(30):
        if engine.to_move(state) is None:
            break
        seat, mv = engine.to_move(state), engine.legal_moves(state)[0]
        state = engine.play(state, mv)
        ev = MovePlayed(seat=seat, move=mv, cause="bot")
        new = encode(ev, at=2.0 + i, cmd=f"tick:{i}")
        old = json.dumps(envelope(json.loads(new)))
        assert "type" in json.loads(old) and "M" in json.loads(new)
        news.append(new)
        olds.append(old if i % 2 else new)  # every other move in the old envelope
    a, b = fold("t", None, news), fold("t", None, olds)
    assert a.version == b.version == len(news)
    assert engine.snapshot(a.engine) == engine.snapshot(b.engine) == engine.snapshot(state)
    assert a.turn_since == b.turn_since
    assert [decode(r).event for r in news] == [decode(r).event for r in olds]


def test_a_move_event_is_validated_once_and_shared_by_the_decide_and_the_fold():
    """Issue 33: no pydantic model built per move on the worker's path: each distinct (seat, move,
    cause) is validated once, then the decide and a load's fold share that frozen event; a bad value
    is still refused (pydantic's validation), and is never cached."""
    import pydantic
    import pytest

    from service.domain.events import move_played
    from service.store.repository import fold

    first = move_played(2, "5o", "player")
    assert first == MovePlayed(seat=2, move="5o", cause="player")
    assert move_played(2, "5o", "player") is first
    assert move_played(2, "5o", "bot") is not first and move_played(2, "5o", "bot").cause == "bot"
    for bad in ((2, "5o", "cheat"), ("two", "5o", "player"), (2, 5, "player")):
        with pytest.raises(pydantic.ValidationError):
            move_played(*bad)
    with pytest.raises(pydantic.ValidationError):
        move_played(2, "5o", "cheat")  # refused again: nothing bad was kept
    # the decide's move is the shared one
    c = cmd("play", room=private(ANA), game="cinquillo", options={}, players=2)
    d = decide(None, c, context())
    t = d.after
    seat, mv = engine.to_move(t.engine), engine.legal_moves(t.engine)[0]
    played = decide(t, cmd("move", room=private(ANA), move=mv, table=t.id), context())
    [event] = [e for e in played.events if isinstance(e, MovePlayed)]
    assert event is move_played(seat, mv, "player")
    # and so is a load's: the fold of the stored events ends on the same table
    raws = [encode(e, at=1.0, cmd=c.id) for e in [*d.events, *played.events]]
    assert engine.snapshot(fold(t.id, None, raws).engine) == engine.snapshot(played.after.engine)
