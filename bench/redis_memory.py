"""Redis memory as the capacity bench measures it: its own redis-server, ``used_memory`` with one client
connected, ``MEMORY USAGE`` of every key by family, and what a trimmed table leaves (bench/capacity.py)."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from typing import Any

from tools.loopback import free_port

GROUPS = {"table keys": ("t:", "due:"), "outbox": ("out:",), "command streams": ("cmd:", "dead:"),
          "seen:/in:": ("seen:", "in:"), "players (stats, prefs: kept)": ("player:",),
          "ratings (queue, people's ratings, tables rated)": ("rt:",)}


def kb(n: float) -> str:
    """Bytes as kilobytes, right-aligned for the report."""
    return f"{n / 1024:8.1f} KB"


def start_redis(port: int | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """A throw-away redis-server on ``port`` (default: a free one), without latency tracking: Redis 7
    keeps a histogram of ~20 KB per command name from that name's first call (800 KB for this bench's
    commands), a fixed cost that made ``used_memory`` per table depend on which commands a run
    happened to call first (issue 33: 0.4-1.2 KB "per table" with no key left)."""
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("bench/capacity.py needs redis-server (apt-get install redis-server)")
    port = port or free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--latency-tracking", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc, f"redis://127.0.0.1:{port}/0"


async def used(r: Any) -> int:
    """``used_memory`` with one client connected (this process's pool is closed first: a connection
    that served a delivery's lanes keeps more than ``mem_clients_normal`` counts), less that client's
    buffers and the script cache, after a pause for lazy frees."""
    await r.connection_pool.disconnect()
    await asyncio.sleep(0.3)
    info = await r.info("memory")
    # Lua scripts are a fixed cost loaded once (trim loads its own), not what a table costs.
    scripts = int(info.get("used_memory_scripts", 0))
    return int(info["used_memory"]) - int(info.get("mem_clients_normal", 0)) - scripts


async def by_group(r: Any) -> dict[str, int]:
    """MEMORY USAGE of every key, summed by group."""
    out = dict.fromkeys([*GROUPS, "other"], 0)
    names = [k async for k in r.scan_iter(match="*", count=1000)]
    for i in range(0, len(names), 500):
        pipe = r.pipeline(transaction=False)
        for k in names[i:i + 500]:
            pipe.memory_usage(k, samples=0)
        for k, n in zip(names[i:i + 500], await pipe.execute(), strict=True):
            key = k.decode()
            group = next((g for g, ps in GROUPS.items() if key.startswith(ps)), "other")
            out[group] += int(n or 0)
            if key.startswith("t:"):  # a table's own keys, by family too (cinq stats splits them so)
                family = "  " + key.rsplit(":", 1)[-1]
                out[family] = out.get(family, 0) + int(n or 0)
            elif key.startswith("rt:"):  # the ratings by what they are: rt:{ratings}:<what>[:…]
                family = "  ratings " + key.split(":")[2]
                out[family] = out.get(family, 0) + int(n or 0)
    return out


def residue(g0: dict[str, int], g3: dict[str, int], m0: int, m3: int, n: int) -> None:
    """What a finished table leaves after trim, per table: in keys by family, and outside any key."""
    d = {g: (g3.get(g, 0) - g0.get(g, 0)) / n for g in {*g0, *g3}}
    in_keys = sum(v for g, v in d.items() if not g.startswith("  "))
    # Per person, not per table: their stats and prefs, and their ratings (r: a hash field each, top:
    # and grp: a member each, win: a member per period).  The "done" set has a member per table rated.
    people = d.get("players (stats, prefs: kept)", 0) + sum(
        d.get(f"  ratings {w}", 0) for w in ("r", "top", "grp", "win"))
    for g, v in sorted(d.items(), key=lambda gv: (gv[0].startswith("  "), gv[0])):
        if abs(v) >= 1:
            print(f"     {g:<48} {v:7.0f} B")
    print(f"     {'not in any key (Redis own structures)':<48} {(m3 - m0) / n - in_keys:7.0f} B")
    print(f"   left per table beside what belongs to people: {kb((m3 - m0) / n - people)}   (goal <= 1 KB)")
