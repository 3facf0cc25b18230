"""A group: a lobby with buttons, a match of three people and an AI player to the end, hands only in
private chats, a player who never started the bot told once, the summary, /lang and /stats."""

from __future__ import annotations

import random
import re

import pytest

from adapters.telegram.callbacks import TOKEN_RE
from service.domain.identities import Room
from service.protocol.i18n import translate
from service.protocol.i18n.render import card_name
from service.store.repository import history
from tests.adapters.telegram.fake_api import Call
from tests.adapters.telegram.support import GROUP_ID, World, final_hands, person, play_out

ANA = person(21, "Ana", "es")
BEA = person(22, "Bea", "en")
CAL = person(23, "Cal", "en")  # never starts the bot until told to
GROUP_ROOM = Room(platform="telegram", chat=str(GROUP_ID), kind="group")


def _group_texts(world: World) -> list[tuple[Call, str]]:
    """Everything the bot showed in the group: each call's text and its keyboard, as one string."""
    out = []
    for c in world.fake.calls_to(GROUP_ID):
        out.append((c, f"{c.params.get('text', '')}\n{c.params.get('reply_markup', '')}"))
    return out


def _mentions(text: str, cards: set[str]) -> set[str]:
    """The cards of ``cards`` a text names, by code (as a whole word) or by name in either language."""
    found = {c for c in cards if re.search(rf"(?<![0-9A-Za-z_-]){c}(?![0-9A-Za-z_-])", text)}
    return found | {c for c in cards for loc in ("es", "en") if card_name(c, loc) in text}


async def _open_lobby(w: World, command: str) -> str:
    for p in (ANA, BEA):
        await w.say(p, "/start")  # they have a private chat with the bot
    await w.say(ANA, command, chat=GROUP_ID)
    await w.quiet()
    lobby, join = w.button(GROUP_ID, "lb:join")
    for p in (BEA, CAL):
        answer = await w.press(p, lobby, join)
        assert answer["text"] == "✓"
        await w.quiet()
    lobby, bots = w.button(GROUP_ID, "lb:bots")
    await w.press(ANA, lobby, bots)
    await w.quiet()
    lobby, start = w.button(GROUP_ID, "lb:start")
    await w.press(ANA, lobby, start)
    await w.quiet()
    table = await w.tg.gateway.table_of(GROUP_ROOM)
    assert table is not None
    return table


def _notices(w: World, name: str, locale: str = "es") -> list[Call]:
    # In the group's language: the table's (Ana opened it, in Spanish), not the addressee's.
    needle = translate(locale, "tg.start_me", name=name)[:30]
    return [c for c in w.fake.calls_to(GROUP_ID) if needle in c.params.get("text", "")]


@pytest.mark.parametrize("command", ["/new cinquillo", "/new 535 hand_size=4 target=6"])
async def test_a_group_match_of_three_people_and_an_ai_player_plays_to_the_end(fake_redis, command):
    async with World(fake_redis) as w:
        table = await _open_lobby(w, command)
        # The group shows one table message, with a "My hand" deep link and no move button.
        board = w.fake.chat_messages(GROUP_ID)[0]
        assert board.edits >= 3 and [b.get("url") for b in board.buttons()] == [
            f"https://t.me/cinq_test_bot?start={table}"]
        # Cal never started the bot: his hand could not be sent; the group was told how, once.
        assert len(_notices(w, "Cal")) == 1
        assert w.move_buttons(CAL.id) is None
        # The deep link opens the private chat: the hand is there.
        await w.say(CAL, f"/start {table}")
        await w.quiet()
        assert w.fake.chat_messages(CAL.id), "the hand was not sent after the deep link"
        over = lambda: any(m.text.startswith("🏁") for m in w.fake.chat_messages(GROUP_ID))  # noqa: E731
        await play_out(w, [ANA, BEA, CAL], random.Random(5), over=over)
        assert len(_notices(w, "Cal")) == 1
        # The group's table message was edited in place; the summary names the seed and /replay.
        summary = w.fake.chat_messages(GROUP_ID)[-1]
        stored = await history(w.workers[0].store, table)
        seed = next(s.event.seed for s in stored if type(s.event).__name__ == "MatchStarted")
        assert seed in summary.text and f"/replay {table}" in summary.text
        texts = _group_texts(w)
        end = next(i for i, (c, _) in enumerate(texts) if c.params.get("text", "").startswith("🏁"))
        # Before the end (the final table edit, then the summary) the seed never showed.
        assert seed not in "".join(t for _, t in texts[:end - 1])
        # No hand ever appeared in the group: no move button, no "your hand", no card left in a hand.
        hand_word = [translate(loc, "view.hand", cards="").strip() for loc in ("en", "es")]
        for _, text in texts:
            assert not TOKEN_RE.search(text.replace('"callback_data": "', "\n").replace("'", "")), text
            assert not any(h in text for h in hand_word)
        if "cinquillo" in command:
            left = {c for hand in final_hands(stored) for c in hand}
            assert left, "someone still holds cards at the end of a one-round match"
            for _, text in texts:
                assert not _mentions(text, left), text
        # The checks can see a hand: every private chat showed one.
        for p in (ANA, BEA, CAL):
            private = "".join(c.params.get("text", "") for c in w.fake.calls_to(p.id))
            assert any(h in private for h in hand_word)
        # Group stats count the match.
        await w.say(BEA, "/stats", chat=GROUP_ID)
        await w.quiet()
        stats = [c.params["text"] for c in w.fake.calls_to(GROUP_ID)]
        assert any(translate("en", "tg.group_stats", matches=1) in t for t in stats)


async def test_lang_sets_the_group_language_and_the_table_follows_it(fake_redis):
    async with World(fake_redis) as w:
        await w.say(BEA, "/lang es", chat=GROUP_ID)
        await w.say(BEA, "/new cinquillo", chat=GROUP_ID)
        await w.quiet()
        texts = [m.text for m in w.fake.chat_messages(GROUP_ID)]
        assert texts[0] == translate("es", "tg.lang")
        lobby = w.fake.chat_messages(GROUP_ID)[-1]
        assert [b["text"] for b in lobby.buttons()][:2] == [translate("es", "tg.btn.join"),
                                                           translate("es", "tg.btn.leave")]


async def test_a_lobby_button_of_a_closed_lobby_is_answered_and_does_nothing(fake_redis):
    async with World(fake_redis) as w:
        await w.say(ANA, "/new cinquillo", chat=GROUP_ID)
        await w.quiet()
        old, join = w.button(GROUP_ID, "lb:join")
        await w.say(ANA, "/cancel", chat=GROUP_ID)
        await w.say(ANA, "/new 535", chat=GROUP_ID)
        await w.quiet()
        answer = await w.press(BEA, old, join)
        assert answer["show_alert"] in (True, "true", "True")
        assert answer["text"] == translate("en", "tg.alert.closed")


async def test_a_player_the_bot_cannot_write_to_is_told_once_however_many_hands_fail(fake_redis):
    async with World(fake_redis) as w:
        await w.say(ANA, "/start")
        await w.start_in_group(ANA, "/new cinquillo players=2", [CAL])
        # Cal's hand at the start failed; the ones he asks for with /hand in the group are not even
        # tried (the bot cannot write to him until he writes to it).
        for _ in range(2):
            await w.say(CAL, "/hand", chat=GROUP_ID)
            await w.quiet()
        assert len([c for c in w.fake.calls if c.chat == CAL.id and not c.ok]) == 1
        assert len(_notices(w, "Cal")) == 1
        # The notice's button is the deep link; following it shows Cal his hand.
        notice = next(m for m in w.fake.chat_messages(GROUP_ID) if m.text.startswith("Cal"))
        url = notice.buttons()[0]["url"]
        await w.say(CAL, "/start " + url.rsplit("=", 1)[1])
        await w.quiet()
        [hand] = w.fake.chat_messages(CAL.id)
        assert translate("en", "view.hand", cards="").strip() in hand.text
