"""A page's live feed as the security suite opens it: a raw socket to ``GET /api/events`` (so that a
test can drop it as a closed tab does, with a reset), and a reader of its events."""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Feed:
    """One open feed: the response's status line and headers, and the events read so far."""

    status: int
    headers: dict[str, str]
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    events: list[dict[str, Any]] = field(default_factory=list)
    body: str = ""

    async def next_event(self, timeout: float) -> dict[str, Any]:
        """The next event (``event``, ``id``, ``data``), comments (pings) skipped."""
        async def read() -> dict[str, Any]:
            ev: dict[str, Any] = {}
            while True:
                line = (await self.reader.readline()).decode()
                if not line:
                    raise ConnectionError("the feed ended")
                line = line.rstrip("\r\n")
                if not line:
                    if "event" in ev or "data" in ev:
                        return ev
                    continue
                if line.startswith(":"):
                    continue
                name, _, value = line.partition(":")
                ev[name] = value[1:] if value.startswith(" ") else value
        ev = await asyncio.wait_for(read(), timeout)
        self.events.append(ev)
        return ev

    async def until(self, pred: Any, timeout: float) -> dict[str, Any]:
        """Events until one for which ``pred(event)`` holds (a bound on a hang: ``timeout``)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            ev = await self.next_event(max(deadline - loop.time(), 0.01))
            if pred(ev):
                return ev

    def drop(self) -> None:
        """The tab closes: a reset, as a killed tab's."""
        self.writer.transport.abort()


async def open_feed(port: int, k: str | None = None, *, last_event_id: str | None = None,
                    query_k: bool = False, timeout: float = 30.0) -> Feed:
    """Open ``/api/events`` (HTTP/1.0: the stream unchunked) with a link (in the ``Authorization``
    header, or the URL with ``query_k``) and read up to the first event; a refusal's body is read
    whole."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    path = "/api/events" + (f"?k={k}" if query_k and k else "")
    head = [f"GET {path} HTTP/1.0", "Host: 127.0.0.1", "Accept: text/event-stream"]
    if k and not query_k:
        head.append(f"Authorization: Link {k}")
    if last_event_id is not None:
        head.append(f"Last-Event-ID: {last_event_id}")
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
    await writer.drain()
    raw = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
    lines = raw.decode().split("\r\n")
    status = int(lines[0].split()[1])
    headers = {n.strip().lower(): v.strip() for n, _, v in (x.partition(":") for x in lines[1:] if x)}
    feed = Feed(status, headers, reader, writer)
    if status != 200:
        length = int(headers.get("content-length", "0"))
        feed.body = (await asyncio.wait_for(reader.readexactly(length), timeout)).decode()
        writer.close()
        return feed
    await feed.next_event(timeout)  # the state
    return feed


def problem(feed: Feed) -> dict[str, Any]:
    """A refused feed's problem JSON."""
    return dict(json.loads(feed.body))


async def close_all(feeds: list[Feed]) -> None:
    """Drop every feed still open."""
    for f in feeds:
        with contextlib.suppress(Exception):
            f.drop()
