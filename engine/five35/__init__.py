"""535 ("Five Three Five"): a climbing/shedding game for 2-6 players (rules F-1..F-14).

Public use goes through :mod:`engine.api` (``engine.new_game("535", players=4, seed=7)``); the
fast path for playouts is :data:`RULES` (integer moves, in place, see :mod:`engine.rules`).

Modules: :mod:`~engine.five35.cards` (ranks, points, packed card multisets), :mod:`~.options`,
:mod:`~.piles` (pile kinds, beating, adding, the move table and lookup tables), :mod:`~.state`
(the state class and determinization helpers for AI players), :mod:`~.game` (the rules object),
:mod:`~.view` (what a seat sees), :mod:`~.snapshot` (saving and loading a whole state),
:mod:`~.refusals` (why a move is refused, G-2).

Notation: ``pass``, ``play <ranks>`` (lead or overwrite), ``add <ranks>``; ranks ascending,
separated by single spaces (``play 7 7``, ``add 2 7``).  Decoding also accepts any whitespace,
any letter case for the word and the ranks in any order.

Choices where RULES.md is open (defaults as RULES.md marks them, plus):

* Deal: one card at a time clockwise from the seat after the dealer, from the documented shuffle
  ``SplitMix64.for_deal(seed, "535", players, round_no)`` of the deck in ascending order; the
  undealt cards are out of play for the round.  ``hands=`` fixes round 1 only (any non-empty
  sizes, seats may differ); later rounds are dealt from the seed with ``hand_size``.
* An add makes the central pile longer and makes the adder the player who played last; later
  overwrites must match the new type and size, so a pile of 4+ cards can only be added to.
* Adding to a run must give one run (new ranks at either end or both); to a group, its rank.
  An add that would pass the trick-ending size is refused (``too_long``).
* Rule of 8: fires when the cards *put down* (overwrite or add) include an 8, not for the pile
  opening the trick and not for a later non-8 add onto a pile that holds an 8.
* Going out ends the round at once even in mid-trick (F-12); the others score their hands.
* ``points`` must give every rank, non-negative, at least one positive (else no match ends).
* Refusal checks run in order: notation, too many cards, not a pile, not in hand, then the table.
"""

from __future__ import annotations

from engine.five35.game import Five35Rules
from engine.five35.state import State, determinize, unseen_cards, with_hands
from engine.rules import register

#: the registered rules object of 535 (the fast path)
RULES = Five35Rules()
register(RULES)

__all__ = ["RULES", "Five35Rules", "State", "determinize", "unseen_cards", "with_hands"]
