"""Settings come from the environment only; an empty variable means "use the default"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from service.foundation.settings import Settings


def test_empty_environment_variables_fall_back_to_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    # docker-compose passes every documented variable, empty when the operator left it unset
    monkeypatch.setenv("CINQ_BUCKETS", "")
    monkeypatch.setenv("CINQ_HTTP_HOST", "")
    s = Settings()
    assert s.buckets == 1024
    assert s.http_host == "127.0.0.1"


@pytest.mark.parametrize(("default", "env", "bad", "error"), [
    ({"buckets": 1024}, {"CINQ_BUCKETS": ("buckets", 64), "REDIS_URL": ("redis_url", "redis://example:6379/3")},
     {"CINQ_BUCKETS": "0"}, "buckets"),
    # the retention's (service.ops.retention)
    ({"retain_finished_days": 30},
     {"CINQ_RETAIN_FINISHED_DAYS": ("retain_finished_days", 0),
      "CINQ_ARCHIVE_DIR": ("archive_dir", "/var/cinq")},
     {"CINQ_RETAIN_FINISHED_DAYS": "-1"}, "retain_finished_days"),
])
def test_environment_overrides_and_validates(monkeypatch: pytest.MonkeyPatch, default: dict[str, object],
                                             env: dict[str, tuple[str, object]], bad: dict[str, str],
                                             error: str) -> None:
    assert {k: getattr(Settings(), k) for k in default} == default
    for var, (_, value) in env.items():
        monkeypatch.setenv(var, str(value))
    s = Settings()
    assert {f: getattr(s, f) for f, _ in env.values()} == dict(env.values())
    for var, value in bad.items():
        monkeypatch.setenv(var, value)
    with pytest.raises(ValueError, match=error):
        Settings()


STRONG = "k3YbJ0s7uLq1VfR9xT2mWc8nZp4aHd6gE5iOy0QwRt"


@pytest.mark.parametrize("secrets,why", [
    ([], "is not set"),
    (["dev-secret-change-me"], "published example"),
    (["change-me-to-a-long-random-string"], "published example"),
    (["CHANGE-ME-please-to-something-longer-than-32"], "placeholder"),
    (["a-long-random-secret"], "20 bytes long, shorter than 32"),
    ([STRONG, "tiny-old-key"], "secret #2"),
])
def test_a_role_on_redis_refuses_a_missing_known_or_short_token_secret(secrets, why) -> None:
    from service.foundation.secrets import UnsafeConfiguration
    from service.ops.runtime import connect

    with pytest.raises(UnsafeConfiguration) as refused:
        connect(Settings(redis_url="redis://127.0.0.1:1/0", token_secrets=secrets))
    line = str(refused.value)
    assert "\n" not in line and "CINQ_TOKEN_SECRETS" in line and why in line
    assert "secrets.token_urlsafe" in line  # how to make a good one
    for s in secrets:
        assert s == STRONG or s not in line  # the offending value is never printed
    _, embedded = connect(Settings(redis_url="redis://127.0.0.1:1/0", token_secrets=[STRONG]))
    assert not embedded


def test_the_embedded_store_needs_no_secret_and_signs_with_a_random_one() -> None:
    a, b = Settings(), Settings()
    assert a.token_secrets == [] and a.secrets_bytes() == b.secrets_bytes()
    assert len(a.secrets_bytes()[0]) == 32 and b"change" not in a.secrets_bytes()[0]
    shown = repr(Settings(token_secrets=[STRONG]))
    assert "**" in shown and STRONG not in shown


def test_a_configuration_error_never_prints_a_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    from adapters.webhook.config import WebhookSettings
    from service.foundation.secrets import load

    leaked = "whsec_c2hvcnQ="  # too short for a platform secret
    monkeypatch.setenv("CINQ_WEBHOOK_PLATFORMS",
                       f'[{{"name": "acme", "secrets": ["{leaked}"], "callback_url": "x"}}]')
    with pytest.raises(SystemExit) as refused:
        load(WebhookSettings, "the webhook adapter's configuration")
    assert "platforms.0.secrets" in str(refused.value) and leaked not in str(refused.value)
    with pytest.raises(ValueError) as raw:
        WebhookSettings()
    assert leaked not in str(raw.value)  # hide_input_in_errors: pydantic's own message holds no input
    monkeypatch.setenv("CINQ_WEBHOOK_PLATFORMS", '[{"name": "acme", "secrets": ["whsec_unterminated')
    with pytest.raises(SystemExit) as refused:
        load(WebhookSettings, "the webhook adapter's configuration")
    assert "platforms" in str(refused.value) and "unterminated" not in str(refused.value)
    monkeypatch.setenv("CINQ_TOKEN_SECRETS", '["secret-value-in-a-bad-list", 3')
    with pytest.raises(SystemExit) as refused:
        load(Settings)
    assert "token_secrets" in str(refused.value) and "secret-value" not in str(refused.value)


@pytest.mark.parametrize(("value", "why"), [
    (None, "is not set"), ("", "is not set"), ("short-but-random-x7", "19 bytes long, shorter than 32"),
    ("change-me-to-32-or-more-random-bytes", "published example or placeholder"),
    ("dev-secret-change-me", "published example or placeholder"), ("example" * 6, "placeholder"),
])
def test_a_role_on_redis_refuses_to_start_without_a_strong_daily_secret(value: str | None, why: str) -> None:
    from service.ops.runtime import connect

    settings = Settings(redis_url="redis://127.0.0.1:1/0", token_secrets=[STRONG], daily_secret=value)
    with pytest.raises(SystemExit) as refused:
        connect(settings)
    line = str(refused.value)
    assert line.startswith("cinq: refusing to start: CINQ_DAILY_SECRET") and why in line
    assert "secrets.token_urlsafe(32)" in line and "\n" not in line  # one line, saying how
    assert not value or value not in line  # never the secret itself
    assert "short-but" not in repr(settings)  # a SecretStr: hidden from reprs and logs


def test_the_embedded_store_needs_no_daily_secret_and_makes_one_for_the_process() -> None:
    from service.ops.runtime import connect

    settings = Settings(redis_url=None, daily_secret=None)
    with pytest.warns(UserWarning, match="REDIS_URL"):
        connect(settings)
    assert len(settings.daily_secret_bytes()) == 32
    assert settings.daily_secret_bytes() == Settings(daily_secret=None).daily_secret_bytes()  # per process
    strong = Settings(redis_url="redis://127.0.0.1:1/0", token_secrets=[STRONG],
                      daily_secret="x" * 8 + "a-long-random-daily-secret!")
    connect(strong)  # a strong secret starts


ROOT = Path(__file__).resolve().parents[3]


def _env_names(text: str) -> list[str]:
    return re.findall(r"^([A-Z][A-Z0-9_]*)=", text, flags=re.M)


def test_env_example_names_every_setting_of_every_role() -> None:
    from adapters.telegram.config import TelegramSettings
    from adapters.web.config import WebSettings
    from adapters.webhook.config import WebhookSettings

    documented = set(_env_names((ROOT / ".env.example").read_text()))
    wanted = set()
    for cls in (Settings, TelegramSettings, WebhookSettings, WebSettings):
        prefix = cls.model_config.get("env_prefix", "")
        wanted |= {"REDIS_URL" if name == "redis_url" else f"{prefix}{name}".upper()
                   for name in cls.model_fields}
    assert wanted - documented == set(), "settings missing from .env.example"
    # REDIS_PASSWORD is compose's own (it makes REDIS_URL and starts Redis with it)
    assert documented - wanted == {"REDIS_PASSWORD"}, ".env.example names a variable no setting reads"


def test_docker_compose_passes_every_documented_variable_to_the_roles() -> None:
    compose = (ROOT / "docker-compose.yml").read_text()
    block = compose.split("environment: &cinq-env\n", 1)[1].split("\n  depends_on:", 1)[0]
    passed = set(re.findall(r"^    ([A-Z][A-Z0-9_]*):", block, flags=re.M))
    assert set(_env_names((ROOT / ".env.example").read_text())) - passed == {"REDIS_PASSWORD"}
    assert "REDIS_URL: redis://:${REDIS_PASSWORD:?" in block  # a role reaches Redis with the password
