"""The inbound endpoint: every refusal (status, problem document, nothing touched), acceptance, duplicate
webhook-ids, and the health, metrics and OpenAPI endpoints."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from adapters.webhook.app import command_id
from adapters.webhook.models import Accepted, OutboundMessage, Problem, inbound
from adapters.webhook.openapi import render
from service.store.keys import Keys
from tests.adapters.webhook.support import PLATFORM, WRONG_SECRET, Harness, event, on_platform


@pytest.fixture
async def h(fake_redis):
    """The adapter's HTTP side and a table in group g1 (no worker runs: commands stay where they land)."""
    harness = await Harness(fake_redis, "http://127.0.0.1:9/unused", ws={"rate": 2.0, "burst": 3}).start(
        deliver=False, work=False)
    await harness.client.post(event("/new cinquillo", user="u1"))
    await harness.workers[0].drain()
    harness.table = await harness.adapter.gateway.table_of(_room())
    assert harness.table
    yield harness
    await harness.close()


def _room() -> Any:
    from service.domain.identities import Room

    return Room(platform=PLATFORM, chat="g1", kind="group")


async def _refused(h: Harness, expect: int, title: str, **post: Any) -> dict[str, Any]:
    """POST, and check a problem document came back and nothing moved in Redis."""
    before = await h.fingerprint(h.table)
    payload = post.pop("payload", event("/join", user="u2"))
    status, hdrs, body = await h.client.post(payload, **post)
    assert status == expect, body
    assert hdrs["Content-Type"].startswith("application/problem+json")
    assert body["status"] == expect and body["title"] == title and body["detail"]
    assert body["type"].startswith("urn:cinq:problem:")
    assert await h.fingerprint(h.table) == before, "a refusal changed the tables"
    return body


async def test_an_unknown_platform_is_404(h):
    body = await _refused(h, 404, "Unknown platform", platform="nope")
    assert "nope" in body["detail"]


async def test_an_unknown_route_is_a_problem_too(h):
    async with h.session.get(f"{h.client.base_url}/v1/nothing") as resp:
        assert resp.status == 404 and resp.content_type == "application/problem+json"
    async with h.session.get(f"{h.client.base_url}/v1/platforms/{PLATFORM}/events") as resp:
        assert resp.status == 405 and resp.content_type == "application/problem+json"


async def test_a_missing_signature_is_401(h):
    body = await _refused(h, 401, "Bad or missing signature", headers={"content-type": "application/json"})
    assert "webhook-signature" in body["detail"]


async def test_a_signature_with_a_wrong_secret_is_401(h):
    await _refused(h, 401, "Bad or missing signature", secrets=[WRONG_SECRET])


async def test_a_body_changed_after_signing_is_401(h):
    body = json.dumps(event("/join", user="u2")).encode()
    hdrs = h.client.signed(body)
    await _refused(h, 401, "Bad or missing signature", payload=body.replace(b"u2", b"u3"), headers=hdrs)


@pytest.mark.parametrize("skew", [-400, 400])
async def test_a_timestamp_outside_the_tolerance_is_401(h, skew):
    body = await _refused(h, 401, "Timestamp outside the tolerance", timestamp=int(time.time()) + skew)
    assert "300" in body["detail"]


async def test_a_body_over_the_limit_is_413(h):
    big = event("/join " + "x" * 20_000, user="u2")
    body = await _refused(h, 413, "Body too large", payload=big)
    assert str(h.ws.max_body_bytes) in body["detail"]


async def test_a_chunked_body_over_the_limit_is_413(h):
    async def chunks():
        for _ in range(40):
            yield b"x" * 1024

    before = await h.fingerprint(h.table)
    url = f"{h.client.base_url}/v1/platforms/{PLATFORM}/events"
    async with h.session.post(url, data=chunks(), headers={"content-type": "application/json"}) as resp:
        assert resp.status == 413 and resp.content_type == "application/problem+json"
    assert await h.fingerprint(h.table) == before


async def test_a_body_that_is_not_json_is_415(h):
    body = b"text=/join"
    hdrs = {**h.client.signed(body), "content-type": "application/x-www-form-urlencoded"}
    problem = await _refused(h, 415, "Unsupported media type", payload=body, headers=hdrs)
    assert "application/json" in problem["detail"]


@pytest.mark.parametrize("payload,field", [
    (b"{not json", None),
    (b"[]", None),
    ({"type": "message", "chat": {"id": "g1", "kind": "group"}, "text": "/join"}, "user"),
    ({**event("/join", user="u2"), "extra": 1}, "extra"),
    ({**event("/join", user="u2"), "chat": {"id": "g1", "kind": "channel"}}, "chat.kind"),
    ({**event("/join", user="u2"), "user": {"id": 2}}, "user.id"),
    ({**event("/join", user="u2"), "user": {"id": "u2", "admin": True}}, "user.admin"),
    ({"type": "sticker", "chat": {"id": "g1", "kind": "group"}, "user": {"id": "u2"}}, None),
    ({"type": "action", "chat": {"id": "g1", "kind": "group"}, "user": {"id": "u2"}, "text": "x"}, None),
])
async def test_a_malformed_or_unknown_field_is_400(h, payload, field):
    problem = await _refused(h, 400, "Malformed event", payload=payload if isinstance(payload, bytes)
                             else json.dumps(payload).encode())
    if field is not None:
        assert field in problem["detail"]
        assert any(e["field"].startswith(field) for e in problem["errors"])


async def test_a_sender_over_its_rate_is_429_with_retry_after(h):
    # burst 3, 2 per second: the fourth request at once is refused; other senders are not affected.
    for i in range(3):
        status, _, _ = await h.client.post(event(f"/help {i}", user="u9"))
        assert status == 202
    before = await h.fingerprint(h.table)
    status, hdrs, body = await h.client.post(event("/join", user="u9"))
    assert status == 429 and hdrs["Content-Type"].startswith("application/problem+json")
    assert body["title"] == "Too many requests" and int(hdrs["Retry-After"]) >= 1
    assert await h.fingerprint(h.table) == before
    status, _, _ = await h.client.post(event("/join", user="u8"))
    assert status == 202


async def test_an_accepted_event_becomes_one_command(h):
    before = await h.fingerprint(h.table)
    status, _, body = await h.client.post(event("/join", user="u2"), wid="msg_join_1")
    assert status == 202 and body == {"status": "accepted", "command_id": command_id(PLATFORM, "msg_join_1")}
    after = await h.fingerprint(h.table)
    assert sum(after[k] for k in h.keys.all_commands()) == sum(before[k] for k in h.keys.all_commands()) + 1


async def test_a_repeated_webhook_id_gets_the_same_answer_and_acts_once(h):
    payload = event("/join", user="u2")
    first = await h.client.post(payload, wid="msg_dup")
    before = await h.fingerprint(h.table)
    second = await h.client.post(payload, wid="msg_dup")  # a fresh timestamp and signature, same id
    assert (second[0], second[2]) == (first[0], first[2]) == (202, second[2])
    assert second[1].get("webhook-duplicate") == "true"
    assert await h.fingerprint(h.table) == before, "the redelivery was acted on"
    # Concurrent redeliveries too: each may reach the stream, all as one command, which acts once.
    join = event("/join", user="u3")
    results = await asyncio.gather(*(h.client.post(join, wid="msg_race") for _ in range(5)))
    # (Until one is recorded each is a new request to the sender's rate: some may be told to retry.)
    accepted = {json.dumps(b) for s, _, b in results if s == 202}
    assert len(accepted) == 1 and {s for s, _, _ in results} <= {202, 429}
    # (by the actor, not a substring: a random table id in another command may contain "u3")
    sent = [json.loads(f[b"c"]) for k in h.keys.all_commands() for _, f in await h.redis.xrange(k)]
    ids = {c["id"] for c in sent if (c.get("actor") or {}).get("user") == "u3"}
    assert ids == {json.loads(accepted.pop())["command_id"]}
    await h.workers[0].drain()
    events = await h.workers[0].store.events(h.table)
    assert sum('"PlayerJoined"' in e or "PlayerJoined" in str(e) for e in events) == 3  # u1, u2, u3 once each


async def test_a_webhook_id_reused_for_another_body_is_409(h):
    await h.client.post(event("/join", user="u2"), wid="msg_reuse")
    await _refused(h, 409, "webhook-id reused", payload=event("/leave", user="u2"), wid="msg_reuse")


async def test_health_readiness_and_metrics(h):
    base = h.client.base_url
    async with h.session.get(f"{base}/healthz") as r:
        assert r.status == 200 and (await r.json())["status"] == "ok"
    # readiness and metrics are on the operations listener only (issue 32): the public port says 404
    for path in ("/readyz", "/metrics"):
        async with h.session.get(f"{base}{path}") as r:
            assert r.status == 404
    async with h.session.get(f"{h.ops_url}/readyz") as r:
        assert r.status == 200 and (await r.json())["status"] == "ready"
    await h.client.post(event("/join", user="u2"), platform="nope")
    async with h.session.get(f"{h.ops_url}/metrics") as r:
        text = await r.text()
    assert 'cinq_webhook_requests_total{platform="acme",status="202"}' in text
    assert 'cinq_webhook_requests_total{platform="(unknown)",status="404"}' in text
    assert "cinq_deliveries_total" in text or "cinq_delivery_seconds" in text


async def test_without_redis_not_ready_and_events_are_503_to_retry():
    import aiohttp
    import redis.asyncio as aioredis
    from aiohttp import web

    from adapters.webhook.app import make_app
    from adapters.webhook.config import Platform, WebhookSettings
    from service.ops.health import Ops
    from service.write.gateway import Gateway
    from tests.adapters.webhook.support import SECRETS, Client, settings

    nowhere = aioredis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.5)
    ws = WebhookSettings(platforms=[Platform(name=PLATFORM, secrets=SECRETS, callback_url="http://127.0.0.1:9/")])
    s = settings()
    runner = web.AppRunner(make_app(Gateway(nowhere, s, Keys.of(s)), ws))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    ops = Ops(nowhere, Keys.of(s).probe)
    ops_runner = await ops.start("127.0.0.1", 0, "webhook")
    try:
        async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{ops.port}/readyz") as r:
            assert r.status == 503 and (await r.json())["status"] == "unavailable"
        async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{port}/healthz") as r:
            assert r.status == 200
        async with aiohttp.ClientSession() as s:
            status, hdrs, body = await Client(s, f"http://127.0.0.1:{port}").post(event("/join"))
        assert status == 503 and hdrs["Content-Type"].startswith("application/problem+json")
        assert body["title"] == "Service unavailable" and hdrs["Retry-After"] == "1"
        assert body["type"] == "urn:cinq:problem:store_unavailable"
        assert body["detail"].startswith("the service's store is unavailable (ConnectionError: ")
    finally:
        await ops_runner.cleanup()
        await runner.cleanup()
        await nowhere.aclose()


async def test_the_served_openapi_document_is_the_file_and_up_to_date(h):
    async with h.session.get(f"{h.client.base_url}/openapi.json") as r:
        served = await r.read()
    from adapters.webhook.app import OPENAPI_PATH

    assert served == OPENAPI_PATH.read_bytes()
    assert served.decode() == render(), "openapi.json is stale: python -m adapters.webhook.openapi"


def test_the_openapi_examples_validate_against_the_models():
    from adapters.webhook.app import OPENAPI_PATH

    doc = json.loads(OPENAPI_PATH.read_text())
    post = doc["paths"]["/v1/platforms/{platform}/events"]["post"]
    examples = post["requestBody"]["content"]["application/json"]["examples"]
    assert {inbound.validate_python(e["value"]).type for e in examples.values()} == {"message", "action"}
    outbound = doc["webhooks"]["message"]["post"]["requestBody"]["content"]["application/json"]["example"]
    OutboundMessage.model_validate(outbound)
    for status, resp in post["responses"].items():
        for media_type, media in resp.get("content", {}).items():
            if status == "202":
                Accepted.model_validate(media["example"])
            else:
                assert media_type == "application/problem+json"
                examples = [media["example"]] if "example" in media else [
                    e["value"] for e in media["examples"].values()]
                assert all(Problem.model_validate(e).status == int(status) for e in examples)
    # Every problem type the adapter answers is documented.
    documented = {e["type"] for resp in post["responses"].values()
                  for kind, media in resp.get("content", {}).items() if kind == "application/problem+json"
                  for e in ([media["example"]] if "example" in media else
                            [x["value"] for x in media.get("examples", {}).values()])}
    for code in ("bad_request", "store_unavailable", "store_full", "unavailable", "malformed",
                 "rate_limited", "too_large", "id_reused", "not_json", "unknown_platform"):
        assert f"urn:cinq:problem:{code}" in documented, code


async def test_an_action_event_is_forwarded_with_its_token(fake_redis):
    """A button press reaches the gateway as a token (a bad token is answered in the chat, not by HTTP)."""
    async with on_platform(fake_redis) as (platform, h):
        forged = event(user="u1", chat="dm-u1", kind="private", token="forged.token")
        status, _, _ = await h.client.post(forged)
        assert status == 202
        got = await platform.wait_for(lambda: platform.to_chat("dm-u1"))
        assert got[0]["kind"] == "reply" and got[0]["to"] == {"chat": {"id": "dm-u1", "kind": "private"}}



async def test_a_groups_title_is_kept_for_the_daily_share_buttons_and_a_long_one_refused(h):
    payload = event("/join", user="u2")
    payload["chat"]["title"] = "Los del mus"
    status, _, body = await h.client.post(payload)
    assert status == 202, body
    groups = await h.redis.hgetall(h.adapter.gateway.keys.daily_groups(PLATFORM, "u2"))
    assert groups == {b"g1": b"Los del mus"}
    payload["chat"]["title"] = "x" * 129
    await _refused(h, 400, "Malformed event", payload=payload)
