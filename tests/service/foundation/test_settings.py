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


def test_a_real_redis_with_the_development_token_secret_is_warned_about() -> None:
    from service.foundation.settings import DEV_SECRET
    from service.ops.runtime import connect

    with pytest.warns(UserWarning, match="CINQ_TOKEN_SECRETS"):
        connect(Settings(redis_url="redis://127.0.0.1:1/0", token_secrets=[DEV_SECRET]))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        connect(Settings(redis_url="redis://127.0.0.1:1/0", token_secrets=["a-long-random-secret"]))


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
    assert documented - wanted == set(), ".env.example names a variable no setting reads"


def test_docker_compose_passes_every_documented_variable_to_the_roles() -> None:
    compose = (ROOT / "docker-compose.yml").read_text()
    block = compose.split("environment: &cinq-env\n", 1)[1].split("\n  depends_on:", 1)[0]
    passed = set(re.findall(r"^    ([A-Z][A-Z0-9_]*):", block, flags=re.M))
    assert set(_env_names((ROOT / ".env.example").read_text())) - passed == set()
