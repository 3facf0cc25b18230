"""Structured logs: JSON lines through structlog, one per command (see ``worker``)."""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog


class _CurrentStderr:
    """Writes to whatever ``sys.stderr`` is when a line is logged, not when logging was configured:
    a test runner (or a daemon manager) may swap the stream, and a closed one must not break us."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure(level: str = "INFO", stream: Any = None) -> None:
    """Log JSON lines at ``level`` and above to ``stream`` (stderr by default).

    Below ``level`` a log call is a no-op without formatting, which keeps the hot path cheap.
    """
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.PrintLoggerFactory(stream or _CurrentStderr()),
        cache_logger_on_first_use=False,
    )


def get(name: str = "cinq") -> Any:
    """A logger bound to a component name."""
    return structlog.get_logger(component=name)
