"""Signed action tokens: what a button carries instead of a move (docs/design.md, the outbox).

A token binds a move to one table, seat and table version, and is signed with HMAC-SHA256 so that
a client cannot forge or alter one.  Telegram's callback data holds at most 64 bytes, so the token
is compact: with table ids up to 12 characters and moves up to 12 characters it is at most 59 ASCII
bytes (:data:`MAX_BYTES` is the bound the tests hold it to).  The layout, all URL-safe ASCII::

    1<table>.<seat>.<version>.<move>.<mac>

``1`` is the format; seat and version are base 36; the move is compressed (``pass`` -> ``-``,
``play 13 14 15`` -> ``pdef``, other moves ``=`` + the move with spaces as dots); ``mac`` is the
first 128 bits of HMAC-SHA256 over everything before it, base64url without padding.  Whether the
version is still the table's current one (staleness) is the service's check, not this module's.
"""

from __future__ import annotations

import binascii
import hashlib
import hmac
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_BYTES", "Claims", "TokenError", "issue", "issue_many", "open_token"]

MAX_BYTES = 64
"""Telegram's limit on callback data; tokens for tables and moves of up to 12 characters fit."""

_FORMAT = "1"
_MAC_BYTES = 16  # 128 bits: comfortably above the 96-bit floor, and it still fits in 64 bytes
_MAC_CHARS = 22  # len(base64url(16 bytes)) without padding
_DOMAIN = b"cinq/action-token/v1\x00"  # keeps these MACs apart from any other use of the secret
_DIGITS36 = "0123456789abcdefghijklmnopqrstuvwxyz"
_TABLE_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
_RAW_MOVE_RE = re.compile(r"[A-Za-z0-9]+( [A-Za-z0-9]+)*")
_MAC_RE = re.compile(r"[A-Za-z0-9_-]{22}")
# secret -> (inner SHA-256 state after key^ipad and _DOMAIN, outer state after key^opad): HMAC by hand,
# so that a MAC costs two C-level copies instead of the hmac module's Python wrapper.
_KEYED: dict[bytes, tuple[Any, Any]] = {}
# move -> its checked encoding (a few dozen moves per game): the round-trip check is done once.
_ENCODED: dict[str, str] = {}
_URLSAFE = bytes.maketrans(b"+/", b"-_")  # base64 -> base64url
_IPAD = bytes(b ^ 0x36 for b in range(256))
_OPAD = bytes(b ^ 0x5C for b in range(256))
_MAX_TOKEN = 256  # longer than anything issue() makes for sane inputs: refuse before any work


@dataclass(frozen=True)
class Claims:
    """What a valid token says: this seat may send this move at this version of this table."""

    table: str
    seat: int
    version: int
    move: str


class TokenError(Exception):
    """A token that cannot be used: ``code`` is ``malformed`` (unreadable) or ``forged`` (bad MAC)."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


def _b36_of(n: int) -> str:
    out = ""
    while True:
        n, d = divmod(n, 36)
        out = _DIGITS36[d] + out
        if n == 0:
            return out


_SMALL = 36 * 36  # seats and most versions: their base 36 is looked up, not computed (a token per move)
_B36 = [_b36_of(n) for n in range(_SMALL)]


def _b36(n: int) -> str:
    return _B36[n] if n < _SMALL else _b36_of(n)


def _from_b36(text: str) -> int:
    # Canonical only (no leading zeros, lower case), so that each claim has exactly one token.
    if not text or (len(text) > 1 and text[0] == "0") or any(c not in _DIGITS36 for c in text):
        raise TokenError("malformed")
    return int(text, 36)


def _encode_move(move: str) -> str:
    if move == "pass":
        return "-"
    verb, _, rest = move.partition(" ")
    if verb in ("play", "add") and rest:
        ranks = rest.split(" ")
        if all(r.isascii() and r.isdigit() and r[0] != "0" and int(r) < 36 for r in ranks):
            return verb[0] + "".join(_DIGITS36[int(r)] for r in ranks)
    if not _RAW_MOVE_RE.fullmatch(move):
        raise ValueError(f"cannot put the move {move!r} in a token")
    return "=" + move.replace(" ", ".")


def _decode_move(text: str) -> str:
    if text == "-":
        return "pass"
    if text[:1] in ("p", "a") and len(text) > 1:
        if any(c not in _DIGITS36[1:] for c in text[1:]):
            raise TokenError("malformed")
        verb = "play" if text[0] == "p" else "add"
        return verb + " " + " ".join(str(_DIGITS36.index(c)) for c in text[1:])
    if text[:1] == "=":
        return text[1:].replace(".", " ")
    raise TokenError("malformed")


def _keyed(secret: bytes) -> tuple[Any, Any]:
    # HMAC-SHA256 (RFC 2104) with its keyed states computed once per secret: the inner hash has
    # absorbed key^ipad and the domain prefix, the outer one key^opad; each MAC copies both.
    keyed = _KEYED.get(secret)
    if keyed is None:
        if len(_KEYED) >= 16:  # a service has one or two secrets; tests may make many
            _KEYED.clear()
        key = hashlib.sha256(secret).digest() if len(secret) > 64 else secret
        key = key.ljust(64, b"\0")
        inner = hashlib.sha256(key.translate(_IPAD))
        inner.update(_DOMAIN)
        keyed = _KEYED[secret] = (inner, hashlib.sha256(key.translate(_OPAD)))
    return keyed


def _mac(secret: bytes, body: str) -> str:
    inner, outer = _keyed(secret)
    h = inner.copy()
    h.update(body.encode("ascii"))
    o = outer.copy()
    o.update(h.digest())
    mac = binascii.b2a_base64(o.digest()[:_MAC_BYTES], newline=False)[:_MAC_CHARS]
    return mac.translate(_URLSAFE).decode()


def _checked_move(move: str) -> str:
    """The token encoding of ``move``, checked to decode back to it (cached: moves repeat)."""
    if not isinstance(move, str):
        raise ValueError(f"move must be a str, not {type(move).__name__}")
    encoded = _ENCODED.get(move)
    if encoded is not None:
        return encoded
    encoded = _encode_move(move)
    # Round-trip check: an encoding that would not decode to the same move must never be signed.
    if _decode_move(encoded) != move:
        raise ValueError(f"cannot put the move {move!r} in a token")
    if len(_ENCODED) >= 4096:
        _ENCODED.clear()
    _ENCODED[move] = encoded
    return encoded


def issue(secret: bytes, *, table: str, seat: int, version: int, move: str) -> str:
    """A signed token for ``move`` by ``seat`` at ``version`` of ``table``.

    ``table`` is 1-64 characters of ``[A-Za-z0-9_-]``; ``seat`` and ``version`` are ints >= 0;
    ``move`` is a canonical move (``pass``, a card such as ``10c``, ``play 7 7``, ``add 2 7``).
    Raises ValueError for anything else, or an empty secret.
    """
    return issue_many(secret, table=table, seat=seat, version=version, moves=[move])[0]


def issue_many(secret: bytes, *, table: str, seat: int, version: int, moves: Sequence[str]) -> list[str]:
    """The tokens of several moves by one seat at one version (:func:`issue` for each, with the
    checks of the table, seat and version done once)."""
    if not isinstance(secret, bytes) or not secret:
        raise ValueError("the token secret must be non-empty bytes")
    if not isinstance(table, str) or not _TABLE_RE.fullmatch(table):
        raise ValueError(f"bad table id {table!r}")
    if not (type(seat) is int and type(version) is int and seat >= 0 and version >= 0):
        for name, value in (("seat", seat), ("version", version)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be an int >= 0, not {value!r}")
    prefix = f"{_FORMAT}{table}.{_b36(seat)}.{_b36(version)}."
    inner, outer = _keyed(secret)
    encoded, b2a, urlsafe = _ENCODED, binascii.b2a_base64, _URLSAFE
    out = []
    for move in moves:
        body = prefix + ((type(move) is str and encoded.get(move)) or _checked_move(move))
        # _mac inlined (a token per legal move, on every turn)
        h = inner.copy()
        h.update(body.encode("ascii"))
        o = outer.copy()
        o.update(h.digest())
        mac = b2a(o.digest()[:_MAC_BYTES], newline=False)[:_MAC_CHARS].translate(urlsafe)
        out.append(f"{body}.{mac.decode()}")
    return out


def open_token(secrets: Sequence[bytes], token: str) -> Claims:
    """The claims of a token signed with any of ``secrets`` (the first issues; older ones verify).

    Raises ``TokenError("malformed")`` for text that is not a token and ``TokenError("forged")``
    for a token whose signature matches none of the secrets.  The caller still checks that the
    version is current and that the seat belongs to the sender.
    """
    if not secrets or any(not isinstance(s, bytes) or not s for s in secrets):
        raise ValueError("open_token needs at least one non-empty secret")
    if not isinstance(token, str) or len(token) > _MAX_TOKEN or not token.isascii():
        raise TokenError("malformed")
    body, dot, mac = token.rpartition(".")
    if not dot or not _MAC_RE.fullmatch(mac) or not body.startswith(_FORMAT):
        raise TokenError("malformed")
    fields = body[len(_FORMAT):].split(".", 3)
    if len(fields) != 4 or not _TABLE_RE.fullmatch(fields[0]):
        raise TokenError("malformed")
    # Compare the encoded MACs (not decoded bytes): base64's spare bits must not let two texts pass.
    # Every secret is tried, without stopping early, so the time taken does not say which matched.
    valid = False
    for secret in secrets:
        valid |= hmac.compare_digest(_mac(secret, body).encode("ascii"), mac.encode("ascii"))
    if not valid:
        raise TokenError("forged")
    table, seat, version, move = fields
    return Claims(table=table, seat=_from_b36(seat), version=_from_b36(version), move=_decode_move(move))
