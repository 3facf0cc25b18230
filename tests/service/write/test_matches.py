"""Whole matches of each game played through the service by simulated people, with every outbox
message checked for leaks (G-1): nobody is ever shown a card they may not see, nor the seed early."""

from __future__ import annotations

import functools
import random
from typing import Any

import pytest

import engine
from service.domain.tables.replay import verify
from service.domain.tables.state import FINISHED, Table, evolve
from service.protocol.i18n import translate
from service.protocol.i18n.render import card_name
from service.store.repository import history
from tests.service.support import ANA, BEA, CAL, GROUP, Harness, card_tokens

PEOPLE = [ANA, BEA, CAL]
# Moves a person may type, legal or not.
TYPED = {"cinquillo": [f"{r}{s}" for s in "oceb" for r in (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)],
         "535": [f"play {r}" for r in (1, 5, 9, 12)] + ["play 7 7", "add 2", "play 3 4 5", "add 15 15"]}


_HANDS: dict[tuple[int, int], tuple[Any, ...]] = {}


@functools.cache
def _name(code: str, locale: str) -> str:
    return card_name(code, locale)


def _hand(t: Table, seat: int) -> tuple[Any, ...]:
    key = (id(t.engine), seat)
    if key not in _HANDS:
        _HANDS[key] = tuple(engine.view(t.engine, seat)["hand"])
    return _HANDS[key]


def _states(stored) -> dict[int, Table]:
    """The table at every version."""
    _HANDS.clear()
    out, t = {}, None
    for v, s in enumerate(stored, 1):
        t = evolve(t, s.event, table_id="x", at=s.at)
        out[v] = t
    return out


def _hands(view: Any) -> list[Any]:
    """Every ``hand``/``hands`` value anywhere in a view."""
    found = []
    if isinstance(view, dict):
        for k, v in view.items():
            if k in ("hand", "hands") and v is not None:
                found.append(v)
            found += _hands(v)
    elif isinstance(view, list):
        for v in view:
            found += _hands(v)
    return found


def _named_in_refusal(m) -> set[str]:
    named: set[str] = set()
    for line in m.lines:
        if isinstance(line, dict) and "illegal" in line:
            p = line.get("p") or {}
            for key in ("card", "cards", "needed"):
                v = p.get(key)
                named |= set(v) if isinstance(v, list) else ({v} if isinstance(v, str) else set())
    return named


def check_no_leaks(messages, states: dict[int, Table], seed: str, stored=()) -> int:
    checked = 0
    # The moves a command made are announced with it, even when a new deal then puts the same card
    # into another hand (the last move of a round): those are not leaks.
    played: dict[str, set[str]] = {}
    for s in stored:
        if type(s.event).__name__ == "MovePlayed":
            played.setdefault(s.cmd, set()).add(s.event.move)
    for m in messages:
        t = states.get(m.version)
        if t is None or t.engine is None:
            continue
        if m.kind != "match_over" and t.status != FINISHED:  # the end's private messages may show it
            assert seed not in m.model_dump_json(), "the seed shown before the end"
        if m.kind in ("match_over", "replay"):
            continue  # the end reveals the seed, hence every deal: nothing is hidden any more
        seat = t.seat_of(m.to.player) if m.to.player is not None else None
        if m.to.player is not None and seat is None:
            # a seat an AI player took over still belongs to its person for what they may see
            seat = next(i for i, s in enumerate(t.seats) if m.to.player.same(s.player))
        own = list(_hand(t, seat)) if seat is not None else None
        # the end's "Play again" and a rematch's invitation are no moves
        moves = [a for a in m.actions if a.move not in ("rematch", "accept", "decline")]
        if moves:
            assert seat == t.to_move() and {a.move for a in moves} == set(engine.legal_moves(t.engine))
        elif m.actions:  # the end's "Play again": to a person of this finished table, for their own seat
            assert t.status == FINISHED and [a.move for a in m.actions] == ["rematch"] and seat is not None
        if m.view is not None:
            assert m.view.get("seat") == seat
            assert all(h == own for h in _hands(m.view)), "another seat's hand in a view"
        if t.game == "cinquillo":
            others = {c for i in range(t.engine.players) if i != seat
                      for c in _hand(t, i)} - played.get(m.id.rsplit(":", 1)[0], set())
            if m.to.player is not None:
                # A refusal tells its person the card they typed themselves, and which cards the
                # table would take (public): neither is a leak.
                others -= _named_in_refusal(m)
            # Earlier rounds' moves are public and their cards were dealt again since: not scanned.
            # Action tokens are opaque (their base-36 version may read "1b"): their moves are checked
            # instead, below.
            view = {k: v for k, v in (m.view or {}).items() if k != "rounds"}
            actions = [a.model_copy(update={"token": ""}) for a in m.actions]
            scanned = m.model_copy(update={"view": view, "actions": actions})
            visible = card_tokens(scanned.model_dump_json())
            if visible & others:
                js = scanned.model_dump_json()
                i = js.find(sorted(visible & others)[0])
                shown = js[max(0, i - 300):i + 50]
                raise AssertionError(f"cards of other hands shown: {visible & others}: {shown}")
            for code in others:
                assert _name(code, m.locale) not in m.text
        checked += 1
    return checked


def check_private_refusals(messages) -> int:
    """A refused move whose reason is told in private (it may name or betray a card) leaves the
    room only the neutral line; returns how many such refusals there were."""
    by_command: dict[str, list] = {}
    for m in messages:
        by_command.setdefault(m.id.rsplit(":", 1)[0], []).append(m)
    found = 0
    for msgs in by_command.values():
        private = [m for m in msgs if m.code == "illegal" and m.to.player is not None]
        if not private:
            continue
        found += 1
        (to_player,) = private
        person = next(p for p in PEOPLE if p.same(to_player.to.player))
        neutral = {translate(loc, "refusal.move_refused_private", name=person.name) for loc in ("es", "en")}
        rooms = [m for m in msgs if m.to.room is not None]
        assert rooms and all(m.text in neutral for m in rooms), [m.text for m in rooms]
    return found


@pytest.mark.parametrize("locale", ["es", "en"])
@pytest.mark.parametrize("game,text", [("cinquillo", "/new cinquillo"), ("535", "/new 535"),
                                       ("cinquillo", "/new cinquillo tradicional doble")])
async def test_a_whole_match_through_the_service_leaks_nothing(any_redis, game, text, locale):
    h = Harness(any_redis)
    rng = random.Random(7)
    for p in PEOPLE:
        await h.send(p, f"/lang {locale}")
    await h.send(ANA, text)
    table = await h.table_of()
    for p in PEOPLE[1:]:
        await h.send(p, "/join")
    await h.send(ANA, "/bots 1")
    await h.send(ANA, "/start")
    for _ in range(3000):
        if h.over():
            break
        hand = h.last_hand()
        person = next(p for p in PEOPLE if p.same(hand.to.player))
        roll = rng.random()
        if roll < 0.05:  # someone who is not to move tries to
            await h.send(next(p for p in PEOPLE if not p.same(person)), f"/move {hand.actions[0].move}")
        elif roll < 0.1:
            await h.send(person, "/hand")
        elif roll < 0.15:  # a typed move that may be refused, in the group: pass, or any move
            await h.send(person, "/move " + rng.choice(["pass", *TYPED[game]]))
        elif roll < 0.3:
            await h.send(person, f"/move {rng.choice(hand.actions).move}")
        else:
            await h.send(person, token=rng.choice(hand.actions).token)
    stored = await history(h.worker.store, table)
    assert h.over()
    assert verify(stored).ok
    seed = next(s.event.seed for s in stored if type(s.event).__name__ == "MatchStarted")
    assert check_no_leaks(h.messages, _states(stored), seed, stored) > 20
    assert check_private_refusals(h.messages) > 0


def test_card_tokens_do_not_find_1o_inside_11o():
    assert card_tokens('["11o","12c"]') == {"11o", "12c"}
    assert card_tokens("1o, 7b") == {"1o", "7b"}
    assert card_tokens("play 11 12 13") == set()


async def test_the_leak_check_catches_a_leak(any_redis):
    """The checker itself can fail: a private view sent to the wrong person is caught."""
    h = Harness(any_redis)
    await h.send(ANA, "/new cinquillo")
    await h.send(BEA, "/join")
    await h.send(ANA, "/start")
    table = await h.table_of()
    stored = await history(h.worker.store, table)
    hands = [m for m in h.messages if m.kind == "hand"]
    wrong = hands[0].model_copy(update={"to": hands[1].to})
    with pytest.raises(AssertionError):
        check_no_leaks([wrong], _states(stored), "never")
    assert GROUP
