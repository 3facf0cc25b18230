"""Replaying a finished table from its events, and checking that its deal was fair (G-3, fair deals).

The check: the revealed seed hashes to the commitment shown when the match started, and playing the
recorded moves from ``engine.new_game(seed)`` ends in exactly the recorded result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import engine
from service.domain.events import MatchFinished, MatchStarted, MovePlayed, Stored, TableCreated
from service.domain.tables.announce import names
from service.domain.tables.decide import commitment
from service.domain.tables.state import evolve
from service.protocol import text


@dataclass
class Verdict:
    """The outcome of a replay: whether it holds, and what was checked."""

    ok: bool
    moves: list[tuple[int, str, str]] = field(default_factory=list)  # (seat, move, cause)
    problems: list[str] = field(default_factory=list)


def verify(stored: Sequence[Stored]) -> Verdict:
    """Replay the events of a table and check the commitment and the result."""
    created = next((s.event for s in stored if isinstance(s.event, TableCreated)), None)
    started = next((s.event for s in stored if isinstance(s.event, MatchStarted)), None)
    finished = next((s.event for s in stored if isinstance(s.event, MatchFinished)), None)
    v = Verdict(ok=False)
    if created is None or started is None or finished is None:
        v.problems.append("not_finished")
        return v
    if commitment(started.seed) != started.commitment:
        v.problems.append("commitment")
    state = engine.new_game(created.game, players=started.players, seed=started.seed, **created.options)
    for s in stored:
        if isinstance(s.event, MovePlayed):
            v.moves.append((s.event.seat, s.event.move, s.event.cause))
            try:
                state = engine.play(state, s.event.move)
            except engine.IllegalMove:
                v.problems.append("illegal_move")
                return v
    if engine.result(state) != finished.result:
        v.problems.append("result")
    v.ok = not v.problems
    return v


def replay_lines(stored: Sequence[Stored], table: str) -> list[text.Item]:
    """The text of a replay (deferred items): the moves in order, then the verdict."""
    created = next(s.event for s in stored if isinstance(s.event, TableCreated))
    started = next(s.event for s in stored if isinstance(s.event, MatchStarted))
    verdict = verify(stored)
    lines: list[text.Item] = [text.t("table.replay_header", table=table, seed=started.seed,
                                     commitment=started.commitment)]
    for i, (seat, move, _cause) in enumerate(verdict.moves, 1):
        lines.append(text.t("table.replay_move", n=i, seat=seat + 1, move=text.move(created.game, move)))
    lines.append(text.t("table.replay_ok" if verdict.ok else "table.replay_failed",
                        problems=", ".join(verdict.problems)))
    return lines


# Grow with every move: left out of each step (the steps themselves are the history).
_STEP_DROP = ("history", "rounds", "legal_moves")


def replay_views(stored: Sequence[Stored]) -> dict[str, object] | None:
    """A finished match step by step, for the web replay: after each move the public view (what a
    spectator saw then, without the growing history), and at the end every seat's remaining hand,
    the seed and whether the replay checks (:func:`verify`), and the seats' names (text items).  None
    if the match is not finished."""
    verdict = verify(stored)
    if "not_finished" in verdict.problems:
        return None
    created = next(s.event for s in stored if isinstance(s.event, TableCreated))
    started = next(s.event for s in stored if isinstance(s.event, MatchStarted))
    state = engine.new_game(created.game, players=started.players, seed=started.seed, **created.options)

    def public() -> dict[str, object]:
        return {k: v for k, v in engine.view(state, None).items() if k not in _STEP_DROP}

    steps: list[dict[str, object]] = [{"seat": None, "move": None, "view": public()}]
    for seat, move, cause in verdict.moves:
        state = engine.play(state, move)
        steps.append({"seat": seat, "move": move, "cause": cause, "view": public()})
    hands = [engine.view(state, s).get("hand") for s in range(started.players)]
    # Who sat where (names are public, unlike cards): the table as its events left it.
    table = None
    for s in stored:
        table = evolve(table, s.event, table_id="replay", at=s.at)
    return {"game": created.game, "seed": started.seed, "commitment": started.commitment,
            "ok": verdict.ok, "steps": steps, "hands": hands, "result": engine.result(state),
            "names": names(table) if table is not None else None}
