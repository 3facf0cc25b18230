"""Telegram Mini App ``initData``: who opened the page, as Telegram signed it.

Telegram gives a Mini App a query string (``Telegram.WebApp.initData``) signed for the bot: the
``hash`` field is the hex HMAC-SHA256 of the *data-check-string* (every other field as ``key=value``,
sorted by key, joined by line feeds) under a key that is itself the HMAC-SHA256 of the bot token
with the key ``WebAppData``.  ``auth_date`` (unix seconds) says when it was signed: older than
``max_age_s`` is refused, so a leaked ``initData`` does not open the table for ever.

How old is too old: Telegram signs ``initData`` when the Mini App is opened and asks a server to
check ``auth_date`` so that outdated data cannot be used; the page trades it for a session at once
(``/api/session``), so :data:`MAX_AGE_S` (10 minutes) is enough for a slow network and a clock a
little off, and :data:`MAX_AGE_LIMIT_S` bounds what an operator may configure.  The session it buys
lasts :data:`SESSION_TTL_S` (2 hours: a match), at most :data:`SESSION_TTL_LIMIT_S`; a Mini App
opened again makes a new one.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from urllib.parse import parse_qsl

__all__ = ["MAX_AGE_LIMIT_S", "MAX_AGE_S", "SESSION_TTL_LIMIT_S", "SESSION_TTL_S", "InitData",
           "InitDataError", "check_init_data", "sign_init_data"]

MAX_AGE_S = 600.0
"""How old an ``initData`` may be by default (CINQ_WEB_INIT_DATA_MAX_AGE_S); it was an hour."""
MAX_AGE_LIMIT_S = 3600.0
"""The longest age an operator may allow."""
SESSION_TTL_S = 2 * 3600.0
"""How long a session made from ``initData`` lasts by default (CINQ_WEB_SESSION_TTL_S); it was 6 h."""
SESSION_TTL_LIMIT_S = 12 * 3600.0
"""The longest session an operator may allow."""


@dataclass(frozen=True)
class InitData:
    """What a valid ``initData`` says: the Telegram user, their language, and the ``start_param``
    of a ``startapp`` link (a table id, when opened from a group)."""

    user_id: str
    name: str
    language_code: str | None
    start_param: str | None
    auth_date: int


class InitDataError(Exception):
    """An ``initData`` that cannot be trusted: ``code`` is ``malformed``, ``forged`` or ``expired``."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


def _secret(bot_token: str) -> bytes:
    return hmac.new(b"WebAppData", bot_token.encode(), hashlib.sha256).digest()


def _check_string(fields: dict[str, str]) -> str:
    return "\n".join(f"{k}={v}" for k, v in sorted(fields.items()) if k != "hash")


def sign_init_data(bot_token: str, fields: dict[str, str]) -> str:
    """An ``initData`` query string signed as Telegram signs it (for tests and local development)."""
    from urllib.parse import urlencode

    mac = hmac.new(_secret(bot_token), _check_string(fields).encode(), hashlib.sha256).hexdigest()
    return urlencode({**fields, "hash": mac})


def check_init_data(raw: str, bot_token: str, now: float, max_age_s: float = MAX_AGE_S) -> InitData:
    """The claims of ``raw`` if Telegram signed it for ``bot_token`` at most ``max_age_s`` before
    ``now``; raises :class:`InitDataError` otherwise (the signature is checked before the age)."""
    if not isinstance(raw, str) or not raw or len(raw) > 8192:
        raise InitDataError("malformed")
    try:
        pairs = parse_qsl(raw, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        raise InitDataError("malformed") from None
    fields = dict(pairs)
    if len(fields) != len(pairs) or "hash" not in fields or "auth_date" not in fields:
        raise InitDataError("malformed")
    want = hmac.new(_secret(bot_token), _check_string(fields).encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(want.encode(), fields["hash"].lower().encode()):
        raise InitDataError("forged")
    try:
        auth_date = int(fields["auth_date"])
        user = json.loads(fields.get("user") or "{}")
        user_id = str(int(user["id"]))
    except (ValueError, KeyError, TypeError):
        raise InitDataError("malformed") from None
    if now - auth_date > max_age_s or auth_date - now > 60:
        raise InitDataError("expired")
    name = " ".join(str(user.get(k) or "") for k in ("first_name", "last_name")).strip()
    return InitData(user_id=user_id, name=name or str(user.get("username") or user_id),
                    language_code=user.get("language_code"), start_param=fields.get("start_param"),
                    auth_date=auth_date)
