"""AI players: the one function the service asks for an AI seat's move, and where hard ones think.

It gets only what that seat may know, its engine view (G-1), so it cannot cheat even by mistake.
The players themselves are pure engine code (:mod:`engine.ai`: easy, medium, hard); the service
only supplies what the engine may not read itself, the clock for the hard player's time budget.

A hard decision takes up to :data:`HARD_BUDGET_MS` of CPU.  Made on the worker's event loop, it
would hold up every other table of the worker for that long, so :class:`Thinker` makes hard
decisions in a separate process: its :meth:`Thinker.choose_move` answers at once when the move is
ready, and otherwise starts (or keeps) the thinking and raises :class:`Thinking`; the worker then
puts that table's commands back for its next cycle and goes on with the other tables.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import concurrent.futures.process
import json
import multiprocessing
import os
import time
from collections import OrderedDict
from typing import Any

import engine.ai

LEVELS = engine.ai.LEVELS
#: the daily deal's AI players (service.domain.daily.LEVEL): the hard player stopped by an iteration
#: cap alone, never by the clock, so that the same choices meet the same answers on any machine and
#: every attempt at a day's deal compares.  Cinquillo: the hard player's own cap (which ends nearly
#: every search within its 100 ms budget anyway); 535: 400 deals a decision, whose p99 is about the
#: hard player's 100 ms on one core (bench/daily.py measures it)
DAILY = "daily"
DAILY_ITERATIONS = {"cinquillo": engine.ai.HARD.iterations("cinquillo"), "535": 400}
#: the levels that think in another process (Thinker)
SEARCHING = frozenset({"hard", DAILY})
# The hard player's time cap per decision, on the thinking process's CPU clock (what the search
# gets, whatever else the machine runs); its iteration budget ends the shorter searches first.
HARD_BUDGET_MS = 100
#: decisions ready but not collected yet, kept at most (a table that vanished leaves one behind)
READY_LIMIT = 1_000


def choose_move(view: dict[str, Any], level: str, seed: int) -> str:
    """The move an AI player of ``level`` makes from ``view``, reproducibly for a given ``seed``
    (the hard player's iterations end most searches; the time cap ends the longest, such as a
    535 round's first decisions, whose move can then depend on the machine's speed).

    Raises ValueError when the view is not of the seat to move, or for an unknown level.
    """
    if level == DAILY:
        return engine.ai.choose_move(view, level="hard", seed=seed, iterations=DAILY_ITERATIONS[view["game"]])
    if level == "hard":
        return engine.ai.choose_move(view, level=level, seed=seed,
                                     iterations=engine.ai.HARD.iterations(view["game"]),
                                     budget_ms=HARD_BUDGET_MS, clock=time.process_time)
    return engine.ai.choose_move(view, level=level, seed=seed)


#: how much lower the thinking processes' CPU priority is than the worker's (``nice``): when the
#: cores are busy, a person's command comes before an AI's search (whose budget is CPU time)
NICE = 5


def _lower_priority() -> None:
    os.nice(NICE)


class Thinking(Exception):
    """The move is being thought in another process: decide this table's commands again later."""


class Thinker:
    """Hard decisions in a pool of processes, off the worker's event loop (see the module docstring).

    ``choose_move`` has the signature of :func:`choose_move`; easy and medium moves (well under a
    millisecond) are made in place.
    """

    def __init__(self, processes: int = 1) -> None:
        self._processes = processes
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None  # started on first use
        self._jobs: OrderedDict[str, concurrent.futures.Future[str]] = OrderedDict()

    def choose_move(self, view: dict[str, Any], level: str, seed: int) -> str:
        """The move when it is ready; raises :class:`Thinking` while a hard one is being thought,
        ValueError as :func:`choose_move` does (the error is raised when the move is collected)."""
        if level not in SEARCHING:
            return choose_move(view, level, seed)
        key = json.dumps([view, level, seed], sort_keys=True, default=str)
        job = self._jobs.get(key)
        if job is None:
            if self._pool is None:
                # spawn: a fresh interpreter, not a fork of a process holding sockets and a loop
                self._pool = concurrent.futures.ProcessPoolExecutor(
                    self._processes, mp_context=multiprocessing.get_context("spawn"),
                    initializer=_lower_priority)
            job = self._jobs[key] = self._pool.submit(choose_move, view, level, seed)
            while len(self._jobs) > READY_LIMIT:
                self._jobs.popitem(last=False)
        if not job.done():
            raise Thinking()
        del self._jobs[key]
        if isinstance(job.exception(), concurrent.futures.process.BrokenProcessPool):
            self._pool = None  # a thinking process died: a new pool next time (the command is retried)
        return job.result()

    def thinking(self) -> bool:
        """Whether a decision is still being thought."""
        return any(not j.done() for j in self._jobs.values())

    async def settle(self, timeout: float) -> None:
        """Wait (without blocking the loop) until some decision is ready, at most ``timeout`` s."""
        pending = [asyncio.wrap_future(j) for j in self._jobs.values() if not j.done()]
        if pending:
            await asyncio.wait(pending, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)

    def close(self) -> None:
        """Stop the thinking processes."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
