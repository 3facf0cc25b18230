"""Button presses waiting for the service's verdict, so that a refusal is the press's alert.

A press is handed to the service as a command whose id is ``tg:cb:<callback query id>``; every outbox
message the command causes has an id that starts with it (``<command id>:<n>``, the gateway's and the
worker's alike).  The press handler :meth:`Presses.wait`\\ s for the first of them, for at most
``wait_s`` seconds; the outbox handler :meth:`Presses.offer`\\ s it each message it reads.  A refusal
(a message with a ``code``) then becomes the callback query's alert and is not posted in the chat;
anything else means the command was accepted.  When no verdict comes in time (a slow worker, or the
message is delivered by another bot process), the press is answered as sent and a refusal is posted
in the chat as before: nothing is lost, it is only less tidy.
"""

from __future__ import annotations

import asyncio
import contextlib

from service.platform.outbox import Message

PREFIX = "tg:cb:"


def command_id(callback_query_id: str) -> str:
    """The command id of a button press (the gateway's idempotency key: Telegram may resend it)."""
    return f"{PREFIX}{callback_query_id}"


class Presses:
    """The presses of this process that wait for a verdict (see the module docstring)."""

    def __init__(self, wait_s: float = 1.5) -> None:
        self.wait_s = wait_s
        self.waiting: dict[str, asyncio.Future[Message]] = {}

    async def wait(self, cid: str) -> Message | None:
        """The first outbox message of the command ``cid`` (call :meth:`expect` first), or None."""
        fut = self.waiting.get(cid)
        if fut is None:
            return None
        try:
            await asyncio.wait_for(asyncio.shield(fut), timeout=self.wait_s)
        except TimeoutError:
            pass
        finally:
            self.waiting.pop(cid, None)  # from now on a refusal is posted in the chat
        if fut.done() and not fut.cancelled():
            return fut.result()
        fut.cancel()
        return None

    def expect(self, cid: str) -> None:
        """Start waiting for the command ``cid`` (before it is submitted: its verdict may be quick)."""
        self.waiting[cid] = asyncio.get_running_loop().create_future()

    def discard(self, cid: str) -> None:
        """Stop waiting for ``cid`` (it could not be submitted)."""
        fut = self.waiting.pop(cid, None)
        if fut is not None and not fut.done():
            fut.cancel()

    def offer(self, msg: Message) -> bool:
        """Give an outbox message to the press it answers, if one waits for it.  True: a refusal was
        taken (it becomes the press's alert; do not post it)."""
        if not msg.id.startswith(PREFIX):
            return False
        cid = msg.id.rsplit(":", 1)[0]
        fut = self.waiting.get(cid)
        if fut is None or fut.done():
            return False
        with contextlib.suppress(asyncio.InvalidStateError):
            fut.set_result(msg)
        return msg.code is not None and msg.kind == "reply"
