"""Dealing a round (C-8, the "deal" row of the presets) and checking hands given by the caller.

Every round's deal starts from the deck in canonical order (card ints 0..39: oros 1..Rey, copas,
espadas, bastos), shuffled by ``SplitMix64.for_deal(seed, "cinquillo", players, round_index)``
(see :mod:`engine.rng`; ``round_index`` is 0 for the first round).  Then, with ``deck`` the
shuffled list:

* ``deal="clasico"`` (2-4 players): the cards are dealt one at a time, ``deck[0]`` to seat 0,
  ``deck[1]`` to seat 1 and so on round the table in seat order (the same every round, there is no
  dealer).  2 players get 20 each, 4 players 10 each.  With 3 players only ``deck[0..38]`` are
  dealt that way (13 each) and the 40th card, ``deck[39]``, goes to the seat holding the 5 de
  oros; if ``deck[39]`` *is* the 5 de oros nobody holds it yet and it goes to seat 0 (choice: the
  seat the one-at-a-time deal would have given it to), who then has 14 cards and opens.
* ``deal="tradicional"`` (2-6 players): the dealer of round ``k`` is seat ``n-1`` moved ``k`` seats
  in the direction of play (so with the default counter-clockwise direction: n-1, n-2, ...).  All
  40 cards are dealt one at a time starting with the seat after the dealer in the direction of
  play: ``deck[i]`` goes to the ``(i mod n)``-th seat of that order.  So the first ``40 mod n``
  seats of the order get one card more: 3 players 14/13/13, 6 players 7/7/7/7/6/6.
"""

from __future__ import annotations

from typing import Any

from engine.cinquillo.cards import CODES, DECK_SIZE, FIVE_OROS, parse_card
from engine.rng import Seed, SplitMix64


def first_dealer(players: int) -> int:
    """The dealer of the first round: the last seat."""
    return players - 1


def deal_round(seed: Seed, players: int, round_index: int, deal: str, dealer: int, step: int) -> list[int]:
    """The hands (bit masks, one per seat) of round ``round_index``; see the module docstring.

    ``step`` is the direction of play: 1 clockwise, ``players - 1`` counter-clockwise.
    """
    deck = list(range(DECK_SIZE))
    SplitMix64.for_deal(seed, "cinquillo", players, round_index).shuffle(deck)
    hands = [0] * players
    if deal == "clasico":
        dealt = DECK_SIZE - 1 if players == 3 else DECK_SIZE
        for i in range(dealt):
            hands[i % players] |= 1 << deck[i]
        if players == 3:
            last = 1 << deck[DECK_SIZE - 1]
            holder = next((s for s in range(players) if hands[s] >> FIVE_OROS & 1), 0)
            hands[holder] |= last
        return hands
    order = [(dealer + step * (k + 1)) % players for k in range(players)]
    for i, c in enumerate(deck):
        hands[order[i % players]] |= 1 << c
    return hands


def hands_from_lists(players: int, hands: Any) -> list[int]:
    """Validate hands given by the caller (``new_game(hands=...)``) and return their bit masks.

    ``hands`` is one list per seat of card codes (``"5o"``; card ints 0..39 are accepted too).
    Every card of the deck must appear exactly once, and every hand must hold at least one card
    (a player without cards would have won before the round began).  Raises ValueError.
    """
    if not isinstance(hands, list | tuple) or len(hands) != players:
        raise ValueError(f"hands must be a list of {players} lists of cards, one per seat")
    masks = [0] * players
    seen = 0
    for seat, hand in enumerate(hands):
        if not isinstance(hand, list | tuple):
            raise ValueError(f"hands[{seat}] must be a list of card codes")
        if not hand:
            raise ValueError(f"hands[{seat}] is empty: every seat needs at least one card")
        for item in hand:
            if isinstance(item, int) and not isinstance(item, bool) and 0 <= item < DECK_SIZE:
                c = item
            elif isinstance(item, str):
                parsed = parse_card(item)
                if isinstance(parsed, str):
                    raise ValueError(f"hands[{seat}]: {parsed}")
                c = parsed
            else:
                raise ValueError(f"hands[{seat}]: {item!r} is not a card code")
            if seen >> c & 1:
                raise ValueError(f"hands: card {CODES[c]} appears more than once")
            seen |= 1 << c
            masks[seat] |= 1 << c
    missing = [CODES[c] for c in range(DECK_SIZE) if not seen >> c & 1]
    if missing:
        raise ValueError(f"hands must hold the whole 40-card deck; missing: {', '.join(missing)}")
    return masks
