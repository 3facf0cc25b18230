"""Operator commands: ``cinq tables``, ``inspect``, ``dead-letters``, ``trim`` (:mod:`service.ops.trim`),
``stats`` (:mod:`service.ops.capacity`).

They read the event streams (the truth), never a worker's memory, so they work on a live deployment
while workers run.  The operator's view is the spectator's view (G-1): a running match's seed and
hands are hidden unless ``--reveal`` is given explicitly.  Every function takes a ``redis.asyncio``
client (real or fakeredis), the :class:`~service.store.keys.Keys` in use and a text stream to print to, so
the tests run them on both stores; :func:`run` is the ``cinq`` entry point (the client is the
runtime's: :func:`service.ops.runtime.build`).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from typing import Any, TextIO

import orjson

import engine
from service.domain.tables.state import FINISHED, RUNNING
from service.ops.capacity import cmd_stats
from service.ops.trim import trim
from service.store.decoding import as_text
from service.store.keys import Keys
from service.store.scan import info_of, list_tables, raw_events, seat_name
from service.tournaments.embargoes import Embargoes

COMMANDS = ("tables", "inspect", "dead-letters", "trim", "stats")


class OperatorError(Exception):
    """A refusal the operator must read (unknown table, unknown dead letter): exit code 1."""



def _when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(at)) if at else "-"


async def cmd_tables(redis: Any, keys: Keys, out: TextIO) -> int:
    """Print every table: id, game, phase, players, version, last activity (UTC)."""
    rows = await list_tables(redis, keys)
    print(f"{'table':<12} {'game':<10} {'phase':<10} {'version':>7}  {'last activity (UTC)':<19}  players",
          file=out)
    for r in rows:
        print(f"{r.id:<12} {r.game:<10} {r.phase:<10} {r.version:>7}  {_when(r.last_activity):<19}  "
              f"{', '.join(r.players)}", file=out)
    print(f"{len(rows)} tables", file=out)
    return 0


def _redact(raw: str, hide: bool) -> str:
    # The seed decides every hand: while the match runs it is as secret as the hands themselves.
    if not hide:
        return raw
    env = orjson.loads(raw)
    if env.get("type") == "MatchStarted":
        env["data"] = {**env["data"], "seed": "<hidden: --reveal>"}
        return orjson.dumps(env).decode()
    return raw


async def cmd_inspect(redis: Any, keys: Keys, table: str, out: TextIO, *, reveal: bool = False) -> int:
    """Print a table's events, one per line, then its state (the spectator view unless ``reveal``)."""
    raws = await raw_events(redis, keys.events(table))
    got = info_of(table, raws) if raws else None
    if got is None:
        raise OperatorError(f"no such table: {table}")
    info, t = got
    # The seed is shown to everyone when a match finishes (unless other tables still play its deal:
    # service.domain.embargo); a cancelled match never revealed it.
    hide = not reveal and (t.status != FINISHED or not await Embargoes(redis, keys).deal_shown(t))
    for v, raw in enumerate(raws, 1):
        print(f"{v:>5} {_redact(raw, hide)}", file=out)
    print(f"table {info.id}: {info.game}, {info.phase}, version {info.version}, "
          f"last activity {_when(info.last_activity)} UTC", file=out)
    for i, seat in enumerate(t.seats):
        print(f"  seat {i + 1}: {seat_name(seat)}", file=out)
    if t.engine is not None:
        view = engine.view(t.engine, None)
        print(f"  view: {orjson.dumps(view, option=orjson.OPT_NON_STR_KEYS).decode()}", file=out)
        if reveal:
            for i in range(len(t.seats)):
                seat_view = orjson.dumps(engine.view(t.engine, i), option=orjson.OPT_NON_STR_KEYS).decode()
                print(f"  seat {i + 1} sees (revealed): {seat_view}", file=out)
        elif t.status == RUNNING:
            print("  (hands and seed hidden: the operator view is the spectator view; --reveal shows them)",
                  file=out)
    if t.result is not None:
        print(f"  result: {orjson.dumps(t.result, option=orjson.OPT_NON_STR_KEYS).decode()}", file=out)
    return 0


@dataclass(frozen=True)
class DeadLetter:
    """One entry of a dead-letter stream ``dead:{c<shard>}``."""

    shard: int
    id: str
    error: str
    command: str
    worker: str


async def dead_letters(redis: Any, keys: Keys) -> list[DeadLetter]:
    """Every dead letter of every command shard, oldest first per shard."""
    out = []
    for shard in range(keys.shards):
        for mid, f in await redis.xrange(keys.dead(shard)):
            g = {as_text(k): as_text(v) for k, v in f.items()}
            out.append(DeadLetter(shard, as_text(mid), g.get("error", ""), g.get("c", ""),
                                  g.get("worker", "")))
    return out


async def replay_dead(redis: Any, keys: Keys, letter: DeadLetter) -> str:
    """Put a dead command back on its command stream and remove it from the dead letters.

    The XADD and the XDEL go in one MULTI (both keys carry the shard's tag ``{c<s>}``), so a crash
    cannot leave the command both replayed and still dead, or neither.
    """
    pipe = redis.pipeline(transaction=True)
    pipe.xadd(keys.commands(letter.shard), {"c": letter.command})
    pipe.xdel(keys.dead(letter.shard), letter.id)
    new_id, _ = await pipe.execute()
    return as_text(new_id)


async def cmd_dead_letters(redis: Any, keys: Keys, out: TextIO, *, replay: list[str] | None = None,
                           replay_all: bool = False) -> int:
    """List the dead letters, or replay some (``replay``: entry ids, ``<shard>/<id>`` if ambiguous)."""
    letters = await dead_letters(redis, keys)
    if not replay and not replay_all:
        for d in letters:
            try:
                c = orjson.loads(d.command)
                what = f"{c.get('name')} table={c.get('table')} id={c.get('id')}"
            except orjson.JSONDecodeError:
                what = f"(malformed) {d.command[:60]!r}"
            print(f"{d.shard}/{d.id}  {what}  error: {d.error}", file=out)
        print(f"{len(letters)} dead letters", file=out)
        return 0
    chosen = letters if replay_all else []
    for wanted in replay or []:
        shard, _, mid = wanted.rpartition("/")
        found = [d for d in letters if d.id == mid and (not shard or str(d.shard) == shard)]
        if not found:
            raise OperatorError(f"no such dead letter: {wanted}")
        if len(found) > 1:
            raise OperatorError(f"{wanted} is in several shards: say which, as <shard>/{mid}")
        chosen.append(found[0])
    for d in chosen:
        new_id = await replay_dead(redis, keys, d)
        print(f"replayed {d.shard}/{d.id} as {keys.commands(d.shard)} {new_id}", file=out)
    return 0


async def cmd_trim(redis: Any, keys: Keys, days: float, archive: str, out: TextIO) -> int:
    """``cinq trim``: archive and delete old finished/cancelled tables, and say which."""
    trimmed = await trim(redis, keys, days, archive)
    for table_id in trimmed:
        print(f"trimmed {table_id}", file=out)
    print(f"{len(trimmed)} tables archived to {archive} and deleted", file=out)
    return 0


def add_parsers(sub: Any) -> None:
    """Add the operator subcommands to ``cinq``'s argument parser."""
    sub.add_parser("tables", help="list the tables: id, game, phase, players, version, last activity")
    ins = sub.add_parser("inspect", help="a table's events and state (spectator view unless --reveal)")
    ins.add_argument("table")
    ins.add_argument("--reveal", action="store_true", help="also show hands and the seed of a running match")
    dead = sub.add_parser("dead-letters", help="list the commands' dead letters, or replay them")
    dead.add_argument("--replay", nargs="+", metavar="ID", help="entry ids to replay (<shard>/<id>)")
    dead.add_argument("--replay-all", action="store_true")
    tr = sub.add_parser("trim", help="archive and delete finished/cancelled tables older than N days")
    tr.add_argument("--days", type=float, required=True)
    tr.add_argument("--archive", required=True, help="JSON-lines file (appended to, fsynced)")
    st = sub.add_parser("stats", help="bytes of Redis per live and finished table, and of shared keys")
    st.add_argument("--sample", type=int, default=200, help="tables of each kind measured (default 200)")


async def run(args: argparse.Namespace, redis: Any, keys: Keys, out: TextIO | None = None) -> int:
    """Run one operator subcommand on ``redis`` (closed at the end); exit code 1 on a refusal."""
    out = out or sys.stdout
    try:
        if args.command == "tables":
            return await cmd_tables(redis, keys, out)
        if args.command == "inspect":
            return await cmd_inspect(redis, keys, args.table, out, reveal=args.reveal)
        if args.command == "dead-letters":
            return await cmd_dead_letters(redis, keys, out, replay=args.replay, replay_all=args.replay_all)
        if args.command == "stats":
            if args.sample < 1:
                raise OperatorError("--sample must be 1 or more")
            return await cmd_stats(redis, keys, out, args.sample)
        if args.days < 0:
            raise OperatorError("--days must be 0 or more")
        return await cmd_trim(redis, keys, args.days, args.archive, out)
    except OperatorError as e:
        print(f"cinq {args.command}: {e}", file=sys.stderr)
        return 1
    finally:
        await redis.aclose()
