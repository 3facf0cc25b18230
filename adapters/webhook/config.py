"""The webhook adapter's configuration: the registered platforms and the HTTP tuning.

Environment variables (prefix ``CINQ_WEBHOOK_``), e.g.::

    CINQ_WEBHOOK_PLATFORMS='[{"name": "acme", "secrets": ["whsec_..."], "callback_url": "https://acme/cinq"}]'
    CINQ_WEBHOOK_PORT=8082

A platform's ``secrets`` all verify inbound requests and all sign outbound callbacks (one signature
each), so a secret is rotated by adding the new one, switching the platform over, then removing the
old one.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from adapters.webhook.signing import secret_key
from service.foundation.secrets import weakness

NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
RESERVED = frozenset({"telegram", "terminal", "web", "webhook", "cinq", "tn", "system", "daily"})
"""Names a webhook platform may not take: the identities the service gives itself (a platform called
``telegram`` would act as Telegram's users: their tables, hands, ratings and daily attempts; ``web``
is the web table's, ``terminal`` the terminal's; ``daily`` is the deal of the day's AI level and
``tn``/``cinq``/``system`` name the service's own keys and rooms).  Not ``matrix``: the Matrix bridge
is itself a webhook platform of that name (bridges/matrix), and its users are that platform's."""
SECRET_MIN_BYTES = 24
"""The shortest platform secret: Standard Webhooks asks for 24 to 64 bytes (``whsec_`` + base64)."""


class Platform(BaseModel):
    """One chat platform that speaks to the service over HTTP."""

    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    name: str
    secrets: list[SecretStr] = Field(min_length=1)
    callback_url: str

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not NAME.match(v):
            raise ValueError("a platform name is 1-32 of a-z, 0-9, '-' and '_'")
        if v in RESERVED:
            raise ValueError(f"the platform name {v!r} is reserved (it would share that platform's users)")
        return v

    @field_validator("secrets")
    @classmethod
    def _secrets(cls, v: list[SecretStr]) -> list[SecretStr]:
        for s in v:
            why = weakness(s.get_secret_value(), 0)
            if why is not None:
                raise ValueError(f"a secret {why}")
            if len(secret_key(s.get_secret_value())) < SECRET_MIN_BYTES:
                raise ValueError(f"a secret must be at least {SECRET_MIN_BYTES} bytes")
        return v

    def secret_values(self) -> list[str]:
        """The secrets themselves, for signing and checking."""
        return [s.get_secret_value() for s in self.secrets]


class WebhookSettings(BaseSettings):
    """The adapter's settings (see the module docstring)."""

    model_config = SettingsConfigDict(env_prefix="CINQ_WEBHOOK_", extra="ignore", env_ignore_empty=True,
                                      hide_input_in_errors=True)

    platforms: list[Platform] = Field(default_factory=list)
    host: str = "127.0.0.1"
    # Not 8081, the Telegram bot's: `cinq serve` may run both.
    port: int = 8082
    # Bodies are small chat messages: anything bigger is refused before it is read.
    max_body_bytes: int = Field(default=16 * 1024, ge=256)
    tolerance_s: int = Field(default=300, ge=1)
    # Per sender (platform, user id): sustained requests per second and burst.
    rate: float = Field(default=5.0, gt=0)
    burst: int = Field(default=20, ge=1)
    # Outbound callbacks.
    timeout_s: float = Field(default=10.0, gt=0)
    max_attempts: int = Field(default=8, ge=1)
    backoff_base_s: float = Field(default=0.5, gt=0)
    backoff_cap_s: float = Field(default=60.0, gt=0)
    # Concurrent callbacks per platform and process (one chat's messages are still sent in order).
    lanes: int = Field(default=64, ge=1)
    # Whether this process also delivers callbacks (false: an HTTP-only process, scaled apart).
    deliver: bool = True

    def platform(self, name: str) -> Platform | None:
        """The registered platform called ``name``."""
        return next((p for p in self.platforms if p.name == name), None)
