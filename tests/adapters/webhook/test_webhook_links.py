"""The web table's links in the webhook's callbacks (``link``): a person's own on their hands, a
spectator's on the chat's table, the replay page on a replay; none without CINQ_WEB_PUBLIC_URL.  G-1:
no callback to a chat carries a person's link (it would show their hand to everyone in it)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

from service.domain.weblinks import open_link
from service.foundation.settings import Settings
from tests.adapters.webhook.support import PLATFORM, event, on_platform
from tests.adapters.webhook.test_webhook_match import GROUP, play_match
from tests.service.support import SECRET

WEB = "https://cards.example"


def _claims(url: str):
    parts = urlparse(url)
    assert url.startswith(WEB + "/t?k=")
    return open_link([SECRET], parse_qs(parts.query)["k"][0], 0.0)


async def test_g1_callbacks_carry_each_recipients_own_link_and_the_replay_page(fake_redis):
    async with on_platform(fake_redis, web_public_url=WEB) as (platform, h):
        table = await play_match(h, platform, "/new cinquillo", seed=5)
        replay = event(f"/replay {table}", user="u2", chat="dm-u2", kind="private")
        status, _, body = await h.client.post(replay)
        assert status == 202, body
        replay = await platform.wait_for(lambda: [m for m in platform.received if m["kind"] == "replay"])
        assert [m["link"] for m in replay] == [f"{WEB}/replay/{table}"]
        hands = [m for m in platform.received if m["kind"] == "hand"]
        rooms = [m for m in platform.received if m["kind"] in ("table", "match_over") and "chat" in m["to"]]
        assert hands and rooms
        for m in hands:
            c = _claims(m["link"])
            assert (c.platform, c.user, c.table) == (PLATFORM, m["to"]["user"]["id"], table)
        for m in rooms:
            assert _claims(m["link"]).spectator
        for m in platform.received:
            if "chat" in m["to"] and m["link"] and "/t?k=" in m["link"]:
                assert _claims(m["link"]).spectator, f"a person's link went to chat {m['to']}"
            if m["kind"] == "reply":
                assert m["link"] is None


async def test_without_the_web_table_callbacks_carry_no_link(fake_redis):
    assert Settings(redis_url=None).web_public_url is None
    async with on_platform(fake_redis) as (platform, h):
        status, _, _ = await h.client.post(event("/new cinquillo", user="u1", chat=GROUP))
        assert status == 202
        got = await platform.wait_for(lambda: platform.to_chat(GROUP))
        assert "link" in got[0] and got[0]["link"] is None
