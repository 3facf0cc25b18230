"""The writes a worker holds back for its next round trip.

After a batch is appended, its acknowledgements, index writes, AI ticks and the doorbell are not sent
at once: they are queued here and go in the same pipeline as the next read (or the next appends), so
that a command costs one round trip, not two.  Until then those commands stay pending in Redis, so a
crash in between only means a redelivery, which the append script recognises.
"""

from __future__ import annotations

from typing import Any


class HeldBack:
    """One pipeline of held-back writes, shared by the stages of a worker."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis
        self._pipe: Any = None

    def pipe(self) -> Any:
        """The pipeline to queue held-back writes on (made when first needed)."""
        if self._pipe is None:
            self._pipe = self.redis.pipeline(transaction=False)
        return self._pipe

    def take(self) -> Any:
        """The held-back writes for a round trip that sends them (a new pipeline when nothing is
        held): whatever the caller queues after them goes in the same round trip."""
        pipe, self._pipe = self._pipe, None
        return pipe if pipe is not None else self.redis.pipeline(transaction=False)

    def drop(self) -> None:
        """Forget what is held (a process that dies loses it; tests of crashes use this)."""
        self._pipe = None

    async def flush(self) -> None:
        """Send what is held now, alone."""
        pipe, self._pipe = self._pipe, None
        if pipe is not None:
            await pipe.execute()
