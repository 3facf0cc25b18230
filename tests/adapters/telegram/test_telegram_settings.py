"""The settings keyboard (issue 20, bug 1): it only offers what the engine accepts, quick taps each
count once, and a refusal of typed options is wholly in the player's language."""

from __future__ import annotations

import asyncio

import engine
from adapters.telegram.callbacks import Cfg
from adapters.telegram.menu import apply, counts, first, settings_content, valid
from adapters.telegram.menu import request as menu_request
from service.domain.identities import Room
from service.protocol.i18n import translate
from service.protocol.text import render
from service.store.repository import history
from tests.adapters.telegram.support import World, person

ANA = person(31, "Ana", "es")


def _op(menu, op: str) -> str:
    return next(b["callback_data"] for b in menu.buttons() if Cfg.unpack(b["callback_data"]).op == op)


def _state(menu) -> Cfg:
    return Cfg.unpack(menu.buttons()[0]["callback_data"])


async def _open(w: World, game: str):
    await w.say(ANA, "/play")
    await w.quiet()
    [menu] = w.fake.chat_messages(ANA.id)
    pick = next(b["callback_data"] for b in menu.buttons() if b["text"] == game)
    await w.press(ANA, menu, pick)
    await w.quiet()
    [menu] = w.fake.chat_messages(ANA.id)
    return menu


async def test_the_player_count_cycles_only_through_counts_the_preset_allows(fake_redis):
    # G-3 / C-2: the clasico preset is for 2 to 4 players; the keyboard never offers 5.
    async with World(fake_redis) as w:
        menu = await _open(w, "Cinquillo")
        seen = [_state(menu).players]
        for _ in range(4):
            await w.press(ANA, menu, _op(menu, "n"))
            await w.quiet()
            [menu] = w.fake.chat_messages(ANA.id)
            seen.append(_state(menu).players)
        assert set(seen) == {2, 3, 4} and seen[0] == 4
        # Every button ever shown leads to a state the engine accepts.
        for b in menu.buttons():
            cfg = Cfg.unpack(b["callback_data"])
            assert cfg.players in counts(cfg.game, cfg.flags)
        # Pressing Play is never refused: no alert, and the match starts.
        answer = await w.press(ANA, menu, _op(menu, "go"))
        await w.quiet()
        assert not answer.get("show_alert")
        table = await w.tg.gateway.table_of(Room(platform="telegram", chat=str(ANA.id), kind="private"))
        started = [s.event for s in await history(w.workers[0].store, table)
                   if type(s.event).__name__ == "MatchStarted"]
        assert started and started[0].players == seen[-1]


async def test_three_quick_taps_on_an_old_keyboard_count_three_times(fake_redis):
    async with World(fake_redis) as w:
        menu = await _open(w, "Cinquillo")
        # tradicional (2-6 players) first, so that three steps do not wrap around
        await w.press(ANA, menu, _op(menu, "t0"))
        await w.quiet()
        [menu] = w.fake.chat_messages(ANA.id)
        before = _state(menu).players
        data = _op(menu, "n")
        await asyncio.gather(*(w.press(ANA, menu, data) for _ in range(3)))
        await w.quiet()
        [menu] = w.fake.chat_messages(ANA.id)
        allowed = counts("c", _state(menu).flags)
        expected = allowed[(allowed.index(before) + 3) % len(allowed)]
        assert _state(menu).players == expected
        assert translate("es", "tg.btn.players", n=expected) in [b["text"] for b in menu.buttons()]


def test_an_option_no_player_count_allows_is_not_offered_and_toggling_moves_the_count():
    # C-12: teams need 4 or 6 seats; with 3 players, turning teams on moves the count to 4.
    three = first("p", "c").model_copy(update={"players": 3})
    teams = 1 << 4
    content = settings_content("es", three)
    toggle = next(b for row in content.rows for b in row if Cfg.unpack(b[2]).op == "t4")
    from adapters.telegram.menu import apply
    after = apply(three, "t4")
    assert after.flags == teams and after.players == 4
    assert toggle  # offered: some count allows it
    # Every state a keyboard offers is one the engine starts.
    for flags in range(32):
        for n in counts("c", flags):
            cfg = three.model_copy(update={"players": n, "flags": flags})
            for row in settings_content("en", cfg).rows:
                for _, _, data in row:
                    nxt = apply(cfg, Cfg.unpack(data).op)
                    assert nxt.players in counts("c", nxt.flags)
    # The text says what each offered option means, in the reader's language.
    assert translate("es", "tg.optdesc.teams") in content.text


async def test_typed_options_the_engine_refuses_are_explained_wholly_in_spanish(fake_redis):
    async with World(fake_redis) as w:
        await w.say(ANA, "/jugar cinquillo jugadores=5")
        await w.quiet()
        [reply] = w.fake.chat_messages(ANA.id)
        try:
            engine.new_game("cinquillo", players=5, seed=0)
        except ValueError as e:
            english = str(e)
        reason = render({"t": "options.preset_players",
                         "p": {"preset": {"t": "options.preset.clasico"}, "low": "2", "high": "4", "n": "5"}},
                        "es")
        assert reply.text == translate("es", "refusal.bad_options", reason=reason)
        assert english not in reply.text and "players" not in reply.text and "preset" not in reply.text


async def test_cabron_target_direction_and_turn_timer_are_offered_explained_and_played(fake_redis):
    # C-13 (cabrón), C-10 (target), C-4 (direction) and the turn timer from the keyboard.
    async with World(fake_redis) as w:
        menu = await _open(w, "Cinquillo")
        ops = {Cfg.unpack(b["callback_data"]).op for b in menu.buttons()}
        # Without points or cabrón the engine refuses a target: none is offered.
        assert {"t5", "d", "s"} <= ops and "g" not in ops
        for op in ("t5", "g", "d", "s"):
            await w.press(ANA, menu, _op(menu, op))
            await w.quiet()
            [menu] = w.fake.chat_messages(ANA.id)
        texts = [b["text"] for b in menu.buttons()]
        assert translate("es", "tg.btn.target", value="10") in texts
        reverse = translate("es", "tg.direction.counterclockwise")
        assert translate("es", "tg.btn.direction", value=reverse) in texts
        assert translate("es", "tg.btn.turn", value=translate("es", "tg.turn.seconds", seconds=30)) in texts
        for key in ("tg.optdesc.cabron", "tg.optdesc.target", "tg.optdesc.direction", "tg.optdesc.turn"):
            assert translate("es", key) in menu.text
        answer = await w.press(ANA, menu, _op(menu, "go"))
        await w.quiet()
        assert not answer.get("show_alert")
        table = await w.tg.gateway.table_of(Room(platform="telegram", chat=str(ANA.id), kind="private"))
        [created] = [s.event for s in await history(w.workers[0].store, table)
                     if type(s.event).__name__ == "TableCreated"]
        assert created.options == {"cabron": True, "target": 10, "direction": "counterclockwise"}
        assert created.turn_seconds == 30.0


def test_every_button_of_every_reachable_keyboard_leads_to_a_match_the_engine_starts():
    for game in ("c", "5"):
        seen: set[str] = set()
        todo = [first("p", game)]
        while todo:
            cfg = todo.pop()
            if cfg.pack() in seen:
                continue
            seen.add(cfg.pack())
            assert valid(cfg), cfg
            ops = []
            for row in settings_content("en", cfg, 60).rows:
                for _, _, data in row:
                    ops.append(Cfg.unpack(data).op)
            if game == "5":
                assert "d" not in ops and "t5" not in ops  # 535 has no direction of play, no cabrón
            engine.new_game(menu_request(cfg).game, players=cfg.players, seed=0,
                            **{k: v for k, v in menu_request(cfg).options.items() if k != "turn"})
            # (The turn timer, "s", is the service's: the engine never refuses it.)
            todo += [apply(cfg, op, 60).model_copy(update={"op": "show"})
                     for op in ops if op not in ("go", "s")]
        assert len(seen) > (100 if game == "c" else 10)


async def test_a_late_tap_on_a_used_keyboard_is_answered_closed_and_edits_nothing(fake_redis):
    # Issue 34 (bug 5): a second Play (a double tap, a stale copy of the keyboard) ended the match
    # just created, opened another and re-sent the identical edit: Bot API 400 "message is not modified".
    async with World(fake_redis) as w:
        menu = await _open(w, "Cinquillo")
        pick = next(b["callback_data"] for b in menu.buttons() if Cfg.unpack(b["callback_data"]).op == "n")
        go = _op(menu, "go")
        assert not (await w.press(ANA, menu, go)).get("show_alert")
        await w.quiet()
        room = Room(platform="telegram", chat=str(ANA.id), kind="private")
        table = await w.tg.gateway.table_of(room)
        calls = len(w.fake.calls)
        for data in (go, pick):
            answer = await w.press(ANA, menu, data)  # the keyboard as it was before Play
            await w.quiet()
            assert answer.get("show_alert") and answer["text"] == translate("es", "tg.alert.closed")
        assert await w.tg.gateway.table_of(room) == table  # the same match goes on
        assert all(c.ok for c in w.fake.calls), [(c.method, c.params) for c in w.fake.calls if not c.ok]
        assert not [c for c in w.fake.calls[calls:] if c.method == "editMessageText"]
