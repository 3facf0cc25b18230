"""The adapter's HTTP server: aiohttp's, with the HTTP parser's own refusals as problem documents.

aiohttp answers a request its parser refuses (a NUL byte in a header, a malformed chunk size, a line
too long...) from ``RequestHandler.handle_error`` with a ``text/plain`` body, and logs a traceback
for each through the ``aiohttp.server`` logger: one request a client can repeat at will makes a
log flood.  :class:`ProblemRunner` serves the app with a handler whose ``handle_error`` answers RFC
9457 ``application/problem+json`` like every other refusal of the adapter and logs one line.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest
from aiohttp.web_server import Server

from adapters.webhook.app import problem
from service.foundation import logs

_log = logs.get("webhook")

_TITLES = {400: "Bad request", 408: "Request timeout", 413: "Request too large", 431: "Headers too large",
           500: "Internal error", 504: "Timeout"}


class _ProblemHandler(RequestHandler):
    """aiohttp's per-connection handler, answering its own errors with a problem document."""

    def handle_error(self, request: BaseRequest, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        """One log line (no traceback) and a problem document; the connection is then closed, as
        aiohttp does, since what follows a request it could not parse cannot be trusted."""
        why = logs.error_text(exc, 200) if exc is not None else " ".join((message or "").split())[:200]
        _log.warning("bad_http_request", status=status, remote=request.remote, error=why)
        if request.writer.output_size > 0:
            # Part of a response went out already: nothing more can be said on this connection.
            raise ConnectionError("response already started, cannot send the error")
        code = "bad_request" if status == 400 else "http"
        detail = "the request could not be read as HTTP" if status == 400 else "the request failed"
        if exc is not None and status < 500:
            detail += f": {why}"
        resp = problem(status, code, _TITLES.get(status, "HTTP error"), detail)
        resp.force_close()
        return resp


class _ProblemServer(Server):
    """aiohttp's low-level server, making :class:`_ProblemHandler` connections."""

    _kwargs: dict[str, Any]

    def __call__(self) -> RequestHandler:
        return _ProblemHandler(self, loop=self._loop, **self._kwargs)


class ProblemRunner(web.AppRunner):
    """``web.AppRunner`` whose server answers the HTTP parser's refusals as problem documents."""

    async def _make_server(self) -> Server:
        server = await super()._make_server()
        # The app made its server (startup, freezing, request factory); only the connections it
        # makes change, so its class is swapped rather than the server rebuilt from its parts.
        server.__class__ = _ProblemServer
        return server
