"""G-1 for refusals: a refused move says nothing about a hand to anyone who may not see it.

The test is the definition of hidden information: whatever cards the others hold, what a room and
each other player are told about a refused move is the same.  For positions of both games, every
typed move is refused (or not) on the true deal and on other deals an observer cannot tell apart
(the observer's own hand kept, every other hand redrawn at its size); what the room and the observer
receive must not differ.  The refused person alone is told the reason, at their hand's address.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

import engine
from engine.cinquillo.state import FIVE_OROS, replace_hands
from engine.five35 import determinize
from engine.five35.cards import RANKS
from service.domain.identities import Room
from service.domain.tables.decide import Refused, decide
from service.domain.tables.notify import messages_for, refusal_messages
from service.domain.tables.secrecy import PUBLIC_ILLEGAL, is_private
from service.domain.tables.state import RUNNING, Table
from service.platform.outbox import Message
from service.protocol.i18n import translate
from tests.service.support import ANA, BEA, CAL, GROUP, cmd, context, private

PEOPLE = (ANA, BEA, CAL)


def _cinquillo_moves() -> list[str]:
    return ["pass"] + [f"{r}{s}" for s in "oceb" for r in (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)]


def _five35_moves() -> list[str]:
    moves = ["pass"]
    for i, r in enumerate(RANKS):
        moves += [f"play {r}", f"play {r} {r}", f"add {r}", f"add {r} {r}"]
        if i + 2 < len(RANKS):
            moves.append(f"play {r} {RANKS[i + 1]} {RANKS[i + 2]}")
    return [*moves, "play 1 2 3 4", "play 7 9"]


MOVES = {"cinquillo": _cinquillo_moves(), "535": _five35_moves()}


def _positions(game: str, seed: int, count: int) -> list[Table]:
    """Running tables of three people in GROUP, after 0, 1, 2... random legal moves."""
    rng = random.Random(seed)
    t = decide(None, cmd("new", actor=ANA, game=game, options={}, players=3), context()).after
    for p in PEOPLE[1:]:
        t = decide(t, cmd("join", actor=p), context()).after
    t = decide(t, cmd("start", actor=ANA), context()).after
    out = []
    while t is not None and t.status == RUNNING and len(out) < count:
        out.append(t)
        mover = t.to_move()
        move = rng.choice(engine.legal_moves(t.engine))
        t = decide(t, cmd("move", actor=t.seats[mover].player, move=move), context()).after
    return out


def _redealt(t: Table, observer: int, rng: random.Random) -> Table:
    """The table with every hand but ``observer``'s redrawn from the cards the observer cannot see."""
    st = t.engine
    if t.game == "535":
        return dataclasses.replace(t, engine=determinize(st, observer, rng))
    new = engine.rules_for(st).clone(st)
    others = [s for s in range(st.players) if s != observer]
    pool = [c for s in others for c in range(40) if st.hands[s] >> c & 1]
    for _ in range(100):
        rng.shuffle(pool)
        hands, at = list(st.hands), 0
        for s in others:
            n = st.hands[s].bit_count()
            hands[s] = sum(1 << c for c in pool[at:at + n])
            at += n
        if not (st.low[0] < 0 and not hands[st.turn] >> FIVE_OROS & 1):
            replace_hands(new, hands)
            return dataclasses.replace(t, engine=new)
    return t  # a round's opening: the 5 de oros pins the deal; nothing to vary


def _told(t: Table, move: str, locale: str) -> tuple[bool, list[Message]]:
    """Whether the mover's typed move is refused, and every message it causes, in words."""
    mover = t.seats[t.to_move()].player
    c = cmd("move", actor=mover, move=move, locale=locale)
    try:
        wires = messages_for(decide(t, c, context()), c, b"k")
        refused = False
    except Refused as r:
        wires, refused = refusal_messages(c, r, t), True
    return refused, [Message.model_validate(w).rendered() for w in wires]


def _seen_by(messages: list[Message], who: Any) -> list[tuple[str, str | None]]:
    """What a recipient (a room, or a player) is shown: texts and codes, in order."""
    out = []
    for m in messages:
        to = m.to.room if isinstance(who, Room) else m.to.player
        if to is not None and to.same(who):
            out.append((m.text, m.code))
    return out


@pytest.mark.parametrize("locale", ["es", "en"])
@pytest.mark.parametrize("game", ["cinquillo", "535"])
def test_a_refused_move_tells_the_room_and_the_others_the_same_whatever_the_deal(game, locale):  # G-1
    rng = random.Random(11)
    compared = private_reasons = 0
    for t in _positions(game, seed=3, count=12):
        mover = t.to_move()
        observers = [s for s in range(len(t.seats)) if s != mover]
        for observer in observers:
            other = _redealt(t, observer, rng)
            watcher = t.seats[observer].player
            for move in MOVES[game]:
                refused, msgs = _told(t, move, locale)
                refused_too, msgs_too = _told(other, move, locale)
                if not (refused and refused_too):
                    continue  # a move played is public, and so is that it was played
                compared += 1
                assert _seen_by(msgs, GROUP) == _seen_by(msgs_too, GROUP), (move, msgs, msgs_too)
                assert _seen_by(msgs, watcher) == _seen_by(msgs_too, watcher), move
                assert _seen_by(msgs, watcher) == []
                if any(m.to.player is not None for m in msgs):
                    private_reasons += 1
    assert compared > 200
    assert private_reasons > 20


@pytest.mark.parametrize("locale", ["es", "en"])
def test_cannot_pass_goes_to_the_mover_alone_and_the_group_gets_a_neutral_line(locale):  # G-1, C-4
    t = next(t for t in _positions("cinquillo", seed=5, count=30)
             if "pass" not in engine.legal_moves(t.engine))
    mover = t.seats[t.to_move()].player
    refused, msgs = _told(t, "pass", locale)
    assert refused
    to_mover = [m for m in msgs if m.to.player is not None]
    to_room = [m for m in msgs if m.to.room is not None]
    assert [m.to.player for m in to_mover] == [mover]
    playable = engine.legal_moves(t.engine)
    from service.protocol.i18n.render import card_name
    assert all(card_name(c, locale) in to_mover[0].text for c in playable)
    assert [m.text for m in to_room] == [translate(locale, "refusal.move_refused_private", name=mover.name)]
    assert all(card_name(c, locale) not in to_room[0].text for c in playable)
    assert to_room[0].code == "illegal"


def test_a_card_not_held_is_named_only_to_the_mover():  # G-1
    t = _positions("cinquillo", seed=5, count=3)[2]
    seat = t.to_move()
    hand = engine.view(t.engine, seat)["hand"]
    held_elsewhere = next(c for c in _cinquillo_moves()[1:] if c not in hand)
    refused, msgs = _told(t, held_elsewhere, "es")
    assert refused
    assert [m.to.player for m in msgs if m.to.player is not None] == [t.seats[seat].player]
    assert "No tienes en la mano" in next(m.text for m in msgs if m.to.player is not None)
    assert all("No tienes" not in m.text for m in msgs if m.to.room is not None)


def test_a_refusal_in_a_private_chat_is_answered_there_as_before():
    t = _positions("cinquillo", seed=5, count=2)[1]
    mover = t.seats[t.to_move()].player
    c = cmd("move", actor=mover, room=private(mover), move="pass")
    r = Refused("illegal", illegal="cannot_pass", playable=["7o"])
    wires = refusal_messages(c, r, t)
    assert len(wires) == 1 and wires[0]["to"]["room"]["chat"] == private(mover).chat


def test_public_refusals_are_still_told_in_the_group():
    # A move that is no move, or a pile that is no pile, says nothing about the hand.
    t = _positions("535", seed=5, count=2)[1]
    refused, msgs = _told(t, "play 1 5 9", "en")
    assert refused
    assert [m.to.room for m in msgs] == [GROUP]
    assert "pile" in msgs[0].text
    assert not is_private(Refused("not_your_turn"))
    assert not is_private(Refused("illegal", illegal="not_a_pile"))
    assert is_private(Refused("illegal", illegal="some_future_code"))
    assert "not_in_hand" not in PUBLIC_ILLEGAL and "cannot_pass" not in PUBLIC_ILLEGAL
