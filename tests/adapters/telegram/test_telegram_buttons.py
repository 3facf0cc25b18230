"""Move buttons (issue 20): cards with their suit symbol; 535's moves grouped so that no turn shows
more than about twelve buttons (a two-step pick beyond that); forced passes made for the player."""

from __future__ import annotations

import random

import engine
from adapters.telegram.content import Show
from adapters.telegram.keyboards import MAX_FLAT, PAGE_PREFIX
from adapters.telegram.render import route
from service.domain.identities import Player, Room
from service.domain.tables.state import FINISHED
from service.platform.outbox import Action, Message, Recipient
from service.protocol.i18n.render import move_kind
from service.store.repository import history, load
from tests.adapters.telegram.support import World, person, settings

ANA = Player(platform="telegram", user="9", name="Ana")
BOB = person(61, "Bob", "en")
ROOM = Room(platform="telegram", chat=str(BOB.id), kind="private")


def _hand(game: str, moves: list[str], locale: str = "en") -> Message:
    actions = [Action(move=m, token=f"1tab.0.7.={i}.x", label=m) for i, m in enumerate(moves)]
    # As delivered: rendered, so each action has its label and the kind the service gives it.
    return Message(id="c:0", table="tab", version=7, to=Recipient(player=ANA), locale=locale, kind="hand",
                   text="hello", game=game, view={"game": game}, actions=actions).rendered()


def test_cinquillo_buttons_show_the_card_with_its_suit_symbol():
    [op] = route(_hand("cinquillo", ["5o", "10c", "pass"], "es"), bot_username="b").ops
    assert isinstance(op, Show)
    labels = [b[0] for row in op.content.rows for b in row]
    assert labels == ["🪙 5", "🏆 Sota", "⏭ Paso"]


def test_a_535_opening_turn_is_a_two_step_pick_of_at_most_twelve_buttons():
    state = engine.new_game("535", players=3, seed=4)
    moves = engine.legal_moves(state)
    assert len(moves) > MAX_FLAT  # the opening turn of the issue: 20-odd moves
    [op] = route(_hand("535", moves), bot_username="b").ops
    top = [b for row in op.content.rows for b in row]
    assert len(top) <= MAX_FLAT and all(b[2].startswith(PAGE_PREFIX) for b in top)
    # Each page holds one kind of move, at most twelve, and every move is on exactly one page.
    tokens = []
    for name, rows in op.content.pages:
        buttons = [b for row in rows for b in row]
        assert len(buttons) <= MAX_FLAT + 1
        moves_here = [b for b in buttons if not b[2].startswith(PAGE_PREFIX)]
        tokens += [b[2] for b in moves_here]
        if name != "-":
            index = [int(b[2].split("=")[1].split(".")[0]) for b in moves_here]
            assert {move_kind("535", moves[i]) for i in index} == {name}
    assert sorted(tokens) == sorted(f"1tab.0.7.={i}.x" for i in range(len(moves)))
    # A short list stays flat, one kind per row.
    [op] = route(_hand("535", ["play 3", "play 3 3", "play 3 4", "pass"]), bot_username="b").ops
    assert [len(r) for r in op.content.rows] == [1, 1, 1, 1] and not op.content.pages


async def _play_535_through_the_pick(w: World, rng: random.Random) -> tuple[str, int]:
    """One 535 match of Bob's, tapping a random move (picking a kind first where the hand is paged)
    and never a forced pass; returns the table and how many moves he tapped."""
    await w.say(BOB, "/play 535 hand_size=6 target=6")
    await w.quiet()
    taps = 0
    for _ in range(400):
        found = w.move_buttons(BOB.id)
        latest = max(w.fake.chat_messages(BOB.id), key=lambda m: m.seq)
        kinds = [b for b in latest.buttons() if (b.get("callback_data") or "").startswith(PAGE_PREFIX)]
        if kinds and not (found and found[0].id == latest.id and len(found[1]) > 1):
            await w.press(BOB, latest, rng.choice(kinds)["callback_data"])  # pick a kind first
            await w.quiet()
            continue
        if found is None:
            break
        shown, moves = found
        if [m["text"] for m in moves] == ["⏭ Pass"]:
            await w.quiet()  # a forced pass: not tapped, the bot makes it
            continue
        await w.press(BOB, shown, rng.choice(moves)["callback_data"])
        taps += 1
        await w.quiet()
        t = await load(w.workers[0].store, await w.tg.gateway.table_of(ROOM))
        if t is not None and t.status == FINISHED:
            break
    return await w.tg.gateway.table_of(ROOM), taps


async def test_a_535_match_is_played_through_the_pick_without_ever_tapping_a_forced_pass(fake_redis):
    # The forced pass is the service's (issue 35): its deadline passes for Bob, cause "auto".
    async with World(fake_redis, service=settings(auto_pass_s=0.05)) as w:
        rng = random.Random(2)
        # The deal is random: play matches until one has a forced pass of Bob's (most do at once).
        for _ in range(6):
            table, taps = await _play_535_through_the_pick(w, rng)
            stored = await history(w.workers[0].store, table)
            assert any(type(s.event).__name__ == "MatchFinished" for s in stored)
            mine = [s.event for s in stored if type(s.event).__name__ == "MovePlayed" and s.event.seat == 0]
            played = [e for e in mine if e.cause == "player"]
            passed_for = [e for e in mine if e.cause == "auto"]
            # Every move Bob made that he did not tap was a forced pass the service made for him.
            untapped = len(played) + len(passed_for) - taps
            assert untapped == len(passed_for) and all(e.move == "pass" for e in passed_for)
            if untapped >= 1:
                break
        assert untapped >= 1, "no forced pass happened in six matches: the test proves nothing"
