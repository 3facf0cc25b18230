"""The web table's Prometheus metrics (``/metrics``): moves taken, refusals, open feeds."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest


class WebMetrics:
    """The adapter's counters, in a registry of its own."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.moves = Counter("cinq_web_moves", "Moves posted by pages and handed to the service",
                             registry=self.registry)
        self.refused = Counter("cinq_web_refusals", "Requests refused, by status and code",
                               ["status", "code"], registry=self.registry)
        self.feeds = Gauge("cinq_web_feeds", "Server-Sent Event streams open now", registry=self.registry)

    def exposition(self) -> bytes:
        """The metrics in Prometheus' text format."""
        return generate_latest(self.registry)
