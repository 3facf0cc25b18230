"""Every Redis key the service or an adapter writes has a row in the key table of docs/service.md.

Two checks: every key prefix built in the code (``f"{prefix}xx:..."``) is a documented prefix (and
every documented prefix is still built somewhere), and a whole deployment on one real Redis — a
Telegram group match and a webhook group match through their adapters and deliveries, a timed-out
turn, a dead letter, the retention lock, ``cinq trim`` — leaves only keys that match a documented row.
"""

from __future__ import annotations

import asyncio
import random
import re
from pathlib import Path

from service.domain.identities import Room
from service.ops import retention, trim
from service.store.keys import Keys
from tests.adapters.telegram.support import World, person, play_out
from tests.adapters.telegram.support import settings as tg_settings
from tests.adapters.webhook.support import FakePlatform
from tests.adapters.webhook.support import Harness as WebhookHarness
from tests.adapters.webhook.test_webhook_match import play_match
from tests.service.support import BEA, Clock, Harness, play_with_bots

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "service.md"
PREFIX = "kt:"  # the deployment's CINQ_KEY_PREFIX in the run: every key must carry it


def documented() -> list[str]:
    """The key patterns of the table under "## Keys" (first column, in backticks)."""
    section = DOC.read_text().split("## Keys", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [p for row in rows for p in re.findall(r"`([^`]+)`", row.split(" | ", 1)[0])]


def pattern(doc: str) -> re.Pattern[str]:
    """A documented key as a regex: ``{…}`` is one hash tag, ``<…>`` any non-empty part."""
    out = ""
    for part in re.split(r"(\{[^}]*\}|<[^>]*>)", doc):
        if part.startswith("{"):
            out += r"\{[^}]+\}"
        elif part.startswith("<"):
            out += r".+"
        else:
            out += re.escape(part)
    return re.compile(out)


def _prefix(key: str) -> str:
    return re.split(r"[:{]", key, maxsplit=1)[0] + ":"


def test_every_key_prefix_in_the_code_is_documented_and_the_reverse():
    code = "".join(p.read_text() for d in ("service", "adapters") for p in (ROOT / d).rglob("*.py"))
    built = set(re.findall(r"prefix\}([a-z]+):", code))
    docs = {_prefix(d)[:-1] for d in documented()}
    assert built, "no key builder found: the pattern of the check is stale"
    assert built - docs == set(), "keys built in the code but missing from docs/service.md"
    assert docs - built == set(), "docs/service.md documents a key no code builds"


def test_the_documented_patterns_match_the_key_builders():
    k = Keys(16, 2, "")
    built = [k.events("abc"), k.snap("abc"), k.done("abc"), k.outbox(3), k.due(3), k.commands(1), k.dead(1),
             k.bell(), k.worker_members(), k.shard_lease(1), k.room("tg", "-1"), k.player_tables("tg", "1"),
             k.player_prefs("tg", "1"), k.player_stats("tg", "1"), k.seen(3, "c1"),
             k.room_refused("tg", "-1", "abc"), retention.lock_key(k)]
    pats = [pattern(d) for d in documented()]
    assert [b for b in built if not any(p.fullmatch(b) for p in pats)] == []
    assert not pattern("t:{b}:<table>:events").fullmatch("t:{1}:abc:snap")


def _every_key_of(k: Keys) -> dict[str, str]:
    """Every key name :class:`Keys` builds, by method, with sample arguments (found by introspection,
    so that a new builder is checked without being listed here)."""
    import inspect

    samples = {"int": 3, "str": "x1"}
    out = {}
    for name, fn in inspect.getmembers(k, inspect.ismethod):
        params = list(inspect.signature(fn).parameters.values())
        if name.startswith("_") or name in ("of", "bucket", "shard"):
            continue
        out[name] = fn(*[samples[str(p.annotation)] for p in params if p.default is inspect.Parameter.empty])
    return out


def test_every_key_the_keys_build_is_in_the_key_table():
    # Keys names every key of the service, the ratings' and tournaments' (rt:, tn:) too.  A SCAN
    # pattern ("...*") must at least have a documented prefix.
    built = _every_key_of(Keys(16, 2, ""))
    assert {"events", "pf_message", "pf_counted", "inbound_answer", "rate_bucket", "delivery_lease",
            "retain_lock"} <= built.keys()
    pats = [pattern(d) for d in documented()]
    prefixes = {_prefix(d) for d in documented()}
    names = [n for v in built.values() for n in ([v] if isinstance(v, str) else v)]
    missing = [n for n in names if not (any(p.fullmatch(n) for p in pats) if "*" not in n
                                        else _prefix(n) in prefixes)]
    assert missing == [], "Keys builds keys that docs/service.md's key table does not have"


async def test_a_whole_deployment_writes_only_documented_keys(real_redis, tmp_path):
    r = real_redis
    # A Telegram group match: three people and an AI player, through the bot and its delivery.
    tg = tg_settings(key_prefix=PREFIX)
    people = [person(31, "Ana"), person(32, "Bea"), person(33, "Cal")]
    async with World(r, service=tg) as w:
        for p in people:
            await w.say(p, "/start")
        await w.start_in_group(people[0], "/new cinquillo", people[1:])
        await play_out(w, people, random.Random(7),
                       over=lambda: any(m.text.startswith("🏁") for m in w.fake.chat_messages(-1001)))
        await w.say(people[1], "/stats", chat=-1001)
        await w.say(people[1], "/lang es", chat=-1001)
        await w.quiet()
    # A webhook group match through HTTP, with the adapter's inbound bookkeeping and deliveries.
    platform = FakePlatform()
    await platform.start()
    h = await WebhookHarness(r, platform.url, key_prefix=PREFIX).start()
    try:
        await play_match(h, platform, "/new cinquillo", seed=3)
    finally:
        await h.close()
        await platform.close()
    # The service alone: a turn timer that runs out, a dead letter, the retention, then trim.
    s = Harness(r, clock=Clock(), key_prefix=PREFIX, turn_seconds=5)
    room = Room(platform="tg", chat="-77", kind="group")
    await play_with_bots(s, BEA, "cinquillo", 2, room)
    s.clock.now += 60
    s.workers[0].timers = True
    await asyncio.wait_for(_fire(s), 30)
    await s.redis.xadd(s.keys.dead(0), {"c": "not json", "entry": "1-0", "error": "test"})
    st = s.settings.model_copy(update={"archive_dir": str(tmp_path), "retain_interval_s": 0.05})
    stop = asyncio.Event()
    loop = asyncio.create_task(retention.retain_loop(r, s.keys, st, stop, lambda: s.clock.now))
    await asyncio.sleep(0.2)
    stop.set()
    await loop
    await trim.trim(r, s.keys, 0, str(tmp_path / "a.jsonl"), now=s.clock.now + 10**9)

    keys = sorted({k.decode() async for k in r.scan_iter(match="*", count=1000)})
    assert keys and all(k.startswith(PREFIX) for k in keys), [k for k in keys if not k.startswith(PREFIX)]
    pats = [pattern(d) for d in documented()]
    undocumented = [k for k in keys if not any(p.fullmatch(k[len(PREFIX):]) for p in pats)]
    assert undocumented == [], "keys written but not in the key table of docs/service.md"
    # The run wrote every kind of key the adapters own, so the check covered them.  (The workers'
    # ``wrk:`` keys live only while workers run and the retention lock for an interval: their patterns
    # are checked against the builders above.)
    seen_prefixes = {_prefix(k[len(PREFIX):]) for k in keys}
    assert {"t:", "out:", "cmd:", "dead:", "room:", "player:", "seen:", "in:", "rl:", "dlv:",
            "pf:", "due:"} <= seen_prefixes, seen_prefixes


async def _fire(s: Harness) -> None:
    """Run the timers until the timed-out turn was played."""
    from service.write.timers import fire_due

    table = await s.table_of(Room(platform="tg", chat="-77", kind="group"))
    before = await s.redis.xlen(s.keys.events(table))
    while await s.redis.xlen(s.keys.events(table)) == before:
        await fire_due(s.redis, s.keys, s.clock.now * 1000)
        await s.settle()
