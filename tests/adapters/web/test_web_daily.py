"""The web table's "Daily deal" (POST /api/daily) through the whole pipeline: the same attempt from a
link and from a Telegram Mini App, played to its end over the API, the standing once played; and
nothing of the day's deal in any response before it is revealed (G-1, D-3, D-5)."""

from __future__ import annotations

import json
import time

from adapters.web.initdata import sign_init_data
from service.domain import daily
from service.domain.identities import Player
from service.domain.weblinks import issue_link
from tests.adapters.web.support import Stack

ME = Player(platform="telegram", user="501", name="Ana")
BEA = Player(platform="telegram", user="502", name="Bea")
SECRET = b"web-test"
BOT = "4242:WEB-TEST"


def link(table: str, who: Player | None = ME, ttl: float = 600) -> str:
    return issue_link(SECRET, table=table, expires=time.time() + ttl,
                      platform=who.platform if who else None, user=who.user if who else None)


async def _post(s: Stack, body: dict, k: str | None = None) -> tuple[int, dict]:
    assert s.http is not None
    headers = {"Authorization": f"Link {k}"} if k else {}
    async with s.http.post(s.url + "/api/daily", json=body, headers=headers) as r:
        return r.status, await r.json(content_type=None)


async def test_d3_a_link_and_the_mini_app_open_the_same_attempt_and_forged_credentials_get_nothing():
    async with Stack(bot_token=BOT) as s:
        other = await s.play_ai(ME)  # any link of the person's names them
        status, body = await _post(s, {"game": "cinquillo", "id": "web-daily-0001"}, link(other))
        assert status == 200 and body["status"] == "playing"
        table = body["table"]
        assert table == daily.table_id(s.rt.gateway.secrets[0], ME, "cinquillo", daily.day_of(time.time()))
        await s.until(lambda t: t is not None and t.status == "running", table)
        status, state = await s.get("/api/state", k=body["k"])
        assert status == 200 and any(m["kind"] == "hand" for m in state["messages"])
        user = json.dumps({"id": 501, "first_name": "Ana", "language_code": "es"})
        init = sign_init_data(BOT, {"auth_date": str(int(time.time())), "user": user})
        status, again = await _post(s, {"game": "cinquillo", "init_data": init})
        assert status == 200 and again["table"] == table and again["locale"] == "es"
        assert len([e for e in await s.rt.worker.store.events(table) if "TableCreated" in e]) == 1
        # refusals: no credential, a spectator's link, forged Mini App data, a bad game, a bad id
        for k, payload, code in ((None, {"game": "cinquillo"}, 401), (link(other, None), {}, 403),
                                 (None, {"init_data": init.replace("Ana", "Eve")}, 401),
                                 (link(other), {"game": "poker"}, 400),
                                 (link(other), {"game": "535", "id": "../../x"}, 400)):
            status, body = await _post(s, payload, k)
            assert status == code, (k, payload)
            assert "k" not in body and "table" not in body


async def test_g1_the_daily_attempt_played_on_the_web_shows_nothing_of_the_deal_until_it_is_revealed():
    async with Stack() as s:
        other = await s.play_ai(ME)
        status, body = await _post(s, {"game": "cinquillo"}, link(other))
        table, k = body["table"], body["k"]
        t = await s.until(lambda t: t is not None and t.status == "running", table)
        seen: list[str] = []
        while True:  # play it to the end over the API, always the first legal move
            t = await s.until(lambda now: now.status == "finished" or now.to_move() == 0, table)
            status, state = await s.get("/api/state", k=k)
            seen.append(json.dumps(state))
            if t.status == "finished":
                break
            hand = next(m for m in state["messages"] if m["kind"] == "hand")
            if hand["version"] != t.version:
                continue  # read before the table moved on: read again
            async with s.http.post(s.url + "/api/move", params={"k": k},
                                   json={"token": hand["actions"][0]["token"]}) as r:
                assert r.status == 202
            await s.until(lambda now, v=t.version: now.version > v, table)
        status, played = await _post(s, {"game": "cinquillo"}, k)
        assert status == 200 and played["status"] == "played" and "rank 1 of 1" in played["text"]
        seen.append(json.dumps(played))
        status, rp = await s.get(f"/api/replay/{table}")
        assert status == 403 and rp["title"] == "embargoed"
        seen.append(json.dumps(rp))
        # Bea, with a link to Ana's attempt (as if one leaked): the table does not open for her
        status, st = await s.get("/api/state", k=link(table, BEA))
        assert status == 403 and st["title"] == "embargoed"
        status, st = await s.get("/api/state", k=link(table))  # Ana's own end screen: no seed
        seen.append(json.dumps(st))
        import engine

        unplayed = {str(c) for seat in (1, 2, 3) for c in engine.view(t.engine, seat)["hand"]}
        everything = "\n".join(seen)
        assert t.seed not in everything
        assert not [c for c in unplayed if f'"{c}"' in everything]


async def test_a_deal_the_service_cannot_deal_is_a_clear_503_and_starts_nothing():
    # Another role dealt today's first /daily with another daily secret: its commitment is recorded.
    async with Stack() as s:
        other = await s.play_ai(ME)
        date = daily.day_name(daily.day_of(time.time()))
        await s.redis.set(s.rt.keys.daily_commit("535", date), "another-deal")
        status, body = await _post(s, {"game": "535"}, link(other))
        assert status == 503 and body["title"] == "daily_unavailable" and "cannot be dealt" in body["detail"]
        sent = [f for k in s.rt.keys.all_commands() for _, f in await s.redis.xrange(k)]
        assert not [f for f in sent if b"daily_table" in f[b"c"]]  # no command: nothing dealt
