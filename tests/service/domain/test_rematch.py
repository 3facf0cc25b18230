"""A rematch (issue 34): the same people, options and seats (AI players included) in one press; the
others are asked, and the match starts when they accept, or their seats go to AI players (a decline,
or no answer in time).  Through the service on fakeredis and a real Redis, and hostile presses."""

from __future__ import annotations

import random

from service.domain.identities import Player
from service.domain.tables import rematch
from service.domain.tokens import issue_many
from service.store.repository import history, load
from service.write.timers import fire_due
from tests.service.support import ANA, BEA, CAL, DAN, GROUP, SECRET, Harness, private

PEOPLE = (ANA, BEA)


async def _finished_group_match(h: Harness, words: str = "cinquillo", people: tuple[Player, ...] = PEOPLE,
                                seed: int = 3) -> str:
    """``people`` (Ana and Bea unless said) and an AI player (hard) play a match in the group to its end;
    the table id."""
    await h.send(people[0], f"/new {words}")
    for who in people[1:]:
        await h.send(who, "/join")
    await h.send(people[0], "/bots 1 hard")
    await h.send(people[0], "/start")
    table = await h.table_of()
    rng = random.Random(seed)
    while not h.over():
        hand = h.last_hand()
        who = next(p for p in people if p.same(hand.to.player))
        await h.send(who, token=rng.choice(hand.actions).token, room=private(who))
    return table


def _play_again(h: Harness, who: Player, table: str):
    """The "Play again" action of ``who``'s end message at ``table``."""
    ends = [m for m in h.messages if m.kind == "hand" and m.table == table and who.same(m.to.player)
            and any(a.move == "rematch" for a in m.actions)]
    assert ends, f"{who.name} was offered no rematch"
    return next(a for a in ends[-1].actions if a.move == "rematch")


async def test_play_again_keeps_people_options_and_seats_and_starts_when_the_others_accept(any_redis):
    h = Harness(any_redis)
    old_id = await _finished_group_match(h, "cinquillo tradicional pago")
    old = await load(h.worker.store, old_id)
    msgs = await h.send(ANA, token=_play_again(h, ANA, old_id).token, room=private(ANA))
    new_id = rematch.table_id(old_id)
    new = await load(h.worker.store, new_id)
    assert new is not None and new.status == "lobby" and new.rematch_of == old_id
    assert new.options == old.options and new.game == old.game and new.rooms == old.rooms
    # The same seats: Ana seated where she sat, the AI player at its seat and level, Bea's kept for her.
    assert [(s.player.user if s.player else None, s.bot) for s in new.seats] == \
        [(s.player.user if s.player else None, s.bot) for s in old.seats]
    assert new.waiting_for() == [old.seat_of(BEA)]
    assert any("wants a rematch" in m.text for m in msgs if m.to.room is not None)
    invite = [m for m in await h.collect() + msgs if m.to.player is not None and BEA.same(m.to.player)
              and m.table == new_id]
    assert invite and [a.move for a in invite[-1].actions] == ["accept", "decline"]
    await h.send(BEA, token=invite[-1].actions[0].token, room=private(BEA))
    started = await load(h.worker.store, new_id)
    assert started.status == "running"
    assert [s.player.user if s.player else s.bot for s in started.seats] == \
        [s.player.user if s.player else s.bot for s in old.seats]
    hands = {m.to.player.user for m in h.messages if m.kind == "hand" and m.table == new_id and m.to.player}
    assert hands == {ANA.user, BEA.user}


async def test_a_decline_or_no_answer_gives_the_seat_to_an_ai_player(any_redis):
    h = Harness(any_redis, rematch_wait_s=60)
    old_id = await _finished_group_match(h)
    await h.send(ANA, token=_play_again(h, ANA, old_id).token, room=private(ANA))
    new_id = rematch.table_id(old_id)
    assert await fire_due(any_redis, h.keys, h.clock.now * 1000) == 0  # Bea has a minute to answer
    h.clock.now += 61
    assert await fire_due(any_redis, h.keys, h.clock.now * 1000) == 1
    msgs = await h.settle()
    t = await load(h.worker.store, new_id)
    seat = t.seats[(await load(h.worker.store, old_id)).seat_of(BEA)]
    assert t.status == "running" and seat.bot is not None and BEA.same(seat.player)
    assert any("did not answer" in m.text for m in msgs if m.to.room is not None)


async def test_a_decline_starts_at_once_with_an_ai_player_in_the_seat(fake_redis):
    h = Harness(fake_redis)
    old_id = await _finished_group_match(h)
    msgs = await h.send(ANA, token=_play_again(h, ANA, old_id).token, room=private(ANA))
    invite = [m for m in msgs + await h.collect() if m.to.player and BEA.same(m.to.player) and m.actions][-1]
    await h.send(BEA, token=invite.actions[1].token, room=private(BEA))  # decline
    t = await load(h.worker.store, rematch.table_id(old_id))
    assert t.status == "running" and sum(s.human for s in t.seats) == 1


async def test_the_others_own_play_again_accepts_and_a_repeated_press_makes_one_rematch(fake_redis):
    h = Harness(fake_redis)
    old_id = await _finished_group_match(h)
    for _ in range(3):  # a flood of presses: one rematch, one ask recorded
        await h.send(ANA, token=_play_again(h, ANA, old_id).token, room=private(ANA))
    await h.send(BEA, token=_play_again(h, BEA, old_id).token, room=private(BEA))
    stored = await history(h.worker.store, old_id)
    asks = [s.event for s in stored if type(s.event).__name__ == "RematchAsked"]
    assert [e.by.user for e in asks] == [ANA.user, BEA.user]
    t = await load(h.worker.store, rematch.table_id(old_id))
    assert t.status == "running" and not t.waiting_for()
    created = [s for s in await history(h.worker.store, t.id) if type(s.event).__name__ == "TableCreated"]
    assert len(created) == 1


async def test_hostile_presses_are_refused_and_change_nothing(fake_redis):
    h = Harness(fake_redis)
    old_id = await _finished_group_match(h)
    old = await load(h.worker.store, old_id)
    ana_seat = old.seat_of(ANA)
    before = len(await history(h.worker.store, old_id))
    # Ana's token pressed by Cal (not at the table), and by Bea (another seat's).
    for who in (CAL, BEA):
        msgs = await h.send(who, token=_play_again(h, ANA, old_id).token, room=private(who))
        assert [m.code for m in msgs] == ["wrong_seat"]
    # A token for another table, one signed with another secret.
    [other] = issue_many(SECRET, table="zzzzzzzzzz", seat=ana_seat, version=old.version, moves=["rematch"])
    [forged] = issue_many(b"not-the-secret", table=old_id, seat=ana_seat, version=old.version,
                          moves=["rematch"])
    assert [m.code for m in await h.send(ANA, token=other, room=private(ANA))] in (["no_table"], [])
    assert [m.code for m in await h.send(ANA, token=forged, room=private(ANA))] == ["token_forged"]
    assert len(await history(h.worker.store, old_id)) == before
    assert await load(h.worker.store, rematch.table_id(old_id)) is None
    # An invitation's accept pressed by someone else than the invited person.
    msgs = await h.send(ANA, token=_play_again(h, ANA, old_id).token, room=private(ANA))
    invite = [m for m in msgs + await h.collect() if m.to.player and BEA.same(m.to.player) and m.actions][-1]
    for who in (CAL, ANA):
        codes = [m.code for m in await h.send(who, token=invite.actions[0].token, room=private(who))]
        assert codes and codes[0] in ("wrong_seat", "already_seated"), codes
    assert (await load(h.worker.store, rematch.table_id(old_id))).waiting_for()


async def test_a_running_match_has_no_rematch_and_a_tournament_table_offers_none(fake_redis):
    h = Harness(fake_redis)
    await h.send(ANA, "/new cinquillo")
    await h.send(BEA, "/join")
    await h.send(ANA, "/start")
    table = await h.table_of()
    t = await load(h.worker.store, table)
    [token] = issue_many(SECRET, table=table, seat=t.seat_of(ANA), version=t.version, moves=["rematch"])
    assert [m.code for m in await h.send(ANA, token=token, room=private(ANA))] == ["already_started"]
    from dataclasses import replace
    assert not rematch.offered(replace(t, status="finished", tournament="tn1"))
    assert GROUP


async def _three_people_rematch(h: Harness) -> tuple[str, dict[str, object]]:
    """Ana, Bea and Dan and an AI player finish a group match; Ana asks for a rematch; the new table's id
    and the invitations of Bea and Dan (by user)."""
    old_id = await _finished_group_match(h, people=(ANA, BEA, DAN), seed=5)
    await h.send(ANA, token=_play_again(h, ANA, old_id).token, room=private(ANA))
    new_id = rematch.table_id(old_id)
    await h.collect()
    invites = {p.user: [m for m in h.messages if m.to.player and p.same(m.to.player) and m.table == new_id
                        and m.actions][-1] for p in (BEA, DAN)}
    return new_id, invites


async def test_a_decline_while_another_is_still_asked_waits_for_them(any_redis):
    """A decline before everyone answered leaves the rematch in its lobby: the worker must not fail on
    it (it did: 'unknown game None', the command dead-lettered), and the seat waits for nothing more."""
    h = Harness(any_redis)
    new_id, invites = await _three_people_rematch(h)
    msgs = await h.send(DAN, token=invites[DAN.user].actions[1].token, room=private(DAN))  # decline
    assert any("Dan does not play this time" in m.text for m in msgs if m.to.room is not None)
    t = await load(h.worker.store, new_id)
    assert t.status == "lobby" and list(t.waiting_for()) == [t.invited_seat(BEA)]
    assert [await h.redis.xlen(h.keys.dead(s)) for s in range(h.keys.shards)] == [0] * h.keys.shards
    await h.send(BEA, token=invites[BEA.user].actions[0].token, room=private(BEA))  # accept
    assert (await load(h.worker.store, new_id)).status == "running"


async def test_who_declined_is_sent_no_hand_of_the_new_deal(fake_redis):
    """G-1: Dan said no; an AI player holds his seat's new hand, which he never held: he must not be
    sent it (he was, as 'a person whose seat an AI player took'), nor anything naming its cards."""
    h = Harness(fake_redis)
    new_id, invites = await _three_people_rematch(h)
    await h.send(BEA, token=invites[BEA.user].actions[0].token, room=private(BEA))  # accept
    msgs = await h.send(DAN, token=invites[DAN.user].actions[1].token, room=private(DAN))  # decline: starts
    t = await load(h.worker.store, new_id)
    assert t.status == "running"
    sent = msgs + await h.collect()
    to_dan = [m for m in sent if m.table == new_id and m.to.player and DAN.same(m.to.player)]
    assert not [m for m in to_dan if m.kind == "hand"]
