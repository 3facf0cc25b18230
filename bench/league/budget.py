"""The league's time budget: a decision stops before an iteration that would overrun it."""

from __future__ import annotations

from collections.abc import Callable


class Budget:
    """A deadline on a caller's clock; :meth:`more` says whether another iteration fits (the next
    one is taken to cost what the last one did), or an iteration cap when no clock is given."""

    def __init__(self, budget_s: float | None, clock: Callable[[], float] | None,
                 iterations: int | None = None) -> None:
        if (budget_s is None or clock is None) and iterations is None:
            raise ValueError("give a time budget with a clock, or an iteration count")
        self.clock = clock
        self.iterations = iterations
        self.done = 0
        self.last = clock() if clock is not None else 0.0
        self.deadline = self.last + budget_s if clock is not None and budget_s is not None else None

    def more(self) -> bool:
        """Whether to start another iteration (counting it as started)."""
        if self.iterations is not None and self.done >= self.iterations:
            return False
        if self.deadline is not None and self.clock is not None:
            now = self.clock()
            cost, self.last = now - self.last, now
            if self.done and now + cost >= self.deadline:
                return False
        self.done += 1
        return True
