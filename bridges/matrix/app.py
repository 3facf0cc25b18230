"""The bridge process: the callback server cinq POSTs to, and the Matrix sync loop, in one event loop.

Callbacks are verified (Standard Webhooks, the platform's secret) before anything is read from them.
A callback that was shown is answered 200; one that Matrix could not take yet is answered 503, so
cinq retries it (in order: cinq sends a chat's messages one at a time).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import sys
import time
from typing import Any

import aiohttp
from aiohttp import web

from bridges.matrix import signing
from bridges.matrix.cinq import CinqClient
from bridges.matrix.config import Config, ConfigError
from bridges.matrix.core import Bridge
from bridges.matrix.inbox import Inbox
from bridges.matrix.state import State

log = logging.getLogger("bridges.matrix")
MAX_BODY = 256 * 1024


def callback_app(bridge: Bridge, secret: str) -> web.Application:
    """The aiohttp app that receives cinq's callbacks (any path; ``GET /healthz`` answers 200)."""

    async def callback(request: web.Request) -> web.Response:
        body = await request.read()
        try:
            signing.verify(secret, request.headers, body, time.time())
        except signing.BadSignature as e:
            return web.json_response({"title": "Bad signature", "detail": str(e)}, status=401)
        try:
            msg: dict[str, Any] = json.loads(body)
            msg["id"], msg["to"], msg["kind"], msg["text"]
        except (ValueError, KeyError, TypeError) as e:
            return web.json_response({"title": "Malformed message", "detail": str(e)}, status=400)
        try:
            await bridge.on_callback(msg)
        except Exception as e:
            log.warning("callback %s not shown yet: %s", msg["id"], e)
            return web.json_response({"title": "Not shown yet", "detail": str(e)[:200]}, status=503)
        return web.json_response({"status": "shown"})

    async def healthz(_: web.Request) -> web.Response:
        return web.json_response({"status": "ok", "sent": bridge.sent})

    app = web.Application(client_max_size=MAX_BODY)
    app.router.add_get("/healthz", healthz)
    app.router.add_post("/{tail:.*}", callback)
    return app


async def serve(cfg: Config) -> None:
    """Run the bridge until SIGTERM or SIGINT."""
    from bridges.matrix.homeserver import Matrix  # matrix-nio is needed by the process only

    state = State(cfg.state)
    matrix = Matrix(cfg.homeserver, cfg.user, state, request_timeout=cfg.request_timeout)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with aiohttp.ClientSession() as session:
        bridge = Bridge(
            state, matrix, CinqClient(session, cfg.cinq_url, cfg.platform, cfg.secret), cfg.locale
        )
        await matrix.login(cfg.password, cfg.display_name)
        # Before cinq's callbacks and people's messages are read: a number typed while the bridge was
        # down may answer a hand it had posted and not yet recorded when it stopped.
        resumed = await bridge.resume()
        if resumed:
            log.info("resumed %d callback(s) a previous run left half-shown", resumed)
        # Then what people wrote that a previous process stored and did not hand on, each room apart.
        inbox = Inbox(state, bridge.on_text)
        inbox.start()
        runner = web.AppRunner(callback_app(bridge, cfg.secret), access_log=None)
        await runner.setup()
        await web.TCPSite(runner, cfg.host, cfg.port).start()
        log.info("bridge up: callbacks on %s:%s, Matrix user %s", cfg.host, cfg.port, cfg.user)
        sync = asyncio.create_task(matrix.run(inbox.take, bridge.on_invite))
        waiter = asyncio.create_task(stop.wait())
        await asyncio.wait({sync, waiter}, return_when=asyncio.FIRST_COMPLETED)
        sync.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sync
        await inbox.close()
        await runner.cleanup()
        await matrix.close()
    state.close()


def main() -> int:
    """``python -m bridges.matrix``."""
    try:
        cfg = Config.from_env()
    except ConfigError as e:
        print(f"bridges.matrix: {e}", file=sys.stderr)
        return 2
    # DEBUG is the bridge's own lines: the libraries' debug output (asyncio, aiohttp) stays out.
    logging.basicConfig(level=logging.INFO if cfg.log_level == "DEBUG" else cfg.log_level, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(message)s")
    log.setLevel(cfg.log_level)
    # matrix-nio logs every event it parses at INFO: too much for an operator.
    logging.getLogger("nio").setLevel(logging.WARNING)
    asyncio.run(serve(cfg))
    return 0
