"""Issue 12's randomized fault run at a size that fits in about two minutes on two cores: over 100
group matches with worker SIGKILLs, a Redis SIGKILL and restart, OOM windows and connection kills,
nothing acknowledged is lost, nothing is applied twice, every callback arrives, every table replays
to its result.  Marked ``faults`` and ``e2e`` (it failed before the fixes of issue 12)."""

from __future__ import annotations

import pytest

from tests.faults.chaos import run
from tests.faults.redis_server import require_binary

# Slow (about two minutes): run with the end-to-end suites (make test-e2e) and by make test-faults.
pytestmark = [pytest.mark.faults, pytest.mark.e2e]


async def test_a_randomized_fault_run_loses_nothing_and_does_nothing_twice(tmp_path):
    require_binary()
    report = await run(tables=100, workers=2, seed=12, drive_s=60.0, quiesce_s=40.0, workdir=tmp_path)
    print(report.summary())
    assert report.faults and any("redis-server restarted" in f for f in report.faults), report.summary()
    # The restart struck while requests were being made (else it proves nothing about them).
    assert report.latency_across_restart_s.get("n", 0) >= 20, report.summary()
    assert report.acknowledged >= 100 * 5, report.summary()
    assert not report.lost, f"acknowledged requests never acted on\n{report.summary()}"
    assert not report.twice, f"commands applied twice\n{report.summary()}"
    assert not report.callbacks_missing, f"callbacks never delivered\n{report.summary()}"
    assert report.tables_created >= 100 and not report.tables_unfinished, report.summary()
    assert not report.replay_failed, report.summary()
