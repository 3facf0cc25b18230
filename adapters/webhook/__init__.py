"""The HTTP webhook adapter: any chat platform hosts matches by speaking plain HTTP (see README.md).

The ``cinq.adapters`` entry point is :func:`main`:

- ``main(runtime)`` (as ``cinq serve`` calls adapters) returns the coroutine that serves the adapter
  on that runtime until cancelled;
- ``main(argv)`` (a list of words, as ``cinq webhook ...`` passes them) runs the command line and
  returns its exit status.
"""

from __future__ import annotations

from typing import Any


def main(arg: Any = None, **_: Any) -> Any:
    """The entry point (see the module docstring)."""
    from adapters.webhook import cli

    if arg is None or isinstance(arg, list | tuple):
        return cli.run(list(arg or []))
    return cli.serve(arg)


__all__ = ["main"]
