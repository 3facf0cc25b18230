"""A press the service refuses is answered with the refusal as its alert (``Message.code``), not posted;
without a verdict in time it is answered as sent and the refusal is posted, so nothing is lost.  The
settings keyboard's edits go through the chat's queue: merged, and never to identical content."""

from __future__ import annotations

from service.domain.events import MovePlayed
from service.domain.identities import Room
from service.protocol.i18n import translate
from service.store.repository import history
from tests.adapters.telegram.support import FAST, GROUP_ID, World, person

ANA = person(71, "Ana", "en")
BEA = person(72, "Bea", "en")
DAN = person(73, "Dan", "en")  # a group admin
ALERT = (True, "true")


async def _bea_to_move_then_kicked(w: World) -> tuple[str, object, str]:
    """A two-player match in the group; when it is Bea's turn, the admin gives her seat to an AI.
    Returns the table, and Bea's message with a move button of the turn she lost."""
    w.fake.admins.add((GROUP_ID, DAN.id))
    for p in (ANA, BEA):
        await w.say(p, "/start")
    # target=200: no round can end the match (a hand of 4 is worth 20 points at most, F-3), so the
    # press meets "not seated", not "already over" (with target=6 the AI that took her seat could
    # go out and end the match before the press: CI saw that)
    await w.start_in_group(ANA, "/new 535 players=2 hand_size=4 target=200", [BEA])
    for _ in range(10):
        ana, bea = w.move_buttons(ANA.id), w.move_buttons(BEA.id)
        if bea is not None and (ana is None or bea[0].seq > ana[0].seq):
            break
        assert ana is not None
        await w.press(ANA, ana[0], ana[1][0]["callback_data"])
        await w.quiet()
    shown, moves = w.move_buttons(BEA.id)
    await w.say(DAN, "/kick 2", chat=GROUP_ID)
    await w.quiet()
    table = await w.tg.gateway.table_of(Room(platform="telegram", chat=str(GROUP_ID), kind="group"))
    # Her message lost its buttons when her seat went (issue 20); a press on the old buttons that the
    # adapter cannot judge itself (its record of her message has expired, or another process holds
    # it) goes to the service, which decides.
    await w.redis.delete(w.tg.state.keys.pf_message("telegram", str(BEA.id), table, "main"))
    return table, shown, moves[0]["callback_data"]


async def test_a_press_the_service_refuses_is_answered_with_the_refusal_as_an_alert(fake_redis):
    async with World(fake_redis) as w:
        table, shown, data = await _bea_to_move_then_kicked(w)
        before = [s for s in await history(w.workers[0].store, table) if isinstance(s.event, MovePlayed)]
        private = len(w.fake.calls_to(BEA.id))
        # Her old button looks current to the adapter (no record of her message): the service decides.
        answer = await w.press(BEA, shown, data)
        await w.quiet()
        assert answer["show_alert"] in ALERT and answer["text"] == translate("en", "refusal.not_seated")
        assert len(w.fake.calls_to(BEA.id)) == private  # not posted in her chat as well
        after = [s for s in await history(w.workers[0].store, table) if isinstance(s.event, MovePlayed)]
        assert [s.event for s in after if s.event.cause == "player"] == \
            [s.event for s in before if s.event.cause == "player"]


async def test_without_a_verdict_in_time_the_press_is_answered_as_sent_and_the_refusal_posted(fake_redis):
    async with World(fake_redis, press_wait_s=0.0) as w:
        _, shown, data = await _bea_to_move_then_kicked(w)
        answer = await w.press(BEA, shown, data)
        await w.quiet()
        assert answer["text"].startswith("✓") and answer.get("show_alert") not in ALERT
        assert w.fake.chat_messages(BEA.id)[-1].text == translate("en", "refusal.not_seated")


async def test_a_lobby_press_refused_by_the_service_is_an_alert_too(fake_redis):
    async with World(fake_redis) as w:
        await w.say(ANA, "/new cinquillo", chat=GROUP_ID)
        await w.quiet()
        lobby, join = w.button(GROUP_ID, "lb:join")
        calls = len(w.fake.calls_to(GROUP_ID))
        answer = await w.press(ANA, lobby, join)  # she created it: already seated
        await w.quiet()
        assert answer["show_alert"] in ALERT and answer["text"].startswith(
            translate("en", "refusal.already_seated", table="X").split("X")[0][:12])
        assert len(w.fake.calls_to(GROUP_ID)) == calls


async def test_the_settings_keyboard_edits_go_through_the_queue_merged_and_never_identical(fake_redis):
    slow = FAST.__class__(**{**FAST.__dict__, "coalesce_s": 0.4})
    async with World(fake_redis, limits=slow) as w:
        await w.say(BEA, "/play")
        await w.quiet()
        [menu] = w.fake.chat_messages(BEA.id)
        show = next(b["callback_data"] for b in menu.buttons() if b["text"] == "Cinquillo")
        await w.press(BEA, menu, show)
        await w.quiet()
        [menu] = w.fake.chat_messages(BEA.id)
        edits = len(w.fake.calls_to(BEA.id, ("editMessageText",)))
        # Pressing what the keyboard already shows edits nothing.
        again = next(b["callback_data"] for b in menu.buttons() if b["callback_data"].endswith(":n"))
        await w.press(BEA, menu, menu.buttons()[0]["callback_data"].replace(":n", ":show"))
        await w.quiet()
        assert len(w.fake.calls_to(BEA.id, ("editMessageText",))) == edits
        # Three quick presses on the same keyboard: every one answered, one edit (the last) goes out.
        toggles = [b["callback_data"] for b in menu.buttons() if ":t" in b["callback_data"]][:2]
        answers = [await w.press(BEA, menu, d) for d in (again, *toggles)]
        await w.quiet()
        assert len(answers) == 3 and all("show_alert" not in a or a["show_alert"] in (False, "false")
                                         for a in answers)
        sent = w.fake.calls_to(BEA.id, ("editMessageText",))[edits:]
        assert len(sent) == 1
        [menu] = w.fake.chat_messages(BEA.id)
        assert menu.buttons()[2]["text"].startswith("✅")  # the last press: the second option is on
