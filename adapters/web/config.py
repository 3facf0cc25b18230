"""The web adapter's settings (environment variables ``CINQ_WEB_*``).

``CINQ_WEB_PUBLIC_URL`` is the address people open (``https://cards.example``); with it set, ``cinq
serve`` runs the web adapter and the service puts links to the table in its messages.  The adapter
listens on ``CINQ_WEB_HOST``:``CINQ_WEB_PORT``.  In Telegram the page is a Mini App: its ``initData``
is checked with the bot's token (``CINQ_TELEGRAM_TOKEN``) and refused once older than
``CINQ_WEB_INIT_DATA_MAX_AGE_S``.
"""

from __future__ import annotations

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class WebSettings(BaseSettings):
    """The adapter's settings (see the module docstring)."""

    model_config = SettingsConfigDict(env_prefix="CINQ_WEB_", extra="ignore", env_ignore_empty=True,
                                      populate_by_name=True)

    public_url: str | None = None
    host: str = "127.0.0.1"
    # Not 8081 (Telegram) nor 8082 (webhook): `cinq serve` may run all three.
    port: int = 8083
    bot_token: str | None = Field(default=None, validation_alias=AliasChoices(
        "CINQ_WEB_BOT_TOKEN", "CINQ_TELEGRAM_TOKEN"))
    init_data_max_age_s: float = Field(default=3600.0, gt=0)
    # A session made from initData lasts as long as a link does.
    session_ttl_s: float = Field(default=6 * 3600.0, gt=0)
    # SSE: a comment line this often keeps proxies from closing an idle stream.
    ping_s: float = Field(default=15.0, gt=0)
