"""The Telegram adapter (aiogram 3): parse updates, call the service's gateway, render the outbox.

The ``cinq.adapters`` entry point is :data:`ADAPTER` (:class:`service.ops.running.Adapter`, the same
shape as the webhook adapter's):

- :func:`serve` (as ``cinq serve`` calls adapters) runs the bot on that runtime's Redis until
  cancelled (it returns at once, with a warning, when no token is set);
- :func:`run` (``cinq telegram``; also ``python -m adapters.telegram``) runs the bot alone and
  returns an exit status.  SIGTERM or SIGINT stops it gracefully
  (:meth:`adapters.telegram.app.TelegramBot.run`: input first, then what it owes) and it exits 0.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from service.ops.running import Adapter, run_until_stopped

__all__ = ["ADAPTER", "check", "run", "serve"]


def check() -> None:
    """Refuse (one line, SystemExit) a configuration that cannot be read, or webhook mode without a
    strong secret (:meth:`adapters.telegram.config.TelegramSettings.require_safe`)."""
    from adapters.telegram.config import TelegramSettings
    from service.foundation.secrets import load

    load(TelegramSettings, "the Telegram bot's configuration (CINQ_TELEGRAM_*)").require_safe()


async def serve(runtime: Any) -> None:
    """Run the bot on a service runtime's Redis until cancelled (a no-op without a token)."""
    from adapters.telegram.config import TelegramSettings
    from service.foundation import logs
    from service.foundation.startup import gc_paused

    # aiogram's ~900 models, built at import, live as long as the process: built without the collector
    # scanning them again and again (0.3 s of CPU), then frozen, so that no full collection scans them
    # again either (the first one came during start-up: 0.15 s quiet, up to 1 s loaded).
    with gc_paused(freeze=True):
        from adapters.telegram.app import build

    tg = TelegramSettings()
    if not tg.token:
        logs.get("telegram").warning("no_token", hint="set CINQ_TELEGRAM_TOKEN to run the Telegram bot")
        return
    # The bot's part of the process's readiness and metrics (the operations listener): not ready
    # until it is built and receiving.
    built: list[Any] = []

    async def ready() -> str | None:
        return await built[0].health.problem() if built else "the bot is starting"

    runtime.ops.add(ready=ready)
    bot = await build(runtime.redis, runtime.settings, tg, runtime.gateway)
    runtime.ops.add(bot.metrics)
    built.append(bot)
    await bot.run()


def run(argv: list[str] | None = None) -> int:
    """The bot alone, until SIGTERM/SIGINT; the exit status (see the module docstring)."""
    from adapters.telegram.config import TelegramSettings
    from service.foundation import logs
    from service.foundation.secrets import load
    from service.foundation.settings import Settings
    from service.ops.runtime import build as build_runtime

    settings = load(Settings)
    logs.configure(settings.log_level)
    check()
    if not TelegramSettings().token:
        print("set CINQ_TELEGRAM_TOKEN (and CINQ_TELEGRAM_PUBLIC_URL for webhook mode)")
        return 2
    try:
        asyncio.run(_run_alone(build_runtime(settings)))
    except KeyboardInterrupt:
        return 130
    return 0


async def _run_alone(runtime: Any) -> None:
    """Run the bot until SIGTERM/SIGINT.  Without handlers of its own the process would die on the
    spot (SIGTERM's default action): queued messages unsent, deliveries in hand cut off.  The signal
    cancels the bot's task once, as ``cinq serve`` does; its ``finally`` stops the input and flushes
    (bounded), and a second signal does not cut that short (:func:`service.ops.running.run_until_stopped`)."""
    from service.store.connection import refuse_unsafe

    ops = None
    try:
        await refuse_unsafe(runtime.redis, runtime.settings)
        # /readyz and /metrics on the operations listener (CINQ_HTTP_HOST:CINQ_HTTP_PORT, loopback)
        ops = await runtime.ops.start(runtime.settings.http_host, runtime.settings.http_port, "telegram")
        await run_until_stopped(serve(runtime))
    finally:
        if ops is not None:
            await ops.cleanup()
        with contextlib.suppress(Exception):
            await runtime.redis.aclose()


ADAPTER = Adapter(run=run, serve=serve, check=check)
