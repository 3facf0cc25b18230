"""The names of the service's core Redis keys: tables, outboxes, deadlines, commands, workers, indexes.

A table lives in bucket ``b = crc32(table id) % buckets``; its keys, and the outbox and deadlines of
its bucket, carry the hash tag ``{b}``, so that the table scripts (append, load, the gateway's reply)
touch one Redis Cluster slot.  Command streams and dead letters are sharded apart from the buckets
(``{c<s>}``): the worker only XREADGROUPs/XACKs them, never inside a script.  Shard leases share the
workers' tag (``{workers}``).  Derived indexes (room → table, player → tables and stats) and the
player's locale preference have tags of their own and are written outside the table scripts: the
indexes can be rebuilt from the event streams, the preference cannot.

Not every key is named here: modules with keys of their own name them in their docstrings, each
under a tag of its own and the same ``prefix`` — ``service.platform.inbound`` (``in:``, ``rl:``: webhook
answers and rate limits), ``service.platform.delivery_model`` (``dlv:``: per-platform dead letters, replays,
leases) and ``service.platform.platform_state`` (``pf:``: what a chat adapter must remember).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Keys:
    """Key names for a given number of buckets and command shards."""

    buckets: int = 1024
    shards: int = 4
    # Prepended to every key, so that a benchmark or a second deployment can share one Redis.
    prefix: str = ""

    @classmethod
    def of(cls, settings: Any) -> Keys:
        """The layout a deployment's settings say (``buckets``, ``command_shards``, ``key_prefix``)."""
        return cls(settings.buckets, settings.command_shards, settings.key_prefix)

    def bucket(self, table: str) -> int:
        """The bucket of a table id."""
        return zlib.crc32(table.encode()) % self.buckets

    def shard(self, table: str) -> int:
        """The command shard of a table: all its commands go through one stream, in order."""
        return self.bucket(table) % self.shards

    def events(self, table: str) -> str:
        """The table's event stream (the source of truth); entry ids are ``0-<version>``."""
        return f"{self.prefix}t:{{{self.bucket(table)}}}:{table}:events"

    def snap(self, table: str) -> str:
        """The table's latest snapshot (a hash: ``v`` version, ``s`` state)."""
        return f"{self.prefix}t:{{{self.bucket(table)}}}:{table}:snap"

    def done(self, table: str) -> str:
        """The set of command ids the table has processed (idempotency)."""
        return f"{self.prefix}t:{{{self.bucket(table)}}}:{table}:done"

    def probe(self, role: str) -> str:
        """The key a role's readiness check writes (``service.ops.health``), expiring by itself."""
        return f"{self.prefix}probe:{role}"

    def outbox(self, bucket: int) -> str:
        """The outbox stream of a bucket."""
        return f"{self.prefix}out:{{{bucket}}}"

    def outbox_for(self, table: str) -> str:
        """The outbox stream a table's messages go to."""
        return self.outbox(self.bucket(table))

    def due(self, bucket: int) -> str:
        """The bucket's deadlines: a sorted set of table ids scored by due time (ms)."""
        return f"{self.prefix}due:{{{bucket}}}"

    def due_for(self, table: str) -> str:
        """The deadlines set a table's deadline goes to."""
        return self.due(self.bucket(table))

    def commands(self, shard: int) -> str:
        """A command stream shard."""
        return f"{self.prefix}cmd:{{c{shard}}}"

    def commands_for(self, table: str) -> str:
        """The command stream a table's commands go to."""
        return self.commands(self.shard(table))

    def all_commands(self) -> list[str]:
        """Every command stream shard."""
        return [self.commands(s) for s in range(self.shards)]

    def dead(self, shard: int) -> str:
        """The dead-letter stream of a command shard."""
        return f"{self.prefix}dead:{{c{shard}}}"

    def bell(self) -> str:
        """The outbox doorbell (a stream of bucket numbers just written to; see service.platform.doorbell)."""
        return f"{self.prefix}bell:{{bell}}"

    def worker_members(self) -> str:
        """The live workers, scored by the expiry of their heartbeat (ms)."""
        return f"{self.prefix}wrk:{{workers}}:members"

    def shard_lease(self, shard: int) -> str:
        """The worker that owns a command shard (a key with a TTL: see service.store.leases)."""
        return f"{self.prefix}wrk:{{workers}}:lease:{shard}"

    def room(self, platform: str, chat: str) -> str:
        """Derived index: the table a room currently shows."""
        return f"{self.prefix}room:{{{platform}:{chat}}}"

    def player_tables(self, platform: str, user: str) -> str:
        """Derived index: the tables a player sits at."""
        return f"{self.prefix}player:{{{platform}:{user}}}:tables"

    def player_prefs(self, platform: str, user: str) -> str:
        """A player's preferences (``locale``)."""
        return f"{self.prefix}player:{{{platform}:{user}}}:prefs"

    def player_stats(self, platform: str, user: str) -> str:
        """Derived: a player's match counts (``played``, ``won``)."""
        return f"{self.prefix}player:{{{platform}:{user}}}:stats"

    def seen(self, bucket: int, command_id: str) -> str:
        """A command the gateway answered itself (no table): its reply was written to the outbox of
        ``bucket``, whose hash tag it shares, so that both are written in one call."""
        return f"{self.prefix}seen:{{{bucket}}}:{command_id}"

    def room_refused(self, platform: str, chat: str, table: str) -> str:
        """A table whose ``/new`` a worker refused: the room must not be pointed at it (room's tag)."""
        return f"{self.prefix}room:{{{platform}:{chat}}}:refused:{table}"
