"""The latency run's producer, in a process of its own (bench/pipeline.py starts it).

usage: bench/producer.py REDIS_URL RATE FILE

``FILE`` holds one command a line, ``<stream> <command JSON>``; they are written to their streams at
``RATE`` commands/s (a small batch every 2 ms), each stamped with the time it is sent (``at``), which
the worker's latency is measured from.  In production commands come from the adapters' processes, so
the worker's process does not pay for writing them: measured in the worker's own event loop (as
before 2026-12-06), the producer took ~15% of the core the latency run measures.
"""

from __future__ import annotations

import sys
import time

import orjson
import redis


def main(url: str, rate: float, path: str) -> None:
    """Send the commands of ``path`` at ``rate`` and print how many were sent."""
    planned = []
    with open(path, "rb") as f:
        for line in f:
            stream, _, body = line.rstrip(b"\n").partition(b" ")
            planned.append((stream.decode(), orjson.loads(body)))
    r = redis.Redis.from_url(url)
    tick = 0.002
    sent, t0 = 0, time.perf_counter()
    while sent < len(planned):
        due = min(int((time.perf_counter() - t0) * rate), len(planned)) - sent
        if due > 0:
            pipe = r.pipeline(transaction=False)
            now = time.time()
            for stream, cmd in planned[sent:sent + due]:
                cmd["at"] = now
                pipe.xadd(stream, {"c": orjson.dumps(cmd)})
            pipe.execute()
            sent += due
        time.sleep(tick)
    print(sent)


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]), sys.argv[3])
