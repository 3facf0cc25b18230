"""A fault-injecting Redis proxy on loopback: it forwards every byte between clients and one
``redis-server`` and, command by command, lets a test strike at an exact point.

::

    proxy = Proxy(server)                      # server: a tests.faults.redis_server.RedisServer
    await proxy.start()                        # clients use proxy.url
    rule = proxy.arm(command("XADD", key_prefix="cmd:"), "kill_before")
    ...                                        # the code under test runs
    await rule.wait()                          # the rule fired (rule.hits: the commands it hit)

Rules are matched in the order armed against each command a client sends (pipelines are split into
their commands; ``EVALSHA``/``EVAL``/``FCALL`` expose the script's keys).  A rule fires on the
matching commands after the first ``skip`` of them, ``times`` times (``None``: every time), and only
when ``reply`` (if given) accepts the command's decoded reply.  Actions:

``kill_before``
    The commands before it on that connection run and their replies reach the client; then both
    sides of the connection are closed: nothing of this command, nor of the rest of its pipeline,
    reaches Redis.
``kill_after`` / ``drop_reply`` (the same)
    The command (and what precedes it) runs; what follows it on the connection is held back; its
    reply never reaches the client: the connection is closed instead.  The write happened, the
    client sees a ``ConnectionError``.
``kill_server_before`` / ``kill_server_after``
    As ``kill_before`` / ``kill_after``, but the redis-server is SIGKILLed at that point (the test
    restarts it: ``server.restart()``).  With ``appendfsync always`` a command whose reply the proxy
    has seen is in the AOF.
``pause``
    The command (and what follows it on that connection) is held ``seconds``, or until ``release``
    is set.
``hook``
    ``before()`` is awaited before the command goes to Redis and ``after()`` once its reply is back,
    before the client sees it (:mod:`tests.faults.oom` refuses one write this way).  ``exclusive``:
    every other connection's commands wait meanwhile, so that nothing else runs in that window.

Every command is logged (:attr:`Proxy.log`, most recent 200k); new connections keep going through
after any kill, and fail at once (connection closed) while the server is down.

``Proxy(server, raw=True)`` relays bytes without reading them (a replica's replication link, which is
not request and reply; a connection of a parsing proxy turns raw at a replica's ``PSYNC``/``SYNC``, so
that a replica may replicate through it too); :meth:`Proxy.partition` cuts every connection and
refuses new ones until :meth:`Proxy.heal`, as a network partition between its two sides would.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from tests.faults import resp
from tests.faults.redis_server import RedisServer
from tools.loopback import free_port

ACTIONS = frozenset({"kill_before", "kill_after", "drop_reply", "kill_server_before", "kill_server_after",
                     "pause", "hook"})
_AFTER = frozenset({"kill_after", "drop_reply", "kill_server_after"})
_BLOCKING = frozenset({"XREAD", "XREADGROUP", "BLPOP", "BRPOP", "BLMOVE", "BZPOPMIN", "BZPOPMAX", "WAIT"})
#: a replica's sync: what follows on its connection is a replication stream (relayed raw)
_REPLICATION = frozenset({"PSYNC", "SYNC"})
_SCRIPTS = frozenset({"EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO"})


@dataclass
class Command:
    """One command a client sent: its name (upper case), arguments, connection and client name."""

    seq: int
    name: str
    args: list[bytes]
    conn: int
    client: str | None
    at: float

    @property
    def keys(self) -> list[bytes]:
        """The keys it names: a script's KEYS, the streams of XREAD(GROUP), else the first argument."""
        if self.name in _SCRIPTS and len(self.args) >= 2:
            return self.args[2:2 + int(self.args[1])]
        if self.name in ("XREAD", "XREADGROUP"):
            upper = [a.upper() for a in self.args]
            if b"STREAMS" in upper:
                rest = self.args[upper.index(b"STREAMS") + 1:]
                return rest[:len(rest) // 2]
        return self.args[:1]

    @property
    def blocking(self) -> bool:
        """Whether Redis may hold its reply (a read with BLOCK, a blocking pop)."""
        if self.name in ("XREAD", "XREADGROUP"):
            return b"BLOCK" in (a.upper() for a in self.args)
        return self.name in _BLOCKING


Predicate = Callable[[Command], bool]
Hook = Callable[[], Awaitable[Any]]


@dataclass(eq=False)
class Rule:
    """An armed fault (see the module docstring); ``fired`` is set the first time it fires."""

    match: Predicate
    action: str
    times: int | None = 1
    skip: int = 0
    reply: Callable[[Any], bool] | None = None
    seconds: float = 0.0
    release: asyncio.Event | None = None
    before: Hook | None = None
    after: Hook | None = None
    exclusive: bool = False
    fired: asyncio.Event = field(default_factory=asyncio.Event)
    hits: list[Command] = field(default_factory=list)
    seen: int = 0

    @property
    def spent(self) -> bool:
        """Whether it has fired as many times as it may."""
        return self.times is not None and len(self.hits) >= self.times

    def take(self, cmd: Command) -> bool:
        """Count one firing on ``cmd`` if the rule may still fire (``fired`` is set once the action
        is done: the connection closed, the server killed, the command held or its hooks run)."""
        if self.spent:
            return False
        self.hits.append(cmd)
        return True

    async def wait(self, timeout_s: float = 60.0) -> Command:
        """Wait until the rule fired; returns the command it first hit."""
        await asyncio.wait_for(self.fired.wait(), timeout_s)
        return self.hits[0]


def command(name: str, *, key: str | None = None, key_prefix: str | None = None, client: str | None = None,
            where: Predicate | None = None) -> Predicate:
    """A predicate: commands called ``name`` (``"*"``: any), optionally on a key (or a key starting
    with ``key_prefix``), from a client named ``client`` (CLIENT SETNAME), and satisfying ``where``."""
    want = name.upper()

    def match(c: Command) -> bool:
        if want != "*" and c.name != want:
            return False
        ks = [k.decode(errors="replace") for k in c.keys]
        if key is not None and key not in ks:
            return False
        if key_prefix is not None and not any(k.startswith(key_prefix) for k in ks):
            return False
        if client is not None and c.client != client:
            return False
        return where is None or where(c)

    return match


def evalsha(sha: str, **kw: Any) -> Predicate:
    """A predicate: the EVALSHA of the script whose SHA-1 is ``sha`` (keys and client as for ``command``)."""
    return command("EVALSHA", where=lambda c: c.args[:1] == [sha.encode()], **kw)


def xreadgroup(group: str, **kw: Any) -> Predicate:
    """A predicate: an XREADGROUP of consumer group ``group``."""
    return command("XREADGROUP", where=lambda c: len(c.args) > 1 and c.args[1] == group.encode(), **kw)


def has_entries(reply: Any) -> bool:
    """A reply predicate: a stream read that returned at least one entry."""
    if not isinstance(reply, list):
        return False
    for stream in reply:
        entries = stream[1] if isinstance(stream, list | tuple) and len(stream) == 2 else None
        if entries:
            return True
    return False


class Proxy:
    """The proxy (see the module docstring).  ``server`` is killed by the ``kill_server_*`` actions."""

    def __init__(self, server: RedisServer, *, log_size: int = 200_000, raw: bool = False) -> None:
        self.server = server
        self.raw = raw
        self.partitioned = False
        self.rules: list[Rule] = []
        self.log: deque[Command] = deque(maxlen=log_size)
        self.port = 0
        self._seq = itertools.count(1)
        self._ids = itertools.count(1)
        self._conns: set[_Conn] = set()
        self._srv: asyncio.AbstractServer | None = None
        self._gate = asyncio.Event()
        self._gate.set()
        self._owner: _Conn | None = None

    @property
    def url(self) -> str:
        """The URL clients use to go through the proxy."""
        return f"redis://127.0.0.1:{self.port}/0"

    async def start(self, port: int = 0) -> Proxy:
        """Listen on 127.0.0.1 (``port`` 0: a free port from :func:`tools.loopback.free_port`, never
        one already picked for a server that has not started yet; then see :attr:`port`)."""
        self._srv = await asyncio.start_server(self._accept, "127.0.0.1", port or free_port(),
                                               limit=1 << 22)
        self.port = self._srv.sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        """Stop listening and close every connection."""
        if self._srv is not None:
            self._srv.close()
        await self.kill_connections()
        if self._srv is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._srv.wait_closed(), 5)

    def arm(self, match: Predicate, action: str, **kw: Any) -> Rule:
        """Arm a rule (see the module docstring); returns it, to wait on or to :meth:`disarm`."""
        if action not in ACTIONS:
            raise ValueError(f"unknown action {action!r}")
        rule = Rule(match, action, **kw)
        self.rules.append(rule)
        return rule

    def disarm(self, rule: Rule | None = None) -> None:
        """Remove a rule (all of them when None)."""
        self.rules = [] if rule is None else [r for r in self.rules if r is not rule]

    def seen(self, match: Predicate) -> list[Command]:
        """The logged commands that ``match``."""
        return [c for c in self.log if match(c)]

    async def partition(self) -> int:
        """Cut every connection and refuse new ones until :meth:`heal`; returns how many were cut."""
        self.partitioned = True
        return await self.kill_connections()

    def heal(self) -> None:
        """End the partition: new connections go through again."""
        self.partitioned = False

    async def kill_connections(self) -> int:
        """Close every client connection now (as a network partition would); returns how many."""
        conns = list(self._conns)
        for c in conns:
            c.close()
        return len(conns)

    # -- internals --------------------------------------------------------------------------------

    def _rule_for(self, cmd: Command) -> Rule | None:
        for rule in self.rules:
            if rule.spent or not rule.match(cmd):
                continue
            rule.seen += 1
            if rule.seen <= rule.skip:
                continue
            # A rule that looks at the reply counts its firing only once the reply is there.
            if rule.reply is not None or rule.take(cmd):
                return rule
        return None

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = _Conn(self, next(self._ids), reader, writer)
        self._conns.add(conn)
        try:
            await conn.run()
        except asyncio.CancelledError:
            # cancelled at the loop's end: asyncio's stream callback would print the cancellation as a
            # traceback (it calls task.exception() on a handler task); the connection just closes
            conn.close()
        finally:
            self._conns.discard(conn)

    async def _quiet(self, but: _Conn) -> None:
        """Wait until no other connection has a non-blocking command in Redis."""
        while any(not p[0].blocking for c in self._conns if c is not but for p in c.pending):
            await asyncio.sleep(0.001)


class _Conn:
    """One client connection and its own connection to Redis."""

    def __init__(self, proxy: Proxy, cid: int, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.proxy, self.id = proxy, cid
        self.creader, self.cwriter = reader, writer
        self.uwriter: asyncio.StreamWriter | None = None
        self.client: str | None = None
        self.pending: deque[tuple[Command, Rule | None]] = deque()
        self.released = asyncio.Event()
        self.closed = False
        self._tasks: list[asyncio.Task[None]] = []

    async def run(self) -> None:
        if self.proxy.partitioned:  # no route to the other side
            self.close()
            return
        try:
            ureader, self.uwriter = await asyncio.open_connection("127.0.0.1", self.proxy.server.port,
                                                                  limit=1 << 22)
        except OSError:  # the server is down: the client sees its connection closed at once
            self.close()
            return
        if self.proxy.raw:
            self._tasks = [asyncio.create_task(_pump(self.creader, self.uwriter)),
                           asyncio.create_task(_pump(ureader, self.cwriter))]
        else:
            self._tasks = [asyncio.create_task(self._upstream()),
                           asyncio.create_task(self._downstream(ureader))]
        # Either side ending ends the connection, as a TCP connection to a dead server does: a client
        # blocked in a read sees its connection closed (it would otherwise wait for a reply forever).
        await asyncio.wait(self._tasks, return_when=asyncio.FIRST_COMPLETED)
        self.close()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.released.set()
        for w in (self.cwriter, self.uwriter):
            if w is not None:
                with contextlib.suppress(Exception):
                    w.close()
        current = asyncio.current_task()
        for t in self._tasks:
            if t is not current:
                t.cancel()
        if self.proxy._owner is self:
            self.proxy._owner = None
            self.proxy._gate.set()

    async def _send(self, out: bytearray) -> None:
        if out and self.uwriter is not None:
            self.uwriter.write(bytes(out))
            out.clear()
            await self.uwriter.drain()

    async def _replied(self) -> None:
        """Wait until every command sent so far on this connection has had its reply relayed."""
        while self.pending and not self.closed:
            await asyncio.sleep(0.001)

    async def _upstream(self) -> None:
        """Client to Redis: command by command, through the rules."""
        p = self.proxy
        buf = bytearray()
        out = bytearray()
        while not self.closed:
            data = await self.creader.read(1 << 16)
            if not data:
                return
            buf += data
            pos = 0
            while (parsed := resp.command_at(buf, pos)) is not None:
                args, end = parsed
                raw, pos = bytes(buf[pos:end]), end
                if not args:
                    continue
                name = args[0].decode(errors="replace").upper()
                if name == "CLIENT" and len(args) > 2 and args[1].upper() == b"SETNAME":
                    self.client = args[2].decode(errors="replace")
                cmd = Command(next(p._seq), name, args[1:], self.id, self.client, time.monotonic())
                p.log.append(cmd)
                while not p._gate.is_set() and p._owner is not self:  # another's exclusive window
                    await self._send(out)
                    await p._gate.wait()
                rule = p._rule_for(cmd)
                if rule is None:
                    out += raw
                    self.pending.append((cmd, None))
                    if name in _REPLICATION:  # a replica's link: from here on a stream, not replies
                        out += buf[pos:]
                        await self._send(out)
                        assert self.uwriter is not None
                        await _pump(self.creader, self.uwriter)
                        return
                    continue
                await self._send(out)
                if not await self._strike(rule, cmd, raw):
                    return
            del buf[:pos]
            await self._send(out)

    async def _strike(self, rule: Rule, cmd: Command, raw: bytes) -> bool:
        """Act on a command a rule matched; returns whether the connection goes on."""
        p = self.proxy
        if rule.action in ("kill_before", "kill_server_before"):
            await self._replied()
            try:
                if rule.action == "kill_server_before":
                    # The dying server ends this connection's other half, which may cancel this task
                    # while it waits here: the kill goes on in its thread, and the rule has fired.
                    await asyncio.to_thread(p.server.kill)
            finally:
                self.close()
                rule.fired.set()
            return False
        if rule.action == "pause":
            rule.fired.set()
            if rule.release is not None:
                await rule.release.wait()
            else:
                await asyncio.sleep(rule.seconds)
            self.pending.append((cmd, None))
            await self._send(bytearray(raw))
            return not self.closed
        if rule.action == "hook" and rule.exclusive:
            while p._owner is not None and p._owner is not self:
                await p._gate.wait()
            p._owner = self
            p._gate.clear()
            await p._quiet(self)
        if rule.action == "hook" and rule.before is not None:
            await rule.before()
        # After-actions and hooks: the command goes, what follows waits for its reply.
        self.released.clear()
        self.pending.append((cmd, rule))
        await self._send(bytearray(raw))
        await self.released.wait()
        return not self.closed

    async def _downstream(self, ureader: asyncio.StreamReader) -> None:
        """Redis to client: reply by reply, so that a rule can stop one from reaching the client."""
        p = self.proxy
        buf = bytearray()
        while not self.closed:
            data = await ureader.read(1 << 16)
            if not data:
                return
            buf += data
            pos = start = 0
            while True:
                if self.pending and self.pending[0][0].name in _REPLICATION:
                    # The sync's answer, an RDB payload and the command stream follow: relayed raw.
                    self.cwriter.write(bytes(buf[start:]))
                    await self.cwriter.drain()
                    await _pump(ureader, self.cwriter)
                    return
                if (end := resp.reply_end(buf, pos)) < 0:
                    break
                if buf[pos] == resp.PUSH or not self.pending:
                    pos = end
                    continue
                cmd, rule = self.pending.popleft()
                if rule is not None:
                    if rule.action in _AFTER:
                        hit = rule.reply is None or (rule.reply(resp.decode(buf, pos)[0]) and rule.take(cmd))
                        if hit:
                            self.cwriter.write(bytes(buf[start:pos]))  # what preceded it gets through
                            try:
                                if rule.action == "kill_server_after":
                                    await asyncio.to_thread(p.server.kill)
                            finally:
                                self.close()
                                rule.fired.set()
                            return
                    elif rule.action == "hook":
                        self.cwriter.write(bytes(buf[start:pos]))
                        start = pos
                        if rule.after is not None:
                            await rule.after()
                        if p._owner is self:
                            p._owner = None
                            p._gate.set()
                        rule.fired.set()
                    self.released.set()
                pos = end
            self.cwriter.write(bytes(buf[start:pos]))
            del buf[:pos]
            await self.cwriter.drain()


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Relay bytes one way until either side closes (a raw proxy's connection)."""
    while data := await reader.read(1 << 16):
        writer.write(data)
        await writer.drain()
