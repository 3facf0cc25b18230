"""The adapter's HTTP server (aiohttp): inbound events, the OpenAPI document, health and metrics.

``POST /v1/platforms/{platform}/events`` checks, in this order, and refuses with an RFC 9457
``application/problem+json`` at the first failure (nothing is acted on, nothing is written):

1. the platform is registered (404),
2. the body is within the limit (413; read no further than the limit),
3. the Standard Webhooks signature and timestamp (401),
4. the body is JSON (415) of a known event with no unknown field (400),
5. a ``webhook-id`` answered before is answered as the first time (202 and the same body; 409 if the
   body differs) without acting again,
6. the sender's rate (429, with ``Retry-After``),

then hands the event to :meth:`service.write.gateway.Gateway.submit`, records the answer for redeliveries
and answers 202 — in that order, so that a 202 means the command is in its stream, and a failure
anywhere before it (503) leaves nothing that would stop the platform's retry from acting.  What the service
answers arrives later, as callbacks (see :mod:`adapters.webhook.sender`).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, generate_latest
from pydantic import ValidationError
from redis.exceptions import OutOfMemoryError, RedisError

from adapters.webhook import signing
from adapters.webhook.config import WebhookSettings
from adapters.webhook.models import Accepted, ActionEvent, MessageEvent, inbound
from service.domain.identities import Player, Room
from service.domain.inputs import Input
from service.foundation import logs
from service.ops.health import add_liveness
from service.platform.delivery import DeliveryMetrics
from service.platform.inbound import Admission, Answer
from service.store.replicas import NotReplicated
from service.write.gateway import Gateway

OPENAPI_PATH = Path(__file__).with_name("openapi.json")
PROBLEM = "application/problem+json"
EVENTS_ROUTE = "/v1/platforms/{platform}/events"
_Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class WebhookMetrics:
    """Inbound requests by outcome, and the delivery metrics, in one registry."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.inbound = Counter("cinq_webhook_requests", "Inbound webhook requests, by platform and status",
                               ["platform", "status"], registry=self.registry)
        self.delivery = DeliveryMetrics(self.registry)

    def exposition(self) -> bytes:
        """The metrics in Prometheus' text format."""
        return generate_latest(self.registry)


class Refusal(Exception):
    """A request refused with a problem document."""

    def __init__(self, status: int, code: str, title: str, detail: str, headers: dict[str, str] | None = None,
                 **extra: Any) -> None:
        super().__init__(detail)
        self.status, self.code, self.title, self.detail = status, code, title, detail
        self.headers = headers or {}
        self.extra = extra


def problem(status: int, code: str, title: str, detail: str, headers: dict[str, str] | None = None,
            **extra: Any) -> web.Response:
    """An ``application/problem+json`` response."""
    body = {"type": f"urn:cinq:problem:{code}", "title": title, "status": status, "detail": detail, **extra}
    return web.Response(status=status, body=json.dumps(body).encode(), content_type=PROBLEM,
                        headers=headers)


def store_refusal(e: BaseException) -> tuple[str, str, str]:
    """Why the store did not take an event: its problem type's last part, title and what happened."""
    if isinstance(e, OutOfMemoryError):
        return "store_full", "Service store full", "the service's store is full and refuses writes"
    if isinstance(e, NotReplicated) or "NOREPLICAS" in str(e):
        # Taken by the primary but not yet by the replicas a failover could promote: not acknowledged.
        return ("store_not_replicated", "Service store not replicated",
                "the service's store could not copy the event to its replicas in time")
    return "store_unavailable", "Service unavailable", "the service's store is unavailable"


def store_problem(e: BaseException) -> web.Response:
    """The 503 of an event the store did not take: full (Redis refuses writes for lack of memory,
    ``store_full``), not on enough replicas in time (``store_not_replicated``: a failover could have
    lost it) or unreachable or failing (``store_unavailable``), with the store's own message."""
    code, title, what = store_refusal(e)
    return problem(503, code, title, f"{what} ({logs.error_text(e, 200)}); retry later", {"Retry-After": "1"})


def command_id(platform: str, webhook_id: str) -> str:
    """The service command id of a request: the same for a redelivery, so the gateway sees a duplicate."""
    return "wh-" + hashlib.sha256(f"{platform}\n{webhook_id}".encode()).hexdigest()[:24]


async def _read_limited(request: web.Request, limit: int) -> bytes:
    """The body, refusing (413) as soon as it is longer than ``limit`` (never read past it)."""
    too_big = Refusal(413, "too_large", "Body too large", f"the body must be at most {limit} bytes")
    if request.content_length is not None and request.content_length > limit:
        raise too_big
    chunks, size = [], 0
    while True:
        chunk = await request.content.read(limit + 1 - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise too_big
    return b"".join(chunks)


def _is_json(content_type: str) -> bool:
    return content_type == "application/json" or (content_type.startswith("application/")
                                                  and content_type.endswith("+json"))


def _validation_detail(e: ValidationError) -> tuple[str, list[dict[str, str]]]:
    errors = []
    for err in e.errors(include_url=False, include_input=False):
        # The first step of a location is the event type (the union's tag): the field is the rest.
        loc = err["loc"][1:] if err["loc"][:1] in (("message",), ("action",)) else err["loc"]
        errors.append({"field": ".".join(str(p) for p in loc) or "(body)", "problem": err["msg"]})
    first = errors[0]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{first['field']}: {first['problem']}{more}", errors


def make_app(gateway: Gateway, settings: WebhookSettings, *, metrics: WebhookMetrics | None = None,
             clock: Callable[[], float] = time.time) -> web.Application:
    """The adapter's aiohttp application over a gateway (whose Redis also keeps answers and rates)."""
    redis = gateway.redis
    metrics = metrics or WebhookMetrics()
    admission = Admission(redis, gateway.keys, settings.rate, settings.burst)
    openapi = OPENAPI_PATH.read_bytes()
    log = logs.get("webhook")

    async def events(request: web.Request) -> web.Response:
        name = request.match_info["platform"]
        try:
            status, body, hdrs = await _handle(request, name)
            resp = web.json_response(body, status=status, headers=hdrs)
        except Refusal as r:
            status = r.status
            resp = problem(r.status, r.code, r.title, r.detail, r.headers, **r.extra)
            log.info("refused", platform=name, status=r.status, code=r.code)
        except (RedisError, OSError) as e:
            # Nothing was acted on (or the answer was forgotten): the platform's retry will act.
            status, resp = 503, store_problem(e)
            log.warning(store_refusal(e)[0], platform=name, error=logs.error_text(e, 200))
        known = settings.platform(name) is not None
        metrics.inbound.labels(name if known else "(unknown)", str(status)).inc()
        return resp

    async def _handle(request: web.Request, name: str) -> tuple[int, dict[str, Any], dict[str, str]]:
        platform = settings.platform(name)
        if platform is None:
            raise Refusal(404, "unknown_platform", "Unknown platform",
                          f"no platform called {name!r} is registered")
        body = await _read_limited(request, settings.max_body_bytes)
        now = clock()
        try:
            wid = signing.verify(platform.secret_values(), request.headers, body, now, settings.tolerance_s)
        except signing.SignatureError as e:
            title = "Timestamp outside the tolerance" if e.code == "timestamp" else "Bad or missing signature"
            raise Refusal(401, f"signature_{e.code}", title, e.detail,
                          {"WWW-Authenticate": 'StandardWebhooks realm="cinq"'}) from None
        if len(wid) > 256:
            raise Refusal(400, "malformed", "Malformed request", "webhook-id must be at most 256 characters")
        if not _is_json(request.content_type):
            raise Refusal(415, "not_json", "Unsupported media type",
                          f"the body must be application/json, not {request.content_type or 'nothing'}")
        try:
            event = inbound.validate_json(body)
        except ValidationError as e:
            detail, errors = _validation_detail(e)
            if any(err["type"] == "json_invalid" for err in e.errors()):
                detail, errors = "the body is not valid JSON", []
            raise Refusal(400, "malformed", "Malformed event", detail, errors=errors) from None
        digest = hashlib.sha256(body).hexdigest()[:32]
        cid = command_id(name, wid)
        answer = Answer(digest, 202, Accepted(command_id=cid).model_dump())
        admitted = await admission.admit(name, event.user.id, wid, now)
        if admitted.kind == "limited":
            raise Refusal(429, "rate_limited", "Too many requests",
                          f"this sender may send {settings.rate:g} events per second; retry later",
                          {"Retry-After": str(max(1, round(admitted.wait_s + 0.499)))})
        if admitted.earlier is not None:
            if admitted.earlier.digest != digest:
                raise Refusal(409, "id_reused", "webhook-id reused",
                              "this webhook-id was already used for a different body")
            return admitted.earlier.status, admitted.earlier.body, {"webhook-duplicate": "true"}
        # Acted on first, recorded after: a failure in between answers 5xx with no answer on record,
        # so the platform's retry acts again, and acting is idempotent by the command id.
        await _submit(name, event, cid)
        await admission.record(name, event.user.id, wid, answer)
        return answer.status, answer.body, {}

    async def _submit(name: str, event: MessageEvent | ActionEvent, cid: str) -> None:
        user = Player(platform=name, user=event.user.id, name=event.user.name)
        room = Room(platform=name, chat=event.chat.id, kind=event.chat.kind)
        if isinstance(event, ActionEvent):
            said = Input(user, room, command_id=cid, language=event.user.locale, replaces=event.message)
            await gateway.submit(said, token=event.token)
        else:
            said = Input(user, room, command_id=cid, language=event.user.locale, room_title=event.chat.title)
            await gateway.submit(said, event.text)

    async def openapi_view(_: web.Request) -> web.Response:
        return web.Response(body=openapi, content_type="application/json")

    # The body is read by the handler up to the limit; aiohttp's own cap is only a backstop.
    app = web.Application(client_max_size=settings.max_body_bytes + 1, middlewares=[_problems(log)])
    app.router.add_post(EVENTS_ROUTE, events)
    app.router.add_get("/openapi.json", openapi_view)
    # /readyz and /metrics are on the process's operations listener, not on this public port
    return add_liveness(app)


def _problems(log: Any) -> Callable[..., Any]:
    """Every error of the app as a problem document (unknown routes, wrong methods, failures)."""

    @web.middleware
    async def middleware(request: web.Request, handler: _Handler) -> web.StreamResponse:
        try:
            return await handler(request)
        except web.HTTPException as e:
            if e.status < 400:
                raise
            log.info("refused", path=request.path, status=e.status, code="http")
            return problem(e.status, "http", e.reason, e.text or e.reason, headers={
                k: v for k, v in e.headers.items() if k.lower() == "allow"})
        except Exception as e:
            log.error("failed", path=request.path, error=logs.error_text(e))
            return problem(503, "unavailable", "Service unavailable",
                           "the service could not take the event now; retry later", {"Retry-After": "1"})

    return middleware
