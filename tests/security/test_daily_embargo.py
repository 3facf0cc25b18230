"""The nosy reader against the deal of the day (rule G-1, D-5, issue 37), on a real deployment
(``cinq serve`` with a signed webhook platform, the web table and a Telegram Mini App bot token, on
its own redis-server).

Ana plays today's Cinquillo deal to its end from her private chat; Bea, who will play the same deal
later today, then tries every surface for it: the web replay of Ana's attempt (its id leaked), the
web table of it through a Mini App session on ``startapp=<attempt>``, the chat's ``/replay``, a
forged daily button, her own ``/daily`` standing and board, and the operator's ``cinq replay`` and
``verify`` without ``--reveal``.  Every answer, and every callback Bea got, is scanned for the seed
and for the cards the AI players still held at the end of Ana's attempt (they are Bea's to find).
Ana herself, once finished, gets no more of it either: her ``/replay`` is refused.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import engine
from service.domain import daily
from service.domain.identities import Player
from service.domain.tokens import issue
from tests.adapters.webhook.support import PLATFORM
from tests.security.deployment import TOKEN_SECRET, Deployment, deployed


def _to(d: Deployment, who: str) -> list[dict]:
    """Every callback addressed to ``who``: as a person, or in their private chat."""
    return [m for m in d.platform.received
            if who in (m["to"].get("user", {}).get("id"), m["to"].get("chat", {}).get("id"))]


def _cli(d: Deployment, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "service.ops.cli", *args], env=d.environment(),
                          capture_output=True, text=True, timeout=120)


async def _play_daily(d: Deployment, who: str) -> str:
    """``who`` plays today's Cinquillo deal to its end from their private chat; its table id."""
    await d.say(who, "/daily")
    first = await d.platform.wait_for(lambda: [m for m in d.platform.to_user(who) if m["kind"] == "hand"], 60)
    table = first[0]["table"]
    pressed: set[str] = set()
    while (await d.table(table)).status != "finished":
        mine = [m for m in d.platform.to_user(who) if m["table"] == table and m["kind"] == "hand"]
        if mine and mine[-1]["buttons"] and mine[-1]["id"] not in pressed:
            pressed.add(mine[-1]["id"])
            await d.press(who, mine[-1]["buttons"][0]["token"])
        await asyncio.sleep(0.05)
    return table


async def test_g1_the_days_deal_stays_hidden_on_every_surface_until_it_is_revealed(tmp_path):
    async with deployed(tmp_path) as d:
        table = await _play_daily(d, "ana")
        assert table == daily.table_id(TOKEN_SECRET.encode(), Player(platform=PLATFORM, user="ana"),
                                       "cinquillo", daily.day_of(time.time()))
        t = await d.table(table)
        unplayed = [f'"{c}"' for seat in (1, 2, 3) for c in engine.view(t.engine, seat)["hand"]]
        secrets = [t.seed, *unplayed]

        def leaks(text: str) -> list[str]:
            return [s for s in secrets if s in text]

        status, body = await d.get(f"{d.web}/api/replay/{table}")
        assert status == 403 and json.loads(body)["title"] == "embargoed" and not leaks(body)
        status, body = await d.mini_app_session(990002, table)
        k = json.loads(body)["k"]
        for path in ("/api/state", "/api/events"):
            status, text = await d.get(d.web + path, headers={"Authorization": f"Link {k}"})
            assert status == 403 and json.loads(text)["title"] == "embargoed", (path, status, text[:300])
            assert not leaks(text), path
        forged = issue(b"not-the-token-secret-0123456789abcdef", table="D", seat=0, version=0, move="b c")
        await d.say("bea", f"/replay {table}")
        await d.press("bea", forged)
        await d.say("bea", "/daily board")
        await d.say("ana", f"/replay {table}")  # her own finished attempt: not yet either
        await d.platform.wait_for(lambda: len([m for m in d.platform.received
                                               if m["code"] in ("deal_embargoed", "token_forged")]) >= 3, 30)
        # Two requests, two answers; in either order: the gateway answers the forged button at once,
        # the /replay goes through the worker first.
        assert sorted(m["code"] for m in _to(d, "bea") if m["code"]) == ["deal_embargoed", "token_forged"]
        board = await d.platform.wait_for(lambda: [m for m in _to(d, "bea")
                                                   if "the best of 1 player" in m["text"]] or None, 30)
        assert "Ana" in board[0]["text"]
        for cmd in ("verify", "replay"):
            done = _cli(d, cmd, table)
            assert done.returncode != 0 and "withheld" in done.stderr, (cmd, done.stderr[-500:])
            assert not leaks(done.stdout + done.stderr)
        seen = _to(d, "bea")
        assert len(seen) >= 3
        for m in seen:
            assert not leaks(json.dumps(m)), m
        assert [m for m in _to(d, "ana") if m["code"] == "deal_embargoed"]  # her own /replay: refused too
        # What Ana saw while playing (her hands, the start, the end) never named the seed either.
        for m in _to(d, "ana"):
            assert t.seed not in json.dumps(m)
