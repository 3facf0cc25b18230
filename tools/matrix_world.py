"""A whole Matrix world on loopback, for the bridge's end-to-end test and benchmark: Synapse, cinq
(``cinq worker`` and ``python -m adapters.webhook`` as processes on a given Redis), the bridge
(``python -m bridges.matrix``) and people as matrix-nio clients.  Everything crosses real sockets:
the bridge reaches cinq over signed HTTP only, and people reach the bridge through the homeserver.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nio import (
    AsyncClient,
    InviteMemberEvent,
    LoginResponse,
    RoomCreateResponse,
    RoomSendResponse,
    SyncResponse,
)

from tools.loopback import free_port
from tools.synapse import Synapse

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = "matrix"
PASSWORD = "correct-horse-battery"


class Person:
    """A person on Matrix: syncs in the background, joins what they are invited to, keeps every
    ``m.room.message`` they see (with edits applied) per room."""

    def __init__(self, hs_url: str, user_id: str) -> None:
        self.user_id = user_id
        self.client = AsyncClient(hs_url, user_id)
        self.events: dict[str, list[tuple[float, dict[str, Any]]]] = {}
        self.current: dict[str, dict[str, Any]] = {}  # event id -> its content as last edited
        self.changed = asyncio.Event()
        self.display_name = ""
        self._task: asyncio.Task[None] | None = None

    async def start(self, display_name: str) -> Person:
        """Log in, set the display name and start syncing."""
        self.display_name = display_name
        resp = await self.client.login(PASSWORD)
        assert isinstance(resp, LoginResponse), resp
        await self.client.set_displayname(display_name)
        first = await self.client.sync(timeout=0, full_state=True)
        assert isinstance(first, SyncResponse), first
        self._task = asyncio.create_task(self._sync())
        return self

    async def _sync(self) -> None:
        while True:
            resp = await self.client.sync(timeout=10_000)
            if not isinstance(resp, SyncResponse):
                await asyncio.sleep(0.5)
                continue
            now = time.perf_counter()
            for room, info in resp.rooms.invite.items():
                if any(
                    isinstance(e, InviteMemberEvent) and e.state_key == self.user_id
                    for e in info.invite_state
                ):
                    await self.client.join(room)
            for room, joined in resp.rooms.join.items():
                for ev in joined.timeline.events:
                    src = {**ev.source, "room_id": room}
                    if src.get("type") != "m.room.message":
                        continue
                    self.events.setdefault(room, []).append((now, src))
                    content = src.get("content") or {}
                    rel = content.get("m.relates_to") or {}
                    if rel.get("rel_type") == "m.replace":
                        self.current[rel["event_id"]] = content.get("m.new_content") or content
                    else:
                        self.current[src["event_id"]] = content
            self.changed.set()

    async def close(self) -> None:
        """Stop syncing and log out of the HTTP session."""
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.client.close()

    async def say(self, room: str, text: str) -> float:
        """Send a text message; returns when it was sent (perf_counter)."""
        t0 = time.perf_counter()
        resp = await self.client.room_send(room, "m.room.message", {"msgtype": "m.text", "body": text})
        if not isinstance(resp, RoomSendResponse):  # else a move would vanish and the match stall
            raise RuntimeError(f"{self.user_id} could not say {text!r} in {room}: {resp}")
        return t0

    def from_bot(self, room: str, bot: str, edits: bool = True) -> list[tuple[float, dict[str, Any]]]:
        """The bot's messages in ``room`` in arrival order (with or without its edits)."""
        out = [(t, e) for t, e in self.events.get(room, []) if e["sender"] == bot]
        if not edits:
            out = [
                (t, e)
                for t, e in out
                if ((e["content"].get("m.relates_to") or {}).get("rel_type") != "m.replace")
            ]
        return out

    def texts(self, room: str, bot: str) -> list[str]:
        """The current text of each of the bot's messages in ``room`` (edits applied), plus every
        version an edit ever showed."""
        return [
            (e["content"].get("m.new_content") or e["content"]).get("body", "")
            for _, e in self.from_bot(room, bot)
        ]

    async def wait(self, pred: Callable[[], Any], timeout: float = 120.0) -> Any:
        """Wait until ``pred()`` is truthy (checked after every sync), and return it."""
        deadline = time.monotonic() + timeout
        while True:
            got = pred()
            if got:
                return got
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.user_id}: condition not met in {timeout} s")
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), 5)


class World:
    """Synapse + cinq + the bridge on loopback; ``people`` are created on demand."""

    def __init__(
        self, base: Path, redis_url: str, synapse: Synapse, locale: str = "en", quiet: bool = False
    ) -> None:
        """``quiet``: the processes log warnings only (a benchmark), not each command and callback."""
        self.base = base
        self.quiet = quiet
        self.redis_url = redis_url
        self.hs = synapse
        self.locale = locale
        self.tag = secrets.token_hex(3)
        self.bot = f"@cinq{self.tag}:localhost"
        self.secret = "whsec_" + __import__("base64").b64encode(secrets.token_bytes(24)).decode()
        self.bridge_port, self.webhook_port = free_port(), free_port()
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.people: list[Person] = []

    def _cinq_env(self) -> dict[str, str]:
        return {
            **os.environ,
            "REDIS_URL": self.redis_url,
            "CINQ_KEY_PREFIX": f"mx{self.tag}:",
            "CINQ_TURN_SECONDS": "0",
            # Each command and each retried callback (the files stay in ``base``): a stall shows where
            # the move stopped.
            "CINQ_LOG_LEVEL": "WARNING" if self.quiet else "INFO",
            "CINQ_HTTP_PORT": "0",  # each role's operations listener: any free port
            "CINQ_TOKEN_SECRETS": json.dumps([secrets.token_hex(16)]),
            "CINQ_DAILY_SECRET": secrets.token_urlsafe(32),
            "CINQ_WEBHOOK_PORT": str(self.webhook_port),
            "CINQ_WEBHOOK_RATE": "1000",
            "CINQ_WEBHOOK_BURST": "1000",
            "CINQ_WEBHOOK_MAX_ATTEMPTS": "1000",
            "CINQ_WEBHOOK_BACKOFF_BASE_S": "0.1",
            "CINQ_WEBHOOK_BACKOFF_CAP_S": "1",
            "CINQ_WEBHOOK_PLATFORMS": json.dumps(
                [
                    {
                        "name": PLATFORM,
                        "secrets": [self.secret],
                        "callback_url": f"http://127.0.0.1:{self.bridge_port}/",
                    }
                ]
            ),
        }

    def _spawn(self, name: str, argv: list[str], env: dict[str, str]) -> None:
        # The child keeps its own copy of the descriptor: the file is closed here at once.
        with open(self.base / f"{name}.log", "ab") as log:
            self.procs[name] = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=log)

    def start_bridge(self) -> None:
        """Start (or start again) ``python -m bridges.matrix``; its state file stays."""
        env = {
            **os.environ,
            "CINQ_MATRIX_HOMESERVER": self.hs.url,
            "CINQ_MATRIX_USER": self.bot,
            "CINQ_MATRIX_PASSWORD": PASSWORD,
            "CINQ_MATRIX_CINQ_URL": f"http://127.0.0.1:{self.webhook_port}",
            "CINQ_MATRIX_PLATFORM": PLATFORM,
            "CINQ_MATRIX_SECRET": self.secret,
            "CINQ_MATRIX_PORT": str(self.bridge_port),
            "CINQ_MATRIX_STATE": str(self.base / "bridge.sqlite3"),
            "CINQ_MATRIX_LOCALE": self.locale,
            # Each callback shown and each message handed on.
            "CINQ_MATRIX_LOG_LEVEL": "WARNING" if self.quiet else "DEBUG",
        }
        self._spawn("bridge", [sys.executable, "-m", "bridges.matrix"], env)
        self._wait_http(f"http://127.0.0.1:{self.bridge_port}/healthz", "bridge")

    def kill_bridge(self) -> None:
        """SIGKILL the bridge: no chance to tidy up (what a crash does)."""
        p = self.procs.pop("bridge")
        p.send_signal(signal.SIGKILL)
        p.wait()

    def bridge_sent(self) -> dict[str, int]:
        """The Matrix events the running bridge has sent (``{"send": n, "edit": m}``)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.bridge_port}/healthz", timeout=30) as r:
            return dict(json.load(r)["sent"])

    def _wait_http(self, url: str, name: str, timeout_s: float = 120.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.procs[name].poll() is not None:
                raise RuntimeError(f"{name} exited: {(self.base / f'{name}.log').read_text()[-3000:]}")
            try:
                urllib.request.urlopen(url, timeout=5).read()
                return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"{name} did not answer at {url}")

    async def start(self, names: list[str]) -> list[Person]:
        """Start cinq and the bridge, register the bot and ``names`` (display names), log them in."""
        self.base.mkdir(parents=True, exist_ok=True)
        env = self._cinq_env()
        self._spawn("webhook", [sys.executable, "-m", "adapters.webhook"], env)
        self._spawn(
            "worker",
            [sys.executable, "-c",
             "import sys; from service.ops.cli import main; sys.exit(main(['worker']))"],
            env,
        )
        self._wait_http(f"http://127.0.0.1:{self.webhook_port}/healthz", "webhook")
        self.hs.register(f"cinq{self.tag}", PASSWORD)
        users = [self.hs.register(f"{n.lower()}{self.tag}", PASSWORD) for n in names]
        self.start_bridge()
        self.people = [await Person(self.hs.url, u).start(n) for u, n in zip(users, names, strict=True)]
        return self.people

    async def group(self, owner: Person, others: list[Person]) -> str:
        """A group room made by ``owner`` with the bot and ``others`` invited; returns once all joined."""
        resp = await owner.client.room_create(name="cinq", invite=[self.bot, *(p.user_id for p in others)])
        assert isinstance(resp, RoomCreateResponse), resp
        room = resp.room_id
        want = {owner.user_id, self.bot, *(p.user_id for p in others)}

        async def joined() -> bool:
            r = await owner.client.joined_members(room)
            return want <= {m.user_id for m in getattr(r, "members", [])}

        deadline = time.monotonic() + 120
        while not await joined():
            if time.monotonic() > deadline:
                raise TimeoutError("not everyone joined the group room")
            await asyncio.sleep(0.3)
        return str(room)

    async def close(self) -> None:
        """Stop everyone and every process this world started."""
        for p in self.people:
            await p.close()
        for p in self.procs.values():
            p.terminate()
        for p in self.procs.values():
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs.clear()


# No new message anywhere for this long (a loaded machine is slow, but not this slow): a lost move.
STALL_S = 180
FINISHED = ("The match is over", "Fin de la partida")
_OPTION = __import__("re").compile(r"^(\d+)\. ", __import__("re").M)


def options(content: dict[str, Any]) -> int:
    """How many numbered choices a bot message offers."""
    return len(_OPTION.findall(content.get("body", "")))


def _last_offers(world: World, group: str) -> str:
    """Who the match waits for, as the people see it: each one's latest message from the bot in their
    DM (its event, how many choices it offers, its first line)."""
    out = []
    for p in world.people:
        mine = sorted(
            (te for room in p.events if room != group for te in p.from_bot(room, world.bot, edits=False)),
            key=lambda te: te[0],
        )
        if not mine:
            out.append(f"{p.display_name}: nothing")
            continue
        ev = mine[-1][1]
        first = ev["content"].get("body", "").split("\n", 1)[0][:60]
        out.append(f"{p.display_name}: {ev['event_id']} ({options(ev['content'])} choices) {first!r}")
    return "; ".join(out)


async def play(
    world: World, group: str, game: str, *, bots: int = 1, restart_at: int | None = None, seed: int = 1
) -> dict[str, Any]:
    """Play one match of ``game`` in ``group`` with every person of ``world`` and ``bots`` AI players,
    answering every numbered choice with a random number; with ``restart_at``, the bridge is killed
    before that move, the move is typed while it is down, and the bridge is started again.

    Returns ``moves``, ``latencies`` (s, from a person's answer to the group's next table update as
    the owner's client saw it) and the bot's ``sent`` counters.
    """
    rng = __import__("random").Random(seed)
    owner, people = world.people[0], world.people
    bot = world.bot

    def group_texts() -> str:
        return "\n".join(owner.texts(group, bot))

    async def said(person: Person, text: str, expect: Callable[[], Any]) -> None:
        # The room's table is found through an index written just after the table's first messages:
        # a command sent at once may find no table yet, and is sent again.
        for _ in range(20):
            await person.say(group, text)
            with contextlib.suppress(TimeoutError):
                await owner.wait(expect, timeout=15)
                return
        raise TimeoutError(f"{text!r} was never taken")

    before = len(owner.from_bot(group, bot))
    await said(owner, f"/new {game}", lambda: len(owner.from_bot(group, bot)) > before)
    for p in people[1:]:
        name = owner.client.rooms[group].user_name(p.user_id) if group in owner.client.rooms else None
        name = name or p.user_id
        await said(p, "/join", lambda name=name: name in group_texts())
    n = len(owner.from_bot(group, bot))
    await said(owner, f"/bots {bots}", lambda: len(owner.from_bot(group, bot)) > n)
    await owner.say(group, "/start")

    moves, sends, handled = 0, [], {p.user_id: 0 for p in people}
    last_move = "none"
    seen, last_change = 0, time.monotonic()
    while not any(f in group_texts() for f in FINISHED):
        # A lost move stalls the match: say so rather than wait for the suite's timeout.
        now_seen = sum(len(p.events.get(r, [])) for p in people for r in p.events)
        if now_seen != seen:
            seen, last_change = now_seen, time.monotonic()
        elif time.monotonic() - last_change > STALL_S:
            raise TimeoutError(
                f"the match stalled after {moves} moves: nothing new for {STALL_S} s; the last move: "
                f"{last_move}; each DM's last message from the bot: {_last_offers(world, group)}; "
                f"logs and the bridge's state in {world.base}"
            )
        acted = False
        for p in people:
            mine = [
                (t, e) for room in p.events if room != group for t, e in p.from_bot(room, bot, edits=False)
            ]
            mine.sort(key=lambda te: te[0])
            for _, ev in mine[handled[p.user_id] :]:
                handled[p.user_id] += 1
                k = options(ev["content"])
                if not k:
                    continue
                answer = str(rng.randint(1, k))
                restart = restart_at is not None and moves == restart_at
                last_move = (f"{p.display_name} answered {answer} to {ev['event_id']}"
                             f"{' while the bridge was down' if restart else ''}")
                if restart:
                    world.kill_bridge()
                    sends.append(await p.say(ev["room_id"], answer))
                    await asyncio.sleep(1)
                    world.start_bridge()
                else:
                    sends.append(await p.say(ev["room_id"], answer))
                moves += 1
                acted = True
        if not acted:
            waiters = [asyncio.create_task(p.changed.wait()) for p in people]
            await asyncio.wait(waiters, timeout=5, return_when=asyncio.FIRST_COMPLETED)
            for w in waiters:
                w.cancel()
            for p in people:
                p.changed.clear()
    arrivals = [t for t, _ in owner.from_bot(group, bot)]
    latencies = [min((a for a in arrivals if a > t0), default=t0) - t0 for t0 in sends]
    return {"moves": moves, "latencies": latencies, "sent": world.bridge_sent()}
