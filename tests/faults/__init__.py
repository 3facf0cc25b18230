"""A fault-injection kit: real Redis failures, timed to single commands (issue 12).

The service promises that nothing acknowledged is lost and nothing is done twice, whatever the
moment Redis fails.  This kit makes those moments happen on purpose, against a real ``redis-server``:

- :mod:`tests.faults.redis_server` — ``RedisServer``: a ``redis-server`` with AOF (``appendfsync
  always``) that a test SIGKILLs and restarts on the same port and data directory; the
  ``redis_server`` fixture.
- :mod:`tests.faults.proxy` — ``Proxy``: a TCP proxy on loopback between the service and that server
  that reads every command (pipelines, scripts' keys, blocking reads) and lets a test arm one-shot or
  counted rules: close the connection just before or just after a chosen command, SIGKILL the server
  there, hold a command, or run hooks around it; with a log of what it saw.  :mod:`tests.faults.resp`
  is the bit of the Redis protocol it needs.
- :mod:`tests.faults.oom` — real ``-OOM`` refusals (``CONFIG SET maxmemory``), for a window of time
  or for exactly one chosen write.
- :mod:`tests.faults.stack` — the service's public pieces (webhook app and deliveries, workers) wired
  in-process on clients that go through the proxy, with the fake platform of the webhook tests.
- :mod:`tests.faults.chaos` — a randomized, seeded fault run with real processes (workers, the
  webhook adapter) and its report.

Tests: ``test_kit.py`` (the kit does what it says; part of ``make test``), ``test_cases.py`` (one
test per case of issue 12) and ``test_chaos.py`` (the randomized run), both marked ``faults`` and
run with ``make test-faults`` (``make test`` leaves them out until the fixes land).

Note on clients: redis-py retries a command after a connection error (3 times, with backoff) by
default, as the service's clients do; the kit's self-tests use clients without retries to observe
exactly one attempt, the case tests use clients as the service builds them.
"""
