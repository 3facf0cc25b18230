"""Event envelopes: round trips, and old schema versions still load (upcasting)."""

from __future__ import annotations

import json

import engine
from service.domain.events import MovePlayed, PlayerJoined, TableCreated, decode, encode
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
    from service.domain.tables.notify import _plain

    for ev in (MovePlayed(seat=2, move="play 7 7", cause="timeout"),
               MatchStarted(seed="s", commitment="c", players=3)):
        assert type(ev) in _FLAT
        assert json.loads(encode(ev, at=1.0, cmd="c"))["data"] == ev.model_dump(mode="json")
    for m in (ANA, GROUP):
        assert _plain(m) == m.model_dump() and _plain(m) is not m.__dict__
