"""A forced pass is the service's (issue 35, 5): when passing is a person's only move, the table's own
deadline passes for them after ``auto_pass_s``, whichever platform they play on (it was the Telegram
adapter's alone, so webhook, web and Matrix players never got it).  Their hand says so; a press
first makes it do nothing; it neither counts as a timeout nor is it theirs."""

from __future__ import annotations

import pytest

import engine
from service.domain.tables.decide import only_pass
from service.store.repository import history, load
from service.write.timers import fire_due
from tests.service.support import ANA, BEA, CAL, Harness, private

WEB = CAL  # a person of the "web" platform: the forced pass is not Telegram's any more


async def _to_a_forced_pass(h: Harness) -> tuple[str, object]:
    """A three-person Cinquillo table played (by pressing the first move) until the person to move
    can only pass; returns the table and that person."""
    await h.send(ANA, "/new cinquillo")
    for p in (BEA, WEB):
        await h.send(p, "/join")
    await h.send(ANA, "/start")
    table = await h.table_of()
    for _ in range(200):
        t = await load(h.worker.store, table)
        assert t.status == "running", "no forced pass in this deal"
        if engine.legal_moves(t.engine) == ["pass"]:
            return table, t.seats[t.to_move()].player
        hand = h.last_hand()
        who = next(p for p in (ANA, BEA, WEB) if p.same(hand.to.player))
        await h.send(who, token=hand.actions[0].token, room=private(who))
    raise AssertionError("no forced pass in 200 moves")


async def test_the_service_passes_for_a_person_whose_only_move_is_to_pass(any_redis):
    h = Harness(any_redis, auto_pass_s=1.5)
    table, person = await _to_a_forced_pass(h)
    t = await load(h.worker.store, table)
    seat = t.to_move()
    hand = h.last_hand()
    assert [a.move for a in hand.actions] == ["pass"]
    assert "passing for you in a moment" in hand.text or "paso por ti" in hand.text  # the hand says so
    assert await fire_due(any_redis, h.keys, h.clock.now * 1000) == 0  # not yet: a moment to see it
    h.clock.now += 1.6
    assert await fire_due(any_redis, h.keys, h.clock.now * 1000) == 1
    await h.settle()
    stored = await history(h.worker.store, table)
    last = [s.event for s in stored if type(s.event).__name__ == "MovePlayed"][-1]
    assert (last.seat, last.move, last.cause) == (seat, "pass", "auto")
    after = await load(h.worker.store, table)
    assert after.seats[seat].timeouts == t.seats[seat].timeouts  # not a timeout of theirs
    assert person is not None


async def test_a_press_first_makes_the_forced_pass_do_nothing(any_redis):
    h = Harness(any_redis, auto_pass_s=1.5)
    table, person = await _to_a_forced_pass(h)
    t = await load(h.worker.store, table)
    hand = h.last_hand()
    await h.send(person, token=hand.actions[0].token, room=private(person))  # pressed in time
    h.clock.now += 1.6
    await fire_due(any_redis, h.keys, h.clock.now * 1000)
    await h.settle()
    stored = await history(h.worker.store, table)
    pressed = stored[t.version].event  # the event right after the forced-pass turn began
    assert (pressed.seat, pressed.move, pressed.cause) == (t.to_move(), "pass", "player")
    assert [s.event.seat for s in stored[t.version:] if getattr(s.event, "cause", "") == "auto"].count(
        t.to_move()) == 0  # the deadline of that turn, fired late, passed nobody again


async def test_off_the_person_passes_themselves(any_redis):
    h = Harness(any_redis, auto_pass_s=0)
    table, _ = await _to_a_forced_pass(h)
    t = await load(h.worker.store, table)
    assert not only_pass(t, 0) and only_pass(t, 1.5)
    assert "passing for you" not in h.last_hand().text
    h.clock.now += 3600
    assert await fire_due(any_redis, h.keys, h.clock.now * 1000) == 0  # no deadline at all
    assert (await load(h.worker.store, table)).version == t.version


@pytest.mark.parametrize("turn", [0, 30])
async def test_the_forced_pass_comes_before_a_turn_timer(any_redis, turn):
    h = Harness(any_redis, auto_pass_s=2, turn_seconds=turn)
    table, _ = await _to_a_forced_pass(h)
    t = await load(h.worker.store, table)
    assert h.worker.planner.deadline(t) == (t.turn_since + 2) * 1000
