"""Real out-of-memory refusals from Redis: ``maxmemory`` below ``used_memory`` with ``noeviction``.

Redis then answers every command that may grow memory (``XADD``, ``SET``, a script's first write...)
with ``-OOM command not allowed when used memory > 'maxmemory'`` (redis-py raises
``redis.exceptions.OutOfMemoryError``) and still serves reads, ``DEL``, ``XACK`` and ``CONFIG``.

- :func:`squeeze` / :func:`restore`: set and take back the limit, through a *side* client connected
  to the server itself (never through the proxy, so that no rule of the test catches it);
- :func:`window`: an async context in which every write is refused (the chaos run's OOM windows);
- :func:`refuse_once`: a proxy rule that refuses exactly one chosen write: when the command arrives
  the proxy holds every other connection, waits until none has a command in Redis, squeezes, lets
  the command through (refused), restores once its reply is back and before the client sees it,
  then lets the others go.  Nothing else runs in that window, so nothing else is refused.

The limit is half of ``used_memory`` rather than just under it: a few bytes freed between the
``INFO`` and the write (a client's buffers) must not let the write through.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from tests.faults.proxy import Predicate, Proxy, Rule

OOM_PREFIX = "OOM"


async def squeeze(side: Any) -> None:
    """Make Redis refuse writes from now on (``noeviction``, ``maxmemory`` under ``used_memory``)."""
    used = int((await side.info("memory"))["used_memory"])
    await side.config_set("maxmemory-policy", "noeviction")
    await side.config_set("maxmemory", max(1, used // 2))


async def restore(side: Any) -> None:
    """Lift the limit again (``maxmemory 0``: none)."""
    await side.config_set("maxmemory", 0)


@contextlib.asynccontextmanager
async def window(side: Any) -> AsyncIterator[None]:
    """Writes are refused inside the block; the limit is lifted on the way out (if Redis is there)."""
    await squeeze(side)
    try:
        yield
    finally:
        with contextlib.suppress(Exception):  # a server killed meanwhile comes back without the limit
            await restore(side)


def refuse_once(proxy: Proxy, match: Predicate, side: Any, *, times: int = 1, skip: int = 0) -> Rule:
    """Arm a rule that makes Redis refuse exactly the matching command with a real OOM (see above)."""
    return proxy.arm(match, "hook", before=lambda: squeeze(side), after=lambda: restore(side),
                     exclusive=True, times=times, skip=skip)


def is_oom(error: BaseException) -> bool:
    """Whether an exception is Redis' OOM refusal (OutOfMemoryError, or a ResponseError saying OOM)."""
    return type(error).__name__ == "OutOfMemoryError" or str(error).startswith(OOM_PREFIX)
