"""A whole deployment on loopback for the security suite, configured as an operator would run it:
its own ``redis-server`` (a free port) and one ``cinq serve`` process (worker, tournament director,
web table, webhook adapter with one fake chat platform on loopback), reached only over HTTP.

The attacker's tools are what anyone has: the public ports, signed requests of a platform (the
platform's own end), links a person was sent, and a Telegram Mini App's ``initData`` (which Telegram
signs for any user who opens the app).  The test itself may read Redis as an oracle: what the hidden
hands are, to scan every answer for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import redis.asyncio as aioredis

from adapters.web.initdata import sign_init_data
from service.foundation.settings import Settings
from service.store import repository
from service.store.event_store import EventStore
from service.store.keys import Keys
from tests.adapters.webhook.support import PLATFORM, SECRETS, Client, FakePlatform, event
from tests.faults.redis_server import RedisServer
from tools.loopback import free_port

TOKEN_SECRET = "security-suite-token-secret-0123456789abcdef"
DAILY_SECRET = "security-suite-daily-secret-0123456789abcdef"
BOT_TOKEN = "123456:SECURITY-SUITE-bot-token"
START_S = 180.0  # a bound on a hang: start-up imports take seconds on a loaded machine


class Deployment:
    """``cinq serve`` on its own ``redis-server`` (see the module docstring).  ``env``: more of the
    service's environment (or a name mapped to None to leave it unset)."""

    def __init__(self, tmp: Path, env: dict[str, str | None] | None = None,
                 redis_args: tuple[str, ...] = ()) -> None:
        self.tmp = tmp
        self.redis_server = RedisServer(tmp / "redis", extra=redis_args)
        self.platform = FakePlatform()
        self.web_port, self.webhook_port, self.http_port = free_port(), free_port(), free_port()
        self.extra_env = env or {}
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = tmp / "serve.log"
        self.http: aiohttp.ClientSession | None = None
        self.redis: Any = None
        self.client: Client

    @property
    def web(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    @property
    def webhook(self) -> str:
        return f"http://127.0.0.1:{self.webhook_port}"

    def environment(self) -> dict[str, str]:
        """The service's environment: a configuration an operator would write."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("CINQ_") and k != "REDIS_URL"}
        env.update({
            "REDIS_URL": self.redis_server.url, "CINQ_TOKEN_SECRETS": json.dumps([TOKEN_SECRET]),
            "CINQ_DAILY_SECRET": DAILY_SECRET,
            "CINQ_BUCKETS": "16", "CINQ_COMMAND_SHARDS": "2", "CINQ_TURN_SECONDS": "0",
            "CINQ_HTTP_PORT": str(self.http_port), "CINQ_LOG_LEVEL": "INFO",
            "CINQ_WEB_PUBLIC_URL": self.web, "CINQ_WEB_HOST": "127.0.0.1",
            "CINQ_WEB_PORT": str(self.web_port), "CINQ_WEB_BOT_TOKEN": BOT_TOKEN,
            "CINQ_WEBHOOK_PORT": str(self.webhook_port), "CINQ_WEBHOOK_PLATFORMS": json.dumps(
                [{"name": PLATFORM, "secrets": SECRETS, "callback_url": self.platform.url}]),
        })
        for k, v in self.extra_env.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
        return env

    async def start(self) -> Deployment:
        self.redis_server.start()
        await self.platform.start()
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "service.ops.cli", "serve"],
                                         env=self.environment(), stdout=log, stderr=log)
        self.http = aiohttp.ClientSession()
        self.client = Client(self.http, self.webhook)
        self.redis = aioredis.from_url(self.redis_server.url)
        deadline = time.monotonic() + START_S
        for url in (f"{self.web}/healthz", f"{self.webhook}/healthz"):
            while True:
                if self.proc.poll() is not None:
                    raise AssertionError(f"cinq serve exited: {self.log()[-2000:]}")
                with contextlib.suppress(aiohttp.ClientError, OSError):
                    async with self.http.get(url) as r:
                        if r.status == 200:
                            break
                if time.monotonic() > deadline:
                    raise AssertionError(f"cinq serve did not start: {self.log()[-2000:]}")
                await asyncio.sleep(0.1)
        return self

    def log(self) -> str:
        """What the process wrote so far."""
        return self.log_path.read_text(errors="replace")

    async def close(self) -> None:
        if self.http is not None:
            await self.http.close()
        if self.redis is not None:
            await self.redis.aclose()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        await self.platform.close()
        self.redis_server.kill()

    # -- the oracle: the service's own state, read from its Redis --------------------------------

    async def table(self, table: str) -> Any:
        """A table as the service has it (the test's oracle, not an attacker's tool)."""
        keys = Keys.of(Settings(redis_url=None, buckets=16, command_shards=2))
        return await repository.load(EventStore(self.redis, keys), table)

    # -- what anyone can do --------------------------------------------------------------------

    async def get(self, url: str, headers: dict[str, str] | None = None, **params: str) -> tuple[int, str]:
        """GET: the status and the body's text."""
        assert self.http is not None
        async with self.http.get(url, params=params, headers=headers) as r:
            return r.status, await r.text()

    async def post(self, url: str, body: Any, headers: dict[str, str] | None = None,
                   **params: str) -> tuple[int, str]:
        """POST JSON: the status and the body's text."""
        assert self.http is not None
        async with self.http.post(url, json=body, params=params, headers=headers) as r:
            return r.status, await r.text()

    async def say(self, user: str, text: str, chat: str | None = None, kind: str = "group") -> None:
        """A person writes in a chat of the fake platform (their own private chat by default)."""
        if chat is None:
            chat, kind = user, "private"
        await self.client.accepted(event(text, user=user, chat=chat, kind=kind, name=user.title()))

    async def press(self, user: str, token: str, chat: str | None = None, kind: str = "private") -> None:
        """A person presses a button of a message they were sent."""
        await self.client.accepted(event(user=user, chat=chat or user, kind=kind, name=user.title(),
                                         token=token))

    async def mini_app_session(self, user_id: int, table: str) -> tuple[int, str]:
        """What Telegram lets any user do: open the Mini App on ``startapp=<table>`` (initData that
        Telegram signed for them), traded for a link at ``/api/session``."""
        user = json.dumps({"id": user_id, "first_name": "Mallory"})
        init = sign_init_data(BOT_TOKEN, {"auth_date": str(int(time.time())), "user": user,
                                          "start_param": table})
        return await self.post(f"{self.web}/api/session", {"init_data": init})


REFUSE_WAIT_S = 120.0  # a bound on a hang: a role that does not refuse keeps running until then


def start_role(args: list[str], env: dict[str, str | None]) -> tuple[int | None, str]:
    """Run ``cinq <args>`` with the deployment's kind of environment (``env`` on top; None unsets)
    and wait for it to exit: its status (None: it kept running, and was stopped) and its output.
    A refused start exits at once; one that starts serves until stopped."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("CINQ_") and k != "REDIS_URL"}
    base.update({"REDIS_URL": f"redis://127.0.0.1:{free_port()}/0", "CINQ_HTTP_PORT": "0",
                 "CINQ_TOKEN_SECRETS": json.dumps([TOKEN_SECRET]), "CINQ_DAILY_SECRET": DAILY_SECRET,
                 "CINQ_WEB_PORT": "0",
                 "CINQ_WEBHOOK_PORT": "0", "CINQ_TELEGRAM_PORT": "0"})
    for k, v in env.items():
        if v is None:
            base.pop(k, None)
        else:
            base[k] = v
    proc = subprocess.Popen([sys.executable, "-m", "service.ops.cli", *args], env=base,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        out, _ = proc.communicate(timeout=REFUSE_WAIT_S)
        return proc.returncode, out.decode(errors="replace")
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        return None, out.decode(errors="replace")


@contextlib.asynccontextmanager
async def deployed(tmp: Path, env: dict[str, str | None] | None = None,
                   redis_args: tuple[str, ...] = ()) -> AsyncIterator[Deployment]:
    """A started :class:`Deployment`, stopped at the end."""
    d = Deployment(tmp, env, redis_args)
    try:
        yield await d.start()
    finally:
        await d.close()
