"""Refusals in a Telegram group (G-1): a typed move the rules refuse is explained to its sender in
their private chat, and the group sees a neutral line and no card of any hand; ``/play`` in a group
is refused with a pointer to ``/new`` and leaves the group's match where it was."""

from __future__ import annotations

import re

import pytest

import engine
from service.domain.identities import Room
from service.domain.tables.state import Table, evolve
from service.protocol.i18n import translate
from service.protocol.i18n.render import card_name
from service.store.repository import history
from tests.adapters.telegram.support import GROUP_ID, World, person

ANA = person(31, "Ana", "es")
BEA = person(32, "Bea", "en")
GROUP_ROOM = Room(platform="telegram", chat=str(GROUP_ID), kind="group")
CARDS = [f"{r}{s}" for s in "oceb" for r in (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)]


def _group_text(w: World) -> str:
    return "\n".join(f"{c.params.get('text', '')}\n{c.params.get('reply_markup', '')}"
                     for c in w.fake.calls_to(GROUP_ID))


def _private_text(w: World, user_id: int) -> str:
    return "\n".join(c.params.get("text", "") for c in w.fake.calls_to(user_id))


async def _table(w: World, table: str) -> Table:
    t = None
    for s in await history(w.workers[0].store, table):
        t = evolve(t, s.event, table_id=table, at=s.at)
    assert t is not None
    return t


def _names(code: str) -> list[str]:
    return [card_name(code, loc) for loc in ("es", "en")]


@pytest.mark.parametrize("command", ["/new cinquillo players=2", "/new 535 players=2 hand_size=4 target=6"])
async def test_a_refused_typed_move_in_a_group_shows_the_group_no_card(fake_redis, command):
    async with World(fake_redis) as w:
        for p in (ANA, BEA):
            await w.say(p, "/start")
        await w.start_in_group(ANA, command, [BEA])
        table = await w.tg.gateway.table_of(GROUP_ROOM)
        assert table is not None
        t = await _table(w, table)
        seat = t.to_move()
        mover = ANA if t.seats[seat].player.user == str(ANA.id) else BEA
        hand = list(engine.view(t.engine, seat)["hand"])
        legal = engine.legal_moves(t.engine)
        if t.game == "cinquillo":
            typed = ["pass"] if "pass" not in legal else []
            typed += [next(c for c in CARDS if c not in hand)]  # not held
            typed += [c for c in hand if c not in legal][:1]  # held, not playable now
        else:
            held = {r for r in hand}
            typed = [f"play {next(r for r in (1, 2, 3, 4, 5, 7, 8, 9, 11, 12, 13, 14, 15) if r not in held)}"]
        before_private = _private_text(w, mover.id)
        group_before = _group_text(w)
        for move in typed:
            await w.say(mover, f"/move {move}", chat=GROUP_ID)
            await w.quiet()
        assert (await _table(w, table)).version == t.version  # refused: nothing played
        new_group = _group_text(w)[len(group_before):]
        new_private = _private_text(w, mover.id)[len(before_private):]
        neutral = translate(mover.language_code, "refusal.move_refused_private", name=mover.first_name)
        assert new_group.count(neutral) == len(typed), new_group
        # The reasons went to the mover alone; none of their words reached the group.
        reasons = [line for line in new_private.splitlines() if line.strip()]
        assert len(reasons) >= len(typed)
        for line in reasons:
            assert line not in new_group
        # No card of any hand is named in the group (Cinquillo names cards; 535 shows ranks, and the
        # reasons that would tell them are checked above).
        if t.game == "cinquillo":
            every_hand = {c for s in range(len(t.seats)) for c in engine.view(t.engine, s)["hand"]}
            for code in every_hand:
                assert not any(n in new_group for n in _names(code)), code
                assert not re.search(rf"(?<![0-9A-Za-z_-]){code}(?![0-9A-Za-z_-])", new_group), code


async def test_play_in_a_group_is_refused_and_the_groups_match_goes_on(fake_redis):
    async with World(fake_redis) as w:
        for p in (ANA, BEA):
            await w.say(p, "/start")
        await w.start_in_group(ANA, "/new cinquillo players=2", [BEA])
        table = await w.tg.gateway.table_of(GROUP_ROOM)
        version = (await _table(w, table)).version
        before = _group_text(w)
        await w.say(BEA, "/play 535", chat=GROUP_ID)
        await w.quiet()
        assert translate("en", "wrong_chat.play") in _group_text(w)[len(before):]
        assert await w.tg.gateway.table_of(GROUP_ROOM) == table
        assert (await _table(w, table)).version == version
