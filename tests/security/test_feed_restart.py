"""The restart against the web table's live feed (issue 32, 7), on a real deployment.

Ana's page follows her table; Redis is SIGKILLed and, 3 s later, started again on the same port
(its append-only file fsynced on every write: nothing acknowledged is lost).  The open page gets the
next message without reconnecting (the watch's reader backs off on redis-py's errors and reads on
from the last id it handed out), and a page that reconnects with the id it last saw gets what was
written since (a catch-up read with a count).  A page reconnecting with ``Last-Event-ID: 0-0`` gets
its state and what the table wrote, never another person's message.
"""

from __future__ import annotations

import asyncio
import contextlib
import json

from tests.polling import eventually
from tests.security.deployment import deployed
from tests.security.sse import open_feed
from tests.security.test_feeds import ana_at_a_table


def _is_hand(ev: dict) -> bool:
    return ev.get("event") == "message" and json.loads(ev["data"]).get("kind") == "hand"


async def test_an_open_feed_gets_the_next_message_after_a_redis_restart(tmp_path):
    async with deployed(tmp_path) as d:
        _, k, _ = await ana_at_a_table(d)
        feed = await open_feed(d.web_port, k)
        assert feed.status == 200
        last_seen = feed.events[-1]["id"]
        d.redis_server.kill()
        await asyncio.sleep(3.0)
        d.redis_server.start()
        hands_before = len([m for m in d.platform.to_user("ana") if m["kind"] == "hand"])

        async def asked() -> bool:
            with contextlib.suppress(AssertionError):
                await d.say("ana", "/hand")
                return True
            return False  # the webhook answered 503 while the process reconnects: ask again

        await eventually(asked, 60, "the webhook taking /hand after the restart", every=0.5)
        ev = await feed.until(_is_hand, 60)
        assert json.loads(ev["data"])["to"] == "me"
        await d.platform.wait_for(
            lambda: len([m for m in d.platform.to_user("ana") if m["kind"] == "hand"]) > hands_before, 30)
        # A page that lost its feed meanwhile resumes from the id it saw last, and misses nothing.
        again = await open_feed(d.web_port, k, last_event_id=last_seen)
        resumed = await again.until(_is_hand, 30)
        assert resumed["id"] == ev["id"]
        # From the very start of the bucket's outbox: the state, then Ana's messages only.
        whole = await open_feed(d.web_port, k, last_event_id="0-0")
        got = await whole.until(lambda e: e.get("id") == ev["id"], 30)
        assert _is_hand(got)
        # (the page's messages only: addressed to Ana, or her table's room view; the state first)
        assert whole.events[0]["event"] == "state"
        assert all(json.loads(e["data"])["to"] in ("me", "room") for e in whole.events[1:])
        assert len(whole.events) >= len(again.events)
        for f in (feed, again, whole):
            f.drop()
        assert "Traceback" not in d.log(), d.log()[-3000:]
