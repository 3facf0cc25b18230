"""Pairing, seating and scoring of a tournament.  Pure.

- **Pairing** (Swiss by standing): the entrants sorted by standing (round 1: in the order they
  signed up) are cut into as few tables as the seats allow, as even as possible (6 entrants at
  4-seat tables: two tables of 3), the best together; AI players fill the empty seats.
- **Seating**: every table of a round plays the same deal (one seed: *duplicate deals*), so seat k
  gets the same hand at every table; the seats are rotated by round and by table, so that the hand
  a seat gets goes to entrants of different standing and, over the rounds, to each entrant in turn.
- **Points** per table: one for every seat finished ahead of, half for every seat tied with (a
  shared win is a tie), so a table of n gives n − 1 to its winner.  AI seats score nothing for the
  standings.
- **Standings**: points, then tables won, then sign-up order.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence


def table_sizes(entrants: int, seats: int) -> list[int]:
    """How many entrants sit at each table: as few tables as possible, as even as possible."""
    if entrants <= 0:
        return []
    n = math.ceil(entrants / seats)
    base, extra = divmod(entrants, n)
    return [base + 1 if i < extra else base for i in range(n)]


def pair(order: Sequence[int], seats: int, round_no: int) -> list[list[int | None]]:
    """The tables of a round: each a list of ``seats`` seats holding an entrant index or None (an AI
    player), entrants taken in ``order`` (best first) and rotated within their table."""
    tables: list[list[int | None]] = []
    i = 0
    for k, size in enumerate(table_sizes(len(order), seats)):
        members: list[int | None] = [*order[i:i + size], *([None] * (seats - size))]
        i += size
        shift = (round_no - 1 + k) % seats
        tables.append(members[-shift:] + members[:-shift] if shift else members)
    return tables


def table_id(tournament: str, round_no: int, k: int) -> str:
    """The id of table ``k`` of a round: derived, so that a retry names the same table (10 chars)."""
    digest = hashlib.sha256(f"{tournament}:{round_no}:{k}".encode()).hexdigest()
    return "".join("abcdefghijklmnopqrstuvwxyz234567"[int(c, 16) * 2 % 32] for c in digest[:10])


def points(ranks: Sequence[int]) -> list[float]:
    """Each seat's tournament points from the table's ranks (1 best; equal ranks tie)."""
    return [sum(1.0 if r < other else 0.5 if r == other else 0.0
                for j, other in enumerate(ranks) if j != i) for i, r in enumerate(ranks)]


def standings(entrants: int, scored: Sequence[tuple[list[int | None], list[int], list[float]]]) -> list[int]:
    """The entrant indexes best first, from every scored table (seats, ranks, points)."""
    total = [0.0] * entrants
    won = [0] * entrants
    for seats, ranks, pts in scored:
        best = min(ranks) if ranks else 0
        for who, rank, p in zip(seats, ranks, pts, strict=True):
            if who is None:
                continue
            total[who] += p
            won[who] += rank == best
    return sorted(range(entrants), key=lambda i: (-total[i], -won[i], i))


def totals(entrants: int, scored: Sequence[tuple[list[int | None], list[int], list[float]]]) -> list[float]:
    """Each entrant's points."""
    total = [0.0] * entrants
    for seats, _, pts in scored:
        for who, p in zip(seats, pts, strict=True):
            if who is not None:
                total[who] += p
    return total
