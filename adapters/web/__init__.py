"""The web table: the page every platform can open, in a browser or as a Telegram Mini App.

The ``cinq.adapters`` entry point is :func:`main`:

- ``main(runtime)`` (``cinq serve``) returns the coroutine that serves the page on that runtime
  until cancelled, when ``CINQ_WEB_PUBLIC_URL`` is set (otherwise it returns at once);
- ``main(argv)`` (``cinq web ...``, and ``cinq play --web``: ``["play", ...]``) runs the command line.
"""

from __future__ import annotations

from typing import Any


def main(arg: Any = None, **_: Any) -> Any:
    """The entry point (see the module docstring)."""
    from adapters.web import cli

    if arg is None or isinstance(arg, list | tuple):
        return cli.run(list(arg or []))
    return cli.serve(arg)


__all__ = ["main"]
