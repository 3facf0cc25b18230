"""Fixtures of the webhook tests."""

from __future__ import annotations

import sys

import pytest

from service.foundation import logs


class _CurrentStderr:
    """Writes to whatever ``sys.stderr`` is when a line is logged (pytest swaps it per test)."""

    def write(self, s: str) -> int:
        return sys.stderr.write(s)

    def flush(self) -> None:
        sys.stderr.flush()


@pytest.fixture(autouse=True)
def _logs_to_current_stderr() -> None:
    """Background deliveries log warnings; another test may have pointed the logs at a stream pytest
    has closed since (a command line configures logging), so point them at the live one."""
    logs.configure("WARNING", stream=_CurrentStderr())
