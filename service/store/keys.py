"""The names of the service's Redis keys: tables, outboxes, deadlines, commands, workers, indexes,
and the platform side's.

A table lives in bucket ``b = crc32(table id) % buckets``; its keys, and the outbox and deadlines of
its bucket, carry the hash tag ``{b}``, so that the table scripts (append, load, the gateway's reply)
touch one Redis Cluster slot.  Command streams and dead letters are sharded apart from the buckets
(``{c<s>}``): the worker only XREADGROUPs/XACKs them, never inside a script.  Shard leases share the
workers' tag (``{workers}``).  Derived indexes (room → table, player → tables and stats) and the
player's locale preference have tags of their own and are written outside the table scripts: the
indexes can be rebuilt from the event streams, the preference cannot.

The keys of the platform side are named here too, each under a tag of its own and the same
``prefix``; the modules that use them say what they hold: ``service.platform.inbound`` (``in:``,
``rl:``: webhook answers and rate limits), ``service.platform.delivery_model`` (``dlv:``: per-platform
dead letters, replays, leases) and ``service.platform.platform_state`` (``pf:``: what a chat adapter
must remember).  The ratings' keys (``rt:``, one tag ``{ratings}``: :mod:`service.ratings.store`) and
the tournaments' (``tn:``: :mod:`service.tournaments.director`) and the daily deal's (``dly:``:
:mod:`service.daily.store`) are named here too.  Every key is
named by :class:`Keys` alone, and every prefix has its row in the key table of ``docs/service.md``
(``tests/test_key_table.py``).
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

    def sync(self, tag: str = "") -> str:
        """The key a confirmation writes before its ``WAIT`` (``service.store.replicas``); on a
        Redis Cluster ``tag`` picks a slot of the node confirmed."""
        return f"{self.prefix}sync:{{{tag}}}" if tag else f"{self.prefix}sync"

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
        """The outbox doorbell (a stream of bucket numbers just written to; see service.store.doorbell)."""
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

    def table_keys(self, kind: str = "events") -> str:
        """The SCAN pattern of every table's key of one ``kind`` (``events``, ``snap``, ``done``)."""
        return f"{self.prefix}t:{{*}}:*:{kind}"

    # -- the tournaments (service.tournaments): an aggregate like a table, under ``tn:`` -----------------

    def tournament_events(self, tournament: str) -> str:
        """A tournament's event stream (its truth); entry ids ``0-<version>``; its bucket's tag, so that
        its messages go to that bucket's outbox in the same append."""
        return f"{self.prefix}tn:{{{self.bucket(tournament)}}}:{tournament}:events"

    def tournament_snap(self, tournament: str) -> str:
        """A tournament's snapshot key (the append script's; never written: tournaments are short)."""
        return f"{self.prefix}tn:{{{self.bucket(tournament)}}}:{tournament}:snap"

    def tournament_done(self, tournament: str) -> str:
        """The set of command ids a tournament has processed (idempotency)."""
        return f"{self.prefix}tn:{{{self.bucket(tournament)}}}:{tournament}:done"

    def tournament_commands(self) -> str:
        """The tournaments' command stream (group ``directors``)."""
        return f"{self.prefix}tn:{{tournaments}}:cmd"

    def tournament_lease(self) -> str:
        """The director deciding now (a single-holder lease, service.store.leases.hold)."""
        return f"{self.prefix}tn:{{tournaments}}:lease"

    def tournament_current(self, platform: str, chat: str) -> str:
        """Derived: the tournament a group shows."""
        return f"{self.prefix}tn:{{{platform}:{chat}}}:current"

    # -- the ratings (service.ratings): every key under the one tag {ratings} ----------------------------

    def rating_queue(self) -> str:
        """The stream of finished matches to rate (group ``raters``)."""
        return f"{self.prefix}rt:{{ratings}}:queue"

    def rating_done(self) -> str:
        """The set of tables rated (a match counts once)."""
        return f"{self.prefix}rt:{{ratings}}:done"

    def rating_lease(self) -> str:
        """The projector rating now."""
        return f"{self.prefix}rt:{{ratings}}:lease"

    def ratings(self, game: str) -> str:
        """Everyone's rating in a game (a hash ``platform:user`` -> ``<matches>|<rating JSON>``)."""
        return f"{self.prefix}rt:{{ratings}}:r:{game}"

    def rating_top(self, game: str) -> str:
        """The global board of a game."""
        return f"{self.prefix}rt:{{ratings}}:top:{game}"

    def rating_group(self, group: str, game: str) -> str:
        """The people who played a game in a group (``group``: ``platform:chat``)."""
        return f"{self.prefix}rt:{{ratings}}:grp:{group}:{game}"

    def rating_window(self, game: str, period: str) -> str:
        """Rating points won in a period (``w…`` a week or ``m…`` a month)."""
        return f"{self.prefix}rt:{{ratings}}:win:{game}:{period}"

    def rating_keys(self) -> str:
        """The SCAN pattern of every ratings key (for a rebuild)."""
        return f"{self.prefix}rt:{{ratings}}:*"

    # -- the daily deal (service.daily): a day's keys under its tag, a person's under theirs ------------

    def daily_board(self, game: str, date: str) -> str:
        """A day's board of a game: ``platform:user`` scored by their attempt (lower is better)."""
        return f"{self.prefix}dly:{{{game}:{date}}}:board"

    def daily_attempts(self, game: str, date: str) -> str:
        """A day's attempts of a game: ``platform:user`` -> the attempt (JSON)."""
        return f"{self.prefix}dly:{{{game}:{date}}}:att"

    def daily_commit(self, game: str, date: str) -> str:
        """A day's commitment of a game (the day's first ``/daily`` sets it)."""
        return f"{self.prefix}dly:{{{game}:{date}}}:commit"

    def daily_boards(self) -> str:
        """The SCAN pattern of every day's board."""
        return f"{self.prefix}dly:{{*}}:board"

    def daily_history(self, platform: str, user: str) -> str:
        """A person's days played: ``<game>:<date>`` -> the attempt (JSON)."""
        return f"{self.prefix}dly:{{{platform}:{user}}}:hist"

    def daily_groups(self, platform: str, user: str) -> str:
        """The groups where a person used the bot: chat -> title."""
        return f"{self.prefix}dly:{{{platform}:{user}}}:groups"

    def daily_busy(self, platform: str, user: str, game: str, date: str) -> str:
        """A person's attempt at a day's game was just asked for (a flood of ``/daily`` sends one command)."""
        return f"{self.prefix}dly:{{{platform}:{user}}}:busy:{game}:{date}"

    def daily_people(self, platform: str, chat: str) -> str:
        """The people who used ``/daily`` in a group."""
        return f"{self.prefix}dly:{{{platform}:{chat}}}:people"

    def retain_lock(self) -> str:
        """The key that lets one worker of all run retention in an interval (service.ops.retention)."""
        return f"{self.prefix}wrk:{{workers}}:retain"

    # -- the platform side ---------------------------------------------------------------------------

    def revoked(self, what: str, name: str) -> str:
        """An operator's revocation of web links (service.platform.revocations): ``what`` is ``t``
        (a table), ``p`` (a person, ``<platform>:<user>``) or ``k`` (one link, by its signature);
        one hash tag, so that one EXISTS asks all three."""
        return f"{self.prefix}rv:{{rv}}:{what}:{name}"

    def inbound_answer(self, platform: str, sender: str, request_id: str) -> str:
        """The answer to one webhook request, kept for its retries (service.platform.inbound)."""
        return f"{self.prefix}in:{{{platform}:{sender}}}:{request_id}"

    def rate_bucket(self, platform: str, sender: str) -> str:
        """One sender's token bucket (service.platform.inbound)."""
        return f"{self.prefix}rl:{{{platform}:{sender}}}"

    def rate_told(self, platform: str, sender: str) -> str:
        """Set while a limited sender has been told so (service.platform.inbound)."""
        return f"{self.prefix}rl:{{{platform}:{sender}}}:told"

    def delivery_dead(self, platform: str) -> str:
        """A platform's delivery dead letters (service.platform.delivery_model)."""
        return f"{self.prefix}dlv:{{{platform}}}:dead"

    def delivery_replay(self, platform: str) -> str:
        """A platform's dead letters sent again."""
        return f"{self.prefix}dlv:{{{platform}}}:replay"

    def delivery_members(self, platform: str) -> str:
        """A platform's live delivery processes."""
        return f"{self.prefix}dlv:{{{platform}}}:members"

    def delivery_lease(self, platform: str, partition: int) -> str:
        """The delivery process that owns a partition of a platform's outboxes."""
        return f"{self.prefix}dlv:{{{platform}}}:lease:{partition}"

    def pf_keys(self) -> str:
        """The SCAN pattern of every platform-state key."""
        return f"{self.prefix}pf:*"

    def pf_message(self, platform: str, chat: str, table: str, slot: str) -> str:
        """A chat's message slot of a table (a hash: see service.platform.platform_state)."""
        return f"{self.prefix}pf:{{{platform}:{chat}}}:msg:{table}:{slot}"

    def pf_dirty(self, platform: str) -> str:
        """The slots of a platform whose wanted content may not be sent yet."""
        return f"{self.prefix}pf:{{{platform}}}:dirty"

    def pf_once(self, platform: str, key: str) -> str:
        """A flag set once, with a TTL."""
        return f"{self.prefix}pf:{{{platform}}}:once:{key}"

    def pf_prefs(self, platform: str, chat: str) -> str:
        """A chat's preferences (``locale``) and where it moved (``moved_to``, ``was``)."""
        return f"{self.prefix}pf:{{{platform}:{chat}}}:prefs"

    def pf_chats(self, platform: str, table: str) -> str:
        """The group chats that show a table."""
        return f"{self.prefix}pf:{{{platform}:{table}}}:chats"

    def pf_names(self, platform: str, table: str) -> str:
        """The seat names a group lobby showed last."""
        return f"{self.prefix}pf:{{{platform}:{table}}}:names"

    def pf_stats(self, platform: str, chat: str) -> str:
        """A group's counters (matches, wins by user id, names)."""
        return f"{self.prefix}pf:{{{platform}:{chat}}}:stats"

    def pf_counted(self, platform: str, chat: str) -> str:
        """The tables a group's counters counted."""
        return f"{self.prefix}pf:{{{platform}:{chat}}}:counted"
