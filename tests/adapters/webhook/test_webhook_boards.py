"""/top over the webhook (issue 15): one message with buttons; a press that names the message it was
on (``message``) gets a callback that says it ``replaces`` that message; a forged button is refused
with its code and replaces nothing."""

from __future__ import annotations

from service.protocol.i18n import translate
from tests.adapters.webhook.support import event, on_platform

GROUP = "g9"


async def test_top_buttons_redraw_the_board_message_over_http(fake_redis):
    async with on_platform(fake_redis) as (platform, h):
        post = h.client.accepted
        await post(event("/top", user="u1", chat=GROUP, name="Ana"))
        (board,) = await platform.wait_for(lambda: [m for m in platform.to_chat(GROUP) if m["buttons"]])
        assert board["kind"] == "reply" and board["replaces"] is None
        assert "Cinquillo" in board["text"] and "535" in board["text"]
        week = next(b for b in board["buttons"] if b["label"] == translate("en", "board.btn.window.week"))
        # Bea presses "This week" on that message: the callback redraws it.
        await post({**event(user="u2", chat=GROUP, name="Bea", token=week["token"]), "message": board["id"]})
        (redrawn,) = await platform.wait_for(lambda: [m for m in platform.to_chat(GROUP) if m["replaces"]])
        assert redrawn["replaces"] == board["id"] and redrawn["id"] != board["id"]
        assert redrawn["text"].splitlines()[0] == translate("en", "top.title.group.week", game="Cinquillo")
        assert "• " + translate("en", "board.btn.window.week") in [b["label"] for b in redrawn["buttons"]]
        # A press without the message's id still answers, as a message of its own.
        mine = next(b for b in redrawn["buttons"] if b["label"] == translate("en", "board.btn.rating"))
        await post(event(user="u2", chat=GROUP, name="Bea", token=mine["token"]))
        (rating,) = await platform.wait_for(
            lambda: [m for m in platform.to_chat(GROUP) if m["text"] == translate("en", "rating.none")])
        assert rating["replaces"] is None
        # A forged button: refused with its code, replacing nothing.
        forged = week["token"][:-3] + ("AAA" if not week["token"].endswith("AAA") else "BBB")
        await post({**event(user="u2", chat=GROUP, name="Bea", token=forged), "message": board["id"]})
        (refused,) = await platform.wait_for(
            lambda: [m for m in platform.to_chat(GROUP) if m["code"] == "token_forged"])
        assert refused["replaces"] is None and not refused["buttons"]
