"""A homeserver on a loopback socket, for the bridge's Matrix side (``homeserver.Matrix``, the real
matrix-nio client): the few client-server endpoints the bridge uses, which can lose an answer once the
request was done, hang a room's sends, and serve people's messages through ``/sync``."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from aiohttp import web

BOT = "@cinq:hs"
API = "/_matrix/client/v3"


class LossyHomeserver:
    """The few client-server endpoints the bridge uses.  ``lose`` says how the next matching
    request's answer is lost once it was done: ``hang``, ``drop``, ``504`` or ``cut``; ``lose_on`` which
    requests (``send`` or ``create``).  A send to a room in ``hang_in`` is posted and answered only once
    ``release`` is set (a homeserver slow for that room).  ``say`` is a person's message, read by
    ``/sync``."""

    def __init__(self) -> None:
        self.lose: str | None = None
        self.lose_on = "send"
        self.events: dict[str, list[dict[str, Any]]] = {}  # room -> the messages posted in it
        self.txns: dict[str, str] = {}
        self.state: dict[str, list[dict[str, Any]]] = {}  # room -> its state events
        self.posted = asyncio.Event()  # set whenever a message is posted (people see it)
        self.closing = asyncio.Event()  # the test is over: a request left hanging may end
        self._ids = itertools.count(1)
        self.hang_in: set[str] = set()
        self.release = asyncio.Event()
        self.said: list[tuple[str, dict[str, Any]]] = []  # (room, event), in the order people wrote
        self._new = asyncio.Event()

    def say(self, room: str, sender: str, body: str, event_id: str) -> None:
        """``sender`` writes ``body`` in ``room``: the next sync reads it."""
        event = {"type": "m.room.message", "event_id": event_id, "sender": sender, "origin_server_ts": 1,
                 "content": {"msgtype": "m.text", "body": body}}
        self.said.append((room, event))
        self._new.set()

    async def sync(self, request: web.Request) -> web.Response:
        since = int(request.query.get("since", "s0")[1:])
        if since >= len(self.said):  # the long poll: until someone writes, or the test ends
            self._new.clear()
            waits = [asyncio.ensure_future(e.wait()) for e in (self._new, self.closing)]
            await asyncio.wait(waits, timeout=int(request.query.get("timeout", "30000")) / 1000,
                               return_when=asyncio.FIRST_COMPLETED)
            for w in waits:
                w.cancel()
        join: dict[str, Any] = {}
        for room, event in self.said[since:]:
            timeline = join.setdefault(room, {"timeline": {"events": [], "limited": False}})["timeline"]
            timeline["events"].append(event)
        return web.json_response({"next_batch": f"s{len(self.said)}", "rooms": {"join": join}})

    async def _lost(self, request: web.Request, what: str) -> web.StreamResponse | None:
        if self.lose is None or self.lose_on != what:
            return None
        how, self.lose = self.lose, None
        if how == "hang":
            await self.closing.wait()  # not answered while the client waits: it times out
        if how == "drop":
            assert request.transport is not None
            request.transport.abort()
            return web.Response()
        if how == "cut":  # the answer begins, and the connection is lost in its middle
            resp = web.StreamResponse(headers={"Content-Type": "application/json", "Content-Length": "200"})
            await resp.prepare(request)
            await resp.write(b'{"event_id": "$')
            assert request.transport is not None
            request.transport.abort()
            return resp
        return web.Response(status=504, text="<html>504 Gateway Time-out</html>", content_type="text/html")

    async def send(self, request: web.Request) -> web.StreamResponse:
        room, txn = request.match_info["room"], request.match_info["txn"]
        if txn not in self.txns:  # Matrix keeps one event per transaction id
            self.txns[txn] = f"$ev{next(self._ids)}"
            self.events.setdefault(room, []).append(await request.json())
            self.posted.set()
        if room in self.hang_in:
            await self.release.wait()
        return await self._lost(request, "send") or web.json_response({"event_id": self.txns[txn]})

    async def create(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Authorization") != "Bearer tok":
            return web.json_response({"errcode": "M_MISSING_TOKEN", "error": "no token"}, status=401)
        body = await request.json()
        room = f"!room{next(self._ids)}:hs"
        marks = [{"sender": BOT, **e} for e in body.get("initial_state", [])]
        self.state[room] = [{"type": "m.room.create", "state_key": "", "sender": BOT, "content": {}}, *marks]
        return await self._lost(request, "create") or web.json_response({"room_id": room})

    async def joined(self, _: web.Request) -> web.Response:
        return web.json_response({"joined_rooms": list(self.state)})

    async def room_state(self, request: web.Request) -> web.Response:
        room = request.match_info["room"]
        return web.json_response([{"event_id": f"$s{i}", "origin_server_ts": 1, **e}
                                  for i, e in enumerate(self.state[room])])

    async def displayname(self, request: web.Request) -> web.Response:
        assert request.headers["Authorization"] == "Bearer tok"  # the stored login, reused
        return web.json_response({})

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_put(API + "/rooms/{room}/send/m.room.message/{txn}", self.send)
        app.router.add_post(API + "/createRoom", self.create)
        app.router.add_get(API + "/joined_rooms", self.joined)
        app.router.add_get(API + "/rooms/{room}/state", self.room_state)
        app.router.add_put(API + "/profile/{user}/displayname", self.displayname)
        app.router.add_get(API + "/sync", self.sync)
        return app
