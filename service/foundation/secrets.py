"""Secrets in the configuration: what makes one unsafe, and the one-line refusal to start with it.

A deployment that talks to Redis signs every action token, web link and tournament button with
``CINQ_TOKEN_SECRETS``: whoever knows the secret moves for anyone.  So a role that uses Redis
refuses to start (:class:`UnsafeConfiguration`, one line saying how to make a good secret) when the
secret is missing, a value published in this repository or a common placeholder, or too short; the
adapters do the same for their own secrets (a Telegram webhook's, the webhook platforms', the web
table's bot token).  The embedded store (``cinq play``, ``make play``) needs no configuration: it
signs with a random secret made for the process (:func:`ephemeral`), which nobody else knows.

Configuration errors never print a secret: every settings class hides its input in validation
errors (``hide_input_in_errors``) and :func:`load` turns them into one line without values.
"""

from __future__ import annotations

import secrets as _random
from collections.abc import Callable, Sequence
from typing import TypeVar

from pydantic import ValidationError
from pydantic_settings import SettingsError

HOW = "make one with: python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"

TOKEN_SECRET_MIN_BYTES = 32
"""The shortest token secret accepted: 256 bits, the size of the HMAC-SHA256 key it becomes."""

KNOWN = frozenset({
    # published in this repository (older defaults and examples; the docs and the tests' helpers)
    "dev-secret-change-me", "change-me-to-a-long-random-string", "change-me", "changeme",
    # placeholders people type
    "secret", "password", "test", "example", "default", "cinq", "token", "your-secret-here",
})
"""Values anyone may know: a secret equal to one (case aside) is refused whatever its length."""

_PLACEHOLDER_WORDS = ("change-me", "changeme", "change_me", "replace-me", "example")

_EPHEMERAL = _random.token_bytes(32)

T = TypeVar("T")


class UnsafeConfiguration(SystemExit):
    """A role that will not start as configured: its message is the one line the operator reads."""

    def __init__(self, setting: str, why: str, how: str = HOW) -> None:
        super().__init__(f"cinq: refusing to start: {setting} {why}; {how}")


def weakness(value: str | None, min_bytes: int) -> str | None:
    """Why ``value`` is not a safe secret (None: it is): missing, known, a placeholder, too short."""
    if not value:
        return "is not set"
    folded = value.strip().lower()
    if folded in KNOWN or any(w in folded for w in _PLACEHOLDER_WORDS):
        return "is a published example or placeholder value (anyone may know it)"
    size = len(value.encode())
    if size < min_bytes:
        return f"is {size} bytes long, shorter than {min_bytes}"
    return None


def require_strong(setting: str, values: Sequence[str], min_bytes: int) -> None:
    """Raise :class:`UnsafeConfiguration` unless every one of ``values`` (at least one) is safe."""
    for i, value in enumerate(values or [""]):
        why = weakness(value, min_bytes)
        if why is not None:
            which = f"{setting} (its secret #{i + 1})" if len(values) > 1 else setting
            raise UnsafeConfiguration(which, why)


def ephemeral() -> bytes:
    """A secret made at random for this process alone (the embedded store's: nothing outlives it)."""
    return _EPHEMERAL


def load(cls: Callable[[], T], what: str = "the configuration") -> T:
    """Build a settings class from the environment, or exit with one line that names each wrong
    setting and why, never its value (a pydantic error would print ``input_value=...``)."""
    try:
        return cls()
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(str(p) for p in err['loc']) or '(all)'}: {err['msg']}"
                             for err in e.errors(include_url=False, include_input=False))
        raise SystemExit(f"cinq: refusing to start: {what} is wrong: {problems}") from None
    except SettingsError as e:
        # "error parsing value for field X from source Y": names the field, not its value.
        raise SystemExit(f"cinq: refusing to start: {what} is wrong: {e}") from None
