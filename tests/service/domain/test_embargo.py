"""The embargo on a shared deal (G-1, service.domain.embargo and service.tournaments.embargoes), as a
later feature would use it: a table created with an embargo that lifts at a time (a deal of the
day) withholds its seed and replay, and opens only to its seated people, until then; a kind with no
rule never lifts; a kind's registered rule decides."""

from __future__ import annotations

import engine
from service.domain.embargo import Embargo, deal_shown, embargo_of, may_open
from service.domain.events import (
    BotsAdded,
    MatchFinished,
    MatchStarted,
    MovePlayed,
    PlayerJoined,
    TableCreated,
)
from service.domain.tables.announce import event_line
from service.domain.tables.base import commitment
from service.domain.tables.current import current_messages
from service.domain.tables.decide import Refused, decide
from service.domain.tables.state import Table, evolve, from_snapshot, to_snapshot
from service.protocol.i18n import translate
from service.store.keys import Keys
from service.tournaments import embargoes
from service.tournaments.embargoes import Embargoes
from tests.service.support import ANA, BEA, GROUP, SECRET, cmd, context

DAY_ENDS = 2_000_000.0
SEED = "daily-seed-0001"


def _finished(embargo: Embargo | None) -> Table:
    """A two-seat Cinquillo table (Ana and an AI player) played to its end on ``SEED``."""
    t = evolve(None, TableCreated(game="cinquillo", options={}, max_seats=2, creator=ANA, room=GROUP,
                                  locale="en", turn_seconds=0, embargo=embargo), table_id="day1")
    for e in (PlayerJoined(seat=0, player=ANA, locale="en"), BotsAdded(seats=[1], level="easy"),
              MatchStarted(seed=SEED, commitment=commitment(SEED), players=2)):
        t = evolve(t, e)
    while engine.result(t.engine) is None:
        seat = engine.to_move(t.engine)
        t = evolve(t, MovePlayed(seat=seat, move=engine.legal_moves(t.engine)[0], cause="bot"))
    return evolve(t, MatchFinished(result=engine.result(t.engine)))


DAILY = Embargo(kind="daily", key="2030-01-01", until=DAY_ENDS)


def test_g1_the_policy_withholds_a_shared_deal_until_it_lifts():
    t = _finished(DAILY)
    assert embargo_of(t) == DAILY and from_snapshot(to_snapshot(t)).embargo == DAILY
    assert not deal_shown(t, lifted=False) and deal_shown(t, lifted=True)
    assert may_open(t, ANA, lifted=False) and not may_open(t, BEA, lifted=False)
    assert not may_open(t, None, lifted=False) and may_open(t, None, lifted=True)
    own = _finished(None)
    assert embargo_of(own) is None and deal_shown(own, lifted=False) and may_open(own, None, lifted=False)


def test_g1_no_seed_in_the_end_of_match_line_nor_the_end_screen_while_embargoed():
    t = _finished(DAILY)
    line = event_line(t, MatchFinished(result=t.result or {}))
    # (an embargo that lifts at a time says when)
    assert line is not None and line["t"] == "table.finished_until" and SEED not in str(line)
    assert line["p"]["reveal"] == "1970-01-24 03:33 UTC"  # DAY_ENDS, in UTC
    for lifted, shown in ((False, False), (True, True)):
        text = str([m for m in current_messages(t, ANA, SECRET, "en", lifted=lifted)])
        assert (SEED in text) is shown
    own = event_line(_finished(None), MatchFinished(result={}))
    assert own is not None and own["t"] == "table.finished" and SEED in str(own)


def test_g1_chat_replay_is_refused_with_a_clear_answer_until_lifted():
    t = _finished(DAILY)
    try:
        decide(t, cmd("replay", table="day1"), context())
    except Refused as r:
        assert r.code == "deal_embargoed"
        assert "day1" in translate("es", f"refusal.{r.code}", **r.params)
    else:
        raise AssertionError("an embargoed replay was not refused")
    d = decide(t, cmd("replay", table="day1"), context(lifted=frozenset({"day1"})))
    assert d.events == []


async def test_g1_lifting_at_a_time_by_a_registered_rule_and_never_for_an_unknown_kind(fake_redis):
    now = [DAY_ENDS - 1]
    emb = Embargoes(fake_redis, Keys(16, 2, ""), clock=lambda: now[0])
    t = _finished(DAILY)
    assert not await emb.lifted(t) and not await emb.deal_shown(t)
    assert await emb.may_open(t, ANA) and not await emb.may_open(t, BEA)
    now[0] = DAY_ENDS
    assert await emb.lifted(t) and await emb.deal_shown(t) and await emb.may_open(t, BEA)
    odd = _finished(Embargo(kind="unheard-of", key="x"))
    assert not await emb.lifted(odd)
    asked: list[str] = []

    async def rule(_: Embargoes, e: Embargo, table: Table) -> bool:
        asked.append(e.key)
        return table.id == "day1"

    embargoes.register("test-kind", rule)
    try:
        assert await emb.lifted(_finished(Embargo(kind="test-kind", key="k1"))) and asked == ["k1"]
    finally:
        embargoes._RULES.pop("test-kind", None)
    assert await emb.lifted(_finished(None))
