"""The daily deal through the service (gateway, worker, outbox): the same deal for everyone on every
platform, AI players that answer the same choices alike, one attempt a day, and a person who starts
before midnight and finishes after (rules D-1 to D-5 of docs/rules.md)."""

from __future__ import annotations

import asyncio

import pytest

from service.daily import intake as daily_intake
from service.domain import daily
from service.domain.commands import TableCommand
from service.domain.events import MatchStarted, MovePlayed, TableCancelled, decode
from service.domain.identities import Player
from service.domain.inputs import Input
from service.protocol.i18n import translate
from service.store.repository import load
from tests.service.daily.support import DAY, NOON, dm, hands_of, harness, play
from tests.service.support import ANA, BEA, CAL, Clock

MATRIX_ANA = Player(platform="matrix", user="@ana:example.org", name="Ana")


async def _stored(h, table):
    return [decode(raw).event for raw in await h.events(table)]


async def _table_of(h, p: Player, game: str = "cinquillo", day: int = DAY) -> str:
    return daily.table_id(h.gateway.secrets[0], p, game, day)


@pytest.mark.parametrize("game", daily.GAMES)
async def test_d1_d2_the_same_deal_and_the_same_answers_for_two_people_on_two_platforms(any_redis, game):
    h = harness(any_redis)
    started = {}
    for p in (ANA, CAL):  # Telegram and the web
        msgs = await h.send(p, f"/daily {game}", room=dm(p))
        started[p.user] = [m for m in msgs if m.kind == "reply" and m.to.player and p.same(m.to.player)]
        assert hands_of(msgs, p), "the attempt starts at once: the hand comes"
    moves = {p.user: await play(h, p) for p in (ANA, CAL)}
    t_ana, t_cal = await _table_of(h, ANA, game), await _table_of(h, CAL, game)
    assert t_ana != t_cal
    ev_ana, ev_cal = await _stored(h, t_ana), await _stored(h, t_cal)
    seeds = {e.seed for e in ev_ana + ev_cal if isinstance(e, MatchStarted)}
    assert len(seeds) == 1  # one deal for both
    commitment = next(e.commitment for e in ev_ana if isinstance(e, MatchStarted))
    for msgs in started.values():  # the commitment is shown when the attempt starts
        assert commitment in msgs[0].text
    # The same choices met the same answers: every move of the match, the AI players' too.
    assert moves["1"] == moves["3"]
    assert [(e.seat, e.move, e.cause) for e in ev_ana if isinstance(e, MovePlayed)] == \
        [(e.seat, e.move, e.cause) for e in ev_cal if isinstance(e, MovePlayed)]
    store = h.gateway.daily.store
    ana, cal = await store.mine(ANA, game, DAY), await store.mine(CAL, game, DAY)
    assert ana is not None and cal is not None and ana.score == cal.score and ana.marks == cal.marks


async def test_d2_different_choices_meet_different_answers_and_the_board_ranks_them(fake_redis):
    h = harness(fake_redis)
    for p, pick in ((ANA, lambda a: a[0]), (BEA, lambda a: a[-1]), (CAL, lambda a: a[0])):
        await h.send(p, "/daily", room=dm(p))
        await play(h, p, pick)
    store = h.gateway.daily.store
    scores = {p.user: (await store.mine(p, "cinquillo", DAY)).score for p in (ANA, BEA, CAL)}
    assert scores["1"] == scores["3"]
    st = await store.standing("cinquillo", DAY, scores["1"])
    assert st.of == 3 and st.rank in (1, 2, 3)


@pytest.mark.parametrize("locale", ["es", "en"])
async def test_d3_a_second_attempt_is_refused_in_the_persons_language_and_changes_nothing(fake_redis, locale):
    h = harness(fake_redis)
    await h.send(ANA, f"/lang {locale}", room=dm(ANA))
    await h.send(ANA, "/daily", room=dm(ANA))
    await play(h, ANA)
    table = await _table_of(h, ANA)
    before = await h.events(table)
    msgs = await h.send(ANA, "/daily", room=dm(ANA), command_id="tg:m:1:99")
    refusal = [m for m in msgs if m.code == "daily_played"]
    assert len(refusal) == 1
    assert refusal[0].text.startswith(translate(locale, "refusal.daily_played", game="Cinquillo"))
    assert await h.events(table) == before
    assert await h.send(ANA, "/daily", room=dm(ANA), command_id="tg:m:1:99") == []  # a retry: nothing twice


async def test_d3_while_it_runs_daily_again_on_any_surface_gives_the_same_attempt(fake_redis):
    h = harness(fake_redis)
    await h.send(ANA, "/daily", room=dm(ANA))
    table = await _table_of(h, ANA)
    before = await h.events(table)
    assert await h.send(ANA, "/daily", room=dm(ANA)) == []  # at once: the first one's answer came
    await asyncio.sleep(daily_intake.BUSY_MS / 1000 + 0.1)
    msgs = await h.send(ANA, "/daily", room=dm(ANA))
    assert [m.code for m in msgs if m.kind == "reply"] == [None]
    assert any("already playing" in m.text for m in msgs) and hands_of(msgs, ANA)[-1].actions
    # the web table's "Daily deal" (DailyIntake.start) names the same table, and appends nothing
    assert await h.gateway.daily.start("web-1", ANA, dm(ANA), "cinquillo", "en", h.clock()) == (table, None)
    await h.settle()
    assert await h.events(table) == before


async def test_d3_a_flood_of_daily_commands_makes_one_attempt(fake_redis):
    h = harness(fake_redis)
    await asyncio.gather(*(h.gateway.submit(Input(ANA, dm(ANA), command_id=f"tg:m:1:{i}"), "/daily")
                           for i in range(30)))
    sent = sum([await fake_redis.xlen(k) for k in h.keys.all_commands()])
    assert sent == 1  # one command for the whole flood: the first one's answer is on its way
    await h.settle()
    table = await _table_of(h, ANA)
    assert [type(e).__name__ for e in await _stored(h, table)].count("TableCreated") == 1
    assert len([m for m in h.messages if m.kind == "reply" and "deal of the day" in m.text]) == 1


async def test_d1_the_same_person_on_another_platform_is_another_person(fake_redis):
    h = harness(fake_redis)
    await h.send(ANA, "/daily", room=dm(ANA))
    await play(h, ANA)
    msgs = await h.send(MATRIX_ANA, "/daily", room=dm(MATRIX_ANA))
    assert hands_of(msgs, MATRIX_ANA), "(platform, user) is the identity: another attempt"


async def test_d5_started_before_midnight_finished_after_counts_for_its_day_and_stays_secret(fake_redis):
    clock = Clock(daily.day_end(DAY) - 60)  # 23:59 UTC
    h = harness(fake_redis, clock)
    await h.send(ANA, "/daily", room=dm(ANA))
    table = await _table_of(h, ANA)
    first_hand = hands_of(h.messages, ANA)[-1]
    await h.send(ANA, room=dm(ANA), token=first_hand.actions[0].token)
    clock.now = daily.day_end(DAY) + 1800  # 00:30 the next day
    await play(h, ANA)
    t = await load(h.worker.store, table)
    assert t.status == "finished"
    assert await h.gateway.daily.store.mine(ANA, "cinquillo", DAY) is not None  # the day it started
    assert await h.gateway.daily.store.mine(ANA, "cinquillo", DAY + 1) is None
    # the deal is still secret: the grace after the day has not passed
    msgs = await h.send(BEA, f"/replay {table}", room=dm(BEA))
    assert [m.code for m in msgs] == ["deal_embargoed"]
    # and /daily now is the new day's deal
    await h.send(ANA, "/daily", room=dm(ANA))
    new = await _table_of(h, ANA, day=DAY + 1)
    seeds = [e.seed for tb in (table, new) for e in await _stored(h, tb) if isinstance(e, MatchStarted)]
    assert seeds[0] != seeds[1]
    # once the embargo lifts, the replay opens, with its seed
    clock.now = daily.day_end(DAY) + daily.GRACE_S
    msgs = await h.send(BEA, f"/replay {table}", room=dm(BEA))
    assert [m.kind for m in msgs] == ["replay"] and seeds[0] in msgs[0].text


async def test_d5_an_attempt_unfinished_when_the_deal_is_revealed_is_closed_unscored(fake_redis):
    clock = Clock(NOON)
    h = harness(fake_redis, clock)
    await h.send(ANA, "/daily", room=dm(ANA))
    table = await _table_of(h, ANA)
    stale = hands_of(h.messages, ANA)[-1]
    closes = daily.day_end(DAY) + daily.GRACE_S
    assert await fake_redis.zscore(h.keys.due_for(table), table) == closes * 1000  # the timers close it
    clock.now = daily.day_end(DAY) + daily.GRACE_S
    msgs = await h.send(ANA, room=dm(ANA), token=stale.actions[0].token)
    assert [m.code for m in msgs] == ["daily_expired"]
    await h.gateway._send(TableCommand(id="tick:x", table=table, name="tick", args={"version": 99}))
    msgs = await h.settle()
    assert isinstance((await _stored(h, table))[-1], TableCancelled)
    assert any(m.to.player and ANA.same(m.to.player) and "closed" in m.text for m in msgs)
    assert await h.gateway.daily.store.mine(ANA, "cinquillo", DAY) is None


@pytest.mark.parametrize("text", ["/leave", "/cancel", "/bots 1", "/start", "/kick 2", "/set players=2"])
async def test_d3_the_seats_and_the_deal_of_an_attempt_are_fixed(fake_redis, text):
    h = harness(fake_redis)
    await h.send(ANA, "/daily", room=dm(ANA))
    table = await _table_of(h, ANA)
    before = await h.events(table)
    msgs = await h.send(ANA, text, room=dm(ANA))
    assert [m.code for m in msgs] == ["daily_fixed"]
    assert await h.events(table) == before


@pytest.mark.parametrize(("locale", "words"), [("en", "what to show"), ("es", "qué mostrar")])
async def test_d3_a_daily_command_with_a_bad_word_is_refused_in_their_language(fake_redis, locale, words):
    h = harness(fake_redis)
    await h.send(ANA, f"/lang {locale}", room=dm(ANA))
    msgs = await h.send(ANA, "/daily poker", room=dm(ANA))
    assert [m.code for m in msgs] == ["bad_argument"]
    assert words in msgs[0].text and "poker" in msgs[0].text
    assert await fake_redis.xlen(h.keys.commands_for(await _table_of(h, ANA))) == 0  # nothing sent
