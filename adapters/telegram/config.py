"""The Telegram adapter's settings (pydantic-settings, environment variables ``CINQ_TELEGRAM_*``).

``CINQ_TELEGRAM_TOKEN`` is the bot token.  Without ``CINQ_TELEGRAM_PUBLIC_URL`` the bot polls
(development); with it, the bot registers ``<public_url><webhook_path>`` as its webhook and serves it
with aiohttp, refusing any request without the ``X-Telegram-Bot-Api-Secret-Token`` it registered.
``CINQ_TELEGRAM_API_URL`` points the bot at another Bot API server (a local ``telegram-bot-api``, or
the fake server of the tests).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from service.foundation.secrets import require_strong

WEBHOOK_SECRET_MIN_BYTES = 32
_WEBHOOK_SECRET = re.compile(r"^[A-Za-z0-9_-]{1,256}$")  # what Telegram accepts as a secret_token
_TOKEN = re.compile(r"^[0-9]{1,20}:[A-Za-z0-9_-]{1,100}$")  # what @BotFather gives


@dataclass(frozen=True)
class Limits:
    """Telegram's flood limits, as the sender keeps them (seconds; tests shrink them).

    About one message a second per chat, twenty a minute per group (18 here: calls made by the
    handlers themselves, such as a settings keyboard, go around the queue), thirty a second overall.
    ``coalesce_s`` is how long an edit waits before it goes out, so that the edits of a burst of moves
    (AI players answer in milliseconds) merge into one.  The table of a running match in a group
    has an edit budget: ``group_burst`` edits at once, refilled one per ``group_interval_s``.  While
    it lasts a move shows in the group within ``coalesce_s``; when people play faster than that,
    the moves merge until an edit's worth has refilled, and then up to ``group_hold_s`` more for a
    fresher move (the edit then shows it at once).  At 4 s the table takes up to about 15
    of the group's 18 calls a minute, leaving the rest for announcements, notices and the summary
    (never merged away); the players get their turn in private at once either way.
    """

    chat_interval_s: float = 1.0
    group_per_window: int = 18
    window_s: float = 60.0
    global_per_s: int = 30
    coalesce_s: float = 0.4
    group_interval_s: float = 4.0
    group_burst: int = 2
    group_hold_s: float = 2.0

    def scaled(self, k: float) -> Limits:
        """The same limits with every duration multiplied by ``k`` (0.01: a minute is 0.6 s)."""
        return Limits(self.chat_interval_s * k, self.group_per_window, self.window_s * k,
                      self.global_per_s, self.coalesce_s * k, self.group_interval_s * k, self.group_burst,
                      self.group_hold_s * k)


class TelegramSettings(BaseSettings):
    """Settings of ``cinq telegram``."""

    model_config = SettingsConfigDict(env_prefix="CINQ_TELEGRAM_", extra="ignore", env_ignore_empty=True,
                                      hide_input_in_errors=True)

    token: SecretStr | None = None
    api_url: str | None = None
    public_url: str | None = None
    webhook_path: str = "/telegram/webhook"
    # Required in webhook mode (public_url set): Telegram sends it with every update, and without it
    # anyone could post updates in any user's name (require_safe).
    webhook_secret: SecretStr | None = None
    # Loopback unless said otherwise (compose binds 0.0.0.0 inside its container, behind a proxy).
    host: str = "127.0.0.1"
    port: int = 8081
    # The delivery consumer name: keep it stable across restarts of one instance,
    # so that the messages it had in hand when it stopped are delivered when it comes back.
    consumer: str = "tg-1"
    chat_interval_s: float = Field(default=1.0, ge=0)
    group_per_minute: int = Field(default=18, ge=1)
    global_per_second: int = Field(default=30, ge=1)
    coalesce_s: float = Field(default=0.4, ge=0)
    group_interval_s: float = Field(default=4.0, ge=0)
    group_burst: int = Field(default=2, ge=1)
    group_hold_s: float = Field(default=2.0, ge=0)
    # Long polling: how long one getUpdates waits for an update (Telegram allows up to 50 s).
    polling_timeout: int = Field(default=30, ge=0, le=50)
    # Serve /healthz, /readyz and /metrics on host:port (in webhook mode beside the webhook).
    http: bool = True
    # How long a button press waits for the service's verdict, to answer a refusal with an alert.
    press_wait_s: float = Field(default=1.5, ge=0)
    # Each person's updates (messages, presses): a token bucket of this rate (per second) and burst,
    # shared with their web table requests (adapters/telegram/throttle.py); past it no command.
    rate: float = Field(default=4.0, gt=0)
    burst: int = Field(default=40, ge=1)

    @field_validator("token")
    @classmethod
    def _token_shape(cls, v: SecretStr | None) -> SecretStr | None:
        # one line at start-up rather than aiogram's traceback when the bot is made
        if v is not None and not _TOKEN.match(v.get_secret_value()):
            raise ValueError("a bot token is <digits>:<key>, as @BotFather gives it")
        return v

    @field_validator("webhook_secret")
    @classmethod
    def _secret_shape(cls, v: SecretStr | None) -> SecretStr | None:
        if v is not None and not _WEBHOOK_SECRET.match(v.get_secret_value()):
            raise ValueError("a webhook secret is 1-256 of A-Z, a-z, 0-9, '_' and '-' (Telegram's rule)")
        return v

    def token_value(self) -> str | None:
        """The bot token itself (None: not set)."""
        return self.token.get_secret_value() if self.token else None

    def secret_value(self) -> str | None:
        """The webhook secret itself (None: not set)."""
        return self.webhook_secret.get_secret_value() if self.webhook_secret else None

    def require_safe(self) -> None:
        """Refuse to start webhook mode without a strong secret (missing, known, or under 32 bytes):
        aiogram would take any POST to the webhook as an update from Telegram."""
        if self.token and self.public_url:
            require_strong("CINQ_TELEGRAM_WEBHOOK_SECRET", [self.secret_value() or ""],
                           WEBHOOK_SECRET_MIN_BYTES)

    def limits(self) -> Limits:
        """The flood limits from these settings."""
        return Limits(self.chat_interval_s, self.group_per_minute, 60.0, self.global_per_second,
                      self.coalesce_s, self.group_interval_s, self.group_burst, self.group_hold_s)
