"""The web table's API through the whole pipeline (worker on fakeredis, the adapter on loopback):
who may open what (G-1), refusals, moves, the live feed and its resumption, replays."""

from __future__ import annotations

import asyncio
import json
import time

import aiohttp

from adapters.web.initdata import sign_init_data
from service.domain.identities import Player
from service.domain.inputs import Input
from service.domain.weblinks import issue_link
from service.ops.health import Ops
from service.ops.runtime import build
from tests.adapters.web.support import Stack, hidden_cards

ME = Player(platform="telegram", user="501", name="Ana")
SECRET = b"web-test"
BOT = "4242:WEB-TEST"


def link(table: str, who: Player | None = ME, ttl: float = 600) -> str:
    return issue_link(SECRET, table=table, expires=time.time() + ttl,
                      platform=who.platform if who else None, user=who.user if who else None)


async def test_g1_a_person_sees_their_own_hand_and_no_one_elses():
    async with Stack() as s:
        table = await s.play_ai(ME)
        t = await s.table(table)
        status, body = await s.get("/api/state", k=link(table))
        assert status == 200
        raw = json.dumps(body)
        mine = [m for m in body["messages"] if m["kind"] == "hand"]
        assert len(mine) == 1 and mine[0]["view"]["hand"] == engine_hand(t, 0)
        for card in hidden_cards(t, 0):
            assert f'"{card}"' not in raw, card
        # A spectator's link: the room view, no hand at all.
        status, body = await s.get("/api/state", k=link(table, None))
        assert status == 200 and body["spectator"] is True
        assert [m["kind"] for m in body["messages"]] == ["table"]
        for card in hidden_cards(t, None):
            assert f'"{card}"' not in json.dumps(body), card


def engine_hand(t, seat):
    import engine
    return engine.view(t.engine, seat)["hand"]


async def test_missing_forged_expired_and_other_peoples_links_are_refused_and_show_nothing():
    async with Stack() as s:
        table = await s.play_ai(ME)
        good = link(table)
        forged = good[:-4] + ("AAAA" if not good.endswith("AAAA") else "BBBB")
        other_secret = issue_link(b"not-the-secret", table=table, expires=time.time() + 60,
                                  platform="telegram", user="501")
        for k in ("", "nonsense", forged, other_secret, link(table, ttl=-1)):
            for path in ("/api/state", "/api/events"):
                status, body = await s.get(path, k=k)
                assert status == 401, (path, k)
                assert "messages" not in (body or {}) and body["detail"]
        status, body = await s.get("/api/state", k=link(table, ttl=-1))
        assert body["title"] == "expired" and "expired" in body["detail"]
        # Somebody else's link to this table opens it, but their page holds no hand of mine.
        status, body = await s.get("/api/state", k=link(table, Player(platform="telegram", user="999")))
        assert status == 200 and all(m["kind"] != "hand" for m in body["messages"])


async def test_moves_a_spectator_or_another_tables_token_or_a_forged_token_are_refused_403():
    async with Stack() as s:
        table = await s.play_ai(ME)
        other = await s.play_ai(Player(platform="telegram", user="777"), cid="web-test-2")
        _, mine = await s.get("/api/state", k=link(table))
        _, theirs = await s.get("/api/state", k=link(other, Player(platform="telegram", user="777")))
        await s.until(lambda t: t.to_move() == t.seat_of(ME), table)
        _, mine = await s.get("/api/state", k=link(table))
        token = next(m for m in mine["messages"] if m["kind"] == "hand")["actions"][0]["token"]
        their_hand = next(m for m in theirs["messages"] if m["kind"] == "hand")
        v0 = (await s.table(table)).version
        refusals = [
            (link(table, None), {"token": token}),  # a spectator
            (link(table), {"token": token[:-3] + "abc"}),  # forged
        ]
        if their_hand["actions"]:
            refusals.append((link(table), {"token": their_hand["actions"][0]["token"]}))  # another table's
        for k, body in refusals:
            status, answer = await s.post("/api/move", body, k=k)
            assert status == 403, answer
        status, answer = await s.post("/api/move", {"nope": 1}, k=link(table))
        assert status == 400
        await asyncio.sleep(0.3)
        assert (await s.table(table)).version == v0, "a refused move changed the table"
        # The real token plays.
        status, answer = await s.post("/api/move", {"token": token, "id": "abcdef123456"}, k=link(table))
        assert status == 202 and answer["command_id"] == "web-abcdef123456"
        await s.until(lambda t: t.version > v0, table)


async def test_mini_app_init_data_is_checked_forged_and_expired_refused_401():
    async with Stack(bot_token=BOT) as s:
        table = await s.play_ai(ME)
        user = json.dumps({"id": 501, "first_name": "Ana", "language_code": "es"})
        now = str(int(time.time()))
        good = sign_init_data(BOT, {"auth_date": now, "user": user, "start_param": table})
        status, body = await s.post("/api/session", {"init_data": good})
        assert status == 200 and body["table"] == table and body["locale"] == "es"
        status, state = await s.get("/api/state", k=body["k"])
        assert status == 200 and any(m["kind"] == "hand" for m in state["messages"])
        forged = good.replace("Ana", "Eve")
        old = sign_init_data(BOT, {"auth_date": str(int(time.time()) - 7200), "user": user})
        other_bot = sign_init_data("1:OTHER", {"auth_date": now, "user": user})
        for raw in (forged, old, other_bot, "", "hash=00&auth_date=1"):
            status, body = await s.post("/api/session", {"init_data": raw, "table": table})
            assert status == 401, raw
            assert "k" not in body


async def _events(s: Stack, k: str, headers: dict[str, str], want: int, timeout: float = 20.0):
    """The first ``want`` SSE ``message`` events (id, data) after the ``state`` one."""
    got: list[tuple[str, dict]] = []
    state = None
    async with aiohttp.ClientSession() as http, http.get(
            f"{s.url}/api/events", params={"k": k}, headers=headers,
            timeout=aiohttp.ClientTimeout(total=timeout)) as r:
        assert r.status == 200
        event, data, eid = "", "", ""
        async for raw in r.content:
            line = raw.decode().rstrip("\r\n")
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data += line[5:].strip()
            elif line.startswith("id:"):
                eid = line[3:].strip()
            elif line == "" and data:
                if event == "state":
                    state = json.loads(data)
                else:
                    got.append((eid, json.loads(data)))
                event, data, eid = "", "", ""
                if len(got) >= want:
                    break
    return state, got


async def test_the_feed_resumes_after_last_event_id_with_nothing_missed():
    async with Stack() as s:
        table = await s.play_ai(ME)
        k = link(table)
        _, st = await s.get("/api/state", k=k)
        start = st["position"]
        await play_my_turns(s, table, k, 3)  # with nobody watching
        await asyncio.sleep(0.3)
        written = [m for m in await outbox_for(s, table) if m[0] > start]
        # Reconnect as a browser does, with the last id it saw: every message since, in order.
        state, got = await _events(s, k, {"Last-Event-ID": start}, want=len(visible(written)))
        assert state is not None and [e for e, _ in got] == [mid for mid, _ in visible(written)]


async def play_my_turns(s: Stack, table: str, k: str, turns: int) -> None:
    """Play up to ``turns`` of my turns through the API (my hand's first move each time), fewer if
    the match ends first."""
    for _ in range(turns):
        t = await s.until(lambda t: t.status != "running" or t.to_move() == t.seat_of(ME), table)
        if t.status != "running":
            return
        _, now = await s.get("/api/state", k=k)
        hand = next(m for m in now["messages"] if m["kind"] == "hand")
        while True:
            # A match of quick AI turns with many passes can outrun the person's bucket (3 a second,
            # burst 12): a 429 too_fast is the limiter's right answer, and the client asks again later.
            status, body = await s.post("/api/move", {"token": hand["actions"][0]["token"]}, k=k)
            if status != 429:
                break
            assert body["title"] == "too_fast", body
            await asyncio.sleep(1.0)
        assert status == 202, (status, body)
        await s.until(lambda t, v=t.version: t.version > v, table)


async def outbox_for(s: Stack, table: str):
    from service.platform.watch import _message
    raw = await s.redis.xrange(s.rt.keys.outbox_for(table))
    out = []
    for mid, fields in raw:
        msg = _message(fields)
        if msg is not None and msg.table == table:
            out.append((mid.decode(), msg))
    return sorted(out, key=lambda e: tuple(int(x) for x in e[0].split("-")))


def visible(entries):
    from service.platform.watch import visible as can_see
    return [(mid, m) for mid, m in entries if can_see(m, m.table, ME)]


async def test_a_finished_match_has_a_replay_and_a_running_one_does_not():
    async with Stack() as s:
        table = await s.play_ai(ME)
        status, body = await s.get(f"/api/replay/{table}")
        assert status == 404 and body["title"] == "not_finished"
        await play_my_turns(s, table, link(table), 200)  # to the end
        status, rp = await s.get(f"/api/replay/{table}")
        assert status == 200 and rp["ok"] is True and len(rp["steps"]) > 10
        assert all(st["view"]["hand"] is None for st in rp["steps"]), "a step showed a hand"
        assert len(rp["hands"]) == 4 and rp["seed"]


async def test_health_readiness_and_metrics_like_every_role():
    async with Stack() as s:
        status, body = await s.get("/healthz")
        assert status == 200 and body["status"] == "ok"
        for path in ("/readyz", "/metrics"):  # on the operations listener only (issue 32)
            async with s.http.get(s.url + path) as r:
                assert r.status == 404
        ops = Ops(s.redis, s.web.gateway.keys.probe)  # as `cinq web` runs it
        ops.add(s.web.metrics, s.web.watch.problem)
        runner = await ops.start("127.0.0.1", 0, "web")
        try:
            async with s.http.get(f"http://127.0.0.1:{ops.port}/readyz") as r:
                assert r.status == 200 and (await r.json())["status"] == "ready"
            probe = s.web.gateway.keys.probe("web")
            assert await s.redis.get(probe) is not None, "readiness writes its probe"
            await s.get("/api/state", k="forged")
            async with s.http.get(f"http://127.0.0.1:{ops.port}/metrics") as r:
                text = await r.text()
        finally:
            await runner.cleanup()
        assert 'cinq_web_refusals_total{code="unauthorized",status="401"} 1.0' in text
        assert "cinq_web_feeds 0.0" in text


async def test_without_redis_the_web_table_is_not_ready_but_alive():
    import redis.asyncio as aioredis

    from tests.adapters.web.support import settings

    nowhere = aioredis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.5)
    from adapters.web.cli import WebAdapter
    from adapters.web.config import WebSettings

    s = settings()
    rt = build(s, redis=nowhere)
    web = WebAdapter(s, WebSettings(), rt.gateway, rt.watch())
    await web.start(host="127.0.0.1", port=0)
    ops = Ops(nowhere, rt.keys.probe)
    ops.add(web.metrics, web.watch.problem)
    runner = await ops.start("127.0.0.1", 0, "web")
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://127.0.0.1:{ops.port}/readyz") as r:
                assert r.status == 503
                body = await r.json()
                assert body["status"] == "unavailable" and body["error"].startswith("store: ")
            async with http.get(f"http://127.0.0.1:{web.port}/healthz") as r:
                assert r.status == 200
    finally:
        await runner.cleanup()
        await web.close()
        await nowhere.aclose()


async def test_the_rematch_link_is_for_the_same_viewer_and_refused_without_a_rematch():
    from service.domain.tables import rematch
    from service.domain.weblinks import open_link
    async with Stack() as s:
        table = await s.play_ai(ME)
        status, body = await s.get("/api/next", k=link(table))
        assert status == 404 and body["title"] == "no_rematch"  # none asked (the match runs)
        for bad in ("", "nonsense", link(table, ttl=-1)):
            assert (await s.get("/api/next", k=bad))[0] == 401
        # Finished, and asked: the same person's link to the rematch, a spectator's for a spectator.
        await _finish(s, table)
        now = await s.web.watch.now(table, ME, "en")
        end = next(m for m in now or [] if m.kind == "hand")
        again = next(a for a in end.actions if a.move == "rematch")
        await s.rt.gateway.submit(Input(ME, _private()), token=again.token)
        new = await s.until(lambda t2: t2 is not None, rematch.table_id(table))
        status, body = await s.get("/api/next", k=link(table))
        assert status == 200 and body["table"] == new.id
        claims = open_link([SECRET], body["k"], time.time())
        assert (claims.platform, claims.user, claims.table) == (ME.platform, ME.user, new.id)
        status, body = await s.get("/api/next", k=link(table, None))
        assert status == 200 and open_link([SECRET], body["k"], time.time()).spectator


def _private():
    from service.domain.identities import Room
    return Room(platform=ME.platform, chat=ME.user, kind="private")


async def _finish(s, table: str) -> None:
    """Plays the person's seat (the first legal move each turn) until the match ends."""
    for _ in range(500):
        t = await s.table(table)
        if t.status == "finished":
            return
        now = await s.web.watch.now(table, ME, "en")
        hand = next((m for m in now or [] if m.kind == "hand" and m.actions), None)
        if hand is None:
            await asyncio.sleep(0.02)
            continue
        await s.rt.gateway.submit(Input(ME, _private()), token=hand.actions[0].token)
        await s.until(lambda t2, v=t.version: t2.version > v, table)
    raise AssertionError("the match did not end")
