"""Which refusals may be shown to a room, and which only to the person refused (G-1).

A refused move can say something about the mover's hand: "you cannot pass while you can play: 7 de
oros" names a card, and "no tienes en la mano: Rey de oros" says who does not hold it.  The engine
checks a move in a fixed order (its shape, then the hand, then the table), so even a refusal that
names no card tells whether the mover holds the cards when its check comes after the hand's: "the
Caballo de copas cannot be played now" says the mover holds it.  Such a refusal goes only to the
mover, at the address of their hand; a room gets a neutral line instead.
"""

from __future__ import annotations

from service.domain.tables.decide import Refused

PUBLIC_ILLEGAL = frozenset({
    "bad_notation",        # the text is no move: depends on the text alone
    "game_over",           # the match is over: public
    "too_many_cards",      # 535: more cards than a move may have, checked before the hand
    "not_a_pile",          # 535: the cards form no pile, checked before the hand
    "leader_cannot_pass",  # 535: a pass by the trick's leader; the pile is public, no hand is read
})
"""The engine's ``IllegalMove`` codes that depend on nothing hidden.  Every other code (and any code
a game adds later) is private: ``not_in_hand``, ``cannot_pass`` (it lists playable cards), and every
code checked after the hand (Cinquillo's ``must_open_with_5o``, ``blocked``, ``not_playable``; 535's
``nothing_to_add_to``, ``wrong_type_or_size``, ``does_not_beat``, ``cannot_add_to_single``,
``add_does_not_fit``, ``too_long``, ``illegal``)."""


def is_private(refused: Refused) -> bool:
    """Whether a refusal may carry hidden information, so that only the refused person may see it.

    The service's own refusals (not your turn, not seated, a stale token...) are about public
    facts; an engine's refusal of a move is private unless its code is in :data:`PUBLIC_ILLEGAL`.
    """
    return refused.code == "illegal" and (refused.illegal or "illegal") not in PUBLIC_ILLEGAL
