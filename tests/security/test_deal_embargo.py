"""The nosy reader against a tournament's shared deal (rule G-1, issue 32 #1), on a real deployment.

Three people enter a one-round Cinquillo tournament of 2-seat tables: Cal plays an AI player at
table A, Ana and Bea sit at table B; both tables deal the round's seed (duplicate deals), so the
hands of A are the hands of B.  Cal finishes A while B still plays; then Ana, seated at B, tries
every surface for A's deal: the web replay, the web table of A (through a Mini App session on
``startapp=A``, which Telegram would sign for anyone), the chat's ``/replay``, ``cinq verify`` and
``cinq replay``.  Every answer, and every callback anyone got, is scanned for the round's seed and
for Bea's hand.  Once B finishes, the embargo lifts and A's replay opens, with the seed.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import engine
from tests.polling import eventually
from tests.security.deployment import Deployment, deployed

GROUP = "g-embargo"


async def _tournament(d: Deployment) -> tuple[str, str, Any]:
    """Opens and starts the tournament; returns the ids of table A (Cal and an AI player) and
    table B (Ana and Bea), once both run."""
    await d.say("ana", "/tournament cinquillo rounds=1 players=2", chat=GROUP)
    await d.platform.wait_for(lambda: [m for m in d.platform.to_chat(GROUP) if m["buttons"]], 30)
    for who in ("bea", "cal"):
        await d.say(who, "/tournament join", chat=GROUP)
        await d.platform.wait_for(
            lambda w=who: [m for m in d.platform.to_chat(GROUP) if w.title() in m["text"]], 30)
    await d.say("ana", "/tournament start", chat=GROUP)
    hands = await d.platform.wait_for(lambda: {
        u: m["table"] for u in ("ana", "bea", "cal") for m in d.platform.to_user(u) if m["kind"] == "hand"}
        if all(any(m["kind"] == "hand" for m in d.platform.to_user(u)) for u in ("ana", "bea", "cal"))
        else None, 60)
    a, b = hands["cal"], hands["ana"]
    assert hands["bea"] == b and a != b
    t_a = await eventually(lambda: d.table(a), 30, "table A")
    return a, b, t_a


async def _play_out(d: Deployment, table: str, people: tuple[str, ...]) -> None:
    """The people at ``table`` press a button of their latest hand message until it finishes."""
    pressed: set[str] = set()
    while True:
        t = await d.table(table)
        if t.status == "finished":
            return
        for who in people:
            mine = [m for m in d.platform.to_user(who) if m["table"] == table and m["kind"] == "hand"]
            if mine and mine[-1]["buttons"] and mine[-1]["id"] not in pressed:
                pressed.add(mine[-1]["id"])
                await d.press(who, mine[-1]["buttons"][0]["token"])
        await asyncio.sleep(0.05)


def _secrets_of(t_b: Any, seed: str) -> list[str]:
    """What Ana (seat 0 at B) must not learn: the seed, and Bea's cards (seat 1 at B), quoted as
    the JSON answers write card codes."""
    bea = engine.view(t_b.engine, 1)["hand"]
    return [seed, *(f'"{c}"' for c in bea)]


def _leaks(text: str, secrets: list[str]) -> list[str]:
    return [s for s in secrets if s in text]


def _cli(d: Deployment, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "service.ops.cli", *args], env=d.environment(),
                          capture_output=True, text=True, timeout=120)


async def test_g1_a_tournament_deal_stays_hidden_on_every_surface_until_the_round_ends(tmp_path):
    async with deployed(tmp_path) as d:
        a, b, _ = await _tournament(d)
        await _play_out(d, a, ("cal",))
        t_b = await d.table(b)
        assert t_b.status == "running", "table B must still be playing the deal"
        seed = (await d.table(a)).seed
        secrets = _secrets_of(t_b, seed)
        assert seed == t_b.seed  # the same deal at both tables (the attack's premise)

        # The web replay: no credential needed, the table id is posted in the group.
        status, body = await d.get(f"{d.web}/api/replay/{a}")
        assert status == 403 and json.loads(body)["title"] == "embargoed", (status, body[:300])
        assert not _leaks(body, secrets)
        # The web table of A, opened as a Mini App on startapp=A by someone not seated there.
        status, body = await d.mini_app_session(990001, a)
        assert status == 200, body
        k = json.loads(body)["k"]
        for path in ("/api/state", "/api/events"):
            status, text = await d.get(d.web + path, headers={"Authorization": f"Link {k}"})
            assert status == 403 and json.loads(text)["title"] == "embargoed", (path, status, text[:300])
            assert not _leaks(text, secrets), path
        # The chat: /replay of A, from Ana's private chat and from the group.
        await d.say("ana", f"/replay {a}")
        await d.say("ana", f"/replay {a}", chat=GROUP)
        refused = await d.platform.wait_for(lambda: [m for m in d.platform.received
                                                     if m["code"] == "deal_embargoed"], 30)
        assert all(a in m["text"] for m in refused)
        # The operator's tools without --reveal.
        for cmd in ("verify", "replay"):
            done = _cli(d, cmd, a)
            assert done.returncode != 0 and "withheld" in done.stderr, (cmd, done.stdout[-500:],
                                                                         done.stderr[-500:])
            assert not _leaks(done.stdout + done.stderr, secrets)
        # Everything Ana and the group got (Bea holds her hand, and Cal held the same one at A).
        await d.platform.wait_for(
            lambda: len([m for m in d.platform.received if m["code"] == "deal_embargoed"]) >= 2, 30)
        seen = [m for m in d.platform.received if m["to"].get("user", {}).get("id") == "ana"
                or m["to"].get("chat", {}).get("id") in ("ana", GROUP)]
        assert len(seen) > 5
        for m in seen:
            assert not _leaks(json.dumps(m), secrets), m

        # B finishes: the round is over, the embargo lifts, A's replay opens with its seed.
        await _play_out(d, b, ("ana", "bea"))
        status, body = await eventually(
            lambda: _replay_open(d, a), 60, "A's replay to open once the round is over")
        assert json.loads(body)["seed"] == seed
        assert _cli(d, "verify", a).returncode == 0


async def _replay_open(d: Deployment, table: str) -> tuple[int, str] | None:
    status, body = await d.get(f"{d.web}/api/replay/{table}")
    return (status, body) if status == 200 else None
