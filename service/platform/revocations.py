"""Web links an operator withdrew (issue 32, 8): ``cinq web revoke``.

A link (:mod:`service.domain.weblinks`) is valid until its expiry; an operator who learns that one
leaked (a screenshot, a forwarded message) or that a person must not see a table any more withdraws:

- **one link**, by its signature (the page's ``k``, or the whole address);
- **every link of a person** (``<platform>:<user>``), whatever the table;
- **every link to a table**, whoever holds it.

Each is a key (``rv:{rv}:<t|p|k>:<name>``, :meth:`service.store.keys.Keys.revoked`) kept as long as
any link can live (:data:`REVOKED_TTL_S`), so a revocation also refuses the links issued after it
until then: the person or table is closed to the web table for that long (the chat still works).  The
web table asks with one ``EXISTS`` of the three keys of the link in hand (one hash tag: one slot).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlparse

from service.domain.weblinks import LINK_TTL_S, LinkClaims
from service.store.keys import Keys

SESSION_MAX_S = 12 * 3600
"""The longest a Mini App session may be set to live (``CINQ_WEB_SESSION_TTL_S``'s bound)."""
REVOKED_TTL_S = max(LINK_TTL_S, SESSION_MAX_S) + 3600
"""How long a revocation lasts (13 h): longer than a link (6 h, rounded up to ten minutes) or a
Mini App session (at most 12 h) can live."""


def signature(link: str) -> str:
    """The signature part of a link token (or of a page address ``…/t?k=<token>``)."""
    if "?" in link or "/" in link:
        link = (parse_qs(urlparse(link).query).get("k") or [""])[0]
    return link.rpartition(".")[2]


class Revocations:
    """The operator's revocations in Redis (see the module docstring)."""

    def __init__(self, redis: Any, keys: Keys) -> None:
        self.redis, self.keys = redis, keys

    async def revoke(self, what: str, name: str) -> str:
        """Withdraw ``t`` (table), ``p`` (person ``platform:user``) or ``k`` (a link, or its
        address); returns the key written."""
        if what not in ("t", "p", "k") or not name:
            raise ValueError("revoke a table (t), a person (p) or a link (k), by a non-empty name")
        key = self.keys.revoked(what, signature(name) if what == "k" else name)
        await self.redis.set(key, "1", ex=REVOKED_TTL_S)
        return key

    async def revoked(self, claims: LinkClaims, token: str) -> bool:
        """Whether the link ``token`` (whose ``claims`` are checked already) was withdrawn."""
        keys = [self.keys.revoked("t", claims.table), self.keys.revoked("k", signature(token))]
        if claims.platform is not None:
            keys.append(self.keys.revoked("p", f"{claims.platform}:{claims.user}"))
        return bool(await self.redis.exists(*keys))
