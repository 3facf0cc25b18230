"""Structured logs: JSON lines through structlog, one per command (see ``worker``)."""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import MutableMapping
from typing import Any, TextIO, cast

import orjson
import structlog


class _CurrentStderr:
    """Writes to whatever ``sys.stderr`` is when a line is logged, not when logging was configured:
    a test runner (or a daemon manager) may swap the stream, and a closed one must not break us."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


_second: list[Any] = [None, ""]  # the last whole second stamped, and its ISO text


def _timestamp(logger: Any, name: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """``TimeStamper(fmt="iso", utc=True)``, cheaper: the date and time of day are formatted once a
    second, the microseconds each time (same text: ``2026-01-31T12:00:00.123456Z``)."""
    now = time.time()
    sec = int(now)
    micro = int((now - sec) * 1_000_000)
    if sec != _second[0]:
        _second[0], _second[1] = sec, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec))
    event["timestamp"] = f"{_second[1]}.{micro:06d}Z" if micro else f"{_second[1]}Z"
    return event


def _fallback(obj: Any) -> Any:
    """What JSON cannot hold as such: its ``__structlog__()`` if it has one, else its repr (as
    structlog's own renderer does)."""
    render = getattr(obj, "__structlog__", None)
    return render() if callable(render) else repr(obj)


def _dumps(event: dict[str, Any], **kw: Any) -> str:
    """One JSON line: orjson (the worker logs a line per command), the standard library for what
    orjson refuses (an int beyond 64 bits, a key that is not a string)."""
    try:
        return orjson.dumps(event, default=_fallback).decode()
    except TypeError:
        return json.dumps(event, default=_fallback)


def configure(level: str = "INFO", stream: Any = None) -> None:
    """Log JSON lines at ``level`` and above to ``stream`` (stderr by default).

    Below ``level`` a log call is a no-op without formatting, which keeps the hot path cheap.
    """
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            _timestamp,
            structlog.processors.JSONRenderer(serializer=_dumps),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        # structlog asks for a TextIO but only writes to it and flushes it, which _CurrentStderr can.
        logger_factory=structlog.PrintLoggerFactory(stream or cast(TextIO, _CurrentStderr())),
        cache_logger_on_first_use=False,
    )


def get(name: str = "cinq") -> Any:
    """A logger bound to a component name."""
    return structlog.get_logger(component=name)


def error_text(exc: BaseException, limit: int = 300) -> str:
    """A caught error for a log line or a problem document: ``"ClassName: message"`` on one line,
    at most ``limit`` characters.  ``repr`` is not enough: redis-py's errors repr as their class
    alone, which hides the server's own message ("OOM command not allowed...")."""
    message = " ".join(str(exc).split())
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"
