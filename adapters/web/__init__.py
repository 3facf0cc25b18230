"""The web table: the page every platform can open, in a browser or as a Telegram Mini App.

The ``cinq.adapters`` entry point is :data:`ADAPTER` (:class:`service.ops.running.Adapter`):
:func:`serve` (``cinq serve``) serves the page on the process's runtime until cancelled, when
``CINQ_WEB_PUBLIC_URL`` is set (otherwise it returns at once); :func:`run` (``cinq web ...``, and
``cinq play --web``: ``["play", ...]``) runs the command line.
"""

from __future__ import annotations

from typing import Any

from service.ops.running import Adapter


def run(argv: list[str] | None = None) -> int:
    """``cinq web [play ...]`` (see :mod:`adapters.web.cli`)."""
    from adapters.web import cli

    return cli.run(list(argv or []))


async def serve(runtime: Any) -> None:
    """The page on a service runtime, until cancelled (see :func:`adapters.web.cli.serve`)."""
    from adapters.web import cli

    await cli.serve(runtime)


def check() -> None:
    """Refuse (one line, SystemExit) a configuration that cannot be read or is unsafe."""
    from adapters.web.config import WebSettings
    from service.foundation.secrets import load

    load(WebSettings, "the web table's configuration (CINQ_WEB_*)").require_safe()


ADAPTER = Adapter(run=run, serve=serve, check=check)

__all__ = ["ADAPTER", "check", "run", "serve"]
