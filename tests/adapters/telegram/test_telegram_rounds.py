"""How a round ended (535; Cinquillo played over several rounds) stays on the table and on every
hand until the next round ends: no later edit merges it away (issue 20)."""

from __future__ import annotations

import random
import re

from tests.adapters.telegram.support import GROUP_ID, World, person, play_out

ANA = person(41, "Ana", "es")
BEA = person(42, "Bea", "en")


def _texts(w: World, chat: int) -> list[str]:
    return [c.params.get("text", "") for c in w.fake.calls_to(chat)
            if c.method in ("sendMessage", "editMessageText")]


def _kept_until_the_end(texts: list[str], mark: str) -> int:
    """From the first text that tells of a round's end, every later one tells of one (the last text,
    the final result, excepted); returns how many texts told of one."""
    first = next(i for i, t in enumerate(texts) if mark in t)
    later = texts[first:-1]
    assert all(mark in t for t in later), [t for t in later if mark not in t][:1]
    return len(later)


async def _match(w: World, command: str) -> None:
    for p in (ANA, BEA):
        await w.say(p, "/start")
    await w.start_in_group(ANA, command, [BEA])
    await play_out(w, [ANA, BEA], random.Random(5), over=lambda: "/replay" in " ".join(_texts(w, GROUP_ID)))
    await w.quiet()


async def test_a_535_round_over_line_stays_on_the_group_table_and_on_the_hands(fake_redis):
    async with World(fake_redis) as w:
        # F-3: three cards score at most 15 points: a match to 20 has at least two rounds.
        await _match(w, "/new 535 hand_size=3 target=20")
        group = [t for t in _texts(w, GROUP_ID) if "/replay" not in t]
        assert _kept_until_the_end(group, "🔔 Fin de la ronda") >= 1
        told = [int(m.group(1)) for t in group if (m := re.match(r"🔔 Fin de la ronda (\d+)", t))]
        # Round 1's line first, each next round's line replacing the one before.
        assert told[0] == 1 and told == sorted(told) and set(told) == set(range(1, told[-1] + 1))
        # In the group's language there; in each reader's own in private.
        line = next(t for t in group if "🔔" in t).splitlines()[0]
        assert "se quedó sin cartas" in line and "+" in line
        bea = _texts(w, BEA.id)
        assert _kept_until_the_end([t for t in bea if t], "🔔 Round") >= 1
        assert any("went out" in t for t in bea)


async def test_a_cinquillo_round_over_line_in_a_match_of_several_rounds(fake_redis):
    async with World(fake_redis) as w:
        # The first to win 2 rounds wins the match.
        await _match(w, "/new cinquillo rounds_to_win=2")
        group = [t for t in _texts(w, GROUP_ID) if "/replay" not in t]
        assert _kept_until_the_end(group, "🔔 Fin de la ronda") >= 1
        assert any("Cartas que quedaban" in t and "🏆" in t for t in group)
