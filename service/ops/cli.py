"""The ``cinq`` command line.

- ``cinq play [cinquillo|535] [options] [--auto] [--lang es|en] [--web]``: a match in the terminal against
  AI players, through the whole pipeline on an embedded store (the terminal adapter renders it; with
  ``--web``, the web adapter draws it in the browser).
- ``cinq serve``: every role in one process (worker, health/metrics, and the chat adapters installed).
- ``cinq worker``: a worker alone (with its health/metrics endpoint).
- ``cinq verify <table> [--archive FILE]``: replay a finished table from its events (in Redis, or in an
  archive file written by ``cinq trim``) and check its deal; ``cinq replay <table> [--archive FILE]``
  prints the replay as ``/replay`` shows it.
- ``cinq reindex``: rebuild the derived indexes from the event streams.
- ``cinq ratings rebuild [--archive FILE]...``: rate every finished match again (service.ratings.rebuild).
- ``cinq tables | inspect <table> | dead-letters | trim | stats``: operator commands (service.ops.operator).
- ``cinq <adapter> [args]``: any other installed adapter run alone (``cinq telegram``, ``cinq webhook``).

Adapters plug in through entry points (group ``cinq.adapters``), so that this module, part of the
service, never imports an adapter: dependencies point adapters -> service -> engine.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from importlib.metadata import entry_points
from typing import Any

from service.domain.events import decode
from service.domain.tables.replay import replay_lines, verify
from service.foundation import logs
from service.foundation.secrets import load
from service.foundation.settings import Settings
from service.ops import operator
from service.ops.retention import retain_loop
from service.ops.running import Adapter, run_until_stopped
from service.ops.runtime import Runtime, build, stored
from service.protocol import text
from service.ratings.projector import Projector
from service.ratings.rebuild import rebuild
from service.store import repository
from service.store.archive import load_archive
from service.store.connection import refuse_unsafe
from service.tournaments.director import Director
from service.tournaments.embargoes import Embargoes
from service.write.reindex import reindex

ADAPTERS_GROUP = "cinq.adapters"
# How long `cinq serve` waits for the adapters to flush on SIGTERM (compose waits 30 s before SIGKILL).
SHUTDOWN_WAIT_S = 10.0


def _adapter(name: str) -> Adapter | None:
    found = [ep for ep in entry_points(group=ADAPTERS_GROUP) if ep.name == name]
    if not found:
        return None
    adapter: Adapter = found[0].load()
    return adapter


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="cinq", description="Cinquillo and 535 in chats.")
    sub = p.add_subparsers(dest="command", required=True)
    play = sub.add_parser("play", help="a match in the terminal against AI players")
    play.add_argument("words", nargs="*", help="the game and its options, as in /play (default: cinquillo)")
    play.add_argument("--auto", action="store_true", help="an AI player plays your seat too (for scripts)")
    play.add_argument("--lang", default=None, help="es or en (default: from $LANG)")
    play.add_argument("--web", action="store_true", help="draw the table in the browser (the web adapter)")
    sub.add_parser("serve", help="worker, health endpoint and the chat adapters, in one process")
    sub.add_parser("worker", help="a worker (and its health endpoint)")
    verify = sub.add_parser("verify", help="replay a finished table and check its deal")
    replay = sub.add_parser("replay", help="a finished table's moves and the check of its deal, as /replay")
    for cmd in (verify, replay):
        cmd.add_argument("table")
        cmd.add_argument("--archive", metavar="FILE", help="read the table from an archive (cinq trim)")
        cmd.add_argument("--reveal", action="store_true",
                         help="also a table whose deal other tables still play (withheld otherwise)")
    replay.add_argument("--lang", default="en", choices=("es", "en"), help="the language (default en)")
    sub.add_parser("reindex", help="rebuild the derived indexes (rooms, players, stats) from the streams")
    ratings = sub.add_parser("ratings", help="the ratings projection of finished matches")
    rsub = ratings.add_subparsers(dest="ratings_command", required=True)
    rb = rsub.add_parser("rebuild", help="rate every finished match again, from the streams and archives")
    rb.add_argument("--archive", metavar="FILE", action="append", default=[],
                    help="an archive file of trimmed tables (cinq trim); repeatable")
    operator.add_parsers(sub)  # tables, inspect, dead-letters, trim
    return p


async def _serve(settings: Settings, adapters: bool) -> int:
    """Run a worker (and the adapters) until SIGTERM/SIGINT; the command in hand is finished."""
    rt = build(settings)
    await refuse_unsafe(rt.redis, settings)
    tasks: list[asyncio.Task[Any]] = []

    def stop() -> None:
        # Input stops at once: an adapter stops receiving when cancelled, and flushes what it owes
        # (the deliveries in hand) in its `finally`; the worker finishes the batch it holds.
        rt.worker.stop.set()
        for t in tasks[1:]:
            t.cancel()

    await run_until_stopped(_roles(rt, settings, adapters, tasks), stop=stop)
    return 0


async def _roles(rt: Runtime, settings: Settings, adapters: bool, tasks: list[asyncio.Task[Any]]) -> None:
    """The worker's roles (the worker first in ``tasks``), until the worker stops."""
    # /readyz and /metrics on the operations listener (loopback by default), not on a public port;
    # the adapters below add their parts to it.
    rt.ops.add(rt.metrics)
    runner = await rt.ops.start(settings.http_host, settings.http_port, "worker")
    tasks.append(asyncio.create_task(rt.worker.run()))
    # Finished tables leave Redis after CINQ_RETAIN_FINISHED_DAYS (one worker per interval does it).
    tasks.append(asyncio.create_task(retain_loop(rt.redis, rt.keys, settings, rt.worker.stop)))
    # Finished matches are rated by one projector at a time (a lease; service.ratings.projector).
    tasks.append(asyncio.create_task(Projector(rt.redis, rt.keys).run(rt.worker.stop)))
    # Tournament commands likewise, by one director at a time (service.tournaments.director).
    tasks.append(asyncio.create_task(Director(rt.redis, settings, rt.keys).run(rt.worker.stop)))
    if adapters:
        for ep in entry_points(group=ADAPTERS_GROUP):
            adapter: Adapter = ep.load()
            if adapter.serve is not None:
                tasks.append(asyncio.create_task(adapter.serve(rt)))
    try:
        await tasks[0]
    finally:
        for t in tasks[1:]:
            t.cancel()
        if tasks[1:]:
            # Awaited, with a bound, so that their cleanup runs before the process exits.
            await asyncio.wait(tasks[1:], timeout=SHUTDOWN_WAIT_S)
        await runner.cleanup()


async def _stored(settings: Settings, table: str, archive: str | None, reveal: bool) -> list[Any] | None:
    """The table's events, decoded: from the archive file if given, else from Redis (None: no table).
    A table in Redis whose deal other tables may still be playing (service.domain.embargo) is withheld
    unless ``reveal`` (an archive holds tables finished days ago: their rounds are long over)."""
    if archive is not None:
        try:
            found = load_archive(archive).get(table)
        except (OSError, ValueError) as e:
            raise SystemExit(f"cinq: cannot read the archive: {e}") from e
        raws = found.events if found is not None else []
    else:
        db = stored(settings)
        raws = await db.store.events(table)
        t = await repository.load(db.store, table) if raws and not reveal else None
        if t is not None and t.status == "finished" and not await Embargoes(db.redis, db.keys).deal_shown(t):
            raise SystemExit(f"cinq: {table} deals the same cards as tables still playing: "
                             "withheld until they finish (--reveal shows it anyway)")
    return [decode(e) for e in raws] or None


async def _verify(settings: Settings, table: str, archive: str | None, reveal: bool = False) -> int:
    stored = await _stored(settings, table, archive, reveal)
    if stored is None:
        print(f"cinq verify: no such table: {table}", file=sys.stderr)
        return 1
    verdict = verify(stored)
    for i, (seat, move, cause) in enumerate(verdict.moves, 1):
        print(f"{i}. seat {seat + 1}: {move} ({cause})")
    print("verified" if verdict.ok else f"FAILED: {', '.join(verdict.problems)}")
    return 0 if verdict.ok else 1


async def _replay(settings: Settings, table: str, archive: str | None, lang: str,
                  reveal: bool = False) -> int:
    stored = await _stored(settings, table, archive, reveal)
    if stored is None:
        print(f"cinq replay: no such table: {table}", file=sys.stderr)
        return 1
    verdict = verify(stored)
    if verdict.problems == ["not_finished"]:
        print(f"cinq replay: {table} is not a finished match", file=sys.stderr)
        return 1
    print(text.render_lines(replay_lines(stored, table), lang))
    return 0 if verdict.ok else 1


async def _reindex(settings: Settings) -> int:
    db = stored(settings)
    print(f"reindexed {await reindex(db.redis, db.keys)} tables")
    return 0


async def _ratings_rebuild(settings: Settings, archives: list[str]) -> int:
    db = stored(settings)
    started = time.perf_counter()
    try:
        fold = await rebuild(db.redis, db.keys, archives)
    except (OSError, ValueError) as e:
        print(f"cinq ratings rebuild: cannot read the archive: {e}", file=sys.stderr)
        return 1
    people = sum(len(p) for p in fold.ratings.values())
    print(f"rated {len(fold.done)} matches, {people} ratings, in {time.perf_counter() - started:.2f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``cinq`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    # `cinq telegram ...`, `cinq webhook ...`: an installed adapter run alone, with its own arguments.
    own = ("play", "serve", "worker", "verify", "replay", "reindex", "ratings", "terminal",
           *operator.COMMANDS)
    if argv and argv[0] not in own and not argv[0].startswith("-"):
        adapter = _adapter(argv[0])
        if adapter is not None:
            return int(adapter.run(argv[1:]) or 0)
    args = _parser().parse_args(argv)
    settings = load(Settings)
    if args.command == "play":
        logs.configure("WARNING")
        if args.web:
            web = _adapter("web")
            if web is None:
                print("the web adapter is not installed (pip install -e .)", file=sys.stderr)
                return 2
            return int(web.run(["play", *args.words, *(["--lang", args.lang] if args.lang else [])]))
        terminal = _adapter("terminal")
        if terminal is None:
            print("the terminal adapter is not installed (pip install -e .)", file=sys.stderr)
            return 2
        return int(terminal.run(args.words, auto=args.auto, lang=args.lang))
    if settings.redis_url or settings.redis_sentinels:
        settings.require_safe()  # before anything starts: one line, and the exit status 1
    if args.command == "serve":
        for ep in entry_points(group=ADAPTERS_GROUP):
            installed: Adapter = ep.load()
            if installed.check is not None:
                installed.check()
    logs.configure(settings.log_level)
    if args.command in ("serve", "worker"):
        return asyncio.run(_serve(settings, adapters=args.command == "serve"))
    if args.command == "reindex":
        return asyncio.run(_reindex(settings))
    if args.command == "ratings":
        return asyncio.run(_ratings_rebuild(settings, args.archive))
    if args.command in operator.COMMANDS:
        db = stored(settings)
        return asyncio.run(operator.run(args, db.redis, db.keys))
    if args.command == "replay":
        return asyncio.run(_replay(settings, args.table, args.archive, args.lang, args.reveal))
    return asyncio.run(_verify(settings, args.table, args.archive, args.reveal))


if __name__ == "__main__":
    sys.exit(main())
