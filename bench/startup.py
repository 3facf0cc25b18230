"""``cinq telegram`` from a kill -9 to receiving again, as a deployment restarts it.

usage: bench/startup.py [--rounds 3] [--mode polling|webhook] [--settle 3.0]

Everything is real but Telegram: a redis-server of its own (a free loopback port), ``cinq worker`` and
``cinq telegram`` as processes of their own, and this process as Telegram (the fake Bot API server of
the tests, keeping Telegram's flood limits).  Each round kills the bot with SIGKILL, starts a new one
at once (the same consumer name, as a restarted container keeps it) and, at the moment of the kill, a
person sends ``/start`` in their private chat and another ``/help`` in theirs (two chats: Telegram's
one message a second per chat would otherwise space the answers).  Printed, per round and as medians, from
the kill:

- *alive*: the new process's first Bot API call (``getMe``: Python started, the imports done);
- *receiving*: the answer to ``/start`` (the update taken in and handled: the bot answers it itself);
- *through the service*: the answer to ``/help`` (the gateway writes it to the outbox, the bot's
  delivery sends it: the whole loop, delivery's partitions included).

And the CPU seconds the new process had used when it was receiving (user + system, from /proc): what
the start costs whatever else the machine runs (on a shared machine the wall time is mostly the
others' load).  Beside them, measured in the same run, the reference: the wall and CPU time of
``python -c "import aiogram"`` (what the bot cannot start without, and did not write), and of
importing what ``cinq telegram`` imports.  Webhook mode (``--mode webhook``) posts each update to
the bot's webhook as Telegram does, again every 0.25 s while the port refuses it.  The load average
is printed with each round: the goal (issue 33) is at most 5 s on a machine at load 2.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402
from redis.asyncio import Redis  # noqa: E402

from bench.capacity import start_redis  # noqa: E402
from tests.adapters.telegram.fake_api import FakeTelegram, FloodLimits  # noqa: E402
from tools.loopback import free_port  # noqa: E402

TOKEN = "4242:BENCH"
SECRET = "bench-startup-webhook-secret-0123456789abcdef"
USER, OTHER = 501, 502
CINQ = str(Path(sys.executable).with_name("cinq"))


def _import_s(module: str) -> tuple[float, float]:
    """Wall and CPU seconds of a fresh interpreter importing ``module`` (and starting and exiting)."""
    t = time.perf_counter()
    before = os.times()
    subprocess.run([sys.executable, "-c", f"import {module}"], cwd=ROOT, check=True)
    after = os.times()
    cpu = after.children_user - before.children_user + after.children_system - before.children_system
    return time.perf_counter() - t, cpu


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a live process has used (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Telegram:
    """The fake Bot API server and the person who writes to the bot."""

    def __init__(self, mode: str) -> None:
        self.fake = FakeTelegram(enforce=FloodLimits())
        self.fake.started.update((USER, OTHER))
        self.mode = mode
        self.webhook = ""
        self._ids = 1000

    def update(self, text: str, uid: int) -> dict[str, Any]:
        self._ids += 1
        user = {"id": uid, "is_bot": False, "first_name": "Ana", "language_code": "en"}
        return {"update_id": self._ids, "message": {
            "message_id": self._ids, "date": int(datetime.now(UTC).timestamp()),
            "chat": {"id": uid, "type": "private", "first_name": "Ana"}, "from": user, "text": text}}

    async def send(self, text: str, uid: int = USER) -> None:
        """The person ``uid`` sends ``text``: queued for getUpdates, or posted to the webhook until taken."""
        update = self.update(text, uid)
        if self.mode == "polling":
            self.fake.push(update)
            return
        while True:
            try:
                if await self.fake.post_update(self.webhook, SECRET, update) == 200:
                    return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.25)

    def answered(self, since: float, needle: str, uid: int = USER) -> float | None:
        """When the first message to ``uid`` after ``since`` containing ``needle`` came."""
        return next((c.at for c in self.fake.calls if c.at > since and c.ok and c.method == "sendMessage"
                     and c.chat == uid and needle in c.params.get("text", "")), None)

    def first_call(self, since: float, method: str) -> float | None:
        return next((c.at for c in self.fake.calls if c.at > since and c.method == method), None)


async def _until(cond: Any, timeout: float = 120.0) -> float:
    deadline = time.monotonic() + timeout
    while (v := cond()) is None:
        if time.monotonic() > deadline:
            raise TimeoutError("the bot never answered")
        await asyncio.sleep(0.01)
    return float(v)


async def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mode", choices=["polling", "webhook"], default="polling")
    ap.add_argument("--settle", type=float, default=3.0, help="seconds the bot runs before each kill")
    args = ap.parse_args(argv)
    aiogram_s = [_import_s("aiogram")]
    bot_s = [_import_s("adapters.telegram.app; import service.ops.cli")]
    proc, url = start_redis()
    tg = Telegram(args.mode)
    await tg.fake.start()
    hook_port = free_port()
    tg.webhook = f"http://127.0.0.1:{hook_port}/telegram/webhook"
    env = {**os.environ, "REDIS_URL": url, "CINQ_LOG_LEVEL": "WARNING", "CINQ_TURN_SECONDS": "0",
           "CINQ_TOKEN_SECRETS": '["bench-startup-secret-0123456789abcdef"]',
           "CINQ_DAILY_SECRET": "bench-startup-daily-secret-0123456789abcdef",
           "CINQ_HTTP_PORT": "0", "CINQ_TELEGRAM_TOKEN": TOKEN,  # operations listeners: any free port
           "CINQ_TELEGRAM_API_URL": tg.fake.url, "CINQ_TELEGRAM_HOST": "127.0.0.1",
           "CINQ_TELEGRAM_PORT": str(hook_port), "CINQ_TELEGRAM_WEBHOOK_SECRET": SECRET}
    if args.mode == "webhook":
        env["CINQ_TELEGRAM_PUBLIC_URL"] = "http://127.0.0.1"
    procs: list[subprocess.Popen[bytes]] = []
    redis = Redis.from_url(url)
    try:
        procs.append(subprocess.Popen([CINQ, "worker"], cwd=ROOT, env=env))
        rows = []
        bot = None
        for r in range(args.rounds + 1):  # round 0: the first start, nothing to kill
            if bot is not None:
                await asyncio.sleep(args.settle)
                bot.send_signal(signal.SIGKILL)
                bot.wait()
            t0 = time.monotonic()
            bot = subprocess.Popen([CINQ, "telegram"], cwd=ROOT, env=env)
            procs.append(bot)
            await asyncio.gather(tg.send("/start"), tg.send("/help", OTHER))
            alive = await _until(lambda t0=t0: tg.first_call(t0, "getMe")) - t0
            start = await _until(lambda t0=t0: tg.answered(t0, "Hello Ana")) - t0
            cpu = _cpu_s(bot.pid)
            helped = await _until(lambda t0=t0: tg.answered(t0, "Commands:", OTHER)) - t0
            load = os.getloadavg()[0]
            what = "first start" if r == 0 else f"kill -9 #{r}"
            print(f"{what:12}: alive {alive:5.2f} s, receiving (/start answered) {start:5.2f} s "
                  f"({cpu:.2f} s of CPU), through the service (/help answered) {helped:5.2f} s; "
                  f"load average {load:.1f}")
            if r:
                rows.append((alive, start, helped, cpu, load))
            aiogram_s.append(_import_s("aiogram"))
            bot_s.append(_import_s("adapters.telegram.app; import service.ops.cli"))
        if rows:
            a, s, h, c, ld = (statistics.median(x) for x in zip(*rows, strict=True))
            print(f"median of {len(rows)} restarts ({args.mode}): alive {a:.2f} s, receiving {s:.2f} s "
                  f"({c:.2f} s of CPU), through the service {h:.2f} s, at load {ld:.1f} on "
                  f"{os.cpu_count()} cores (goal <= 5 s at load 2)")

        def med(xs: list[tuple[float, float]]) -> str:
            wall, cpu = statistics.median(w for w, _ in xs), statistics.median(c for _, c in xs)
            return f"{wall:.2f} s ({cpu:.2f} s of CPU)"

        print(f"reference, same run: python -c 'import aiogram' {med(aiogram_s)}; importing what cinq "
              f"telegram imports {med(bot_s)} (medians of {len(aiogram_s)})")
        print(f"calls refused by the flood limits: {len(tg.fake.flooded)}")
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                p.wait()
        await redis.aclose()
        await tg.fake.stop()
        proc.terminate()
        proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
