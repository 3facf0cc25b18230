"""The web table's HTTP server (aiohttp): the page, a small JSON API and each viewer's live feed.

Who may open what is decided here from credentials only, and what they see by the service
(:mod:`service.platform.watch`): a viewer holds a *link token* (``k``,
:mod:`service.domain.weblinks`) bound to (platform, user, table), or to a table alone for a
spectator; a Telegram Mini App trades its ``initData`` for one (``POST /api/session``).  The page
sends it in ``Authorization: Link <k>`` (``?k=`` is still read, for clients that cannot set a
header; the page's own address carries it only as the chat's link did).  A missing,
forged or expired credential gets 401, a move by a spectator or with another table's action token
403, and nothing is shown either way.

- ``GET /`` the page; ``/static/*`` its script, style and deck;
- ``GET /api/i18n?lang=`` the page's texts and every card's spoken name, from the catalogues;
- ``GET /api/state`` what the viewer is shown now;
- ``GET /api/events`` Server-Sent Events: ``state`` first, then every ``message`` with the outbox
  entry id as its SSE id (``Last-Event-ID`` on a reconnect resumes after it);
- ``POST /api/move`` ``{"token", "id"}``: an action token from the viewer's own hand message;
- ``POST /api/daily`` ``{"game", "id"}``, with a person's link (``Authorization: Link``) or, from a
  Telegram Mini App opened without a table, ``"init_data"``: the deal of the day
  (:mod:`service.daily`): the person's attempt (a link to it) or, once played, their standing;
- ``GET /api/replay/<table>`` a finished match step by step (public moves, every hand at the end);
- ``GET /api/next`` the viewer's link to their table's rematch, once someone asked for it;
  403 ``embargoed`` while other tables still play its deal (a tournament round's: G-1,
  :mod:`service.domain.embargo`), as ``/api/state`` and ``/api/events`` are for anyone not seated
  at such a table;
- ``GET /healthz``, ``/readyz``, ``/metrics`` as every role serves them (:mod:`service.ops.health`).
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp_sse import sse_response
from redis.exceptions import RedisError

from adapters.web.config import WebSettings
from adapters.web.daily import daily_handler
from adapters.web.feeds import FeedRefused, Feeds
from adapters.web.hardening import HEADERS, hardened
from adapters.web.initdata import InitDataError, check_init_data
from adapters.web.metrics import WebMetrics
from adapters.web.payload import catalogue, page_message
from service.domain.identities import Player, Room
from service.domain.inputs import Input
from service.domain.tokens import TokenError, open_token
from service.domain.weblinks import LinkClaims, LinkError, issue_link, open_link
from service.ops.health import add_liveness
from service.platform.inbound import Admission
from service.platform.revocations import Revocations
from service.platform.watch import Embargoed, Ended, Lagging, Watch
from service.protocol import text
from service.protocol.i18n import pick_locale, translate
from service.protocol.i18n.render import move_text
from service.write.gateway import Gateway

STATIC = Path(__file__).with_name("static")
_TABLE_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_ID_RE = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
FEED_RETRY_S = 5.0
"""A refused feed's ``Retry-After``: a page's reconnect waits this long."""
_SECURITY_HEADERS = {**HEADERS, "Cache-Control": "no-store"}


@dataclass(frozen=True)
class Viewer:
    """Who is looking at which table: a person, or a spectator (``person`` None)."""

    table: str
    person: Player | None
    locale: str


def _refusal(status: int, code: str, locale: str, metrics: WebMetrics | None = None,
             retry_after_s: float | None = None) -> web.HTTPException:
    """A refusal as problem JSON, its ``detail`` in the viewer's language."""
    if metrics is not None:
        metrics.refused.labels(str(status), code).inc()
    cls = {400: web.HTTPBadRequest, 401: web.HTTPUnauthorized, 403: web.HTTPForbidden,
           404: web.HTTPNotFound, 415: web.HTTPUnsupportedMediaType, 429: web.HTTPTooManyRequests,
           503: web.HTTPServiceUnavailable}[status]
    body = {"type": f"urn:cinq:problem:{code}", "status": status, "title": code,
            "detail": translate(locale, f"web.refused.{code}")}
    headers = dict(_SECURITY_HEADERS)
    if retry_after_s is not None:
        headers["Retry-After"] = str(max(1, math.ceil(retry_after_s)))
    return cls(text=json.dumps(body), content_type="application/problem+json", headers=headers)


def _lang(request: web.Request) -> str:
    lang = request.query.get("lang")
    if lang in ("es", "en"):
        return lang
    return pick_locale((request.headers.get("Accept-Language") or "").split(",")[0])


def make_app(gateway: Gateway, watch: Watch, ws: WebSettings, *,
             clock: Callable[[], float] = time.time, metrics: WebMetrics | None = None) -> web.Application:
    """The adapter's application over a gateway (moves in) and a watch (what each viewer sees),
    with ``/healthz`` (liveness); its readiness (``watch.problem``) and ``metrics`` go to the
    operations listener (:mod:`service.ops.health`)."""
    secrets = gateway.secrets
    metrics = metrics or WebMetrics()

    feeds = Feeds(ws.feed_limits())
    admission = Admission(gateway.redis, gateway.keys, ws.rate, ws.burst)
    revocations = Revocations(gateway.redis, gateway.keys)

    def refusal(status: int, code: str, locale: str, retry_after_s: float | None = None) -> web.HTTPException:
        return _refusal(status, code, locale, metrics, retry_after_s)

    async def limit(person: Player, locale: str) -> None:
        """A token of the person's bucket (the webhook's limiter, service.platform.inbound) for a
        request that acts, or a 429 ``too_fast`` with ``Retry-After``: one round trip, no command."""
        try:
            over = await admission.take(person.platform, person.user, clock())
        except RedisError:
            raise refusal(503, "unavailable", locale, retry_after_s=FEED_RETRY_S) from None
        if over is not None:
            raise refusal(429, "too_fast", locale, retry_after_s=over.wait_s)

    async def viewer(request: web.Request) -> Viewer:
        k = request.query.get("k") or ""
        auth = request.headers.get("Authorization", "")
        if auth.startswith("Link "):
            k = auth[5:]
        lang = _lang(request)
        try:
            claims: LinkClaims = open_link(secrets, k, clock())
        except LinkError as e:
            raise refusal(401, "expired" if e.code == "expired" else "unauthorized", lang) from None
        try:
            withdrawn = await revocations.revoked(claims, k)
        except RedisError:
            raise refusal(503, "unavailable", lang, retry_after_s=FEED_RETRY_S) from None
        if withdrawn:  # an operator's cinq web revoke
            raise refusal(401, "revoked", lang)
        if claims.spectator:
            return Viewer(claims.table, None, lang)
        assert claims.platform is not None and claims.user is not None
        person = Player(platform=claims.platform, user=claims.user)
        locale = request.query.get("lang") or await gateway.locale_of(person)
        return Viewer(claims.table, person, locale if locale in ("es", "en") else "en")

    async def index(_: web.Request) -> web.FileResponse:
        return web.FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    async def i18n(request: web.Request) -> web.Response:
        return web.json_response(catalogue(_lang(request)), headers={"Cache-Control": "max-age=3600"})

    async def session(request: web.Request) -> web.Response:
        lang = _lang(request)
        try:
            body = await request.json()
            raw = str(body.get("init_data") or "")
            table = body.get("table")
        except (ValueError, AttributeError):
            raise refusal(400, "bad_request", lang) from None
        bot_token = ws.bot_token_value()
        if not bot_token:
            raise refusal(401, "unauthorized", lang)
        try:
            data = check_init_data(raw, bot_token, clock(), ws.init_data_max_age_s)
        except InitDataError as e:
            raise refusal(401, "expired" if e.code == "expired" else "unauthorized", lang) from None
        table = table or data.start_param
        if not isinstance(table, str) or not _TABLE_RE.match(table):
            raise refusal(400, "bad_request", lang)
        await limit(Player(platform="telegram", user=data.user_id), lang)
        k = issue_link(secrets[0], table=table, platform="telegram", user=data.user_id,
                       expires=clock() + ws.session_ttl_s)
        return web.json_response({"k": k, "table": table, "locale": pick_locale(data.language_code)},
                                 headers=_SECURITY_HEADERS)

    async def now(v: Viewer) -> list[Any] | None:
        try:
            # A link opens its table until a while after the match ended (the end, the replay,
            # "Play again"), then no more (issue 32, 8).
            return await watch.now(v.table, v.person, v.locale, ended_before=clock() - ws.after_end_s)
        except Embargoed:
            raise refusal(403, "embargoed", v.locale) from None
        except Ended:
            raise refusal(401, "expired", v.locale) from None

    async def state(request: web.Request) -> web.Response:
        v = await viewer(request)
        msgs = await now(v)
        if msgs is None:
            raise refusal(404, "not_found", v.locale)
        return web.json_response({"table": v.table, "spectator": v.person is None, "locale": v.locale,
                                  "position": await watch.last_id(v.table),
                                  "messages": [page_message(m, v.person, v.locale, recent=True)
                                               for m in msgs]},
                                 headers=_SECURITY_HEADERS)

    async def next_table(request: web.Request) -> web.Response:
        """The viewer's link to the rematch of their table, once someone asked for it: the same person
        (or a spectator), another table; what they see there is the watch's to say, as on any."""
        v = await viewer(request)
        following = await watch.rematch_of(v.table)
        if following is None:
            raise refusal(404, "no_rematch", v.locale)
        who = v.person
        k = issue_link(secrets[0], table=following, expires=clock() + ws.session_ttl_s,
                       platform=who.platform if who else None, user=who.user if who else None)
        return web.json_response({"k": k, "table": following}, headers=_SECURITY_HEADERS)

    async def events(request: web.Request) -> web.StreamResponse:
        v = await viewer(request)
        after = request.headers.get("Last-Event-ID") or request.query.get("after") or ""
        if not re.fullmatch(r"\d{1,20}-\d{1,20}", after):
            after = ""
        person = v.person
        try:
            with feeds.open(v.table, person.platform if person else None, person.user if person else None):
                metrics.feeds.inc()
                try:
                    return await _opened_feed(request, v, after)
                finally:
                    metrics.feeds.dec()
        except FeedRefused as e:  # nothing was read for it: a refusal costs no Redis round trip
            raise refusal(e.status, e.code, v.locale, retry_after_s=FEED_RETRY_S) from None

    async def _opened_feed(request: web.Request, v: Viewer, after: str) -> web.StreamResponse:
        try:
            position = after or await watch.last_id(v.table)
            msgs = await now(v)
        except RedisError:
            raise refusal(503, "unavailable", v.locale, retry_after_s=FEED_RETRY_S) from None
        if msgs is None:
            raise refusal(404, "not_found", v.locale)
        return await _feed(request, v, position, msgs)

    async def _feed(request: web.Request, v: Viewer, position: str, msgs: list[Any]) -> web.StreamResponse:
        resp = None
        try:
            async with sse_response(request, headers=_SECURITY_HEADERS, ping_interval=ws.ping_s) as resp:
                first = {"table": v.table, "spectator": v.person is None, "locale": v.locale,
                         "messages": [page_message(m, v.person, v.locale, recent=True) for m in msgs]}
                # The state is what was shown at outbox entry ``position``: its id, so that a page that
                # reconnects before any message came resumes from there (and misses nothing).
                await resp.send(json.dumps(first), event="state", id=position)
                async for mid, msg in watch.follow(v.table, v.person, position):
                    # page_message puts the lines into words itself: no msg.rendered(), whose text
                    # drawing of the view (a millisecond per message and viewer) the page never shows.
                    body = json.dumps(page_message(msg, v.person, v.locale))
                    await resp.send(body, event="message", id=mid)
        except (ConnectionResetError, Lagging, RedisError):
            # The page went away (a tab closed, a phone asleep), fell too far behind, or the store
            # went while catching up: its feed ends here, quietly; the page's reconnect resumes from
            # its Last-Event-ID.
            pass
        return resp if resp is not None else web.StreamResponse()

    async def move(request: web.Request) -> web.Response:
        v = await viewer(request)
        if v.person is None:
            raise refusal(403, "forbidden", v.locale)
        try:
            body = await request.json()
            token, cid = str(body["token"]), str(body.get("id") or "")
        except (ValueError, KeyError, TypeError):
            raise refusal(400, "bad_request", v.locale) from None
        try:
            claims = open_token(secrets, token)
        except TokenError:
            raise refusal(403, "forbidden", v.locale) from None
        if claims.table != v.table or (cid and not _ID_RE.match(cid)):
            raise refusal(403 if claims.table != v.table else 400,
                          "forbidden" if claims.table != v.table else "bad_request", v.locale)
        person = v.person
        # The person's private chat: where the service answers a refused move (with them named in
        # it, so their page gets the answer too).
        room = Room(platform=person.platform, chat=person.user, kind="private")
        await limit(person, v.locale)
        command = await gateway.submit(Input(person, room, command_id=f"web-{cid}" if cid else None),
                                       token=token, claims=claims)
        metrics.moves.inc()
        return web.json_response({"command_id": command}, status=202, headers=_SECURITY_HEADERS)

    async def replay(request: web.Request) -> web.Response:
        lang = _lang(request)
        table = request.match_info["table"]
        if not _TABLE_RE.match(table):
            raise refusal(404, "not_found", lang)
        try:
            found = await watch.replay(table)
        except Embargoed:
            raise refusal(403, "embargoed", lang) from None
        if found is None:
            raise refusal(404, "not_finished", lang)
        # In the reader's words: the seats' names and every move (never the engine's notation).
        game = str(found.get("game"))
        found = {**found, "names": [text.render(n, lang) for n in found.get("names") or []],
                 "steps": [{**st, "said": move_text(game, st["move"], lang) if st.get("move") else None}
                           for st in found["steps"]]}
        return web.json_response(found, headers={"Cache-Control": "max-age=60"})

    app = web.Application(client_max_size=16 * 1024, middlewares=[hardened])
    app.router.add_get("/", index)
    app.router.add_get("/t", index)
    app.router.add_get("/replay/{table}", index)
    app.router.add_get("/api/i18n", i18n)
    app.router.add_post("/api/session", session)
    app.router.add_get("/api/state", state)
    app.router.add_get("/api/events", events)
    app.router.add_get("/api/next", next_table)
    app.router.add_post("/api/move", move)
    daily = daily_handler(gateway, ws, viewer=viewer, refusal=refusal, lang_of=_lang,
                          headers=_SECURITY_HEADERS, clock=clock, limit=limit)
    app.router.add_post("/api/daily", daily)
    app.router.add_get("/api/replay/{table}", replay)
    app.router.add_static("/static", STATIC, append_version=False)
    # /readyz and /metrics are on the process's operations listener (service.ops.health), not here
    return add_liveness(app)


