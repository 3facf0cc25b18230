"""Boards on Matrix (issue 15: ``/rating`` and ``/top`` are one message, edited in place): a number
that answers a message's choices names that message's event as the action's ``message``, and cinq's
answer that ``replaces`` it edits that event (``m.replace``) instead of posting another.  The bridge
edits only an event it posted with choices in that room: any other ``replaces`` is shown anew.  The
real homeserver is in test_matrix_e2e.py."""

from __future__ import annotations

import sqlite3

import pytest

from bridges.matrix.core import Bridge
from bridges.matrix.state import State
from tests.bridges.matrix_fakes import FakeCinq, FakeMatrix, bridge_world, msg

GROUP = {"chat": {"id": "!group", "kind": "group"}}
BOARD_BUTTONS = [("Cinquillo", "tok-c"), ("535", "tok-5"), ("This week", "tok-w")]


@pytest.fixture
def world(tmp_path):
    with bridge_world(tmp_path, "en") as w:
        yield w


def board(n: int, text: str, replaces: str | None = None, to: dict | None = None) -> dict:
    """A board callback as cinq sends it: a reply with buttons and no table."""
    return msg(n, to=to or GROUP, kind="reply", table=None, text=text, buttons=BOARD_BUTTONS,
               replaces=replaces)


async def test_a_board_choice_names_the_board_and_its_answer_edits_that_event(world):
    b, m, c = world
    await b.on_callback(board(1, "Top · all games"))
    await b.on_text("!group", "@bea:hs", "Bea", "2", "$press1")
    assert c.events["$press1"]["token"] == "tok-5" and c.events["$press1"]["message"] == "$e1"
    await b.on_callback(board(2, "Top · 535", replaces="$e1"))
    (_, first), (_, edit) = m.sent
    assert "m.relates_to" not in first
    assert edit["m.relates_to"] == {"rel_type": "m.replace", "event_id": "$e1"}
    assert edit["m.new_content"]["body"].startswith("Top · 535\n\n1. Cinquillo")
    # The edited board's choices still name the original event: the next choice redraws it again.
    await b.on_text("!group", "@ana:hs", "Ana", "3", "$press2")
    assert c.events["$press2"]["token"] == "tok-w" and c.events["$press2"]["message"] == "$e1"
    await b.on_callback(board(3, "Top · 535 · this week", replaces="$e1"))
    assert [c_["m.relates_to"]["event_id"] for _, c_ in m.sent[1:]] == ["$e1", "$e1"]
    assert b.sent == {"send": 1, "edit": 2}


async def test_a_choice_of_a_table_message_names_the_original_event_not_the_edit(world):
    b, m, c = world
    await b.on_callback(msg(1, text="Lobby", buttons=[("Join", "tok-j")]))
    await b.on_callback(msg(2, text="Lobby · Ana", buttons=[("Join", "tok-j2")]))  # an edit of $e1
    await b.on_text("!group", "@bea:hs", "Bea", "1", "$p")
    assert len(m.sent) == 2 and c.events["$p"]["message"] == "$e1"


async def test_replaces_naming_an_event_the_bridge_did_not_offer_there_is_shown_anew(world):
    b, m, _ = world
    await b.on_callback(board(1, "Top", to={"user": {"id": "@ana:hs"}}))  # $e1, in Ana's DM
    await b.on_callback(msg(2, text="Lobby"))  # $e2 in the group: a table message, without choices
    # Refused as an edit: an event in another room, one without choices, one never posted.
    for n, target in ((3, "$e1"), (4, "$e2"), (5, "$unknown")):
        await b.on_callback(board(n, f"Top #{n}", replaces=target))
    assert [("m.relates_to" in content, room) for room, content in m.sent[2:]] == [(False, "!group")] * 3
    assert b.sent == {"send": 5, "edit": 0}


async def test_an_event_id_longer_than_the_contract_allows_is_left_out_of_the_action(world):
    b, m, c = world
    # Over the contract's 128 characters cinq would refuse the whole action (400): leave it out.
    m.txns["cb-wh-1"] = "$" + "x" * 128  # the homeserver's answer to the board's send
    await b.on_callback(board(1, "Top"))
    await b.on_text("!group", "@bea:hs", "Bea", "1", "$p")
    assert c.events["$p"]["token"] == "tok-c" and "message" not in c.events["$p"]


async def test_a_state_file_from_before_boards_is_upgraded_and_its_choices_kept(tmp_path):
    path = str(tmp_path / "old.sqlite3")
    old = sqlite3.connect(path)
    old.execute("CREATE TABLE pending (room TEXT PRIMARY KEY, tokens TEXT NOT NULL, locale TEXT NOT NULL)")
    old.execute("""INSERT INTO pending VALUES ('!group', '["tok-a"]', 'en')""")
    old.commit()
    old.close()
    state, c = State(path), FakeCinq()
    b = Bridge(state, FakeMatrix(), c)
    await b.on_text("!group", "@bea:hs", "Bea", "1", "$p")
    assert c.events["$p"]["token"] == "tok-a" and "message" not in c.events["$p"]
    await b.on_callback(board(1, "Top"))
    await b.on_text("!group", "@bea:hs", "Bea", "1", "$q")
    assert c.events["$q"]["message"] == "$e1"
    state.close()


async def test_a_redacted_board_is_posted_anew_and_its_choices_name_the_new_event(world):
    b, m, c = world
    await b.on_callback(board(1, "Top · all games"))  # $e1
    m.redacted.add("$e1")  # a moderator removed it: an edit of it would stay hidden
    await b.on_text("!group", "@bea:hs", "Bea", "2", "$press1")
    await b.on_callback(board(2, "Top · 535", replaces=c.events["$press1"]["message"]))
    assert m.asked == ["$e1"]
    assert all("m.relates_to" not in content for _, content in m.sent) and len(m.sent) == 2
    await b.on_text("!group", "@bea:hs", "Bea", "1", "$press2")
    assert c.events["$press2"]["message"] == "$e2"
    await b.on_callback(board(3, "Top · all games", replaces="$e2"))
    assert m.sent[-1][1]["m.relates_to"]["event_id"] == "$e2" and b.sent == {"send": 2, "edit": 1}
