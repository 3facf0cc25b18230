"""Running the web table: under ``cinq serve``, alone (``cinq web``), or for one person on the
embedded store (``cinq play --web``: the terminal's match, drawn in the browser; without an AI level
in its words the page offers the level before the deal, :mod:`adapters.web.local`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import sys
import time
import webbrowser
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from adapters.web.app import STATIC, make_app
from adapters.web.config import WebSettings
from adapters.web.local import add_level_choice
from adapters.web.metrics import WebMetrics
from service.domain.identities import Player, Room
from service.domain.inputs import Input
from service.domain.weblinks import LINK_TTL_S, issue_link, table_url
from service.foundation import logs
from service.foundation.secrets import load
from service.foundation.settings import Settings
from service.ops.running import run_until_stopped, until_cancelled
from service.ops.runtime import build
from service.platform.revocations import REVOKED_TTL_S, Revocations, signature
from service.platform.watch import Watch
from service.protocol.i18n import pick_locale
from service.protocol.parse import ProtocolError, parse_command
from service.store.connection import refuse_unsafe
from service.write.gateway import Gateway


class WebAdapter:
    """The page's HTTP server and its watch over the outbox, started and stopped together."""

    def __init__(self, settings: Settings, ws: WebSettings, gateway: Gateway, watch: Watch, *,
                 clock: Any = time.time) -> None:
        self.settings, self.ws = settings, ws
        self.gateway, self.watch = gateway, watch  # the process's (service.ops.runtime.build)
        self.metrics = WebMetrics()  # served on the process's operations listener (service.ops.health)
        self.app = make_app(self.gateway, self.watch, ws, clock=clock, metrics=self.metrics)
        self._runner: web.AppRunner | None = None
        self.port: int | None = None

    @property
    def base_url(self) -> str:
        """Where this server answers (the public URL when set, else its own address)."""
        return self.ws.public_url or f"http://{self.ws.host}:{self.port}"

    async def start(self, host: str | None = None, port: int | None = None) -> None:
        """Serve (``port`` 0: any free port, then see :attr:`port`)."""
        # SSE streams never end by themselves: a short shutdown timeout, so stopping is prompt.  A
        # request whose client went is cancelled (handler_cancellation): a feed waiting on a quiet
        # table ends at once, giving back its subscription and its slot (issue 32, 4).
        self._runner = web.AppRunner(self.app, access_log=None, shutdown_timeout=1.0,
                                     handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host or self.ws.host, self.ws.port if port is None else port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def link(self, table: str, person: Player | None = None, ttl_s: float = LINK_TTL_S) -> str:
        """A page address for ``person`` (None: a spectator) at ``table``."""
        return table_url(self.base_url, self.token(table, person, ttl_s))

    def token(self, table: str, person: Player | None = None, ttl_s: float = LINK_TTL_S) -> str:
        """The link token (``k``) of :meth:`link`."""
        return issue_link(self.gateway.secrets[0], table=table, expires=time.time() + ttl_s,
                          platform=person.platform if person else None, user=person.user if person else None)

    async def close(self) -> None:
        """Stop serving, and the watch."""
        await self.watch.close()
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()


async def serve(rt: Any) -> None:
    """Run the page on a service runtime (``cinq serve``) until cancelled; without
    ``CINQ_WEB_PUBLIC_URL`` there is nothing to serve, and it returns at once."""
    ws = WebSettings()
    if not ws.public_url:
        logs.get("web").info("idle", reason="CINQ_WEB_PUBLIC_URL is not set")
        return
    adapter = WebAdapter(rt.settings, ws, rt.gateway, rt.watch())
    rt.ops.add(adapter.metrics, adapter.watch.problem)
    await _serving(adapter, ws)


async def _serving(adapter: WebAdapter, ws: WebSettings) -> None:
    """Serve until cancelled, then close."""
    try:
        await adapter.start()
        logs.get("web").info("listening", host=ws.host, port=adapter.port, public_url=ws.public_url)
        await until_cancelled()
    finally:
        await adapter.close()


async def play(words: list[str], lang: str | None = None, port: int = 0, open_browser: bool = True,
               out: Any = None) -> int:
    """``cinq play --web``: a match against AI players on the embedded store, in the browser, until
    SIGTERM/SIGINT."""
    await run_until_stopped(_play(words, lang, port, open_browser, out or sys.stdout))
    return 0


async def _play(words: list[str], lang: str | None, port: int, open_browser: bool, out: Any,
                runtime: Any = None) -> None:
    """The match (``runtime``: a service runtime of the caller's, the tests'; by default one on the
    embedded store)."""
    import fakeredis

    locale = lang if lang in ("es", "en") else pick_locale(os.environ.get("LANG", "").split(".")[0])
    rt = runtime or build(Settings(redis_url=None, buckets=8, turn_seconds=0),
                          redis=fakeredis.FakeAsyncRedis())
    settings = rt.settings
    adapter = WebAdapter(settings, WebSettings(public_url=None, host="127.0.0.1"), rt.gateway, rt.watch())
    me = Player(platform="terminal", user="you", name=os.environ.get("USER") or "you")
    room = Room(platform="terminal", chat="tty", kind="private")
    worker = asyncio.create_task(rt.worker.run())
    words = list(words or ["cinquillo"])

    async def deal(level: str | None = None, wait_s: float = 10.0) -> str:
        cid = await rt.gateway.submit(Input(me, room, command_id="web-play-1", language=locale),
                                      "/play " + " ".join([*words, *([level] if level else [])]))
        table = rt.gateway.table_for(cid)
        # The page opens the link at once (the level's Deal): the worker has dealt by then.
        for _ in range(int(wait_s / 0.05)):
            if await adapter.watch.now(table, me, locale) is not None:
                break
            await asyncio.sleep(0.05)
        return adapter.token(table, me)

    try:
        choose = _without_level(words)
        if choose:
            # No level in the words: the page offers it before the deal (adapters.web.local).
            key = secrets.token_urlsafe(24)
            add_level_choice(adapter.app, key=key, deal=deal, index=STATIC / "index.html")
        await adapter.start(port=port)
        # The language through the service, as a person would say it (no Redis write here).
        await rt.gateway.submit(Input(me, room, command_id="web-play-lang"), f"/lang {locale}")
        if choose:
            game = parse_command("/play " + " ".join(words)).args["game"]
            url = f"{adapter.base_url}/new?" + urlencode({"s": key, "game": game, "lang": locale})
        else:
            url = table_url(adapter.base_url, await deal())
        print(url, file=out, flush=True)
        if open_browser:
            with contextlib.suppress(Exception):
                webbrowser.open(url)
        await until_cancelled()
    finally:
        await adapter.close()
        rt.worker.stop.set()
        await worker


def _without_level(words: list[str]) -> bool:
    """Whether ``words`` are a good /play that names no AI level (then the page offers one); words the
    service would refuse go to it as they are, for its answer."""
    try:
        return "level" not in parse_command("/play " + " ".join(words)).args
    except ProtocolError:
        return False


async def _run_alone(settings: Settings, ws: WebSettings) -> int:
    rt = build(settings)
    await refuse_unsafe(rt.redis, settings)
    adapter = WebAdapter(settings, ws, rt.gateway, rt.watch())
    rt.ops.add(adapter.metrics, adapter.watch.problem)
    # /readyz and /metrics on the operations listener (CINQ_HTTP_HOST:CINQ_HTTP_PORT, loopback)
    ops = await rt.ops.start(settings.http_host, settings.http_port, "web")
    try:
        await run_until_stopped(_serving(adapter, ws))
    finally:
        await ops.cleanup()
    return 0


async def _revoke(settings: Settings, what: str, name: str) -> int:
    rt = build(settings)
    try:
        key = await Revocations(rt.redis, rt.keys).revoke(what, name)
    finally:
        await rt.redis.aclose()
    label = {"t": "every link to table", "p": "every link of", "k": "the link"}[what]
    shown = name if what != "k" else signature(name)[:8] + "…"
    print(f"revoked {label} {shown} for {REVOKED_TTL_S // 3600} h ({key.split(':', 3)[2]})")
    return 0


def run(argv: list[str] | None = None) -> int:
    """``cinq web`` (the page alone), ``cinq web play [words] [--lang] [--port] [--no-browser]``, or
    ``cinq web revoke (--table T | --person PLATFORM:USER | --link K)``: an operator withdraws links
    (:mod:`service.platform.revocations`)."""
    p = argparse.ArgumentParser(prog="cinq web", description="The web table.")
    sub = p.add_subparsers(dest="command")
    pl = sub.add_parser("play", help="a match against AI players in the browser (embedded store)")
    pl.add_argument("words", nargs="*")
    pl.add_argument("--lang", default=None)
    pl.add_argument("--port", type=int, default=0)
    pl.add_argument("--no-browser", action="store_true")
    rv = sub.add_parser("revoke", help="withdraw web links: one, a person's or a table's")
    which = rv.add_mutually_exclusive_group(required=True)
    which.add_argument("--table", help="every link to this table")
    which.add_argument("--person", help="every link of this person: <platform>:<user id>")
    which.add_argument("--link", help="this link (its k, or the whole address)")
    args = p.parse_args(argv)
    if args.command == "revoke":
        logs.configure("WARNING")
        what, name = (("t", args.table) if args.table else ("p", args.person) if args.person
                      else ("k", args.link))
        if what == "p" and ":" not in name:
            p.error("--person is <platform>:<user id>, as in telegram:12345")
        return asyncio.run(_revoke(load(Settings), what, name))
    if args.command == "play":
        logs.configure("WARNING")
        return asyncio.run(play(args.words, args.lang, args.port, not args.no_browser))
    settings = load(Settings)
    ws = load(WebSettings, "the web table's configuration (CINQ_WEB_*)")
    ws.require_safe()
    logs.configure(settings.log_level)
    return asyncio.run(_run_alone(settings, ws))
