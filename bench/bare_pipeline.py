"""The bare ceiling of the design on this machine: commands through Redis streams with no game logic.

Vendored from ``../shared/bench/bare_pipeline.py`` (the design's reference, unchanged but for this
docstring, one line split for the length, and the server's and this worker's CPU time printed) so
that ``bench/pipeline.py`` and CI have it anywhere.

A producer XADDs N commands spread over T tables into one command stream; one worker process reads them
with XREADGROUP (COUNT 64), compare-and-appends one event per command to its table's stream with a Lua
script (expected version), adds one outbox entry in the same script, and XACKs. Prints commands/s.
usage: bare_pipeline.py REDIS_URL [N] [TABLES]
"""
import asyncio
import os
import sys
import time

import redis.asyncio as redis

APPEND = """
local ver = tonumber(redis.call('GET', KEYS[2]) or '0')
if ver ~= tonumber(ARGV[1]) then return -1 end
redis.call('XADD', KEYS[1], '*', 'e', ARGV[2])
redis.call('SET', KEYS[2], ver + 1)
redis.call('XADD', KEYS[3], '*', 'n', ARGV[2])
return ver + 1
"""


async def redis_cpu(r):
    # (added to the reference: the server's CPU seconds, to show where a run's time went)
    info = await r.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


async def main(url, n, tables):
    r = redis.from_url(url)
    # only this script's own keys, so that it can share a Redis with anything else
    old = [k async for k in r.scan_iter(match="bare:*")]
    if old:
        await r.delete(*old)
    await r.xgroup_create("bare:cmd", "w", id="0", mkstream=True)
    append = r.register_script(APPEND)
    pipe = r.pipeline(transaction=False)
    for i in range(n):
        pipe.xadd("bare:cmd", {"t": i % tables, "m": "play 5o"})
        if i % 1000 == 999:
            await pipe.execute()
    await pipe.execute()
    versions = {}
    done = 0
    cpu0 = await redis_cpu(r)
    t0, own0 = time.perf_counter(), os.times()
    while done < n:
        resp = await r.xreadgroup("w", "c1", {"bare:cmd": ">"}, count=64, block=100)
        if not resp:
            continue
        for _, entries in resp:
            ids = []
            for mid, fields in entries:
                t = fields[b"t"].decode()
                v = versions.get(t, 0)
                keys = [f"bare:{{{t}}}:ev", f"bare:{{{t}}}:ver", f"bare:{{{t}}}:out"]
                res = await append(keys=keys, args=[v, fields[b"m"]])
                versions[t] = res
                ids.append(mid)
            await r.xack("bare:cmd", "w", *ids)
            done += len(ids)
    dt, own = time.perf_counter() - t0, os.times()
    served = await redis_cpu(r) - cpu0
    # (added to the reference: the worker's own CPU, user and system, to show where a run's time went)
    user, system = (own.user - own0.user) / n * 1e6, (own.system - own0.system) / n * 1e6
    print(f"bare pipeline: {n / dt:.0f} commands/s over {tables} tables, one worker "
          f"(Redis CPU {served / n * 1e6:.0f} us per command; worker CPU user {user:.1f}, "
          f"system {system:.1f} us per command)")
    old = [k async for k in r.scan_iter(match="bare:*")]
    if old:
        await r.delete(*old)
    await r.aclose()


if __name__ == "__main__":
    url = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    tables = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    asyncio.run(main(url, n, tables))
