"""The OpenAPI 3.1 document of the webhook contract, built from the wire models.

``openapi.json`` next to this module is what the adapter serves at ``/openapi.json``; regenerate it
after changing a model with ``python -m adapters.webhook.openapi`` (a test fails when it is stale).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from pydantic.json_schema import models_json_schema

from adapters.webhook.models import (
    ACTION_EXAMPLE,
    MESSAGE_EXAMPLE,
    Accepted,
    ActionEvent,
    MessageEvent,
    OutboundMessage,
    Problem,
)

REF = "#/components/schemas/{model}"

_SIGNED = [{"$ref": f"#/components/parameters/{h}"}
           for h in ("webhook-id", "webhook-timestamp", "webhook-signature")]

OUTBOUND_EXAMPLE = {
    "type": "message", "id": "wh-3f1c0a9e27b4d6c85e10a2f7:1", "platform": "acme",
    "to": {"user": {"id": "u-1"}}, "table": "k3mz0q7r2a", "version": 7, "kind": "hand", "locale": "en",
    "text": "Your turn. Your hand: 5 of cups, 4 of coins, 12 of swords",
    "buttons": [{"label": "5 of cups", "token": "k3mz0q7r2a.0.7.5c.QW5hIGhhcyBhIHRva2Vu"}],
    "view": {"game": "cinquillo", "seat": 0, "hand": ["5c", "4o", "12e"], "to_move": 0},
}

PROBLEMS: dict[str, Any] = {
    "400": [("Malformed event", "user.id: Field required", "malformed"),
            ("Bad request", "the request could not be read as HTTP: BadHttpMessage: 400, message: "
             "Invalid header value char", "bad_request")],
    "401": ("Bad or missing signature", "no webhook-signature matches a secret of this platform",
            "signature_mismatch"),
    "404": ("Unknown platform", "no platform called 'nope' is registered", "unknown_platform"),
    "409": ("webhook-id reused", "this webhook-id was already used for a different body", "id_reused"),
    "413": ("Body too large", "the body must be at most 16384 bytes", "too_large"),
    "415": ("Unsupported media type", "the body must be application/json, not text/plain", "not_json"),
    "429": ("Too many requests", "this sender may send 5 events per second; retry later", "rate_limited"),
    "503": [("Service unavailable", "the service's store is unavailable (ConnectionError: Error 111 "
             "connecting to redis:6379. Connection refused.); retry later", "store_unavailable"),
            ("Service store full", "the service's store is full and refuses writes (OutOfMemoryError: "
             "command not allowed when used memory > 'maxmemory'.); retry later", "store_full"),
            ("Service store not replicated", "the service's store could not copy the event to its replicas "
             "in time (NotReplicated: only 0 of 1 replicas confirmed the write within 1000 ms); retry later",
             "store_not_replicated"),
            ("Service unavailable", "the service could not take the event now; retry later", "unavailable")],
}
"""Each refusal status with its problem types: (title, an example detail, the type's last part)."""


def _problem(status: str) -> dict[str, Any]:
    kinds = PROBLEMS[status] if isinstance(PROBLEMS[status], list) else [PROBLEMS[status]]
    media: dict[str, Any] = {"schema": {"$ref": REF.format(model="Problem")}}
    examples = {code: {"type": f"urn:cinq:problem:{code}", "title": title, "status": int(status),
                       "detail": detail} for title, detail, code in kinds}
    if len(examples) == 1:
        media["example"] = next(iter(examples.values()))
    else:
        media["examples"] = {code: {"summary": ex["title"], "value": ex} for code, ex in examples.items()}
    out: dict[str, Any] = {"description": " / ".join(dict.fromkeys(t for t, _, _ in kinds)),
                           "content": {"application/problem+json": media}}
    if status in ("429", "503"):
        out["headers"] = {"Retry-After": {"schema": {"type": "integer"}, "description": "seconds"}}
    return out


def document() -> dict[str, Any]:
    """The OpenAPI document (a dict, deterministic)."""
    _, schemas = models_json_schema(
        [(m, "validation") for m in (MessageEvent, ActionEvent, Accepted, Problem, OutboundMessage)],
        ref_template=REF)
    components = schemas["$defs"]
    accepted_example = {"status": "accepted", "command_id": "wh-3f1c0a9e27b4d6c85e10a2f7"}
    header = {"in": "header", "required": True}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Cinquillo and 535 — chat platform webhook",
            "version": "1.0.0",
            "description": (
                "How any chat platform hosts matches of Cinquillo and 535 over plain HTTP. The platform "
                "POSTs what its users write or press to `/v1/platforms/{platform}/events`; the service "
                "POSTs what they should see to the platform's registered callback URL (see `webhooks`). "
                "Both ways are signed as Standard Webhooks specifies (HMAC-SHA256 over "
                "`id.timestamp.body`, 5-minute tolerance). Refusals are RFC 9457 problem details."),
        },
        "paths": {
            "/v1/platforms/{platform}/events": {"post": {
                "operationId": "postEvent",
                "summary": "A message or a button press of a user of the platform",
                "description": (
                    "Text messages carry the chat command protocol (`/new cinquillo`, `/join`, `/start`, "
                    "`/move 5o`, `/help`...). Button presses carry the `token` of one of the `buttons` "
                    "of an earlier callback. A repeated `webhook-id` gets the first answer again and "
                    "is not acted on twice."),
                "parameters": [{"name": "platform", "in": "path", "required": True,
                                "schema": {"type": "string"}, "example": "acme"}, *_SIGNED],
                "requestBody": {"required": True, "content": {"application/json": {
                    "schema": {"oneOf": [{"$ref": REF.format(model="MessageEvent")},
                                         {"$ref": REF.format(model="ActionEvent")}],
                               "discriminator": {"propertyName": "type", "mapping": {
                                   "message": REF.format(model="MessageEvent"),
                                   "action": REF.format(model="ActionEvent")}}},
                    "examples": {
                        "message": {"summary": "a command typed in a group", "value": MESSAGE_EXAMPLE},
                        "action": {"summary": "a button pressed in a private chat", "value": ACTION_EXAMPLE},
                    }}}},
                "responses": {
                    "202": {"description": "Accepted: the service will act on it; answers come as callbacks",
                            "content": {"application/json": {"schema": {"$ref": REF.format(model="Accepted")},
                                                             "example": accepted_example}}},
                    **{s: _problem(s) for s in PROBLEMS},
                },
            }},
            "/openapi.json": {"get": {"operationId": "getOpenapi", "summary": "This document",
                                      "responses": {"200": {"description": "The OpenAPI document"}}}},
            "/healthz": {"get": {"operationId": "getHealthz", "summary": "Liveness",
                                 "responses": {"200": {"description": "The process answers"}}}},
        },
        "webhooks": {
            "message": {"post": {
                "operationId": "deliverMessage",
                "summary": "A message for a chat or a person, POSTed to the platform's callback URL",
                "description": (
                    "Signed like inbound events, with the secrets of the platform (one signature each). "
                    "`webhook-id` is the message `id`: the same on every retry and replay, so use it to "
                    "drop duplicates. Answer 2xx once taken. 5xx, 408, 429 and network errors are "
                    "retried with exponential backoff and jitter (a `Retry-After` is honoured); other "
                    "answers, and the last failed retry, put the message in the dead letters. Messages "
                    "`to` a `user` are private: show them to that person only. A table's messages to one "
                    "chat or person are sent one at a time, in order."),
                "parameters": _SIGNED,
                "requestBody": {"required": True, "content": {"application/json": {
                    "schema": {"$ref": REF.format(model="OutboundMessage")}, "example": OUTBOUND_EXAMPLE}}},
                "responses": {"200": {"description": "Taken (any 2xx)"},
                              "429": {"description": "Slow down; retried after Retry-After"},
                              "503": {"description": "Retried later"}},
            }},
        },
        "components": {
            "schemas": components,
            "parameters": {
                "webhook-id": {"name": "webhook-id", **header, "schema": {"type": "string", "maxLength": 256},
                               "description": "Unique id of this event; the same on a redelivery",
                               "example": "msg_2b7Xk1"},
                "webhook-timestamp": {"name": "webhook-timestamp", **header,
                                      "schema": {"type": "string", "pattern": "^[0-9]+$"},
                                      "description": "Unix seconds; within 5 minutes of the receiver's clock",
                                      "example": "1764420000"},
                "webhook-signature": {"name": "webhook-signature", **header, "schema": {"type": "string"},
                                      "description": ("Space-separated `v1,<base64 HMAC-SHA256 of "
                                                      "\"id.timestamp.body\">`, one per secret"),
                                      "example": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="},
            },
        },
    }


def render() -> str:
    """The document as it is stored in ``openapi.json``."""
    return json.dumps(document(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    from adapters.webhook.app import OPENAPI_PATH

    OPENAPI_PATH.write_text(render(), encoding="utf-8")
    sys.exit(0)
