"""The deal of the day on Telegram through the fake Bot API (issue 37): the greeting's "Daily
Cinquillo" button in the private chat,
the attempt played with its buttons, the standing once played, and its share button posting the
spoiler-free text in a group the person uses the bot in; nothing of the deal in any call (G-1, D-5).

With ``CINQ_TRANSCRIPTS=<dir>`` the test writes what each chat showed (``telegram-daily.txt``)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import engine
from service.domain import daily
from service.domain.identities import Player
from service.store.repository import load
from service.write import bots
from tests.adapters.telegram.support import GROUP_ID, World, person, play_out
from tests.service.support import card_tokens

ANA = person(31, "Ana", "en")


def transcript(w: World, chats: dict[int, str]) -> str:
    """Every message each chat shows now, with its buttons, oldest first."""
    out = []
    for chat, name in chats.items():
        out.append(f"=== {name} ({chat})")
        for m in w.fake.chat_messages(chat):
            labels = " ".join(f"[{b['text']}]" for b in m.buttons())
            edits = f" (edited {m.edits}x)" if m.edits else ""
            out.append(f"--- message {m.id}{edits}\n{m.text}" + (f"\n{labels}" if labels else ""))
    return "\n".join(out) + "\n"


async def test_d5_a_daily_deal_played_on_telegram_and_shared_in_a_group(fake_redis):
    # the AI players think in the worker: quiet() then sees their moves as they come
    async with World(fake_redis, choose_move=bots.choose_move) as w:
        await w.say(ANA, "/daily", chat=GROUP_ID, title="Los del mus")  # its board; Ana is known there
        await w.quiet()
        await w.say(ANA, "/start")  # the greeting's "Daily Cinquillo" starts the attempt
        await w.quiet()
        greeting = w.fake.chat_messages(ANA.id)[-1]
        daily_button = next(b for b in greeting.buttons() if b["text"] == "📅 Daily Cinquillo")
        await w.press(ANA, greeting, daily_button["callback_data"])
        await w.quiet()
        started = [m for m in w.fake.chat_messages(ANA.id) if "deal of the day" in m.text]
        assert started and "commitment" in started[0].text

        def over() -> bool:
            return any("daily deal is done" in m.text for m in w.fake.chat_messages(ANA.id))

        assert await play_out(w, [ANA], random.Random(5), over=over) > 0
        await w.say(ANA, "/daily")
        await w.quiet()
        standing = w.fake.chat_messages(ANA.id)[-1]
        assert "one attempt a day" in standing.text and "rank 1 of 1" in standing.text
        share = next(b for b in standing.buttons() if b["text"] == "📣 Post in Los del mus")
        await w.press(ANA, standing, share["callback_data"])
        await w.quiet()
        posted = w.fake.chat_messages(GROUP_ID)[-1]
        assert posted.text.startswith("cinq · daily Cinquillo") and card_tokens(posted.text) == set()
        # a second press posts nothing more in the group
        await w.press(ANA, standing, share["callback_data"])
        await w.quiet()
        assert w.fake.chat_messages(GROUP_ID)[-1].id == posted.id
        # G-1: the seed and the AI players' unplayed cards are in no call the bot made
        me = Player(platform="telegram", user=str(ANA.id))
        table = daily.table_id(w.tg.gateway.secrets[0], me, "cinquillo", daily.day_of(w.tg.gateway.clock()))
        t = await load(w.workers[0].store, table)
        assert t.status == "finished"
        unplayed = {str(c) for seat in (1, 2, 3) for c in engine.view(t.engine, seat)["hand"]}
        sent = "\n".join(str(c.params) for c in w.fake.calls)
        assert t.seed not in sent and not card_tokens(sent) & unplayed
        if os.environ.get("CINQ_TRANSCRIPTS"):
            path = Path(os.environ["CINQ_TRANSCRIPTS"]) / "telegram-daily.txt"
            path.write_text(transcript(w, {ANA.id: "Ana's private chat", GROUP_ID: "the group Los del mus"}))
