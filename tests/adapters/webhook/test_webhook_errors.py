"""Every refusal of the webhook adapter is a problem document and one log line: the HTTP parser's
own (over a raw socket on loopback), and the 503s of a store that is unreachable or full (a real
redis-server of the test's own, made to refuse writes with ``CONFIG SET maxmemory``)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging

import pytest

from tests.adapters.webhook.support import PLATFORM, Harness, event, on_platform

EVENTS = f"/v1/platforms/{PLATFORM}/events".encode()
BAD_REQUESTS = {
    "nul_in_header": b"POST " + EVENTS + b" HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\nContent-Length: 0\r\n\r\n",
    "bad_chunk_size": b"POST " + EVENTS + b" HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                      b"Content-Type: application/json\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
    "bad_later_chunk": b"POST " + EVENTS + b" HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                       b"Content-Type: application/json\r\n\r\n2\r\n{}\r\nQQ\r\n\r\n",
    "not_http": b"GARBAGE\r\n\r\n",
    "bad_version": b"GET /healthz HTTP/9.x\r\nHost: x\r\n\r\n",
}


async def _raw(port: int, data: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send bytes on a fresh connection; the status, headers and body of the answer (read to EOF:
    the server closes a connection it could not parse)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        await writer.drain()
        raw = await reader.read()
    finally:
        writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, body


@pytest.mark.parametrize("name", list(BAD_REQUESTS))
async def test_the_http_parsers_refusals_are_problem_documents_and_one_log_line(fake_redis, log_lines,
                                                                                caplog, name):
    h = await Harness(fake_redis, "http://127.0.0.1:9/").start(deliver=False, work=False)
    try:
        before = await h.fingerprint()
        caplog.set_level(logging.DEBUG, logger="aiohttp")
        status, headers, body = await _raw(h.adapter.port, BAD_REQUESTS[name])
        assert status == 400
        assert headers["content-type"].startswith("application/problem+json")
        doc = json.loads(body)
        assert doc["type"] == "urn:cinq:problem:bad_request" and doc["status"] == 400
        assert doc["detail"].startswith("the request could not be read as HTTP: ")
        lines = [json.loads(line) for line in log_lines.getvalue().splitlines()]
        assert [line["event"] for line in lines] == ["bad_http_request"]
        assert lines[0]["status"] == 400 and lines[0]["error"].startswith(("BadHttpMessage", "BadHttpMethod",
                                                                          "BadStatusLine", "Transfer"))
        assert "Traceback" not in log_lines.getvalue()
        assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.WARNING], \
            "aiohttp logged the error itself"
        assert await h.fingerprint() == before  # nothing acted on
        # The server still serves: a good request after a bad one.
        status, _, _ = await h.client.post(event("/help"))
        assert status == 202
    finally:
        await h.close()


async def test_a_full_store_is_a_503_store_full_with_the_stores_message(own_redis, log_lines):
    h = await Harness(own_redis, "http://127.0.0.1:9/").start(deliver=False, work=False)
    try:
        await own_redis.config_set("maxmemory", 1)  # Redis answers, and refuses every write (OOM)
        try:
            status, headers, doc = await h.client.post(event("/help"))
            async with h.session.get(f"{h.ops_url}/readyz") as r:
                ready = r.status, await r.json()
        finally:
            await own_redis.config_set("maxmemory", 0)
        assert status == 503 and headers["Retry-After"] == "1"
        assert headers["Content-Type"].startswith("application/problem+json")
        assert doc["type"] == "urn:cinq:problem:store_full" and doc["title"] == "Service store full"
        assert "OutOfMemoryError: " in doc["detail"] and "maxmemory" in doc["detail"]
        full = [json.loads(line) for line in log_lines.getvalue().splitlines()]
        assert [(line["event"], line["level"]) for line in full] == [("store_full", "warning")]
        assert "maxmemory" in full[0]["error"]
        assert ready[0] == 503 and "OutOfMemoryError" in ready[1]["error"]
        status, _, _ = await h.client.post(event("/help"))  # the platform's retry, once there is room
        assert status == 202
    finally:
        await h.close()


async def test_a_platform_ties_callbacks_to_its_request_as_the_readme_says(fake_redis):
    """The README's recipe: ``wh-`` + 24 hex digits of SHA-256 of "<platform>\\n<webhook-id>" is the
    request's command id, and each callback it caused has the id ``<command id>:<n>``."""
    async with on_platform(fake_redis) as (platform, h):
        wids = {"help": "req-help-1", "new": "req-new-1"}
        for text, wid in (("/help", wids["help"]), ("/new cinquillo", wids["new"])):
            status, _, body = await h.client.post(event(text), wid=wid)
            expected = "wh-" + hashlib.sha256(f"{PLATFORM}\n{wid}".encode()).hexdigest()[:24]
            assert status == 202 and body["command_id"] == expected
        for text, wid in wids.items():
            cid = "wh-" + hashlib.sha256(f"{PLATFORM}\n{wid}".encode()).hexdigest()[:24]
            got = await platform.wait_for(lambda cid=cid: [m for m in platform.received
                                                           if m["id"].startswith(cid + ":")])
            assert [m["id"] for m in got] == [f"{cid}:0"], text


async def test_a_route_or_method_refusal_is_a_problem_document_and_one_log_line(fake_redis, log_lines):
    h = await Harness(fake_redis, "http://127.0.0.1:9/").start(deliver=False, work=False)
    try:
        async with h.session.get(f"{h.client.base_url}/nope") as r:
            assert r.status == 404 and r.content_type == "application/problem+json"
        async with h.session.get(f"{h.client.base_url}/v1/platforms/{PLATFORM}/events") as r:
            assert r.status == 405 and r.content_type == "application/problem+json"
        lines = [json.loads(line) for line in log_lines.getvalue().splitlines()]
        assert [(line["event"], line["status"]) for line in lines] == [("refused", 404), ("refused", 405)]
    finally:
        await h.close()
