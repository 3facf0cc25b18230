"""A configuration error never prints a secret (issue 32 #8: "a configuration error prints the
offending secret in full (``input_value=…``)").

For each setting that holds a secret, a real ``cinq serve`` is started with a value that is wrong in a
way that stops it (not JSON, the wrong type, the wrong shape, a field too many, a malformed URL around
a password): it must refuse with one line that names the setting, and the secret must appear nowhere
in what it printed.  (test_safe_defaults.py has the weak and missing secrets.)
"""

from __future__ import annotations

import json

import pytest

from tests.security.deployment import start_role

MARK = "S3cretMark-0123456789abcdefghijklmnopqrstuvwxyz"  # long enough to pass any length check

CASES = {
    "token secrets, not JSON": ({"CINQ_TOKEN_SECRETS": f"not-json-{MARK}"}, "token_secrets"),
    "token secrets, not a list": ({"CINQ_TOKEN_SECRETS": json.dumps({"key": MARK})}, "token_secrets"),
    "token secrets, not strings": ({"CINQ_TOKEN_SECRETS": json.dumps([MARK, 5])}, "token_secrets.1"),
    "daily secret, too short": ({"CINQ_DAILY_SECRET": MARK[:20]}, "CINQ_DAILY_SECRET"),
    "Redis password, port not a number": ({"REDIS_URL": f"redis://:{MARK}@127.0.0.1:port/0"}, "REDIS_URL"),
    "Redis password, not a Redis URL": ({"REDIS_URL": f"http://:{MARK}@127.0.0.1:6379/0"}, "REDIS_URL"),
    "bot token, malformed": ({"CINQ_TELEGRAM_TOKEN": f"{MARK}-no-colon"}, "token"),
    "Telegram webhook secret, characters Telegram refuses": (
        {"CINQ_TELEGRAM_TOKEN": "4242:AAbbCCdd", "CINQ_TELEGRAM_PUBLIC_URL": "https://cards.example",
         "CINQ_TELEGRAM_WEBHOOK_SECRET": f"{MARK} with spaces!"}, "webhook_secret"),
    "web bot token, malformed": ({"CINQ_WEB_PUBLIC_URL": "https://cards.example",
                                  "CINQ_WEB_BOT_TOKEN": MARK}, "CINQ_WEB_BOT_TOKEN"),
    "webhook platforms, not JSON": (
        {"CINQ_WEBHOOK_PLATFORMS": f'[{{"name": "acme", "secrets": ["whsec_{MARK}"'}, "platforms"),
    "webhook platform secrets, not a list": (
        {"CINQ_WEBHOOK_PLATFORMS": json.dumps([{"name": "acme", "secrets": f"whsec_{MARK}",
                                                "callback_url": "http://127.0.0.1:9/"}])},
        "platforms.0.secrets"),
    "webhook platform, a field too many": (
        {"CINQ_WEBHOOK_PLATFORMS": json.dumps([{"name": "acme", "secrets": [f"whsec_{MARK}"],
                                                "callback_url": "http://127.0.0.1:9/", "oops": MARK}])},
        "platforms.0"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_wrong_secret_setting_is_one_line_without_the_secret(case):
    env, setting = CASES[case]
    rc, out = start_role(["serve"], env)
    assert rc is not None, f"it started instead of refusing: {out[-1500:]}"
    assert MARK not in out and MARK[:20] not in out, out[-1500:]
    lines = [line for line in out.splitlines() if line.strip()]
    assert rc != 0 and len(lines) == 1, out[-1500:]
    assert lines[0].startswith("cinq: refusing to start: ") and setting in lines[0], lines[0]
