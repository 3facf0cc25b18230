"""The web table's "Daily deal": ``POST /api/daily`` (``{"game", "id"}``), for the person a link
names (``Authorization: Link``) or, from a Telegram Mini App opened on no table, its ``init_data``.

It starts or finds the person's attempt at today's deal through the same
:meth:`service.daily.intake.DailyIntake.start` as ``/daily`` (one attempt whatever the way) and
answers its link, or, once played, the person's standing.  A spectator's link is 403, a missing or
forged credential 401, a bad game or id 400, a deal the service cannot deal (a role with another
daily secret) 503.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from adapters.web.config import WebSettings
from adapters.web.initdata import InitDataError, check_init_data
from service.domain.daily import GAMES
from service.domain.identities import Player, Room
from service.domain.weblinks import issue_link
from service.write.gateway import Gateway

_ID_RE = re.compile(r"^[A-Za-z0-9_-]{8,64}$")

Refusal = Callable[[int, str, str], web.HTTPException]
Handler = Callable[[web.Request], Awaitable[web.Response]]


def daily_handler(gateway: Gateway, ws: WebSettings, *, viewer: Callable[[web.Request], Awaitable[Any]],
                  refusal: Refusal, lang_of: Callable[[web.Request], str], headers: dict[str, str],
                  clock: Callable[[], float], limit: Callable[[Player, str], Awaitable[None]]) -> Handler:
    """The handler of ``POST /api/daily``, with the app's own credential check (``viewer``), problem
    documents (``refusal``), language of a request (``lang_of``), response ``headers`` and rate
    limit per person (``limit``: raises the refusal)."""

    async def person_of(request: web.Request, raw: Any, lang: str) -> tuple[Player, str | None]:
        if raw is None:
            v = await viewer(request)
            if v.person is None:
                raise refusal(403, "forbidden", v.locale)
            return v.person, v.locale
        bot_token = ws.bot_token_value()
        if not bot_token:
            raise refusal(401, "unauthorized", lang)
        try:
            data = check_init_data(str(raw), bot_token, clock(), ws.init_data_max_age_s)
        except InitDataError as e:
            raise refusal(401, "expired" if e.code == "expired" else "unauthorized", lang) from None
        return Player(platform="telegram", user=data.user_id), data.language_code

    async def daily(request: web.Request) -> web.Response:
        lang = lang_of(request)
        try:
            body = await request.json()
            game, cid = str(body.get("game") or "cinquillo"), str(body.get("id") or "")
            raw = body.get("init_data")
        except (ValueError, AttributeError):
            raise refusal(400, "bad_request", lang) from None
        if game not in GAMES or (cid and not _ID_RE.match(cid)):
            raise refusal(400, "bad_request", lang)
        person, language = await person_of(request, raw, lang)
        locale = await gateway.locale_of(person, language)
        await limit(person, locale)
        room = Room(platform=person.platform, chat=person.user, kind="private")
        table, refused = await gateway.daily.start(f"web-daily-{cid or secrets.token_hex(8)}", person, room,
                                                   game, locale, gateway.clock())
        await gateway.replicas.confirm()
        if table is not None:
            k = issue_link(gateway.secrets[0], table=table, platform=person.platform, user=person.user,
                           expires=clock() + ws.session_ttl_s)
            return web.json_response({"status": "playing", "table": table, "k": k, "locale": locale},
                                     headers=headers)
        if refused == "daily_played":
            text, _ = await gateway.daily.standing(person, game, locale, clock())
            return web.json_response({"status": "played", "text": text, "locale": locale}, headers=headers)
        raise refusal(503, refused or "unavailable", locale)

    return daily
