"""Configuration of the service, read from the environment (pydantic-settings).

Every setting is an environment variable with the prefix ``CINQ_`` (``CINQ_BUCKETS=64``), except the
Redis address, which is the conventional ``REDIS_URL``.  Without ``REDIS_URL`` the service runs on an
embedded store (fakeredis, in the process) and says so with a warning.

Secrets are :class:`~pydantic.SecretStr` (shown as ``**********``) and no validation error prints
an input (``hide_input_in_errors``); with ``REDIS_URL`` set, a missing, known or short token secret
stops the role at start-up (:meth:`Settings.require_safe`, :mod:`service.foundation.secrets`), and so
does a missing, known or short daily secret (the daily deal's seeds).
"""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import urlsplit

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from service.foundation.secrets import TOKEN_SECRET_MIN_BYTES, ephemeral, require_strong


class Settings(BaseSettings):
    """The service's settings; see docs/service.md for what each one does."""

    model_config = SettingsConfigDict(env_prefix="CINQ_", extra="ignore", env_ignore_empty=True,
                                      hide_input_in_errors=True)

    redis_url: str | None = Field(default=None, validation_alias=AliasChoices("REDIS_URL", "CINQ_REDIS_URL"))
    # REDIS_URL names one node of a Redis Cluster (the client discovers the others).
    redis_cluster: bool = False
    # Redis Sentinel: the sentinels' addresses ("host:port", a JSON list).  Set, every role finds the
    # primary through them and follows a failover without a restart (REDIS_URL, if set, then only
    # gives the database number, user and password).  See service.store.connection.
    redis_sentinels: list[str] = Field(default_factory=list)
    redis_sentinel_master: str = "cinq"
    # Acknowledge nothing (a 202, a Telegram update, a command's ack, a delivery) before this many
    # replicas have it (WAIT, or WAITAOF where the server has it and redis_waitaof), waiting at most
    # redis_replica_timeout_ms; then "not yet" (503 + Retry-After, the command read again).  0: no
    # wait (one Redis).  Required >= 1 with sentinels (service.store.replicas).
    redis_min_replicas: int = Field(default=0, ge=0, le=16)
    redis_replica_timeout_ms: int = Field(default=1000, ge=10, le=60_000)
    redis_waitaof: bool = True
    # Each role's Redis client holds at most this many connections (service.store.pool); a command
    # finding them all busy waits up to redis_pool_timeout_s, then is a Redis error (503, read again).
    redis_max_connections: int = Field(default=64, ge=2, le=10_000)
    redis_pool_timeout_s: float = Field(default=5.0, gt=0, le=120)
    # Tables are spread over buckets: every key of one bucket shares a Redis Cluster hash tag.
    buckets: int = Field(default=1024, ge=1, le=16384)
    # Prepended to every key (a benchmark or a second deployment sharing one Redis).
    key_prefix: str = ""
    # Command streams are sharded; each shard is leased to one live worker at a time, so a table's
    # commands all reach one worker (its cache stays warm).  More shards than workers lets workers join.
    command_shards: int = Field(default=4, ge=1, le=256)
    # A snapshot is written every N events, so loading reads at most N-1 events after it.
    snapshot_every: int = Field(default=25, ge=1)
    # Turn timer in seconds (0: no timer); after this many timeouts in a row a seat goes to an AI player.
    turn_seconds: float = Field(default=60.0, ge=0)
    timeouts_to_bot: int = Field(default=3, ge=1)
    # A person whose only move is to pass passes after this many seconds, on every platform (0: they
    # pass themselves): nobody taps to pass when there is nothing else to do.
    auto_pass_s: float = Field(default=1.5, ge=0)
    # A rematch waits this long (since its last change) for its people to accept; then AI players take
    # the seats of those who did not answer, and the match starts.
    rematch_wait_s: float = Field(default=60.0, gt=0)
    # A lobby nobody joined, left or changed for this long closes itself (0: lobbies never expire), so
    # that a table someone opened and forgot does not stay in Redis for ever.
    lobby_idle_s: float = Field(default=21_600.0, ge=0)
    # The level of the AI player that takes over a seat (a player left, or timed out K times).
    bot_level: str = "medium"
    # Secrets that sign action tokens: the first signs, all of them verify (key rotation).  Unset:
    # a random one for this process (the embedded store); a role on Redis refuses to start without.
    token_secrets: list[SecretStr] = Field(default_factory=list)
    # The daily deal's seeds are derived from this secret and the date (service.domain.daily): whoever
    # knows it knows every future deal.  Unset: a random one for this process (the embedded store); a
    # role on Redis refuses to start without a strong one (require_safe).
    daily_secret: SecretStr | None = None
    # How long after its UTC day a daily deal stays secret (an attempt begun before midnight may be
    # finished meanwhile; an unfinished one is closed then).
    daily_grace_s: float = Field(default=7200.0, ge=0, le=86_400)
    # Worker tuning.
    batch: int = Field(default=128, ge=1)
    block_ms: int = Field(default=200, ge=1)
    claim_idle_ms: int = Field(default=30_000, ge=1)
    max_attempts: int = Field(default=5, ge=1)
    group: str = "workers"
    # A worker's lease on a command shard: a dead worker's shards are taken over after this long.
    lease_ms: int = Field(default=6_000, ge=100)
    # False: every worker reads every shard (no leases; tests of races between workers use it).
    worker_leases: bool = True
    timer_interval: float = Field(default=0.5, gt=0)
    # Retention keeps outbox messages this long after every platform acknowledged them (a grace period
    # for debugging; 0: they go at once).
    outbox_keep_s: float = Field(default=0.0, ge=0)
    # Retention (service.ops.retention): tables finished or cancelled this many days ago are archived to
    # a file under archive_dir and removed from Redis, checked every retain_interval_s (0/None: off).
    retain_finished_days: float | None = Field(default=30.0, ge=0)
    retain_interval_s: float = Field(default=3600.0, gt=0)
    archive_dir: str = "archive"
    # The web table's public address (adapters/web): with it set, the delivered messages carry each
    # recipient's link to the page (service.platform.links), and `cinq serve` runs the web adapter.
    web_public_url: str | None = None
    # The operations listener of every role (/healthz, /readyz, /metrics: service.ops.health), apart
    # from the public ports; loopback unless said otherwise (a scraper on a private network).
    http_host: str = "127.0.0.1"
    http_port: int = 8080
    log_level: str = "INFO"

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, v: str | None) -> str | None:
        # Checked here, so that a malformed URL is one line naming the setting; a traceback from the
        # client could quote the URL, and with it the password (issue 32).
        if v is None:
            return v
        try:
            scheme = urlsplit(v).scheme
            _ = urlsplit(v).port  # ValueError when the port is not a number
        except ValueError:
            scheme = ""
        if scheme not in ("redis", "rediss", "unix"):
            raise ValueError("is not a Redis URL: redis://[user:password@]host:port/db (or rediss://, unix://)")
        return v

    def daily_secret_bytes(self) -> bytes:
        """The daily deal's secret (unset: this process's random one, see ``daily_secret``)."""
        if self.daily_secret is None:
            return hmac.new(ephemeral(), b"cinq/daily-secret", hashlib.sha256).digest()
        return self.daily_secret.get_secret_value().encode()

    def secrets_bytes(self) -> list[bytes]:
        """The token secrets as bytes, the signing one first (none set: this process's random one)."""
        return [s.get_secret_value().encode() for s in self.token_secrets] or [ephemeral()]

    def require_safe(self) -> None:
        """Refuse to go on (one line: :class:`service.foundation.secrets.UnsafeConfiguration`) when
        the token secrets or the daily secret are missing, known or shorter than 32 bytes: every role
        on Redis asks."""
        require_strong("CINQ_TOKEN_SECRETS", [s.get_secret_value() for s in self.token_secrets],
                       TOKEN_SECRET_MIN_BYTES)
        # the daily deal's: whoever knows it knows every future deal of the day (service.domain.daily)
        daily = self.daily_secret.get_secret_value() if self.daily_secret is not None else ""
        require_strong("CINQ_DAILY_SECRET", [daily], TOKEN_SECRET_MIN_BYTES)
