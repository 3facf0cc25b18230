"""The web adapter's settings (environment variables ``CINQ_WEB_*``).

``CINQ_WEB_PUBLIC_URL`` is the address people open (``https://cards.example``); with it set, ``cinq
serve`` runs the web adapter and the service puts links to the table in its messages.  The adapter
listens on ``CINQ_WEB_HOST``:``CINQ_WEB_PORT``.  In Telegram the page is a Mini App: its ``initData``
is checked with the bot's token (``CINQ_TELEGRAM_TOKEN``) and refused once older than
``CINQ_WEB_INIT_DATA_MAX_AGE_S``.
"""

from __future__ import annotations

import re

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from adapters.web.feeds import FeedLimits
from adapters.web.initdata import MAX_AGE_LIMIT_S, MAX_AGE_S, SESSION_TTL_LIMIT_S, SESSION_TTL_S
from service.foundation.secrets import UnsafeConfiguration, weakness


class WebSettings(BaseSettings):
    """The adapter's settings (see the module docstring)."""

    model_config = SettingsConfigDict(env_prefix="CINQ_WEB_", extra="ignore", env_ignore_empty=True,
                                      populate_by_name=True, hide_input_in_errors=True)

    public_url: str | None = None
    host: str = "127.0.0.1"
    # Not 8081 (Telegram) nor 8082 (webhook): `cinq serve` may run all three.
    port: int = 8083
    bot_token: SecretStr | None = Field(default=None, validation_alias=AliasChoices(
        "CINQ_WEB_BOT_TOKEN", "CINQ_TELEGRAM_TOKEN"))
    # How old a Mini App's initData may be, and how long the session made from it lasts (Telegram's
    # guidance: check auth_date; the bounds and why: adapters/web/initdata.py).
    init_data_max_age_s: float = Field(default=MAX_AGE_S, gt=0, le=MAX_AGE_LIMIT_S)
    session_ttl_s: float = Field(default=SESSION_TTL_S, gt=0, le=SESSION_TTL_LIMIT_S)
    # SSE: a comment line this often keeps proxies from closing an idle stream.
    ping_s: float = Field(default=15.0, gt=0)
    # Live feeds held open (adapters/web/feeds.py): by the process, by one person's link, by a room's
    # spectator link (a whole group opens it); past them 503 / 429 with Retry-After.
    max_feeds: int = Field(default=2000, ge=1)
    # A link (or session) opens its table until this long after the match ended (the end screen, the
    # replay, "Play again"); then 401 expired.
    after_end_s: float = Field(default=900.0, ge=0)
    # Requests that act (moves, Mini App sessions, the daily deal), per person: a token bucket of this
    # rate (per second) and burst, shared with their other ways in (service/platform/inbound.py).
    rate: float = Field(default=3.0, gt=0)
    burst: int = Field(default=12, ge=1)
    feeds_per_link: int = Field(default=8, ge=1)
    feeds_per_room_link: int = Field(default=256, ge=1)

    def feed_limits(self) -> FeedLimits:
        """The bounds on open feeds (:class:`adapters.web.feeds.FeedLimits`)."""
        return FeedLimits(total=self.max_feeds, per_link=self.feeds_per_link,
                          per_room_link=self.feeds_per_room_link)

    def bot_token_value(self) -> str | None:
        """The bot token itself (None: not set: no Mini App sessions)."""
        return self.bot_token.get_secret_value() if self.bot_token else None

    def require_safe(self) -> None:
        """Refuse to serve Mini App sessions with a bot token anyone may know (an example value, or
        not a bot token at all): initData signed with it would open anyone's hand."""
        token = self.bot_token_value()
        if not self.public_url or token is None:
            return
        number, _, key = token.partition(":")
        why = weakness(key, 20) if number.isdigit() else "is not a bot token (<digits>:<key>)"
        if why is not None or not re.fullmatch(r"[A-Za-z0-9_-]+", key):
            raise UnsafeConfiguration("CINQ_WEB_BOT_TOKEN (or CINQ_TELEGRAM_TOKEN)",
                                      why or "is not a bot token", "copy it from @BotFather")
