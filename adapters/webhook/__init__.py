"""The HTTP webhook adapter: any chat platform hosts matches by speaking plain HTTP (see README.md).

The ``cinq.adapters`` entry point is :data:`ADAPTER` (:class:`service.ops.running.Adapter`):
:func:`serve` (``cinq serve``) serves the adapter on the process's runtime until cancelled; :func:`run`
(``cinq webhook ...``) runs the command line and returns its exit status.
"""

from __future__ import annotations

from typing import Any

from service.ops.running import Adapter


def run(argv: list[str] | None = None) -> int:
    """``cinq webhook [dead-letters ...]`` (see :mod:`adapters.webhook.cli`)."""
    from adapters.webhook import cli

    return cli.run(list(argv or []))


async def serve(runtime: Any) -> None:
    """The adapter on a service runtime, until cancelled (see :func:`adapters.webhook.cli.serve`)."""
    from adapters.webhook import cli

    await cli.serve(runtime)


def check() -> None:
    """Refuse (one line, SystemExit) a configuration that cannot be read or is unsafe."""
    from adapters.webhook.config import WebhookSettings
    from service.foundation.secrets import load

    load(WebhookSettings, "the webhook adapter's configuration (CINQ_WEBHOOK_*)")


ADAPTER = Adapter(run=run, serve=serve, check=check)

__all__ = ["ADAPTER", "check", "run", "serve"]
