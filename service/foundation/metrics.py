"""Prometheus metrics of the service, in their own registry (so tests and several workers in one
process do not collide on the global one)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest


class Metrics:
    """The counters, gauges and histogram a worker updates."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.commands = Counter("cinq_commands", "Commands processed, by command and outcome",
                                ["command", "outcome"], registry=r)
        self.conflicts = Counter("cinq_version_conflicts", "Compare-and-append version conflicts", registry=r)
        self.latency = Histogram("cinq_command_seconds", "From command submitted to its events appended",
                                 buckets=(.001, .002, .005, .01, .02, .05, .1, .25, .5, 1, 2.5, 5),
                                 registry=r)
        self.pending = Gauge("cinq_pending_commands", "Commands delivered but not yet acknowledged",
                             registry=r)
        self.dead = Counter("cinq_dead_letters", "Commands sent to a dead-letter stream", registry=r)
        self.claimed = Counter("cinq_claimed_commands", "Commands taken over from a dead worker", registry=r)
        self.shards = Gauge("cinq_worker_shards", "Command shards this worker holds the lease of", registry=r)

    def exposition(self) -> bytes:
        """The metrics in Prometheus' text format."""
        return generate_latest(self.registry)
