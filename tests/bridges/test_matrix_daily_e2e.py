"""The deal of the day on Matrix end to end (issue 37): Synapse on loopback, cinq as processes on a real
Redis, the bridge as a process, and a person as a matrix-nio client who sends ``/daily`` in a group
(its board), plays the attempt in a DM with the bot by answering its numbered choices, asks for the
standing, and picks "Post in <the group's name>": the group gets the spoiler-free text.  G-1: the
day's seed is in no message of any room (D-5).

With ``CINQ_TRANSCRIPTS=<dir>`` the test writes what each room showed (``matrix-daily.txt``)."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from service.domain.events import MatchStarted, decode
from tools.synapse import Synapse


@pytest.fixture(scope="module")
def synapse(tmp_path_factory):
    hs = Synapse(tmp_path_factory.mktemp("synapse")).start()
    yield hs
    hs.stop()


@pytest.mark.e2e
@pytest.mark.timeout(1800)
async def test_d5_a_daily_deal_on_matrix_played_in_a_dm_and_shared_in_the_group(synapse, real_redis_url,
                                                                                   tmp_path):
    from nio import RoomCreateResponse

    from tools.matrix_world import World, options

    world = World(tmp_path, real_redis_url, synapse, locale="en")
    try:
        (ana,) = await world.start(["Ana"])
        group = await world.group(ana, [])
        bot = world.bot
        await ana.say(group, "/daily")  # the group's board; the bridge sends the room's name with it
        await ana.wait(lambda: any("Daily Cinquillo" in t for t in ana.texts(group, bot)))
        made = await ana.client.room_create(is_direct=True, invite=[bot])
        assert isinstance(made, RoomCreateResponse), made
        dm = made.room_id
        while bot not in {m.user_id for m in (await ana.client.joined_members(dm)).members}:
            await asyncio.sleep(0.3)
        await ana.say(dm, "/daily")
        handled = 0
        while not any("Your daily deal is done" in t for t in ana.texts(dm, bot)):
            offers = [e for _, e in ana.from_bot(dm, bot, edits=False)]
            new = offers[handled:]
            handled = len(offers)
            asked = [e for e in new if options(e["content"])]
            if asked:
                await ana.say(dm, "1")  # the first choice of the latest offer
            else:
                ana.changed.clear()
                await ana.wait(lambda seen=handled: len(ana.from_bot(dm, bot, edits=False)) > seen,
                               timeout=180)
        await ana.say(dm, "/daily")

        def standings() -> list[str]:
            bodies = [e["content"].get("body", "") for _, e in ana.from_bot(dm, bot, edits=False)]
            return [b for b in bodies if "rank 1 of 1" in b]

        standing = await ana.wait(standings)
        share = re.search(r"^(\d+)\. 📣 Post in (.+)$", standing[-1], re.M)
        assert share is not None and share.group(2) == "cinq", standing[-1]  # the room's name
        await ana.say(dm, share.group(1))
        posted = await ana.wait(lambda: [t for t in ana.texts(group, bot)
                                         if t.startswith("cinq · daily Cinquillo")])
        assert "🟩" in posted[0] or "⬜" in posted[0]
        # G-1: the day's seed, as stored, is in no message of either room
        r = aioredis.from_url(real_redis_url)
        seeds = set()
        async for key in r.scan_iter(match=f"mx{world.tag}:t:*:events"):
            for _, fields in await r.xrange(key):
                ev = decode(fields[b"e"]).event
                if isinstance(ev, MatchStarted):
                    seeds.add(ev.seed)
        await r.aclose()
        assert seeds
        everything = "\n".join(ana.texts(dm, bot) + ana.texts(group, bot))
        assert not [s for s in seeds if s in everything]
        if os.environ.get("CINQ_TRANSCRIPTS"):
            out = []
            for room, name in ((group, "the group room 'cinq'"), (dm, "Ana's DM with the bot")):
                out.append(f"=== {name}")
                for _, e in ana.events.get(room, []):
                    c = e["content"]
                    if (c.get("m.relates_to") or {}).get("rel_type") == "m.replace":
                        continue  # edits: the message's last text is shown below
                    body = (ana.current.get(e["event_id"]) or c).get("body", "")
                    who = "bot" if e["sender"] == bot else "Ana"
                    out.append(f"--- {who}\n{body}")
            Path(os.environ["CINQ_TRANSCRIPTS"], "matrix-daily.txt").write_text("\n".join(out) + "\n")
    finally:
        await world.close()
