"""The Matrix bridge's decisions, against fakes that implement its two interfaces (the homeserver and
cinq's webhook), and its state across a reopen.  The real homeserver is in test_matrix_e2e.py."""

from __future__ import annotations

import asyncio

import pytest

from bridges.matrix import render
from bridges.matrix.core import Bridge
from bridges.matrix.state import State
from tests.bridges.matrix_fakes import FakeCinq, FakeMatrix, bridge_world, msg


@pytest.fixture
def world(tmp_path):
    with bridge_world(tmp_path, "es") as w:
        yield w


HAND = {"user": {"id": "@ana:hs"}}


async def test_a_table_message_is_posted_once_then_edited_in_place(world):
    b, m, _ = world
    await b.on_callback(msg(1, text="Ana takes seat 1"))
    await b.on_callback(msg(2, text="Bea takes seat 2"))
    (room1, first), (room2, edit) = m.sent
    assert room1 == room2 == "!group" and first["body"] == "Ana takes seat 1"
    assert edit["m.relates_to"] == {"rel_type": "m.replace", "event_id": "$e1"}
    assert edit["m.new_content"]["body"] == "Bea takes seat 2" and edit["body"].startswith("* ")
    assert b.sent == {"send": 1, "edit": 1}


async def test_replies_and_other_tables_are_new_messages(world):
    b, m, _ = world
    await b.on_callback(msg(1))
    await b.on_callback(msg(2, kind="reply", text="That is not your turn."))
    await b.on_callback(msg(3, table="t2"))
    assert all("m.relates_to" not in c for _, c in m.sent) and len(m.sent) == 3


async def test_a_repeated_callback_is_shown_once(world):
    b, m, _ = world
    await b.on_callback(msg(1))
    await b.on_callback(msg(1))
    assert len(m.sent) == 1


async def test_a_private_message_goes_to_the_persons_dm_created_once(world):
    b, m, _ = world
    await asyncio.gather(
        b.on_callback(msg(1, to=HAND, kind="hand")), b.on_callback(msg(2, to=HAND, kind="reply"))
    )
    assert m.dms == ["@ana:hs"]
    assert {room for room, _ in m.sent} == {"!dm-@ana:hs"}  # G-1: never the group
    assert b.state.room_kind("!dm-@ana:hs") == "private"


async def test_a_hand_asking_for_a_move_is_posted_anew_and_numbered(world):
    b, m, _ = world
    await b.on_callback(msg(1, to=HAND, kind="hand", text="Not your turn."))
    await b.on_callback(
        msg(
            2,
            to=HAND,
            kind="hand",
            text="Your turn.",
            buttons=[("5 of coins", "tok5"), ("King of <cups>", "tok12")],
        )
    )
    content = m.sent[-1][1]
    assert "m.relates_to" not in content
    assert content["body"].endswith(
        "1. 5 of coins\n2. King of <cups>\nAnswer with the number of your choice."
    )
    assert (
        "<li>5 🪙 coins</li>" in content["formatted_body"]
        and "King of &lt;🏆 cups&gt;" in content["formatted_body"]
    )


async def test_a_number_answers_the_rooms_choices_with_their_token(world):
    b, _, c = world
    await b.on_callback(
        msg(1, to=HAND, kind="hand", buttons=[("5 of coins", "tok5"), ("6 of coins", "tok6")])
    )
    await b.on_text("!dm-@ana:hs", "@ana:hs", "Ana", " 2 ", "$ev1")
    assert c.events["$ev1"] == {
        "type": "action",
        "chat": {"id": "!dm-@ana:hs", "kind": "private"},
        "user": {"id": "@ana:hs", "name": "Ana", "locale": "es"},
        "token": "tok6",
        "message": "$e1",  # the hand whose choice it is
    }


@pytest.mark.parametrize(
    ("locale", "line"),
    [
        ("en", "There is no option 3: answer with a number from 1 to 2."),
        ("es", "No hay ninguna opción 3: responde con un número del 1 al 2."),
    ],
)
async def test_a_number_out_of_range_is_refused_in_the_rooms_language_and_sends_nothing(world, locale, line):
    b, m, c = world
    await b.on_callback(msg(1, to=HAND, kind="hand", locale=locale, buttons=[("a", "t1"), ("b", "t2")]))
    await b.on_text("!dm-@ana:hs", "@ana:hs", "Ana", "3", "$ev1")
    assert m.sent[-1] == ("!dm-@ana:hs", {"msgtype": "m.notice", "body": line})
    assert c.events == {}


@pytest.mark.parametrize(
    ("locale", "line"),
    [
        ("en", "That choice is from an earlier turn: it no longer counts. See the latest message's choices."),
        ("es", "Esa opción era de un turno anterior: ya no vale. Mira las opciones del último mensaje."),
    ],
)
async def test_a_number_for_a_withdrawn_choice_is_answered_as_an_earlier_turns(world, locale, line):
    # Issue 34 (13): the number used to reach cinq as chat text, answered "that is not a command".
    b, m, c = world
    await b.on_callback(msg(1, to=HAND, kind="hand", locale=locale, buttons=[("a", "t1")]))
    await b.on_callback(msg(2, to=HAND, kind="hand", locale=locale))  # another's turn now
    await b.on_text("!dm-@ana:hs", "@ana:hs", "Ana", "1", "$ev1")
    assert m.sent[-1] == ("!dm-@ana:hs", {"msgtype": "m.notice", "body": line})
    assert c.events == {}


async def test_a_number_in_a_room_never_offered_choices_is_chat_text(world):
    b, _, c = world
    await b.on_callback(msg(1, text="Ana takes seat 1"))  # a table message: no choices, ever
    await b.on_text("!group", "@ana:hs", "Ana", "1", "$ev1")
    assert c.events["$ev1"]["type"] == "message" and c.events["$ev1"]["text"] == "1"


async def test_text_is_forwarded_with_the_room_kind_and_the_bots_own_is_ignored(world):
    b, m, c = world
    await b.on_invite("!dm", "@bea:hs", is_direct=True)
    await b.on_invite("!g", "@bea:hs", is_direct=False)
    await b.on_text("!g", "@bea:hs", "Bea", "/new cinquillo", "$1")
    await b.on_text("!dm", "@bea:hs", "Bea", "/hand", "$2")
    await b.on_text("!unknown", "@bea:hs", "Bea", "/help", "$3")
    await b.on_text("!g", m.user_id, "Cinquillo", "/new 535", "$4")
    assert [(e["chat"]["kind"], e["text"]) for e in c.events.values()] == [
        ("group", "/new cinquillo"),
        ("private", "/hand"),
        ("group", "/help"),
    ]
    assert b.state.dm("@bea:hs") == "!dm"


async def test_a_failed_send_is_not_marked_shown_so_the_retry_shows_it(world):
    b, m, _ = world
    m.fail = True
    with pytest.raises(RuntimeError):
        await b.on_callback(msg(1))
    m.fail = False
    await b.on_callback(msg(1))
    assert len(m.sent) == 1


async def test_the_state_survives_a_restart(tmp_path):
    path = str(tmp_path / "s.sqlite3")
    state, m = State(path), FakeMatrix()
    b = Bridge(state, m, FakeCinq())
    await b.on_callback(msg(1, to=HAND, kind="hand", buttons=[("a", "tok-a")]))
    state.put("since", "s42")
    state.close()
    again, c = State(path), FakeCinq()
    b2 = Bridge(again, m, c)
    await b2.on_callback(msg(1, to=HAND, kind="hand"))  # a retry after the restart: already shown
    await b2.on_text("!dm-@ana:hs", "@ana:hs", "Ana", "1", "$x")
    assert len(m.sent) == 1 and m.dms == ["@ana:hs"]
    assert c.events["$x"]["token"] == "tok-a" and again.get("since") == "s42"
    again.close()


def test_replacement_keeps_the_new_content_whole():
    new = render.content(msg(1, text="a\n<b>"))
    assert new["formatted_body"] == "a<br>&lt;b&gt;"
    r = render.replacement("$orig", new)
    assert r["m.new_content"] == new and r["m.relates_to"]["event_id"] == "$orig"


LOBBY = {"status": "lobby", "seats": ["Ana"]}
MATCH = {"game": "cinquillo", "to_move": 0}


def _table(n: int, view: dict, **kw) -> dict:
    m = msg(n, **kw)
    m["view"] = view
    return m


async def test_the_table_is_posted_anew_when_the_room_moved_on_and_edited_while_it_is_the_latest(world):
    # Issue 34 (14): one message edited all match long ended far up the history, and nobody was told.
    b, m, _ = world
    await b.on_callback(_table(1, MATCH))
    await b.on_callback(_table(2, MATCH))
    assert [("m.relates_to" in c) for _, c in m.sent] == [False, True]  # the latest: edited
    await b.on_text("!group", "@bea:hs", "Bea", "nice move", "$chat1")  # the room moves on
    await b.on_callback(_table(3, MATCH, text="Ana: 5 of coins"))
    room, anew = m.sent[-1]
    assert room == "!group"
    assert "m.relates_to" not in anew and anew["body"] == "Ana: 5 of coins"
    await b.on_callback(_table(4, MATCH, text="Bea: 6 of coins"))
    assert m.sent[-1][1]["m.relates_to"]["event_id"] == "$e3"  # the new one is edited from now on


async def test_the_lobby_keeps_how_to_join_and_the_match_gets_a_message_of_its_own(world):
    b, m, _ = world
    await b.on_callback(_table(1, LOBBY, text="Table t1: join with /join"))
    await b.on_callback(_table(2, LOBBY, text="Table t1: Ana, Bea seated; join with /join"))
    await b.on_callback(_table(3, MATCH, text="Cinquillo · round 1"))
    bodies = [(c.get("m.new_content") or c)["body"] for _, c in m.sent]
    assert bodies[-1] == "Cinquillo · round 1" and "m.relates_to" not in m.sent[-1][1]
    assert "join with /join" in bodies[1]  # the lobby message was not overwritten by the match


async def test_a_rounds_end_is_posted_anew(world):
    b, m, _ = world
    await b.on_callback(_table(1, MATCH))
    ended = _table(2, MATCH, text="🔔 Round 1 goes to Ana")
    ended["outcome"] = {"round": {"n": 1}, "standings": {"over": False}}
    await b.on_callback(ended)
    assert "m.relates_to" not in m.sent[-1][1]


async def test_refusals_speak_of_choices_not_buttons():
    # Issue 34 (15): Matrix has no buttons; the service's refusals of a stale choice say "choice".
    from service.protocol.i18n import translate
    for code in ("token_malformed", "token_forged", "wrong_seat", "stale_token"):
        for loc in ("es", "en"):
            text = translate(loc, f"refusal.{code}").lower()
            assert "button" not in text and "botón" not in text, (loc, code, text)


async def test_a_groups_name_goes_with_what_is_written_there_and_a_dms_does_not(world):
    # cinq shows it on the daily deal's share buttons ("Post in Los del mus")
    bridge, m, cinq = world
    bridge.state.set_room("!g", "group")
    bridge.state.set_room("!dm", "private", "@ana:hs")
    m.names.update({"!g": "Los del mus", "!dm": "Ana"})
    await bridge.on_text("!g", "@ana:hs", "Ana", "/daily", "$1")
    await bridge.on_text("!dm", "@ana:hs", "Ana", "/daily", "$2")
    assert cinq.events["$1"]["chat"] == {"id": "!g", "kind": "group", "title": "Los del mus"}
    assert cinq.events["$2"]["chat"] == {"id": "!dm", "kind": "private"}
