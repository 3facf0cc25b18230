"""Bot API calls of the Telegram adapter, measured against the fake Bot API server of the tests.

usage: bench/telegram.py [--scale 1.0] [--think 2.0] [--spread 0.5] [--games 2] [--seed 1]
                         [--modes webhook,polling] [--game cinquillo|535] [--hold 2.0] [--redis-server]

A group match of four (three people and one AI player, Cinquillo) is played through the whole
pipeline: the service's worker in-process on fakeredis, the bot (aiogram, sender, delivery) talking to
the fake server on loopback, and simulated people who press the buttons they were sent after
``--think`` seconds (each press drawn uniformly within ``--spread`` of it: 2.0 and 0.5 make 1 to 3 s).
The fake server keeps Telegram's flood limits itself (one message a second per chat, twenty a minute
per group, thirty a second overall) and answers 429 to a call that breaks one: the bot's own
accounting is not trusted.  Updates reach the bot for real: in webhook mode the fake server POSTs them to
the bot's webhook (the answer to a press travels in the HTTP response); in polling mode the bot
long-polls the fake server's ``getUpdates`` (and answers each press with ``answerCallbackQuery``).
Telegram's limits (1 call/s per chat, 20/min per group, 30/s overall), the bot's own intervals, the
long poll's timeout and the people's thinking time are all multiplied by ``--scale``, so that a
"minute" lasts ``60 * scale`` seconds; the worker's own speed is not scaled, so only ``--scale 1`` (the
default) gives latencies as people see them.  ``--redis-server`` runs it on a throw-away redis-server
of its own instead of fakeredis (whose blocking reads wake by polling).

Printed, per mode: the time from a press to the next person's private message offering them their
move (the next player's turn: the first call after the press that gives another person move
buttons), to the presser's own hand losing its buttons, and to the next edit of the group's table
(median, p95, mean, in real-time seconds: measured / scale); taps per move (a two-step pick of 535
counts two; forced passes, made by the bot, are excluded), Bot API calls per move (every call from
the Start press to the summary, divided by the moves played, AI moves included), by method, and
three totals: every call; without ``getUpdates`` (the long poll: a cost per update batch and per
idle timeout, not per move, and not counted by Telegram's flood limits); and only the calls that
send or edit a message (what the flood limits count).  Then the most calls to the group in any
(scaled) minute, which must stay under 20, and the calls the fake server refused with 429, which
must be none.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import fakeredis
from redis.asyncio import Redis

from adapters.telegram.callbacks import TOKEN_RE
from adapters.telegram.config import Limits, TelegramSettings
from adapters.telegram.keyboards import PAGE_PREFIX
from bench.capacity import start_redis
from service.domain.events import MovePlayed
from service.domain.identities import Room
from service.foundation import logs
from service.foundation.settings import Settings
from service.store.repository import history
from tests.adapters.telegram.fake_api import SENDS, Call, FloodLimits
from tests.adapters.telegram.support import GROUP_ID, World, person, settings

PEOPLE = [person(101, "Ana", "es"), person(102, "Bea", "en"), person(103, "Cal", "es")]


async def _wait(cond, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise TimeoutError("the match stalled")
        await asyncio.sleep(0.005)


def _turn(w: World, p: Any) -> Any:
    """A person's latest private message if it offers a move (tokens) or a kind of move (pages)."""
    msgs = w.fake.chat_messages(p.id)
    if not msgs:
        return None
    m = max(msgs, key=lambda m: m.seq)
    # The end's "Play again" (🔁) is a token too, but no move of this match: pressing it made a rematch,
    # the group's room then showed that table, and the bench counted its 0 moves.
    datas = [b.get("callback_data") or "" for b in m.buttons() if not b["text"].startswith("🔁")]
    return m if any(TOKEN_RE.match(d) or d.startswith(PAGE_PREFIX) for d in datas) else None


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def _offers_move(c: Call) -> bool:
    """Whether a call sends or edits a message with move buttons (a token or a kind of move)."""
    markup = c.params.get("reply_markup") or {}
    datas = [b.get("callback_data") or "" for row in markup.get("inline_keyboard", []) for b in row]
    return any(TOKEN_RE.match(d) or d.startswith(PAGE_PREFIX) for d in datas)


def _after(calls: list[Call], t: float, ok: Any) -> float:
    """How long after ``t`` the first call that ``ok`` accepts came (nan: none)."""
    return next((c.at for c in calls if c.at > t and ok(c)), float("nan")) - t


async def one_match(scale: float, think: float, rng: random.Random, mode: str, game: str,
                    hold: float | None = None, spread: float = 0.5, redis: Any = None) -> dict[str, Any]:
    """Play one group match and return its figures (``hold``: the group table's ``group_hold_s``)."""
    limits = (Limits() if hold is None else Limits(group_hold_s=hold)).scaled(scale)
    if redis is None:
        redis = fakeredis.FakeAsyncRedis(server=fakeredis.FakeServer())
    else:
        await redis.flushdb()
    tg = TelegramSettings()
    polling_timeout = max(1, round(tg.polling_timeout * scale))
    auto_pass_s = Settings().auto_pass_s  # the service passes for a person whose only move it is
    async with World(redis, limits=limits, transport=mode, polling_timeout=polling_timeout,
                     service=settings(auto_pass_s=auto_pass_s * scale)) as w:
        w.fake.enforce = FloodLimits().scaled(scale)
        for p in PEOPLE:
            await w.say(p, "/start")
        await w.say(PEOPLE[0], f"/new {game}", chat=GROUP_ID)
        await w.quiet()
        lobby, join = w.button(GROUP_ID, "lb:join")
        for p in PEOPLE[1:]:
            await w.press(p, lobby, join)
        await w.press(PEOPLE[0], lobby, w.button(GROUP_ID, "lb:bots")[1])
        await w.quiet()
        first = len(w.fake.calls)
        t0 = time.monotonic()
        await w.press(PEOPLE[0], lobby, w.button(GROUP_ID, "lb:start")[1])

        def over() -> bool:
            return any(m.text.startswith("🏁") for m in w.fake.chat_messages(GROUP_ID))

        last_seq = 0
        taps = 0
        pressed: list[tuple[float, int]] = []  # when each move button was pressed, and by whom
        while not over():
            ready = [(p, m) for p in PEOPLE if (m := _turn(w, p)) is not None and m.seq > last_seq]
            if not ready:
                await asyncio.sleep(0.005)
                continue
            p, shown = max(ready, key=lambda pm: pm[1].seq)
            datas = [b.get("callback_data") or "" for b in shown.buttons()]
            tokens = [d for d in datas if TOKEN_RE.match(d)]
            kinds = [d for d in datas if d.startswith(PAGE_PREFIX)]
            last_seq = shown.seq
            labels = [b["text"] for b in shown.buttons() if TOKEN_RE.match(b.get("callback_data") or "")]
            if not kinds and len(tokens) == 1 and labels[0].startswith("⏭") and auto_pass_s > 0:
                continue  # a forced pass: nobody taps, the service passes for them
            await asyncio.sleep(think * scale * rng.uniform(1 - spread, 1 + spread))
            if kinds:
                choice = rng.choice(kinds + [t for t, lab in zip(tokens, labels, strict=True)
                                             if lab.startswith("⏭")])
            else:
                choice = rng.choice(tokens)
            taps += 1
            if TOKEN_RE.match(choice):
                pressed.append((time.monotonic(), p.id))
            await w.press(p, shown, choice)
        await w.quiet()
        elapsed = time.monotonic() - t0
        calls = w.fake.calls[first:]
        table = await w.tg.gateway.table_of(Room(platform="telegram", chat=str(GROUP_ID), kind="group"))
        stored = await history(w.workers[0].store, table)
        played = [s.event for s in stored if isinstance(s.event, MovePlayed)]
        moves = len(played)
        people_moves = sum(e.cause == "player" for e in played)
        group = [c.at for c in calls if c.chat == GROUP_ID and c.method in SENDS]
        ok = [c for c in calls if c.ok and c.method in SENDS]
        lag = [_after(ok, t, lambda c: c.chat == GROUP_ID and c.method == "editMessageText")
               for t, _ in pressed]
        # The next person's turn: the first message after the press that offers another person a move.
        turn = [_after(ok, t, lambda c, who=who: (c.chat or 0) > 0 and c.chat != who and _offers_move(c))
                for t, who in pressed]
        mine = [_after(ok, t, lambda c, who=who: c.chat == who) for t, who in pressed]
        window = 60.0 * scale
        peak = max((sum(1 for t in group if s <= t < s + window) for s in group), default=0)
        by = Counter(f"{c.method} ({'group' if (c.chat or 0) < 0 else 'private' if c.chat else '-'})"
                     for c in calls)
        replies = sum(c.method == "answerCallbackQuery" for c in w.fake.webhook_replies)
    auto = people_moves - len(pressed)  # the people's moves nobody tapped: forced passes
    return {"moves": moves, "calls": len(calls), "by": by, "replies": replies, "group_calls": len(group),
            "peak": peak, "seconds": elapsed, "lag": [x / scale for x in lag if x == x], "taps": taps,
            "turn": [x / scale for x in turn if x == x], "mine": [x / scale for x in mine if x == x],
            "flooded": len(w.fake.flooded),
            "tapped_moves": people_moves - auto, "auto": auto}


async def main(argv: list[str] | None = None) -> int:
    """Run the matches and print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=float, default=1.0, help="time scale of the limits and thinking")
    ap.add_argument("--think", type=float, default=2.0, help="seconds a person takes per move (unscaled)")
    ap.add_argument("--spread", type=float, default=0.5, help="each think drawn within this fraction of it")
    ap.add_argument("--redis-server", action="store_true",
                    help="on a redis-server of its own (a free loopback port) instead of fakeredis")
    ap.add_argument("--games", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--modes", default="webhook,polling")
    ap.add_argument("--game", default="cinquillo", choices=["cinquillo", "535"])
    ap.add_argument("--hold", type=float, default=None,
                    help="the group table's hold for a fresher move, s (default: the setting's; 0: none)")
    args = ap.parse_args(argv)
    logs.configure("ERROR")
    proc, redis = None, None
    if args.redis_server:
        proc, url = start_redis()
        redis = Redis.from_url(url)
        for _ in range(100):  # until it answers
            with contextlib.suppress(Exception):
                await redis.ping()
                break
            await asyncio.sleep(0.05)
    try:
        return await _run(args, redis)
    finally:
        if redis is not None:
            await redis.aclose()
        if proc is not None:
            proc.terminate()
            proc.wait()


def _line(name: str, xs: list[float], goal: str) -> str:
    mean = sum(xs) / len(xs) if xs else float("nan")
    return (f"  press -> {name} (real-time s): median {_pct(xs, 0.5):.3f}, p95 {_pct(xs, 0.95):.3f}, "
            f"mean {mean:.3f}   {goal}")


async def _run(args: argparse.Namespace, redis: Any) -> int:
    peak = flooded = 0
    store = "redis-server" if redis is not None else "fakeredis"
    print(f"{store}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for mode in args.modes.split(","):
        rng = random.Random(args.seed)
        rows = []
        for i in range(args.games):
            r = await one_match(args.scale, args.think, rng, mode, args.game, args.hold, args.spread, redis)
            rows.append(r)
            flooded += r["flooded"]
            print(f"{mode} match {i + 1}: {r['moves']} moves, {r['calls']} calls "
                  f"({r['calls'] / r['moves']:.2f}/move); {r['replies']} answers in webhook responses; "
                  f"group: {r['group_calls']} calls, at most {r['peak']} in a minute; {r['seconds']:.1f} s; "
                  f"refused by the flood limits: {r['flooded']}")
        moves = sum(r["moves"] for r in rows)
        by: Counter[str] = sum((r["by"] for r in rows), Counter())
        peak = max(peak, *(r["peak"] for r in rows))
        print(f"{mode}: {moves} moves; Bot API calls per move, by method:")
        for name, n in sorted(by.items(), key=lambda kv: -kv[1]):
            print(f"  {name:34} {n / moves:5.2f}")
        total = sum(by.values())
        polls = sum(n for k, n in by.items() if k.startswith("getUpdates"))
        sends = sum(n for k, n in by.items() if k.split()[0] in SENDS)
        print(f"  {'all calls':34} {total / moves:5.2f}   (goal < 1.5)")
        print(f"  {'without getUpdates':34} {(total - polls) / moves:5.2f}")
        print(f"  {'messages sent or edited':34} {sends / moves:5.2f}")
        print(_line("next person's turn", [x for r in rows for x in r["turn"]], "(goal <= 0.2 median)"))
        print(_line("own hand's buttons gone", [x for r in rows for x in r["mine"]], ""))
        print(_line("group table edit", [x for r in rows for x in r["lag"]], "(goal <= 1.5 median)"))
        taps, tapped = sum(r["taps"] for r in rows), sum(r["tapped_moves"] for r in rows)
        print(f"  taps per move (forced passes excluded) {taps / max(tapped, 1):.2f}   (goal <= 1.0); "
              f"forced passes made by the bot: {sum(r['auto'] for r in rows)}")
    print(f"Most calls to one group in any minute: {peak}; must stay under 20")
    print(f"Calls the fake server refused for breaking Telegram's flood limits: {flooded}; must be 0")
    print(f"(limits and thinking time scaled by {args.scale}: a minute is {60 * args.scale:.0f} s; "
          f"people think {args.think} s per move)")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
