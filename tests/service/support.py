"""Helpers of the service tests: people, rooms, a fixed context, and a harness over the pipeline."""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

from service.domain.commands import TableCommand
from service.domain.identities import Player, Room
from service.domain.inputs import Input
from service.domain.tables.decide import Context
from service.foundation.settings import Settings
from service.ops.runtime import build
from service.platform.outbox import Message
from service.write import bots
from service.write.worker import Worker

ANA = Player(platform="tg", user="1", name="Ana")
BEA = Player(platform="tg", user="2", name="Bea")
CAL = Player(platform="web", user="3", name="Cal")
DAN = Player(platform="tg", user="4", name="Dan")
GROUP = Room(platform="tg", chat="-100", kind="group")
OTHER_GROUP = Room(platform="web", chat="g2", kind="group")
# At least 32 bytes and no placeholder: what a role on a real Redis accepts (service.foundation.secrets).
SECRET = b"the-test-suite-token-secret-9f3a1c7e52b8"


def private(p: Player) -> Room:
    """The private chat of a person."""
    return Room(platform=p.platform, chat=f"dm{p.user}", kind="private")


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


_SAID = {"command_id": "command_id", "language_code": "language", "moderator": "moderator",
         "replaces": "replaces", "room_title": "room_title"}


def said_by(who: Player, room: Room, **kw: Any) -> tuple[Input, dict[str, Any]]:
    """A test's keywords as an adapter's :class:`Input` (its command id, ``language_code``, moderator,
    replaced message, room title) and the keywords of what it carries (``token``, ``request``...)."""
    said = {_SAID[k]: kw.pop(k) for k in list(kw) if k in _SAID}
    return Input(who, room, **said), kw


def seeds(prefix: str = "seed") -> Any:
    """A deterministic stand-in for the CSPRNG seed source."""
    counter = itertools.count()
    return lambda: f"{prefix}{next(counter)}"


def context(now: float = 1000.0, **kw: Any) -> Context:
    """A fixed context for ``decide``."""
    kw.setdefault("turn_seconds", 0)
    return Context(now=now, new_seed=seeds(), choose_move=bots.choose_move, token_secrets=[SECRET], **kw)


_ids = itertools.count()


def cmd(name: str, table: str = "tab1", actor: Player | None = ANA, room: Room | None = GROUP,
        locale: str = "en", **args: Any) -> TableCommand:
    """A table command as the gateway would build it."""
    token = args.pop("token", None)
    return TableCommand(id=f"c{next(_ids)}", table=table, name=name, args=args, actor=actor, room=room,
                        locale=locale, token=token)


def settings(**kw: Any) -> Settings:
    """Test settings: few buckets, no turn timer, a known token secret, no forced pass made for
    people unless a test asks (tests/service/write/test_auto_pass.py)."""
    base: dict[str, Any] = dict(buckets=16, command_shards=2, turn_seconds=0, token_secrets=[SECRET.decode()],
                                snapshot_every=10, claim_idle_ms=50, block_ms=20, auto_pass_s=0)
    base.update(kw)
    return Settings(redis_url=None, **base)


class Harness:
    """The service on one Redis: a gateway, workers, and every outbox message seen so far."""

    def __init__(self, redis: Any, clock: Clock | None = None, workers: int = 1, **kw: Any) -> None:
        self.redis = redis
        self.clock = clock or Clock()
        self.settings = settings(**kw)
        # Wired as a process is (service.ops.runtime.build): its gateway, its first worker, then more.
        self.runtime = build(self.settings, redis, clock=self.clock, name="w0", seeds=seeds(), timers=False)
        self.gateway = self.runtime.gateway
        self.workers = [self.runtime.worker] + [self.new_worker(name=f"w{i}") for i in range(1, workers)]
        self.keys = self.runtime.keys
        self.positions: dict[str, str] = {}
        self.messages: list[Message] = []

    @property
    def worker(self) -> Worker:
        return self.workers[0]

    def new_worker(self, **args: Any) -> Worker:
        """Another worker on this service (a crashed one's heir, a rival): the harness's clock and
        seeds and no timers unless ``args`` say otherwise (``args`` as ``runtime.build_worker``'s)."""
        args = {"clock": self.clock, "seeds": seeds(), "timers": False, **args}
        return self.runtime.another_worker(**args)

    async def send(self, who: Player, text: str | None = None, room: Room = GROUP,
                   **kw: Any) -> list[Message]:
        """Submit, let the worker finish everything, and return the new outbox messages."""
        said, carried = said_by(who, room, **kw)
        await self.gateway.submit(said, text, **carried)
        return await self.settle()

    async def settle(self) -> list[Message]:
        """Drain the command streams (AI turns included) and collect the new outbox messages."""
        while await self.worker.drain():
            pass
        return await self.collect()

    async def collect(self) -> list[Message]:
        """The outbox messages written since the last call."""
        new: list[Message] = []
        keys = [self.keys.outbox(b) for b in range(self.keys.buckets)]
        pipe = self.redis.pipeline(transaction=False)
        for key in keys:
            pipe.xrange(key, min=_after(self.positions.get(key)))
        for key, entries in zip(keys, await pipe.execute(), strict=True):
            for mid, fields in entries:
                self.positions[key] = mid.decode()
                new.append(Message.model_validate(json.loads(fields[b"m"])).rendered())
        self.messages += new
        return new

    async def lobby(self, *players: Player, text: str = "/new cinquillo") -> str:
        """A lobby in the group: the first person opens it with ``text``, the others join; its id."""
        await self.send(players[0], text)
        for p in players[1:]:
            await self.send(p, "/join")
        return await self.table_of()

    def over(self) -> bool:
        """Whether a match's end was told (a ``match_over`` message)."""
        return any(m.kind == "match_over" for m in self.messages)

    def last_hand(self) -> Message:
        """The latest hand with actions: the person to move's, with their legal moves."""
        return [m for m in self.messages if m.kind == "hand" and m.actions][-1]

    async def table_of(self, room: Room = GROUP) -> str:
        t = await self.gateway.table_of(room)
        assert t is not None
        return t

    async def events(self, table: str) -> list[str]:
        return await self.worker.store.events(table)


def _after(pos: str | None) -> str:
    return "-" if pos is None else f"({pos}"


def to(msgs: list[Message], who: Player | Room) -> list[Message]:
    """The messages addressed to a person or a room."""
    if isinstance(who, Player):
        return [m for m in msgs if m.to.player is not None and who.same(m.to.player)]
    return [m for m in msgs if m.to.room is not None and who.same(m.to.room)]


# Word characters include both cases, "-" and "_", so that no card is "found" inside an id or a token.
_CARD = re.compile(r"(?<![0-9A-Za-z_-])(1[0-2]|[1-7])([oceb])(?![0-9A-Za-z_-])")


def card_tokens(text: str) -> set[str]:
    """The Cinquillo card codes in a text, as whole tokens ("1o" is not found inside "11o")."""
    return {m.group(0) for m in _CARD.finditer(text)}


async def play_with_bots(h: Harness, who: Player, game: str, players: int, room: Room) -> list[Message]:
    """In a group, what ``/play <game> <players>`` does in a private chat (``/play`` is for private
    chats): a table, AI players in the other seats, started at once."""
    await h.send(who, f"/new {game}", room=room)
    await h.send(who, f"/bots {players - 1}", room=room)
    return await h.send(who, "/start", room=room)


def stop_processes(procs: list[Any], timeout: float = 10) -> None:
    """SIGTERM every process still running (each finishes the batch in hand), then wait for each,
    and SIGKILL one that does not stop within ``timeout`` seconds."""
    import signal
    import subprocess

    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()

