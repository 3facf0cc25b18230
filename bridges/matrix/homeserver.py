"""The Matrix side, through matrix-nio: log in once (the token and device are kept), sync, accept
invites, send and edit messages, tell whether a message was redacted, create DM rooms.

The bot keeps one device across restarts, so the homeserver deduplicates our transaction ids (a
callback retried after a crash is not posted twice), and the sync token is stored after each batch
has been handed to cinq (a restart reads on from there: nothing is lost, nothing acted on twice).

Every request a callback makes (send, read an event, create or look for a DM room) is made once, on a
client that does not repeat it, and within ``request_timeout`` (4 s by default): below cinq's 10 s
callback timeout, so a hung request is answered 503 to cinq (which sends the callback again) before
cinq stops waiting, instead of running beside cinq's retry.  A send that times out, loses its
connection, is answered with a 5xx (a gateway's timeout: the homeserver may have posted it) or whose
answer is cut raises ``OutcomeUnknown``, and is repeated later with the same transaction id (cinq's
retry, or a number typed in its room); one refused (below 500) raises ``Refused``.  A room creation
has no transaction id, so it is never repeated blindly: each DM room carries a ``cinq.dm`` state event
naming its person, by which ``find_dm`` finds one whose creation was not recorded.  The sync, and
joining a room, are repeated by matrix-nio until they work.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import ClientError
from nio import (
    AsyncClient,
    AsyncClientConfig,
    ErrorResponse,
    InviteMemberEvent,
    JoinedRoomsResponse,
    JoinError,
    LoginResponse,
    RedactedEvent,
    RoomCreateResponse,
    RoomGetEventError,
    RoomGetStateResponse,
    RoomMessageText,
    RoomPreset,
    RoomSendResponse,
    SyncResponse,
)

from bridges.matrix.config import REQUEST_TIMEOUT_S
from bridges.matrix.core import OutcomeUnknown, Refused
from bridges.matrix.inbox import Incoming
from bridges.matrix.state import State

log = logging.getLogger("bridges.matrix")
SYNC_TIMEOUT_MS = 30_000
# The state event that marks a DM room the bot created, and names its person.
DM_MARK = "cinq.dm"


class MatrixError(Exception):
    """The homeserver refused or failed a request (the caller retries later)."""


def _failure(what: str, resp: ErrorResponse) -> Exception:
    """The exception for an error answer: refused (below 500), or of unknown outcome (a 5xx, often a
    gateway that stopped waiting for the homeserver)."""
    transport = resp.transport_response
    status = getattr(transport, "status", None)
    if isinstance(status, int) and status < 500:
        return Refused(f"{what}: {status} {resp}")
    return OutcomeUnknown(f"{what}: {status} {resp}")


class Matrix:
    """The bot account on a homeserver (implements ``core.Homeserver``)."""

    def __init__(
        self, homeserver: str, user: str, state: State, request_timeout: float = REQUEST_TIMEOUT_S
    ) -> None:
        self.user_id = user
        self.state = state
        # The sync (its own timeout: the long poll's, plus 15 s), login, profile and joins.
        self.client = AsyncClient(homeserver, user, config=AsyncClientConfig(
            encryption_enabled=False, store_sync_tokens=False, request_timeout=request_timeout))
        # What a callback asks: one attempt each, so that the callback is answered before cinq stops
        # waiting (a send is repeated with its transaction id later; a creation is never repeated).
        self._once = AsyncClient(homeserver, user, config=AsyncClientConfig(
            encryption_enabled=False, store_sync_tokens=False, request_timeout=request_timeout,
            max_timeouts=0))

    async def login(self, password: str, display_name: str) -> None:
        """Reuse the stored access token and device, or log in with ``password`` and store them."""
        token, device = self.state.get("access_token"), self.state.get("device_id")
        if token and device:
            self.client.restore_login(self.user_id, device, token)
        else:
            resp = await self.client.login(password, device_name="cinq bridge")
            if not isinstance(resp, LoginResponse):
                raise MatrixError(f"login failed: {resp}")
            self.state.put("access_token", resp.access_token)
            self.state.put("device_id", resp.device_id)
        self._once.restore_login(self.user_id, self.client.device_id, self.client.access_token)
        await self.client.set_displayname(display_name)

    async def close(self) -> None:
        """Close the HTTP sessions (the login stays valid for the next start)."""
        await self.client.close()
        await self._once.close()

    async def send(self, room: str, content: dict[str, Any], txn_id: str) -> str:
        """Send an ``m.room.message``; returns its event id."""
        try:
            resp = await self._once.room_send(room, "m.room.message", content, tx_id=txn_id)
        except (ClientError, TimeoutError) as e:
            # Timed out, connection lost, or an answer cut in its middle: the homeserver may have
            # posted it.
            raise OutcomeUnknown(f"send to {room}: {e!r}") from e
        if not isinstance(resp, RoomSendResponse):
            raise _failure(f"send to {room}", resp)
        return str(resp.event_id)

    async def still_shown(self, room: str, event: str) -> bool:
        """Whether ``event`` in ``room`` still shows its content (not redacted, not gone)."""
        resp = await self._once.room_get_event(room, event)
        if isinstance(resp, RoomGetEventError):
            if resp.status_code == "M_NOT_FOUND":
                return False
            raise MatrixError(f"reading {event} in {room} failed: {resp}")
        return not isinstance(resp.event, RedactedEvent)

    async def create_dm(self, user: str) -> str:
        """A new private room with ``user`` invited, marked as direct and as the bot's DM with them."""
        mark = {"type": DM_MARK, "state_key": "", "content": {"user": user}}
        try:
            resp = await self._once.room_create(
                is_direct=True, invite=[user], preset=RoomPreset.trusted_private_chat, initial_state=[mark]
            )
        except (ClientError, TimeoutError) as e:  # a timeout, a lost connection, a cut answer: made or not
            raise OutcomeUnknown(f"creating a DM with {user}: {e!r}") from e
        if not isinstance(resp, RoomCreateResponse):
            raise _failure(f"creating a DM with {user}", resp)
        return str(resp.room_id)

    async def find_dm(self, user: str) -> str | None:
        """A room the bot created as ``user``'s DM and the bridge did not record: the bot is in it, it
        made it (``m.room.create``) and marked it (``cinq.dm``, sent by the bot: the person, an admin
        of the room, could change it) for ``user``."""
        joined = await self._once.joined_rooms()
        if not isinstance(joined, JoinedRoomsResponse):
            raise MatrixError(f"listing the bot's rooms failed: {joined}")
        for room in joined.rooms:
            if self.state.known_room(room):
                continue
            resp = await self._once.room_get_state(room)
            if not isinstance(resp, RoomGetStateResponse):
                log.warning("reading the state of %s failed: %s", room, resp)
                continue
            ours = {
                (e.get("type"), (e.get("content") or {}).get("user"))
                for e in resp.events
                if e.get("sender") == self.user_id and e.get("state_key") == ""
            }
            if ("m.room.create", None) in ours and (DM_MARK, user) in ours:
                return str(room)
        return None

    def room_name(self, room: str) -> str | None:
        """The room's display name (its name, else what its members make of it), or None."""
        r = self.client.rooms.get(room)
        return str(r.display_name) if r is not None and r.display_name else None

    def name(self, room: str, user: str) -> str:
        """The display name of ``user`` in ``room`` (their id when unknown)."""
        r = self.client.rooms.get(room)
        return (r.user_name(user) if r else None) or user

    async def run(
        self,
        on_batch: Callable[[list[Incoming], str], None],
        on_invite: Callable[[str, str, bool], Awaitable[None]],
    ) -> None:
        """Sync forever: accept invites, and give each batch's text messages from people, with the
        sync token after them, to ``on_batch`` (``Inbox.take``: it stores both at once, and people's
        messages are handed on from there, so a room whose number waits does not stop the sync)."""
        since = self.state.get("since")
        first = since is None
        while True:
            resp = await self.client.sync(timeout=SYNC_TIMEOUT_MS, since=since, full_state=first)
            if not isinstance(resp, SyncResponse):
                log.warning("sync failed: %s", resp)
                await asyncio.sleep(2)
                continue
            try:
                messages = await self._read(resp, on_invite, history=first)
                on_batch(messages, resp.next_batch)
            except Exception:
                # Read the same batch again: none of its messages was stored (joining again is harmless).
                log.exception("a sync batch could not be stored; reading it again")
                await asyncio.sleep(1)
                continue
            since, first = resp.next_batch, False

    async def _read(
        self,
        resp: SyncResponse,
        on_invite: Callable[[str, str, bool], Awaitable[None]],
        history: bool,
    ) -> list[Incoming]:
        for room, info in resp.rooms.invite.items():
            for ev in info.invite_state:
                if (
                    isinstance(ev, InviteMemberEvent)
                    and ev.state_key == self.user_id
                    and ev.membership == "invite"
                ):
                    await on_invite(room, ev.sender, bool((ev.content or {}).get("is_direct")))
            joined = await self.client.join(room)
            if isinstance(joined, JoinError):
                log.warning("could not join %s: %s", room, joined)
        if history:
            return []  # the first sync's timelines are what was said before the bridge existed
        messages = []
        for room, joined_info in resp.rooms.join.items():
            for ev in joined_info.timeline.events:
                if not isinstance(ev, RoomMessageText) or ev.sender == self.user_id:
                    continue
                relates = (ev.source.get("content") or {}).get("m.relates_to") or {}
                if relates.get("rel_type") == "m.replace":
                    continue  # a person's edit of their own message is not a new command
                messages.append(Incoming(room, ev.sender, self.name(room, ev.sender), ev.body, ev.event_id))
        return messages
