"""``/hand`` (``/mano``) brings the player's hand to the bottom of their private chat (issue 20, bug
2), in a private match and from a group; the old copy goes, so one message shows the hand."""

from __future__ import annotations

from adapters.telegram.callbacks import TOKEN_RE
from adapters.telegram.keyboards import PAGE_PREFIX
from service.domain.events import TableCancelled
from service.domain.identities import Room
from service.protocol.i18n import translate
from service.store.repository import history
from tests.adapters.telegram.support import GROUP_ID, World, person

ANA = person(41, "Ana", "es")
BEA = person(42, "Bea", "en")
HAND = {loc: translate(loc, "view.hand", cards="").strip() for loc in ("es", "en")}


async def test_mano_in_a_private_match_sends_the_hand_again_at_the_bottom(fake_redis):
    async with World(fake_redis) as w:
        await w.say(ANA, "/play cinquillo")
        await w.quiet()
        [before] = w.fake.chat_messages(ANA.id)
        await w.say(ANA, "/mano")
        await w.quiet()
        [after] = w.fake.chat_messages(ANA.id)  # one message: the old one was deleted
        assert after.id > before.id
        assert HAND["es"] in after.text and w.move_buttons(ANA.id)[0].id == after.id
        deleted = [int(c.params["message_id"]) for c in w.fake.calls if c.method == "deleteMessage"]
        assert before.id in deleted


async def test_hand_in_a_group_sends_it_in_private_and_nothing_to_the_group(fake_redis):
    async with World(fake_redis) as w:
        for p in (ANA, BEA):
            await w.say(p, "/start")
        await w.start_in_group(ANA, "/new cinquillo players=2", [BEA])
        mine = max(w.fake.chat_messages(BEA.id), key=lambda m: m.id)
        group_calls = len(w.fake.calls_to(GROUP_ID))
        await w.say(BEA, "/hand", chat=GROUP_ID)
        await w.quiet()
        latest = max(w.fake.chat_messages(BEA.id), key=lambda m: m.id)
        assert latest.id > mine.id and HAND["en"] in latest.text
        assert len(w.fake.calls_to(GROUP_ID)) == group_calls


async def test_a_second_play_in_private_ends_the_first_match_so_one_is_playable(fake_redis):
    async with World(fake_redis) as w:
        await w.say(BEA, "/play cinquillo")
        await w.quiet()
        room = Room(platform="telegram", chat=str(BEA.id), kind="private")
        first = await w.tg.gateway.table_of(room)
        await w.say(BEA, "/play 535")
        await w.quiet()
        second = await w.tg.gateway.table_of(room)
        assert second != first
        assert any(isinstance(s.event, TableCancelled) for s in await history(w.workers[0].store, first))
        with_buttons = [m for m in w.fake.chat_messages(BEA.id) if any(
            TOKEN_RE.match(d) or d.startswith(PAGE_PREFIX) for d in (b.get("callback_data") or ""
                                                                      for b in m.buttons()))]
        assert len(with_buttons) == 1  # only the new match's message can be played
