"""The time left on a group's table, end to end through the fake Bot API (issue 20): with a turn
timer, the table says "under 30 s", is edited to "under 10 s" as the last ten seconds begin, and
every claim is true when Telegram gets it (measured against the service's own deadline)."""

from __future__ import annotations

import asyncio
import re
import time

from service.domain.identities import Room
from service.platform.outbox import Message
from service.protocol.i18n import translate
from tests.adapters.telegram.support import GROUP_ID, World, person

ANA = person(51, "Ana", "en")
BEA = person(52, "Bea", "en")
TURN_S = 11  # just over the last milestone: the 10 s edit comes a second after the first


async def _first_deadline(w: World, table: str) -> float:
    """The deadline of the match's first turn, as the service wrote it in the group's table."""
    for _, fields in await w.redis.xrange(w.workers[0].keys.outbox_for(table)):
        msg = Message.model_validate_json(fields[b"m"])
        if msg.kind == "table" and msg.to.room is not None and msg.deadline is not None:
            return msg.deadline
    raise AssertionError("no table message with a deadline")


async def test_the_group_table_counts_down_truthfully_to_the_last_ten_seconds(fake_redis):
    async with World(fake_redis) as w:
        wall = time.time() - time.monotonic()  # the fake records monotonic times; deadlines are unix
        for p in (ANA, BEA):
            await w.say(p, "/start")
        await w.start_in_group(ANA, f"/new cinquillo turn={TURN_S}", [BEA])
        table = await w.tg.gateway.table_of(Room(platform="telegram", chat=str(GROUP_ID), kind="group"))
        assert table is not None
        deadline = await _first_deadline(w, table)
        # Nobody plays: wait for the deadline to pass (the service then plays for the player).
        while time.time() < deadline + 0.5:
            await asyncio.sleep(0.1)
        await w.quiet()
        under = re.compile(re.escape(translate("en", "tg.time_under", seconds=999)).replace("999", r"(\d+)"))
        claims = []
        for c in w.fake.calls_to(GROUP_ID):
            if c.method not in ("sendMessage", "editMessageText") or wall + c.at >= deadline:
                continue
            m = under.search(c.params.get("text", ""))
            if m:
                claims.append((int(m.group(1)), deadline - (wall + c.at)))
        said = [n for i, (n, _) in enumerate(claims) if i == 0 or claims[i - 1][0] != n]
        assert said == [30, 10]
        # Each claim was true when Telegram got it (and so until the next edit: time only runs down).
        for n, left in claims:
            assert left <= n, (n, left)
