"""A page closed in the middle of its feed (a tab closed, a phone gone to sleep): the server stops
that feed quietly.  Issue 34 (bug 5): ``cinq play --web`` printed aiohttp's traceback
(``ClientConnectionResetError``) for every closed tab."""

from __future__ import annotations

import asyncio
import logging
import time

from service.domain.identities import Player, Room
from service.domain.inputs import Input
from service.domain.weblinks import issue_link
from tests.adapters.web.support import Stack

ME = Player(platform="telegram", user="501", name="Ana")


async def test_a_feed_whose_page_closed_ends_without_an_error_logged(caplog):
    caplog.set_level(logging.DEBUG)
    async with Stack() as s:
        table = await s.play_ai(ME)
        k = issue_link(b"web-test", table=table, expires=time.time() + 600, platform="telegram", user="501")
        assert s.web.port is not None
        # A raw socket, as a browser's: the request, the first event, then the tab closes.
        reader, writer = await asyncio.open_connection("127.0.0.1", s.web.port)
        request = f"GET /api/events?k={k} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n"
        writer.write(request.encode())
        await writer.drain()
        assert b"event: state" in await reader.readuntil(b"event: state")
        writer.transport.abort()  # a reset, as a killed tab's
        await asyncio.sleep(0.1)
        # Messages for that viewer keep coming: the feed's next writes meet the closed socket.
        room = Room(platform="telegram", chat="501", kind="private")
        for i in range(3):
            await s.rt.gateway.submit(Input(ME, room, command_id=f"hand-{i}-{table}"), "/hand")
            await asyncio.sleep(0.3)
        await asyncio.sleep(0.5)
        assert s.web.app is not None
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not bad, [(r.name, r.getMessage()) for r in bad]
