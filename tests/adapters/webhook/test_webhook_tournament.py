"""A tournament over the webhook (issue 15): its sign-up is an ordinary message with buttons, pressed
through signed HTTP; a refused press gets a clear answer; the round's hands arrive privately, with
their buttons, and nothing of a tournament table is posted in the group (G-1)."""

from __future__ import annotations

import asyncio

from service.protocol.i18n import translate
from service.store.keys import Keys
from service.tournaments.director import Director
from tests.adapters.webhook.support import event, on_platform

GROUP = "g7"


async def test_signup_buttons_and_the_first_round_over_http(fake_redis):
    stop = asyncio.Event()
    async with on_platform(fake_redis) as (platform, h):
        director = Director(fake_redis, h.settings, Keys.of(h.settings))
        running = asyncio.create_task(director.run(stop, block_ms=50))
        post = h.client.accepted
        try:
            await post(event("/tournament 535 rounds=1", user="u1", chat=GROUP, name="Ana"))
            signup = await platform.wait_for(lambda: [m for m in platform.to_chat(GROUP) if m["buttons"]])
            labels = [b["label"] for b in signup[0]["buttons"]]
            assert labels == [translate("en", f"tournament.btn.{m}") for m in ("join", "leave", "start")]
            assert "Ana" in signup[0]["text"]
            join, _, start = (b["token"] for b in signup[0]["buttons"])
            await post(event(user="u2", chat=GROUP, name="Bea", token=join))
            await platform.wait_for(lambda: [m for m in platform.to_chat(GROUP) if "Bea" in m["text"]])
            # Bea may not start it: a clear refusal, with its code.
            await post(event(user="u2", chat=GROUP, name="Bea", token=start))
            refused = await platform.wait_for(lambda: [m for m in platform.to_chat(GROUP)
                                                       if m["code"] == "not_tournament_creator"])
            assert "Ana" in refused[0]["text"]
            await post(event(user="u1", chat=GROUP, name="Ana", token=start))
            await platform.wait_for(lambda: [m for m in platform.to_chat(GROUP)
                                             if "Round 1 of 1" in m["text"]])
            # Both get their hand privately; the one to move has buttons.
            await platform.wait_for(lambda: platform.to_user("u1") and platform.to_user("u2"))
            await platform.wait_for(lambda: [m for u in ("u1", "u2") for m in platform.to_user(u)
                                             if m["kind"] == "hand" and m["buttons"]])
            tournament = signup[0]["table"]
            assert all(m["table"] == tournament or m["table"] is None for m in platform.to_chat(GROUP))
        finally:
            stop.set()
            await running
