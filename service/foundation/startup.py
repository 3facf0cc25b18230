"""Starting a process quickly: heavy imports without the cyclic garbage collector.

Importing aiogram builds some 900 pydantic models (``aiogram.types`` rebuilds every Bot API type's
schema at import: about 3 s of CPU, most of ``cinq telegram``'s start).  Every model built is an
object that lives as long as the process, yet while they are being built the collector runs again
and again over all of them (a collection every 700 new container objects, and the older
generations' scans grow with the heap), so that import runs with the collector paused (pausing the
service's own imports as well saves nothing more).  The garbage made meanwhile is collected by the
first collection after it, unless the heap is then frozen (``freeze``): what was built lives as long
as the process, and no full collection scans it again (otherwise one is due during the bot's
start-up); the few cycles the import left are then kept for good.  What it saves:
``bench/results/taps.txt`` and docs/telegram.md ("Start-up").
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused(freeze: bool = False) -> Iterator[None]:
    """Run the block (a heavy import) with the cyclic garbage collector off, then as it was.
    ``freeze``: then move everything that exists into the permanent generation (:func:`gc.freeze`),
    for a process whose heap, once started, lives as long as it does."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if was:
            gc.enable()
