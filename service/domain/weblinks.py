"""Signed, short-lived links to the web table (``adapters/web``): who may open which table.

A link carries a token bound to one person (platform, user id) and one table, with an expiry; a
spectator link names the table alone (no person: the room view, no hand).  The token is signed with
the action tokens' secret under a domain of its own, so neither kind of token can stand for the
other.  Layout, URL-safe ASCII::

    w1.<base64url JSON {"p", "u", "t", "e"}>.<base64url HMAC-SHA256, 128 bits>

``p``/``u`` are empty for a spectator; ``e`` is the expiry in unix seconds.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote

import orjson

__all__ = ["LINK_TTL_S", "LinkClaims", "LinkError", "issue_link", "open_link", "replay_url", "table_url"]

LINK_TTL_S = 6 * 3600
"""How long a link in a message opens its table: a match, with room to spare."""

_PREFIX = "w1"
_DOMAIN = b"cinq/web-link/v1\x00"
_MAX = 512


@dataclass(frozen=True)
class LinkClaims:
    """What a valid link says: this person (None: a spectator) may open this table until ``expires``."""

    table: str
    platform: str | None
    user: str | None
    expires: float

    @property
    def spectator(self) -> bool:
        """Whether the link shows the room view only."""
        return self.platform is None


class LinkError(Exception):
    """A link that cannot be used: ``code`` is ``malformed``, ``forged`` or ``expired``."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(secret: bytes, body: str) -> str:
    return _b64(hmac.new(secret, _DOMAIN + body.encode(), hashlib.sha256).digest()[:16])


def issue_link(secret: bytes, *, table: str, expires: float, platform: str | None = None,
               user: str | None = None) -> str:
    """A link token for ``table``: a person's (``platform`` and ``user``) or a spectator's (neither)."""
    if not secret:
        raise ValueError("the link secret must be non-empty bytes")
    if (platform is None) != (user is None):
        raise ValueError("a person's link names both platform and user; a spectator's neither")
    claims = {"p": platform or "", "u": user or "", "t": table, "e": int(expires)}
    body = f"{_PREFIX}.{_b64(orjson.dumps(claims))}"
    return f"{body}.{_mac(secret, body)}"


def open_link(secrets: Sequence[bytes], token: str, now: float) -> LinkClaims:
    """The claims of a link token signed with any of ``secrets`` that has not expired at ``now``.

    Raises :class:`LinkError` (``malformed``, ``forged``, ``expired``: checked in that order, so an
    expiry is believed only once the signature is)."""
    if not isinstance(token, str) or len(token) > _MAX or not token.isascii():
        raise LinkError("malformed")
    body, dot, mac = token.rpartition(".")
    if not dot or not body.startswith(_PREFIX + "."):
        raise LinkError("malformed")
    valid = False
    for secret in secrets:  # every one, without stopping early
        valid |= hmac.compare_digest(_mac(secret, body).encode(), mac.encode())
    if not valid:
        raise LinkError("forged")
    try:
        claims = orjson.loads(_unb64(body[len(_PREFIX) + 1:]))
        table, platform, user = str(claims["t"]), str(claims["p"]), str(claims["u"])
        expires = float(claims["e"])
    except (ValueError, KeyError, TypeError) as e:
        raise LinkError("malformed") from e
    if now >= expires:
        raise LinkError("expired")
    return LinkClaims(table=table, platform=platform or None, user=user or None, expires=expires)


def table_url(base: str, token: str) -> str:
    """The page's address for a link token (``base``: the web adapter's public URL)."""
    return f"{base.rstrip('/')}/t?k={quote(token)}"


def replay_url(base: str, table: str) -> str:
    """The page that steps through a finished table's match (public: no token)."""
    return f"{base.rstrip('/')}/replay/{quote(table)}"
