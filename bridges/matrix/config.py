"""The bridge's settings, all from the environment (prefix ``CINQ_MATRIX_``); see the README."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
# Below cinq's callback timeout (the webhook's ``timeout_s``, 10 s): a request a callback makes that
# hangs ends in time for the bridge to answer cinq 503 (sent again later), before cinq stops waiting.
REQUEST_TIMEOUT_S = 4.0


class ConfigError(Exception):
    """A setting is missing or malformed; the message names it."""


@dataclass(frozen=True)
class Config:
    """Where the homeserver and cinq are, who the bot is, and where the bridge keeps its state."""

    homeserver: str  # e.g. https://matrix.example.org
    user: str  # the bot's full user id, @cinq:example.org
    password: str  # used once: the access token and device are kept in the state
    cinq_url: str  # the webhook adapter, e.g. http://127.0.0.1:8082
    platform: str  # the name registered in CINQ_WEBHOOK_PLATFORMS
    secret: str  # that platform's secret (signs both ways)
    host: str = "127.0.0.1"  # where the callback server listens
    port: int = 8090
    state: str = "matrix-bridge.sqlite3"
    display_name: str = "Cinquillo"
    locale: str = "es"  # until a person picks their language with /lang
    log_level: str = "INFO"  # DEBUG: each callback shown and each message handed on, one line each
    request_timeout: float = REQUEST_TIMEOUT_S  # seconds a request to the homeserver may take

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Config:
        """Read the settings; raises :class:`ConfigError` naming the first missing one."""
        env = os.environ if env is None else env

        def need(name: str) -> str:
            value = env.get(f"CINQ_MATRIX_{name}", "")
            if not value:
                raise ConfigError(f"CINQ_MATRIX_{name} is required")
            return value

        def opt(name: str, default: str) -> str:
            return env.get(f"CINQ_MATRIX_{name}") or default

        try:
            port = int(opt("PORT", "8090"))
        except ValueError:
            raise ConfigError("CINQ_MATRIX_PORT must be a port number") from None
        try:
            request_timeout = float(opt("REQUEST_TIMEOUT", str(REQUEST_TIMEOUT_S)))
        except ValueError:
            raise ConfigError("CINQ_MATRIX_REQUEST_TIMEOUT must be a number of seconds") from None
        if not 0 < request_timeout <= 600:
            raise ConfigError("CINQ_MATRIX_REQUEST_TIMEOUT must be above 0 and at most 600 seconds")
        log_level = opt("LOG_LEVEL", "INFO").upper()
        if log_level not in LEVELS:
            raise ConfigError(f"CINQ_MATRIX_LOG_LEVEL must be one of {', '.join(LEVELS)}")
        return cls(
            homeserver=need("HOMESERVER").rstrip("/"),
            user=need("USER"),
            password=need("PASSWORD"),
            cinq_url=need("CINQ_URL").rstrip("/"),
            platform=need("PLATFORM"),
            secret=need("SECRET"),
            host=opt("HOST", "127.0.0.1"),
            port=port,
            state=opt("STATE", "matrix-bridge.sqlite3"),
            display_name=opt("DISPLAY_NAME", "Cinquillo"),
            locale=opt("LOCALE", "es"),
            log_level=log_level,
            request_timeout=request_timeout,
        )
