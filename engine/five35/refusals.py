"""Why a 535 move is refused (G-2): the IllegalMove code of :func:`engine.five35.piles.judge`,
with a message in plain English that names the cards and the pile (never a hidden card, G-1)."""

from __future__ import annotations

from engine.errors import IllegalMove
from engine.five35 import cards as D
from engine.five35.options import Options
from engine.five35.piles import (
    EMPTY,
    GROUP,
    KIND_NAMES,
    MAX_CARDS,
    PASS,
    PILES,
    PLAY,
    RUN,
    RUN_END,
    SINGLE,
    Pile,
    judge,
    move_parts,
    pile_cards,
    pile_cards_ranks,
    shape,
)
from engine.five35.state import State


def _cards_text(indices: list[int] | tuple[int, ...]) -> str:
    return " ".join(str(D.RANKS[i]) for i in indices)


def describe_pile(pile: Pile) -> str:
    """English for a pile: ``the single 9``, ``the group 7 7 7``, ``the run 3 4 5``."""
    kind, _, _ = pile
    if kind == SINGLE:
        return f"the single {_cards_text(pile_cards(pile))}"
    name = "group" if kind == GROUP else "run"
    return f"the {name} {_cards_text(pile_cards(pile))}"


def _size_word(kind: int) -> str:
    return str(KIND_NAMES[kind])


def explain(state: State, move: int) -> Exception:
    """Why ``move`` is refused now.  Checks, in order: the move itself (too many cards, not a
    pile), the hand (not_in_hand), then the table (pass/add/overwrite rules)."""
    s = state
    if s.over:
        return IllegalMove("game_over", "The match is over.")
    kind, ranks = move_parts(move)
    cards = [D.RANKS[i] for i in ranks]
    if kind != PASS:
        if len(ranks) > MAX_CARDS:
            return IllegalMove("too_many_cards",
                               f"You can put down at most {MAX_CARDS} cards at a time, "
                               f"not {len(ranks)}.", count=len(ranks))
        if kind == PLAY and shape(ranks) is None:
            return IllegalMove("not_a_pile",
                               f"The cards {_cards_text(ranks)} do not form a pile: play one card, "
                               "cards of one rank, or cards of consecutive ranks.", cards=cards)
        if not D.holds(s.hands[s.to_move], D.pack_indices(ranks)):
            return IllegalMove("not_in_hand", f"You do not hold {_cards_text(ranks)}.",
                               cards=cards)
    pile = PILES[s.pile]
    err, _, _ = judge(pile, kind, ranks, s.options.runs_low_beats_high, s.tables.group_end)
    return message(err, pile, kind, ranks, s.tables.group_end, s.options)

def message(err: str | None, pile: Pile, kind: int, ranks: tuple[int, ...], group_end: int,
            opts: Options) -> IllegalMove:
    """The refusal for ``judge``'s error code ``err`` of a move on ``pile`` (readable English)."""
    cards = [D.RANKS[i] for i in ranks]
    here = describe_pile(pile) if pile != EMPTY else ""
    pk, _, psize = pile
    if err == "leader_cannot_pass":
        return IllegalMove(err, "You lead this trick: play 1 to 3 cards; the leader cannot pass.")
    if err == "nothing_to_add_to":
        return IllegalMove(err, "You lead this trick: there is no pile to add to; "
                           "play 1 to 3 cards.", cards=cards)
    if err == "wrong_type_or_size":
        if psize > MAX_CARDS:
            msg = (f"The pile is {here}, {psize} cards: more than a play can match. "
                   "Add to it or pass.")
        else:
            other = "or pass" if pk == SINGLE else "add to it, or pass"
            msg = (f"To overwrite {here} play a {_size_word(pk)} of {psize} card"
                   f"{'s' if psize > 1 else ''} that beats it, {other}.")
        return IllegalMove(err, msg, cards=cards, pile=pile_cards_ranks(pile))
    if err == "does_not_beat":
        new = shape(ranks)
        assert new is not None
        if pk == RUN:
            how = ("a run beats another when it starts lower" if opts.runs_low_beats_high
                   else "a run beats another when it starts higher")
        else:
            how = "it needs a higher rank"
        return IllegalMove(err, f"{describe_pile(new).capitalize()} does not beat {here}: {how}.",
                           cards=cards, pile=pile_cards_ranks(pile))
    if err == "cannot_add_to_single":
        return IllegalMove(err, f"A single cannot be added to: overwrite {here} with a higher "
                           "single, or pass.", cards=cards, pile=pile_cards_ranks(pile))
    if err == "add_does_not_fit":
        how = ("cards of its rank" if pk == GROUP
               else "new consecutive ranks at either end (or both)")
        return IllegalMove(err, f"The cards {_cards_text(ranks)} do not extend {here}: add {how}.",
                           cards=cards, pile=pile_cards_ranks(pile))
    if err == "too_long":
        limit = group_end if pk == GROUP else RUN_END
        return IllegalMove(err, f"That makes a {_size_word(pk)} of {psize + len(ranks)} cards; "
                           f"a {_size_word(pk)} ends the trick at {limit} cards and cannot "
                           "grow past it.", cards=cards, limit=limit)
    return IllegalMove("illegal", "That move is not allowed now.", cards=cards)
