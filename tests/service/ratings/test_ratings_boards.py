"""/rating and /top as one message: every answer has buttons (the game, the window, the other view);
a press answers with that view for whoever pressed, marked as replacing the message pressed (the
adapter's reference), so a platform edits it in place.  A forged button is refused and changes nothing."""

from __future__ import annotations

from service.domain.tokens import issue
from service.protocol.i18n import translate
from service.ratings.boards import BOARD, parse_view, view_move
from service.ratings.projector import Projector
from service.store.keys import Keys
from tests.service.ratings.test_ratings_service import open_table, play_out, snapshot
from tests.service.support import ANA, BEA, CAL, GROUP, Harness, private, to


def _button(msg, label_key: str, locale: str = "en"):
    want = translate(locale, label_key)
    found = [a for a in msg.actions if a.label.removeprefix("• ") == want]
    assert found, [a.label for a in msg.actions]
    return found[0]


def test_every_view_has_one_move_and_back():
    for game in (None, "cinquillo", "535"):
        for window in (None, "week", "month"):
            assert parse_view(view_move("top", game, window)) == ("top", {"game": game, "window": window})
    assert parse_view(view_move("rating")) == ("rating", {})
    assert parse_view("top x w") is None and parse_view("top c") is None and parse_view("join") is None


async def test_board_buttons_redraw_the_message_they_were_pressed_on(any_redis):
    h = Harness(any_redis)
    t1 = await open_table(h, GROUP, "535", [ANA, BEA], bots=1)
    await play_out(h, t1)
    await Projector(any_redis, Keys()).drain()

    (board,) = [m for m in to(await h.send(ANA, "/top", room=GROUP), GROUP) if m.kind == "reply"]
    assert board.replaces is None and "Cinquillo" in board.text and "535" in board.text
    labels = [a.label for a in board.actions]
    assert labels[0] == "• " + translate("en", "board.btn.game.all")  # the view shown is marked
    assert "• " + translate("en", "board.btn.window.all") in labels
    # Bea presses "535": the 535 board alone, replacing the message her platform calls "m-17".
    only = _button(board, "board.btn.game.535")
    (again,) = to(await h.send(BEA, token=only.token, replaces="m-17", command_id="p1"), GROUP)
    assert again.replaces == "m-17" and again.kind == "reply" and again.code is None
    assert again.text.splitlines()[0] == translate("en", "top.title.group.all", game="535")
    assert "Cinquillo" not in again.text and "Ana" in again.text and "Bea" in again.text
    assert "• 535" in [a.label for a in again.actions]
    # Then "this week" keeps the game; "my rating" is the presser's own rating, in the same message.
    week = _button(again, "board.btn.window.week")
    (weekly,) = to(await h.send(BEA, token=week.token, replaces="m-17"), GROUP)
    assert weekly.text.splitlines()[0] == translate("en", "top.title.group.week", game="535")
    mine = _button(weekly, "board.btn.rating")
    (rating,) = to(await h.send(CAL, token=mine.token, replaces="m-17"), GROUP)
    assert rating.replaces == "m-17" and rating.text == translate("en", "rating.none")  # Cal's, not Bea's
    (ana,) = to(await h.send(ANA, token=mine.token, replaces="m-17"), GROUP)
    assert ana.text.splitlines()[0] == translate("en", "rating.title")
    assert [a.label for a in ana.actions] == [translate("en", "board.btn.top")]
    # Typed, /top answers a message of its own even from an adapter that passes a reference.
    (typed,) = to(await h.send(ANA, "/top 535", room=private(ANA), replaces="m-9"), private(ANA))
    assert typed.replaces is None and typed.actions
    # A press is answered once: the adapter's retry of the same press writes nothing more.
    assert not to(await h.send(BEA, token=only.token, replaces="m-17", command_id="p1"), GROUP)


async def test_a_forged_board_button_is_refused_and_changes_nothing(any_redis):
    h = Harness(any_redis)
    await h.settle()
    before = await snapshot(any_redis)
    good = issue(h.settings.secrets_bytes()[0], table=BOARD, seat=0, version=0, move=view_move("top", "535"))
    forged = issue(b"another secret", table=BOARD, seat=0, version=0, move=view_move("top", "535"))
    assert forged != good
    (m,) = to(await h.send(ANA, token=forged, replaces="m-1"), GROUP)
    assert m.code == "token_forged" and m.replaces is None and not m.actions
    assert m.text == translate("en", "refusal.token_forged")
    # An old board button whose view this version does not know: the default board, not a refusal.
    odd = issue(h.settings.secrets_bytes()[0], table=BOARD, seat=0, version=0, move="top z z")
    (m,) = to(await h.send(ANA, token=odd, replaces="m-1"), GROUP)
    assert m.code is None and m.replaces == "m-1" and "Cinquillo" in m.text and "535" in m.text
    assert await snapshot(any_redis) == before
