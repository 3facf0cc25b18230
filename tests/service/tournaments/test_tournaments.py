"""A whole tournament through the service: 6 people, 4-seat Cinquillo tables (two tables of three
people and an AI player each round), 3 rounds of Swiss pairing to the podium, every table of a
round on the same deal; redelivered commands and a worker crash on the way; nothing leaks (G-1);
every refusal gets a clear answer and changes nothing."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from service.domain.commands import TableCommand
from service.domain.identities import Player
from service.protocol.i18n import translate
from service.ratings.projector import Projector
from service.ratings.store import RatingStore
from service.store.keys import Keys
from service.store.repository import history
from service.tournaments import swiss
from service.tournaments.director import Director
from service.tournaments.state import FINISHED
from service.write.timers import fire_due
from tests.service.ratings.test_ratings_service import Dies, dies_after_finishing
from tests.service.support import ANA, BEA, CAL, DAN, GROUP, Harness, card_tokens, private, said_by, seeds, to
from tests.service.write.test_matches import _states, check_no_leaks

EVA = Player(platform="web", user="5", name="Eva")
FER = Player(platform="tg", user="6", name="Fer")
PEOPLE = [ANA, BEA, CAL, DAN, EVA, FER]


class World:
    """The harness, a tournament director and a ratings projector, settled together."""

    def __init__(self, redis: Any) -> None:
        self.h = Harness(redis)
        self.director = Director(redis, self.h.settings, self.h.keys, clock=self.h.clock,
                                 seeds=seeds("round"))
        self.projector = Projector(redis, Keys())

    async def settle(self) -> list[Any]:
        while True:
            n = await self.director.drain()
            while (m := await self.h.worker.drain()):
                n += m
            n += await self.projector.drain()
            if not n:
                return await self.h.collect()

    async def send(self, who: Player, text: str | None = None, room=GROUP, **kw: Any) -> list[Any]:
        said, carried = said_by(who, room, **kw)
        await self.h.gateway.submit(said, text, **carried)
        return await self.settle()


def reply_of(msgs: list[Any], code: str | None = None) -> Any:
    found = [m for m in msgs if m.kind == "reply" and (code is None or m.code == code)]
    assert found, [(m.kind, m.code, m.text) for m in msgs]
    return found[-1]


async def tn_keys(redis: Any) -> dict[str, Any]:
    """Every tournament key's content but the command stream (which delivers and forgets)."""
    out = {}
    for raw in sorted(await redis.keys("tn:*")):
        k = raw.decode()
        kind = (await redis.type(k)).decode()
        if k == Keys().tournament_commands():
            continue
        out[k] = (await redis.xrange(k) if kind == "stream" else sorted(await redis.smembers(k))
                  if kind == "set" else await redis.get(k))
    return out


async def test_a_six_person_three_round_tournament_to_the_podium(any_redis):
    w = World(any_redis)
    h = w.h
    opened = await w.send(ANA, "/tournament cinquillo rounds=3")
    signup = reply_of(opened)
    assert signup.to.room is not None and GROUP.same(signup.to.room) and "Ana" in signup.text
    assert {a.move for a in signup.actions} == {"join", "leave", "start"}
    join_token = next(a.token for a in signup.actions if a.move == "join")
    start_token = next(a.token for a in signup.actions if a.move == "start")

    # Refusals that change nothing: in a private chat; joining twice; a non-creator starting.
    before = await tn_keys(any_redis)
    m = reply_of(await w.send(BEA, "/tournament cinquillo", room=private(BEA)), "wrong_chat")
    assert "/tournament" in m.text and "wrong_chat" not in m.text
    m = reply_of(await w.send(ANA, "/tournament join"), "already_entered")
    assert m.text == translate("en", "tournament.refusal.already_entered")
    m = reply_of(await w.send(BEA, "/tournament start"), "not_tournament_creator")
    assert "Ana" in m.text
    m = reply_of(await w.send(BEA, "/tournament cinquillo"), "tournament_exists")
    refused_only = await tn_keys(any_redis)
    assert {k: v for k, v in refused_only.items() if not k.endswith(":done")} == \
        {k: v for k, v in before.items() if not k.endswith(":done")}

    # Sign-up: by text, by the button, in Spanish; Ana starts with the button.
    for p in (BEA, CAL):
        await w.send(p, "/tournament join")
    await w.send(DAN, token=join_token)
    await w.send(EVA, "/torneo unirse")
    await w.send(FER, token=join_token, command_id="fer-join")
    await w.send(FER, token=join_token, command_id="fer-join")  # the adapter's retry: a duplicate
    started = await w.send(ANA, token=start_token, command_id="start")
    round1 = reply_of(started)
    assert "Round 1 of 3" in round1.text and round1.text.count("AI") == 2
    # A redelivered start (the stream gives it again) is recognised: nothing twice.
    tid = signup.table
    await any_redis.xadd(Keys().tournament_commands(), {"c": TableCommand(
        id="start", table=tid, name="tournament", args={"action": "start"}, actor=ANA, room=GROUP,
        locale="en").dumps()})
    assert not [m for m in await w.settle() if m.kind == "reply"]
    before = await tn_keys(any_redis)
    m = reply_of(await w.send(DAN, "/tournament join"), "tournament_started")
    assert m.text == translate("en", "tournament.refusal.tournament_started")
    m = reply_of(await w.send(BEA, "/tournament leave"), "tournament_started")
    after = await tn_keys(any_redis)
    assert {k: v for k, v in after.items() if not k.endswith(":done")} == \
        {k: v for k, v in before.items() if not k.endswith(":done")}

    crashed = False
    for _ in range(4000):
        t = await w.director.load(tid)
        assert t is not None
        if t.status == FINISHED:
            break
        tables = [d.table for d in t.tables() if d.table not in t.scored]
        hands = {}
        for msg in h.messages:
            if msg.kind == "hand" and msg.table in tables and msg.actions:
                hands[msg.table] = msg
        assert hands, "no table waits for a person"
        for hand in hands.values():
            person = next(p for p in PEOPLE if p.same(hand.to.player))
            if t.round == 2 and not crashed and len(hand.actions) == 1:
                # The worker dies after some append of round 2 (the end of a table, maybe).
                h.workers[0] = dies_after_finishing(h.new_worker(name="doomed", seeds=seeds("x")))
            try:
                await w.send(person, token=hand.actions[0].token)
            except Dies:
                crashed = True
                await asyncio.sleep(0.1)
                h.workers[0] = h.new_worker(name="heir", seeds=seeds("y"))
                await h.worker.process(await h.worker.claim())
                # The AI ticks it held back died with it: the deadlines (the safety net) bring them back.
                h.clock.now += 10
                await fire_due(any_redis, h.keys, h.clock.now * 1000)
                await w.settle()
    t = await w.director.load(tid)
    assert t is not None and t.status == FINISHED and crashed

    # Three rounds of two tables each, every entrant at one table a round; each round on one deal.
    round_seeds = []
    for r in (1, 2, 3):
        draws = t.tables(r)
        seated = sorted(i for d in draws for i in d.seats if i is not None)
        assert len(draws) == 2 and seated == list(range(6))
        assert all(d.seats.count(None) == 1 for d in draws)
        started_seeds = set()
        for d in draws:
            stored = await history(h.worker.store, d.table)
            started_seeds |= {s.event.seed for s in stored if type(s.event).__name__ == "MatchStarted"}
            # Nothing leaks at any table: hands to their own person only, no seed before the end.
            msgs = [m for m in h.messages if m.table == d.table]
            assert check_no_leaks(msgs, _states(stored), t.seeds[r], stored) > 5
            assert all(m.to.room is None for m in msgs), "a tournament table posted in a room"
        assert started_seeds == {t.seeds[r]}
        round_seeds.append(t.seeds[r])
        # The seed is shown once: in the group's standings of its round (which wait for every table).
        shown = [m for m in h.messages if t.seeds[r] in m.model_dump_json()]
        assert len(shown) == 1 and f"Standings after round {r} " in shown[0].text
        assert shown[0].to.room is not None and GROUP.same(shown[0].to.room)
    assert len(set(round_seeds)) == 3
    # Round 2 and 3 pair by standing: the best three of the standings sit together.
    scored_before_2 = [s for tb, s in t.scored.items() if tb in {d.table for d in t.tables(1)}]
    order = swiss.standings(6, [(s.seats, s.ranks, s.points) for s in scored_before_2])
    assert sorted(i for i in t.tables(2)[0].seats if i is not None) == sorted(order[:3])

    group_msgs = to(h.messages, GROUP)
    standings = [m for m in group_msgs if "Standings after round" in m.text]
    assert len(standings) == 3
    podium = [m for m in group_msgs if "tournament is over" in m.text]
    (final,) = podium
    names = [t.entrants[i].name for i in t.podium]
    assert all(n in final.text for n in names) and list(t.podium) == t.order()[:3]
    # Every match was rated once, the group's board lists the six.
    store = RatingStore(any_redis, Keys())
    for d in [d for r in (1, 2, 3) for d in t.tables(r)]:
        assert await store.is_rated(d.table)
    counts = await store.get("cinquillo", [f"{p.platform}:{p.user}" for p in PEOPLE])
    assert all(r.matches == 3 for r in counts.values()) and len(counts) == 6
    board = reply_of(await w.send(ANA, "/top cinquillo"))
    assert all(p.name in board.text for p in PEOPLE)
    # No card ever reached the group: it saw the tournament's messages only.
    assert group_msgs and all(m.table == tid for m in group_msgs if m.kind != "reply" or m.code is None)
    assert not any(card_tokens(m.model_dump_json(exclude={"actions"})) for m in group_msgs)
    # Each round's message names its tables (a platform links them); the standings and the podium
    # carry the group's leaderboard as a button, posted anew when pressed (the standings stay).
    rounds = [m for m in group_msgs if m.view and m.view.get("tables")]
    assert [m.view["tables"] for m in rounds] == [[d.table for d in t.tables(r)] for r in (1, 2, 3)]
    for m in [*standings, final]:
        (button,) = m.actions
        assert button.label == translate("en", "board.btn.top")
    got = await w.send(BEA, token=final.actions[0].token, replaces="m-3")
    (pressed,) = [m for m in got if m.kind == "reply"]
    assert pressed.replaces is None and pressed.code is None and all(p.name in pressed.text for p in PEOPLE)
    assert pressed.text.splitlines()[0] == translate("en", "top.title.group.all", game="Cinquillo")
    # A tournament table's deal was shared; its round is over, so its replay may be shown now (G-1:
    # tests/security/test_deal_embargo.py refuses it while another table of the round still plays).
    got = await w.send(ANA, f"/replay {t.tables(1)[0].table}", room=private(ANA))
    (replay,) = [m for m in got if m.kind == "replay"]
    assert t.seeds[1] in replay.text and "Verified" in replay.text


@pytest.mark.parametrize("text,code", [("/tournament join", "no_tournament_here"),
                                       ("/tournament start", "no_tournament_here"),
                                       ("/tournament chess", "unknown_game"),
                                       ("/tournament 535 rounds=12", "bad_option")])
async def test_refusals_without_a_tournament_change_nothing(any_redis, text, code):
    w = World(any_redis)
    await w.settle()
    msgs = await w.send(BEA, text)
    m = reply_of(msgs, code)
    assert m.text and code not in m.text
    assert await tn_keys(any_redis) == {}


async def test_the_signup_buttons_join_and_leave_and_a_refused_press_changes_nothing(any_redis):
    w = World(any_redis)
    signup = reply_of(await w.send(ANA, "/tournament 535 rounds=1"))
    join, leave, start = (a.token for a in signup.actions)
    assert "Bea" in reply_of(await w.send(BEA, token=join)).text
    left = reply_of(await w.send(BEA, token=leave))
    assert "Bea" not in left.text and [a.move for a in left.actions] == ["join", "leave", "start"]
    before = await tn_keys(any_redis)
    m = reply_of(await w.send(BEA, token=leave), "not_entered")  # she is not in it any more
    assert m.text == translate("en", "tournament.refusal.not_entered")
    m = reply_of(await w.send(BEA, token=start), "not_tournament_creator")
    assert {k: v for k, v in (await tn_keys(any_redis)).items() if not k.endswith(":done")} == \
        {k: v for k, v in before.items() if not k.endswith(":done")}


async def test_start_with_too_few_and_cancel(any_redis):
    w = World(any_redis)
    signup = reply_of(await w.send(ANA, "/tournament 535"))
    m = reply_of(await w.send(ANA, "/tournament start"), "too_few_entrants")
    assert "2" in m.text
    m = reply_of(await w.send(CAL, "/tournament cancel"), "not_tournament_creator")
    # A group admin may cancel it.
    cancelled = reply_of(await w.send(CAL, "/tournament cancel", moderator=True))
    assert "cancelled" in cancelled.text
    m = reply_of(await w.send(BEA, "/tournament join"), "tournament_over")
    t = await w.director.load(signup.table)
    assert t is not None and t.status == "cancelled" and len(t.entrants) == 1
    # The group may open a new one now.
    assert "Tournament" in reply_of(await w.send(BEA, "/tournament 535 rounds=1")).text
