"""The Matrix bridge on a real homeserver: latency of a move and Matrix events per move.

usage: bench/matrix.py REDIS_URL [--games cinquillo,535] [--pings 50]

Starts Synapse (tools/synapse.py), cinq (``cinq worker``, ``python -m adapters.webhook``) and the bridge
(``python -m bridges.matrix``) as processes, and three people as matrix-nio clients who play a group
match of each game with one AI player (tools/matrix_world.py).  Prints, per game:

- a move's latency: from a person's answer in their DM to the group's updated table, as the first
  person's client sees it (p50/p99);
- the Matrix events the bridge sent (new messages and edits) per move (every move: the people's and
  the AI player's; each shows in the group room's table).

Reference, from the same run: the homeserver alone, one person's message to another's client in the
same room (p50/p99): the floor under any bridge.
Keys are under a fresh prefix ``mx<hex>:`` of the given Redis.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.matrix_world import World, play  # noqa: E402
from tools.synapse import Synapse  # noqa: E402

# Every table update after a move says what the move was.
_MOVE_LINE = re.compile(r"^(Last move|Última jugada): ", re.M)


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] * 1000


async def pings(world: World, group: str, n: int) -> list[float]:
    """The homeserver alone: person 1 writes in the group, person 2's client sees it."""
    a, b = world.people[0], world.people[1]
    out = []
    for i in range(n):
        body = f"ping {i} {time.perf_counter()}"
        t0 = await a.say(group, body)

        def seen(body: str = body) -> bool:
            return any(e["content"].get("body") == body for _, e in b.events.get(group, []))

        await b.wait(seen, timeout=60)
        t1 = next(t for t, e in b.events[group] if e["content"].get("body") == body)
        out.append(t1 - t0)
    return out


def moves_shown(world: World, group: str) -> int:
    """The moves the group room's table showed (people's and the AI player's): one update each."""
    bodies = [(e["content"].get("m.new_content") or e["content"]).get("body", "")
              for _, e in world.people[1].from_bot(group, world.bot)]
    return sum(1 for b in bodies if _MOVE_LINE.search(b))


def report(game: str, r: dict[str, Any], sent: dict[str, int], moves: int, ref: list[float]) -> None:
    """Print one game's figures beside the homeserver's own."""
    lat, total = r["latencies"], sent["send"] + sent["edit"]
    print(f"{game}: {r['moves']} moves by people, {moves} moves in all (group table updates)")
    print(f"  answer in DM -> updated table in the group: p50 {_pct(lat, 0.5):.0f} ms, "
          f"p99 {_pct(lat, 0.99):.0f} ms ({len(lat)} moves)")
    print(f"  Matrix events sent by the bridge: {total} ({sent['send']} messages, "
          f"{sent['edit']} edits) = {total / max(moves, 1):.2f} per move")
    print(f"  reference, the homeserver alone (a message to another client): "
          f"p50 {_pct(ref, 0.5):.0f} ms, p99 {_pct(ref, 0.99):.0f} ms ({len(ref)} messages)")


async def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("redis_url")
    ap.add_argument("--games", default="cinquillo,535")
    ap.add_argument("--pings", type=int, default=50)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cinq-matrix-bench-") as tmp:
        hs = Synapse(Path(tmp) / "synapse").start()
        try:
            for game in args.games.split(","):
                world = World(Path(tmp) / game, args.redis_url, hs, locale="en", quiet=True)
                try:
                    people = await world.start(["Ana", "Bea", "Cal"])
                    group = await world.group(people[0], people[1:])
                    ref = await pings(world, group, args.pings)
                    before = world.bridge_sent()
                    r = await play(world, group, game, bots=1)
                    sent = {k: r["sent"][k] - before[k] for k in before}
                    report(game, r, sent, moves_shown(world, group), ref)
                finally:
                    await world.close()
        finally:
            hs.stop()
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
