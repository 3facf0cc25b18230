"""What every answer of the web table says to the browser, and what a POST must be (issue 32, 8).

- **Headers on every response** (the page, ``/static``, the API, refusals and errors alike): a
  Content-Security-Policy that lets the page load only its own script, style and API (no inline
  script, nothing from elsewhere) and be framed only by itself and Telegram's web clients
  (``frame-ancestors``: the Mini App runs in an iframe of https://web.telegram.org); ``nosniff``;
  ``Referrer-Policy: no-referrer`` (a page opened from a link ``/t?k=…`` never sends its address,
  credential included, to anyone).
- **JSON bodies only**: a ``POST`` to ``/api/`` whose ``Content-Type`` is not ``application/json``
  is refused with 415 before it is read (a form posted from another site cannot act: browsers send
  a cross-site JSON request only after a CORS preflight, which this server never grants).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from aiohttp import web

from service.protocol.i18n import translate

# The Telegram clients that frame a Mini App: the web clients (web.telegram.org/k/ and /a/) and the
# other telegram.org hosts; the native apps use a web view, which no frame-ancestors rule concerns.
TELEGRAM_FRAMERS = ("https://web.telegram.org", "https://*.telegram.org", "https://telegram.org")

CSP = "; ".join([
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'self' " + " ".join(TELEGRAM_FRAMERS),
])

HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
           "Referrer-Policy": "no-referrer"}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _lang(request: web.Request) -> str:
    lang = request.query.get("lang")
    return lang if lang in ("es", "en") else "en"


@web.middleware
async def hardened(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Refuse a non-JSON POST to the API (415), and put :data:`HEADERS` on every answer."""
    if request.method == "POST" and request.path.startswith("/api/") \
            and request.content_type != "application/json":
        body = {"type": "urn:cinq:problem:unsupported_media_type", "status": 415,
                "title": "unsupported_media_type",
                "detail": translate(_lang(request), "web.refused.unsupported_media_type")}
        raise web.HTTPUnsupportedMediaType(text=json.dumps(body), content_type="application/problem+json",
                                           headers=HEADERS)
    try:
        resp = await handler(request)
    except web.HTTPException as e:
        e.headers.update(HEADERS)
        raise
    if not resp.prepared:  # (a feed's headers went with its first event: set when it was opened)
        resp.headers.update(HEADERS)
    return resp
