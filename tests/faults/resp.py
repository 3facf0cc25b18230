"""Just enough RESP (the Redis protocol) for the fault proxy: split a client's byte stream into
commands, and a server's into replies (RESP2 and RESP3), decoding a reply only when a rule asks.

Commands are arrays of bulk strings (what every client library sends; a pipeline is many of them
in one packet) or inline commands (``PING\\r\\n``, what a person types into telnet).
"""

from __future__ import annotations

from typing import Any

_LINE = b"\r\n"
_SIMPLE = frozenset(b"+-:_,#(")
_BULK = frozenset(b"$=!")
_ARRAY = frozenset(b"*~>")
_MAP = frozenset(b"%|")
PUSH = ord(">")
ATTRIBUTE = ord("|")


class ReplyError(str):
    """An error reply (``-ERR ...``, ``-OOM ...``), decoded: a string that says it is an error."""


def command_at(buf: bytes | bytearray, pos: int) -> tuple[list[bytes], int] | None:
    """The command starting at ``pos`` and the position after it, or None if it is not all there."""
    if pos >= len(buf):
        return None
    if buf[pos] != ord("*"):  # inline: words up to the end of the line
        end = buf.find(b"\n", pos)
        if end < 0:
            return None
        return bytes(buf[pos:end]).split(), end + 1
    end = buf.find(_LINE, pos)
    if end < 0:
        return None
    n = int(buf[pos + 1:end])
    p = end + 2
    args: list[bytes] = []
    for _ in range(max(n, 0)):
        e = buf.find(_LINE, p)
        if e < 0:
            return None
        size = int(buf[p + 1:e])
        start = e + 2
        if start + size + 2 > len(buf):
            return None
        args.append(bytes(buf[start:start + size]))
        p = start + size + 2
    return args, p


def reply_end(buf: bytes | bytearray, pos: int) -> int:
    """The position just after the reply starting at ``pos``, or -1 if it is not all there."""
    if pos >= len(buf):
        return -1
    kind = buf[pos]
    end = buf.find(_LINE, pos)
    if end < 0:
        return -1
    if kind in _SIMPLE:
        return end + 2
    n = int(buf[pos + 1:end])
    if kind in _BULK:
        if n < 0:
            return end + 2
        after = end + 2 + n + 2
        return after if after <= len(buf) else -1
    if kind not in _ARRAY and kind not in _MAP:
        raise ValueError(f"not a RESP reply: {bytes(buf[pos:pos + 20])!r}")
    p = end + 2
    for _ in range(max(n, 0) * (2 if kind in _MAP else 1)):
        p = reply_end(buf, p)
        if p < 0:
            return -1
    if kind == ATTRIBUTE:  # an attribute only annotates the reply that follows it
        return reply_end(buf, p)
    return p


def decode(buf: bytes | bytearray, pos: int) -> tuple[Any, int]:
    """The reply at ``pos`` (complete: see :func:`reply_end`) as Python values, and the position after
    it: bytes for strings, int, None, lists (maps as lists of pairs), :class:`ReplyError`."""
    kind = buf[pos]
    end = buf.find(_LINE, pos)
    line = bytes(buf[pos + 1:end])
    if kind == ord("+"):
        return line, end + 2
    if kind == ord("-"):
        return ReplyError(line.decode(errors="replace")), end + 2
    if kind in (ord(":"), ord("(")):
        return int(line), end + 2
    if kind == ord("_"):
        return None, end + 2
    if kind in (ord(","), ord("#")):
        return line, end + 2
    n = int(line)
    if kind in _BULK:
        if n < 0:
            return None, end + 2
        return bytes(buf[end + 2:end + 2 + n]), end + 2 + n + 2
    if n < 0:
        return None, end + 2
    p = end + 2
    items = []
    for _ in range(n * (2 if kind in _MAP else 1)):
        item, p = decode(buf, p)
        items.append(item)
    if kind == ATTRIBUTE:
        return decode(buf, p)
    if kind in _MAP:
        return list(zip(items[::2], items[1::2], strict=True)), p
    return items, p
