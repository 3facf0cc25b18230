"""``cinq play --web`` without an AI level in its words: the page offers the level before the deal.

The process prints a link to ``/new`` holding a *start key* (random, made by this process, never
stored); the page shows the game, the three levels (medium chosen, as ``/play`` without one) and
Deal, and sends ``POST /api/new`` ``{"level"}`` with ``Authorization: Start <key>``.  The first good
request deals the match (``/play`` with the words given and the level) and answers the person's link
to it; every later one answers the same link (a reload, a second press or a replayed request deal
nothing more).  A missing or wrong key is 401, a level that is not one (or a body that is not JSON)
400, each in the page's language, and nothing is dealt.  Only ``cinq play --web`` adds these routes:
a deployment (``cinq serve``, ``cinq web``) has no start key and no ``/new``.
"""

from __future__ import annotations

import asyncio
import hmac
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import web

from service.protocol.i18n import pick_locale, translate
from service.protocol.parse import LEVELS

_HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
            "Cache-Control": "no-store"}

Deal = Callable[[str], Awaitable[str]]


def _refusal(status: int, code: str, locale: str) -> web.HTTPException:
    """A refusal as problem JSON (as the page's API answers them), its detail in the page's language."""
    cls = {400: web.HTTPBadRequest, 401: web.HTTPUnauthorized}[status]
    body = {"type": f"urn:cinq:problem:{code}", "status": status, "title": code,
            "detail": translate(locale, f"web.refused.{code}")}
    return cls(text=json.dumps(body), content_type="application/problem+json", headers=_HEADERS)


def add_level_choice(app: web.Application, *, key: str, deal: Deal, index: Path) -> None:
    """Add ``GET /new`` (the page) and ``POST /api/new`` to ``app`` (before it starts): ``key`` is the
    start key, ``deal(level)`` deals the match and returns the person's link token (``k``), ``index``
    the page's file."""
    lock = asyncio.Lock()
    dealt: list[str] = []  # the link token, once dealt

    async def page(_: web.Request) -> web.StreamResponse:
        return web.FileResponse(index, headers={"Cache-Control": "no-cache"})

    async def new(request: web.Request) -> web.Response:
        lang = request.query.get("lang")
        if lang not in ("es", "en"):
            lang = pick_locale((request.headers.get("Accept-Language") or "").split(",")[0])
        given = request.headers.get("Authorization", "")
        if not given.startswith("Start ") or not hmac.compare_digest(given[6:].encode(), key.encode()):
            raise _refusal(401, "unauthorized", lang)
        try:
            level = (await request.json()).get("level")
        except (ValueError, AttributeError):
            raise _refusal(400, "bad_request", lang) from None
        if level not in LEVELS:
            raise _refusal(400, "bad_request", lang)
        async with lock:  # two presses at once deal one match
            if not dealt:
                dealt.append(await deal(level))
        return web.json_response({"k": dealt[0]}, headers=_HEADERS)

    app.router.add_get("/new", page)
    app.router.add_post("/api/new", new)
