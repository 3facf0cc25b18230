"""Lose the Redis machine and lose nothing acknowledged (issue 36): one run per fault of
:mod:`tests.faults.failover` on a real Sentinel deployment (a primary, two replicas, three sentinels)
or, for ``cluster``, a real Redis Cluster (three masters with a replica each), private matches played
over signed HTTP by real ``cinq worker`` and ``cinq webhook`` processes that wait for every replica
(``live``: the primary failed over while it lives on, which loses acknowledged moves when they wait
for one replica of two: ``bench/false_failover.py``).

After each: nothing acknowledged lost, nothing applied twice, nothing shown and then undone, every
callback delivered, every replay exact, no table version drawn over a newer one in any chat, and the
service answering again after the promotion (how long it took is printed for
bench/results/failover.txt, not asserted: a loaded machine may be slow).  Marked ``failover``: run by
``make test-failover`` (about a minute a run), in its own step of ``.ci/run``.
"""

from __future__ import annotations

import math

import pytest

from tests.faults.failover import FAULTS, run
from tests.faults.redis_server import require_binary
from tests.faults.replicated import require_sentinel

pytestmark = [pytest.mark.faults, pytest.mark.failover]


@pytest.mark.parametrize("fault", FAULTS)
async def test_a_failover_loses_nothing_acknowledged_and_shows_nothing_it_takes_back(fault, tmp_path):
    require_binary()
    require_sentinel()
    report = await run(fault=fault, seed=36, tables=24, workdir=tmp_path)
    print(report.line())
    summary = report.line() + "\n" + report.summary()
    if fault == "partition":
        assert report.partitions == 1, summary
        # Nothing is acknowledged while the primary has no replica: the platform was told "not yet".
        assert report.statuses.get("503", 0) > 0, summary
    else:
        assert report.promotions >= 1 and (report.kills >= 1 or fault == "live"), summary
        assert all(math.isfinite(r) for r in report.recovery_s), f"never answered again\n{summary}"
    assert report.acknowledged >= 24 * 5, summary
    assert not report.lost, f"acknowledged requests never acted on\n{summary}"
    assert not report.twice, f"commands applied twice\n{summary}"
    assert not report.undone, f"callbacks shown, then taken back by the failover\n{summary}"
    assert not report.callbacks_missing, f"callbacks never delivered\n{summary}"
    assert report.tables_created >= 24 and not report.tables_unfinished, summary
    assert not report.replay_failed, summary
    assert not report.inversions, f"older table versions drawn over newer ones\n{summary}"
