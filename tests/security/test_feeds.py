"""The flooder against the web table's live feeds (issue 32, 4), on a real deployment.

A feed on a quiet table (Ana's, waiting on her) is released as soon as its page goes: the link's
share of feeds comes back, again and again; one link holds a bounded number of feeds (429 past it),
the process a bounded number in all (503 past it), each refusal with ``Retry-After`` and a problem
in the person's language; and a move on the table after hundreds of pages came and went logs no
traceback.
"""

from __future__ import annotations

import asyncio
import time
from urllib.parse import parse_qs, urlparse

from service.domain.weblinks import issue_link
from tests.polling import eventually
from tests.security.deployment import PLATFORM, TOKEN_SECRET, Deployment, deployed
from tests.security.sse import Feed, close_all, open_feed, problem


async def ana_at_a_table(d: Deployment) -> tuple[str, str, dict]:
    """Ana plays AI players; returns her table, her link (``k``) and her latest hand message."""
    await d.say("ana", "/play cinquillo")
    hands = await d.platform.wait_for(
        lambda: [m for m in d.platform.to_user("ana") if m["kind"] == "hand" and m.get("link")], 60)
    k = parse_qs(urlparse(hands[-1]["link"]).query)["k"][0]
    return hands[-1]["table"], k, hands[-1]


async def test_a_links_feeds_are_bounded_and_released_when_their_pages_go(tmp_path):
    async with deployed(tmp_path, {"CINQ_WEB_FEEDS_PER_LINK": "4"}) as d:
        _, k, _ = await ana_at_a_table(d)
        feeds = [await open_feed(d.web_port, k) for _ in range(4)]
        assert [f.status for f in feeds] == [200] * 4
        over = await open_feed(d.web_port, k)
        assert over.status == 429, over.status
        assert problem(over)["title"] == "too_many_feeds" and "tabs" in problem(over)["detail"]
        assert int(over.headers["retry-after"]) >= 1
        # The pages go (reset, as closed tabs): the link's share comes back, every time, and a feed
        # of the quiet table does not wait for a message that will not come to notice it.
        for _ in range(25):
            await close_all(feeds)
            feeds = []
            for _ in range(4):
                f = await eventually(lambda: _opened(d, k), 30, "a released feed's slot")
                feeds.append(f)
        await close_all(feeds)
        # A move after all of them went: every feed of the table meets it, no traceback logged.
        await d.say("ana", "/hand")
        await d.platform.wait_for(
            lambda: len([m for m in d.platform.to_user("ana") if m["kind"] == "hand"]) >= 2, 30)
        await asyncio.sleep(1.0)  # (what a leaked feed would log comes right after the move)
        assert "Traceback" not in d.log(), d.log()[-3000:]


async def _opened(d: Deployment, k: str) -> Feed | None:
    f = await open_feed(d.web_port, k)
    if f.status == 200:
        return f
    assert f.status == 429, f.status
    return None


async def test_the_process_holds_a_bounded_number_of_feeds(tmp_path):
    async with deployed(tmp_path, {"CINQ_WEB_MAX_FEEDS": "5"}) as d:
        table, _, _ = await ana_at_a_table(d)
        links = [issue_link(TOKEN_SECRET.encode(), table=table, expires=time.time() + 600,
                            platform=PLATFORM, user=f"x{i}") for i in range(7)]
        feeds = [await open_feed(d.web_port, links[i]) for i in range(5)]
        assert [f.status for f in feeds] == [200] * 5
        full = await open_feed(d.web_port, links[5])
        assert full.status == 503 and problem(full)["title"] == "busy"
        assert int(full.headers["retry-after"]) >= 1
        feeds[0].drop()
        again = await eventually(lambda: _opened_or_busy(d, links[6]), 30, "a slot given back")
        assert again.status == 200
        await close_all([*feeds[1:], again])


async def _opened_or_busy(d: Deployment, k: str) -> Feed | None:
    f = await open_feed(d.web_port, k)
    if f.status == 200:
        return f
    assert f.status == 503, f.status
    return None
