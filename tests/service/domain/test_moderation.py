"""Moderators (group admins), /kick, /set (an open lobby's options) and the deep link of a seated
player, pure (``decide``, ``evolve``, the protocol) then through the pipeline: every refusal leaves
the table's stream untouched and is answered in the sender's language with its code."""

from __future__ import annotations

import pytest

from service.domain.events import OptionsChanged, PlayerKicked, decode, encode
from service.domain.identities import Room
from service.domain.tables.decide import Refused, decide
from service.domain.tables.state import FINISHED, LOBBY, RUNNING, from_snapshot, to_snapshot
from service.protocol.i18n import translate
from service.protocol.parse import ProtocolError, parse_command
from tests.service.support import (
    ANA,
    BEA,
    CAL,
    DAN,
    GROUP,
    OTHER_GROUP,
    Harness,
    cmd,
    context,
    private,
    to,
)

THIRD_GROUP = Room(platform="tg", chat="-300", kind="group")


def run(table, command, **kw):
    return decide(table, command, context(**kw))


def mod(command):
    """The same command, sent by someone the platform says moderates the room."""
    return command.replace(moderator=True)


def lobby(*players, game="cinquillo", options=None, seats=None):
    t = run(None, cmd("new", actor=players[0], game=game, options=options or {}, players=seats)).after
    for p in players[1:]:
        t = run(t, cmd("join", actor=p)).after
    return t


def started(*players):
    return run(lobby(*players), cmd("start", actor=players[0])).after


def refused(table, command, code):
    with pytest.raises(Refused) as e:
        run(table, command)
    assert e.value.code == code
    return e.value


# -- the protocol ---------------------------------------------------------------------------------

def test_kick_and_set_parse_with_their_spanish_aliases():
    assert parse_command("/kick 3").args == {"seat": 3}
    assert parse_command("/expulsar 2").name == "kick"
    assert parse_command("/set players=3 chips turn=30").args == {
        "options": {"chips": True, "turn": 30}, "players": 3}
    assert parse_command("/opciones pago").name == "set"


@pytest.mark.parametrize(("text", "code"), [
    ("/kick", "missing_argument"), ("/kick two", "bad_argument"), ("/kick 1 2", "unexpected_argument"),
    ("/set", "missing_argument"), ("/set colour=@", "bad_option"), ("/opciones chips chips", "bad_option"),
])
def test_kick_and_set_syntax_errors(text, code):
    with pytest.raises(ProtocolError) as e:
        parse_command(text)
    assert e.value.code == code


# -- moderators -----------------------------------------------------------------------------------

def test_a_moderator_may_do_what_the_creator_does():
    t = lobby(ANA, BEA)
    assert run(t, mod(cmd("bots", actor=CAL, n=1, level="easy"))).events
    assert run(t, mod(cmd("set", actor=CAL, options={"chips": True}, players=None))).events
    assert run(t, mod(cmd("kick", actor=CAL, seat=2))).events
    assert run(t, mod(cmd("start", actor=CAL))).after.status == RUNNING
    assert run(t, mod(cmd("cancel", actor=CAL))).events


def test_refusal_moderator_of_another_room_or_of_a_private_chat():
    t = lobby(ANA, BEA)
    refused(t, mod(cmd("start", actor=CAL, room=OTHER_GROUP)), "not_creator")
    refused(t, mod(cmd("start", actor=CAL, room=private(CAL))), "not_creator")


def test_refusal_not_creator_for_kick_and_set():
    t = lobby(ANA, BEA)
    refused(t, cmd("kick", actor=BEA, seat=1), "not_creator")
    refused(t, cmd("set", actor=BEA, options={"chips": True}, players=None), "not_creator")


# -- /kick ----------------------------------------------------------------------------------------

def test_kick_in_the_lobby_frees_the_seat():
    t = lobby(ANA, BEA, CAL)
    d = run(t, cmd("kick", seat=2))
    assert d.events == [PlayerKicked(seat=1, player=BEA, by=ANA)]
    assert d.after.seat_of(BEA) is None and d.after.seat_of(CAL) == 1 and len(d.after.seats) == 2
    t = run(t, cmd("bots", n=1, level="easy")).after
    d = run(t, cmd("kick", seat=4))  # an AI player's seat in the lobby can be freed too
    assert d.events[0].player is None and len(d.after.seats) == 3


def test_kick_in_a_match_gives_the_seat_to_an_ai_player():
    t = started(ANA, BEA)
    d = run(t, cmd("kick", seat=2))
    [e] = d.events
    assert isinstance(e, PlayerKicked) and e.level == "easy" and e.player == BEA
    assert d.after.status == RUNNING and not d.after.seats[1].human and d.after.seat_of(BEA) is None


@pytest.mark.parametrize("seat", [0, 3, 9])
def test_refusal_bad_seat(seat):
    refused(lobby(ANA, BEA), cmd("kick", seat=seat), "bad_seat")


def test_refusal_bad_seat_an_ai_seat_in_a_match():
    t = run(started(ANA, BEA), cmd("kick", seat=2)).after
    refused(t, cmd("kick", seat=2), "bad_seat")


def test_refusal_kick_when_the_table_is_over():
    t = run(lobby(ANA, BEA), cmd("cancel")).after
    refused(t, cmd("kick", seat=2), "table_cancelled")
    t = run(started(ANA, BEA), cmd("leave", actor=BEA)).after
    while t.status == RUNNING:
        t = run(t, cmd("tick", actor=None, version=t.version)).after if not t.seats[t.to_move()].human \
            else run(t, cmd("move", move=_any_move(t))).after
    assert t.status == FINISHED
    refused(t, cmd("kick", seat=2), "table_finished")


def _any_move(t):
    import engine
    return engine.legal_moves(t.engine)[0]


# -- /set -----------------------------------------------------------------------------------------

def test_set_changes_the_options_of_the_lobby():
    t = lobby(ANA, BEA)
    d = run(t, cmd("set", options={"preset": "tradicional", "turn": 30}, players=None))
    [e] = d.events
    assert isinstance(e, OptionsChanged) and e.options == {"preset": "tradicional"}
    assert d.after.options == {"preset": "tradicional"} and d.after.turn_seconds == 30.0
    assert d.after.max_seats == 4  # the seats stay as they were while the options allow them
    d = run(d.after, cmd("set", options={}, players=6))
    assert d.after.max_seats == 6 and d.after.options == {"preset": "tradicional"}
    d = run(d.after, cmd("set", options={"preset": "clasico"}, players=None))
    assert d.after.max_seats == 4  # more than the new options allow: the most they allow


@pytest.mark.parametrize("options", [{"colour": "red"}, {"turn": -5}, {"turn": True}])
def test_refusal_set_bad_options(options):
    refused(lobby(ANA, BEA), cmd("set", options=options, players=None), "bad_options")


def test_refusal_set_bad_player_count():
    refused(lobby(ANA, BEA), cmd("set", options={}, players=12), "bad_options")


def test_refusal_set_fewer_seats_than_seated():
    refused(lobby(ANA, BEA, CAL), cmd("set", options={}, players=2), "seats_taken")


def test_refusal_set_not_in_the_lobby():
    refused(started(ANA, BEA), cmd("set", options={"chips": True}, players=None), "already_started")


# -- the deep link (/start <table>: a join) of a seated player ------------------------------------

def test_a_seated_players_deep_link_is_their_hand():
    t = started(ANA, BEA)
    assert run(t, cmd("join", actor=BEA, room=private(BEA), link=True)).events == []
    t = lobby(ANA, BEA)
    assert run(t, cmd("join", actor=BEA, room=private(BEA), link=True)).events == []
    # Without the link, a second /join is still refused; a link of someone not seated, in a match,
    # is /hand for them: not seated.
    refused(t, cmd("join", actor=BEA), "already_seated")
    refused(started(ANA, BEA), cmd("join", actor=CAL, room=private(CAL), link=True), "not_seated")


def test_new_events_roundtrip_and_snapshot():
    t = run(lobby(ANA, BEA, CAL), cmd("kick", seat=3)).after
    t = run(t, cmd("set", options={"chips": True}, players=4)).after
    for e in (PlayerKicked(seat=1, player=BEA, by=ANA, level="easy"),
              OptionsChanged(options={"chips": True}, max_seats=4, turn_seconds=0.0, by=ANA)):
        assert decode(encode(e, at=1.0, cmd="c")).event == e
    assert from_snapshot(to_snapshot(t)) == t and t.status == LOBBY


# -- through the pipeline -------------------------------------------------------------------------

@pytest.fixture
def h(any_redis):
    return Harness(any_redis)


def _reply(msgs, locale):
    [m] = [m for m in msgs if m.kind == "reply"]
    assert m.locale == locale
    return m


async def _refused(h, table, who, text, code, locale="es", **params):
    """``text`` is refused with ``code``, in ``locale``, and the table's stream is untouched."""
    before = await h.events(table)
    msgs = await h.send(who, text, language_code=locale)
    assert await h.events(table) == before, text
    m = _reply(msgs, locale)
    assert m.code == code, text
    assert m.text == translate(locale, f"refusal.{code}", table=table, **params), text


async def test_refusals_of_kick_and_set_through_the_pipeline(h):
    table = await h.lobby(ANA, BEA, CAL)
    await _refused(h, table, BEA, "/expulsar 1", "not_creator")
    await _refused(h, table, BEA, "/opciones pago", "not_creator", locale="en")
    await _refused(h, table, ANA, "/kick 7", "bad_seat", seat=7, seats=3)
    await _refused(h, table, ANA, "/set players=2", "seats_taken", seated=3, seats=2)
    await h.send(ANA, "/start")
    await _refused(h, table, ANA, "/set chips", "already_started")


async def test_bad_options_reply_names_the_engines_reason(h):
    table = await h.lobby(ANA, BEA)
    before = await h.events(table)
    msgs = await h.send(ANA, "/set colour=red", language_code="es")
    assert await h.events(table) == before
    m = _reply(msgs, "es")
    start = translate("es", "refusal.bad_options", reason="")[:10]
    assert m.code == "bad_options" and m.text.startswith(start)


async def test_a_group_admin_starts_and_kicks_through_the_gateway(h, any_redis):
    table = await h.lobby(ANA, BEA, CAL)
    msgs = await h.send(DAN, "/kick 2", moderator=True)
    assert translate("en", "table.kicked", by="Dan", name="Bea") in to(msgs, GROUP)[0].text
    assert not await any_redis.smembers(h.keys.player_tables(BEA.platform, BEA.user))
    msgs = await h.send(DAN, "/set players=3 turn=45", moderator=True)
    assert "45" in to(msgs, GROUP)[0].text
    msgs = await h.send(DAN, "/start", moderator=True)
    assert any(m.kind == "hand" for m in to(msgs, CAL))
    msgs = await h.send(ANA, "/kick 2")  # Cal's seat goes to an AI player
    assert translate("en", "table.kicked_bot", by="Ana", name="Cal") in to(msgs, GROUP)[0].text
    assert table


async def test_the_deep_link_of_a_seated_player_sends_the_hand(h):
    table = await h.lobby(ANA, BEA)
    msgs = await h.send(BEA, f"/start {table}", room=private(BEA))
    assert _reply(msgs, "en").text == translate("en", "table.seated_waiting", table=table)
    await h.send(ANA, "/start")
    before = await h.events(table)
    msgs = await h.send(BEA, f"/start {table}", room=private(BEA))
    assert await h.events(table) == before
    [m] = to(msgs, BEA)
    assert m.kind == "hand" and m.view["seat"] == 1
    await _refused(h, table, CAL, f"/start {table}", "not_seated")


async def test_hand_in_a_private_chat_finds_the_running_table_the_player_sits_at(h):
    # Ana's private chat shows her own finished match; she plays in a group now.
    await h.send(ANA, "/play cinquillo 2", room=private(ANA))
    await h.send(ANA, "/leave", room=private(ANA))
    t1 = await h.lobby(ANA, BEA)
    await h.send(ANA, "/start")
    msgs = await h.send(ANA, "/hand", room=private(ANA))
    [m] = to(msgs, ANA)
    assert m.kind == "hand" and m.table == t1
    # A second running table, more recent: /hand shows that one.
    h.clock.now += 10
    await h.send(ANA, "/new 535", room=OTHER_GROUP)
    t2 = await h.table_of(OTHER_GROUP)
    await h.send(CAL, "/join", room=OTHER_GROUP)
    await h.send(ANA, "/start", room=OTHER_GROUP)
    msgs = await h.send(ANA, "/hand", room=private(ANA))
    [m] = to(msgs, ANA)
    assert m.kind == "hand" and m.table == t2
    # A lobby is not a running table: the running one is still found.
    h.clock.now += 10
    await h.send(ANA, "/new cinquillo", room=THIRD_GROUP)
    msgs = await h.send(ANA, "/hand", room=private(ANA))
    assert [m.table for m in to(msgs, ANA)] == [t2]


async def test_messages_carry_the_turn_deadline(any_redis):
    h = Harness(any_redis, turn_seconds=30)
    table = await h.lobby(ANA, BEA)
    msgs = await h.send(ANA, "/start")
    assert msgs and all(m.deadline == h.clock.now + 30 for m in msgs if m.table == table)
    h.clock.now += 5
    hand = [m for m in msgs if m.kind == "hand" and m.actions][-1]
    mover = ANA if hand.to.player.same(ANA) else BEA
    msgs = await h.send(mover, token=hand.actions[0].token)
    assert {m.deadline for m in msgs} == {h.clock.now + 30}
    lobby_msgs = await h.send(CAL, "/new 535", room=OTHER_GROUP)
    assert all(m.deadline is None for m in lobby_msgs)


async def test_refusal_replies_carry_their_code(h):
    table = await h.lobby(ANA, BEA)
    await h.send(ANA, "/start")
    hand = h.last_hand()
    mover = ANA if hand.to.player.same(ANA) else BEA
    await h.send(mover, token=hand.actions[0].token)
    msgs = await h.send(mover, token=hand.actions[0].token, language_code="es")
    assert _reply(msgs, "es").code == "stale_token"
    nxt = h.last_hand()
    waiting = BEA if nxt.to.player.same(ANA) else ANA
    assert _reply(await h.send(waiting, "/move 5o"), "en").code == "not_your_turn"
    assert _reply(await h.send(ANA, token="garbage"), "en").code == "token_malformed"
    assert _reply(await h.send(ANA, "/dance"), "en").code == "unknown_command"
    assert table


async def test_reindex_leaves_out_a_player_kicked_from_a_match(h, any_redis):
    from service.write.reindex import reindex

    table = await h.lobby(ANA, BEA, CAL)
    await h.send(ANA, "/start")
    await h.send(ANA, "/kick 2")
    for p in (ANA, BEA, CAL):
        await any_redis.delete(h.keys.player_tables(p.platform, p.user))
    await reindex(any_redis, h.keys)
    assert not await any_redis.smembers(h.keys.player_tables(BEA.platform, BEA.user))
    assert await any_redis.smembers(h.keys.player_tables(CAL.platform, CAL.user)) == {table.encode()}
