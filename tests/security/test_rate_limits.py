"""The flooder against the web table's acting requests (issue 32, 6), on a real deployment.

60 concurrent ``POST /api/move`` with one of Ana's action tokens (the first may play it, the rest
are stale): at most the burst of her bucket and what it refills get through, the others are 429
``too_fast`` with ``Retry-After`` in her language, and the service sends her no more answers than
moves it took (a refused request makes no command and no callback).  40 Mini App sessions of one
Telegram user the same way.  Counts are bounded by the bucket, never by time.
"""

from __future__ import annotations

import asyncio
import json
import time

import aiohttp

from adapters.web.initdata import sign_init_data
from tests.security.deployment import BOT_TOKEN, deployed
from tests.security.test_feeds import ana_at_a_table

RATE, BURST = 1.0, 5


def _bound(started: float) -> int:
    """What the bucket may have let through since ``started``: its burst and its refill."""
    return BURST + int((time.monotonic() - started) * RATE) + 1


async def test_a_flood_of_moves_and_sessions_gets_one_cheap_answer_each(tmp_path):
    env = {"CINQ_WEB_RATE": str(RATE), "CINQ_WEB_BURST": str(BURST)}
    async with deployed(tmp_path, env) as d:
        table, k, _ = await ana_at_a_table(d)
        hand = await d.platform.wait_for(lambda: [m for m in d.platform.to_user("ana")
                                                  if m["table"] == table and m["buttons"]], 60)
        token = hand[-1]["buttons"][0]["token"]
        await asyncio.sleep(2.0)  # the deal's messages all delivered
        callbacks_before = len(d.platform.to_user("ana"))
        started = time.monotonic()
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
            async def move(i: int) -> tuple[int, dict, str | None]:
                async with http.post(f"{d.web}/api/move?lang=es",
                                     json={"token": token, "id": f"flood{i:06d}"},
                                     headers={"Authorization": f"Link {k}"}) as r:
                    return r.status, await r.json(content_type=None), r.headers.get("Retry-After")

            answers = await asyncio.gather(*(move(i) for i in range(60)))
            taken = [a for a in answers if a[0] == 202]
            refused = [a for a in answers if a[0] == 429]
            assert len(taken) + len(refused) == 60, sorted({a[0] for a in answers})
            assert 1 <= len(taken) <= _bound(started), len(taken)
            for _, body, retry in refused:
                assert body["title"] == "too_fast" and "Demasiado" in body["detail"]
                assert retry is not None and int(retry) >= 1
            # What the service sent her: an answer per move taken at most (a play, stale refusals).
            await asyncio.sleep(3.0)
            sent = len(d.platform.to_user("ana")) - callbacks_before
            assert sent <= 2 * len(taken), (sent, len(taken))

            started = time.monotonic()
            user = json.dumps({"id": 4242, "first_name": "Flo"})

            async def session() -> int:
                init = sign_init_data(BOT_TOKEN, {"auth_date": str(int(time.time())), "user": user,
                                                  "start_param": table})
                async with http.post(f"{d.web}/api/session", json={"init_data": init}) as r:
                    await r.read()
                    return r.status

            statuses = await asyncio.gather(*(session() for _ in range(40)))
            assert set(statuses) <= {200, 429}, set(statuses)
            assert 1 <= statuses.count(200) <= _bound(started), statuses.count(200)
        assert "Traceback" not in d.log(), d.log()[-3000:]
