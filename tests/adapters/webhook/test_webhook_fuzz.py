"""Property-based fuzzing of the inbound endpoint from the OpenAPI document (schemathesis).

Cases are generated from the document (valid events, and invalid ones: negative mode), signed like a
real platform would most of the time (so that they reach parsing, rate limiting and the gateway), and
sent over real HTTP to the adapter.  Every answer must be documented (status, content type, body
schema) and none may be a 5xx.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import fakeredis
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from adapters.webhook import signing
from adapters.webhook.app import OPENAPI_PATH
from tests.adapters.webhook.support import PLATFORM, SECRETS, Harness

SCHEMA = schemathesis.openapi.from_dict(json.loads(OPENAPI_PATH.read_text()))
EVENTS = SCHEMA["/v1/platforms/{platform}/events"]["POST"]
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """The adapter on a loopback port, served by an event loop of its own in a thread (hypothesis drives
    the test synchronously)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    async def up() -> Harness:
        redis = fakeredis.FakeAsyncRedis(server=fakeredis.FakeServer())
        h = Harness(redis, "http://127.0.0.1:9/unused", ws={"rate": 10_000.0, "burst": 10_000})
        return await h.start(deliver=False, work=False)

    h = asyncio.run_coroutine_threadsafe(up(), loop).result(10)
    yield f"http://127.0.0.1:{h.adapter.port}"
    asyncio.run_coroutine_threadsafe(h.close(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)


_n = iter(range(10**9))


def _send(case: Any, base_url: str, sign: bool) -> requests.Response:
    kwargs = case.as_transport_kwargs(base_url=base_url)
    headers = {k: str(v) for k, v in (kwargs.pop("headers", None) or {}).items()}
    if "json" in kwargs:
        body = json.dumps(kwargs.pop("json")).encode()
        headers.setdefault("Content-Type", "application/json")
    else:
        data = kwargs.pop("data", b"")
        body = data if isinstance(data, bytes) else str(data or "").encode()
    if sign:
        # A fresh id per case: one reused for another body is (rightly) a 409.
        headers.update(signing.headers(SECRETS[:1], f"fuzz-{next(_n)}", int(time.time()), body))
    return requests.request(kwargs.pop("method"), kwargs.pop("url"), data=body, headers=headers, timeout=10,
                            **{k: v for k, v in kwargs.items() if k in ("params", "cookies")})


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                 HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])
@given(case=st.one_of(EVENTS.as_strategy(GenerationMode.POSITIVE, path_parameters={"platform": PLATFORM}),
                      EVENTS.as_strategy(GenerationMode.NEGATIVE, path_parameters={"platform": PLATFORM}),
                      EVENTS.as_strategy(GenerationMode.POSITIVE)),
       sign=st.sampled_from([True, True, True, False]))
def test_the_inbound_endpoint_never_answers_5xx_and_answers_as_documented(base_url, case, sign):
    response = _send(case, base_url, sign)
    assert response.status_code < 500, response.text
    case.validate_response(response, checks=CHECKS)
