"""The forger against the default configuration (issue 32 #2, #3 and #8's configuration items), on
real processes: a role that uses Redis refuses to start, with one line that says how to make a good
secret, rather than sign with a secret anyone may know; the same for a Telegram webhook without a
secret, a webhook platform's weak secret or reserved name, and the web table's bot token.  No
refusal prints the offending value.  The embedded store still needs nothing.  On a deployment that
did start, links and updates forged with the published secrets open nothing.
"""

from __future__ import annotations

import json
import time

import pytest

from adapters.web.initdata import sign_init_data
from adapters.webhook.config import RESERVED, Platform
from service.domain.tokens import issue
from service.domain.weblinks import issue_link
from tests.adapters.telegram.fake_api import FakeTelegram
from tests.security.deployment import TOKEN_SECRET, deployed, start_role
from tools.loopback import free_port

PUBLISHED = ["dev-secret-change-me", "change-me-to-a-long-random-string"]
HOW = "secrets.token_urlsafe(32)"
BOT = "12345:AAbbCCddEEffGGhhIIjjKKll"


def _one_line_refusal(rc: int | None, out: str, setting: str, value: str | None = None) -> str:
    assert rc is not None, f"it started instead of refusing: {out[-1500:]}"
    lines = [line for line in out.splitlines() if line.strip()]
    assert rc != 0 and len(lines) == 1, out[-1500:]
    assert lines[0].startswith("cinq: refusing to start: ") and setting in lines[0], lines[0]
    if value:
        assert value not in out
    return lines[0]


@pytest.mark.parametrize("secrets,why", [
    (None, "is not set"),
    (json.dumps(PUBLISHED[:1]), "published example"),
    (json.dumps(PUBLISHED[1:]), "published example"),
    (json.dumps(["sh0rt-but-random"]), "shorter than 32"),
])
def test_serve_refuses_a_missing_published_or_short_token_secret(secrets, why):
    rc, out = start_role(["serve"], {"CINQ_TOKEN_SECRETS": secrets})
    line = _one_line_refusal(rc, out, "CINQ_TOKEN_SECRETS", json.loads(secrets)[0] if secrets else None)
    assert why in line and HOW in line


@pytest.mark.parametrize("secret,why", [
    (None, "is not set"), ("change-me-to-32-or-more-random-bytes", "placeholder"),
    ("sh0rt-but-random", "shorter than 32"),
])
def test_serve_refuses_a_missing_published_or_short_daily_secret(secret, why):
    # whoever knows it knows every future deal of the day (issue 37)
    rc, out = start_role(["serve"], {"CINQ_DAILY_SECRET": secret})
    line = _one_line_refusal(rc, out, "CINQ_DAILY_SECRET", secret)
    assert why in line and HOW in line


@pytest.mark.parametrize("role", [["worker"], ["webhook"], ["web"], ["telegram"], ["tables"]])
def test_every_role_on_redis_refuses_the_published_secret(role):
    platform = {"name": "acme", "secrets": ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
                "callback_url": "http://127.0.0.1:9/cinq"}
    env = {"CINQ_TOKEN_SECRETS": json.dumps(PUBLISHED[:1]), "CINQ_TELEGRAM_TOKEN": BOT,
           "CINQ_WEBHOOK_PLATFORMS": json.dumps([platform])}
    rc, out = start_role(role, env)
    _one_line_refusal(rc, out, "CINQ_TOKEN_SECRETS", PUBLISHED[0])


@pytest.mark.parametrize("secret", [None, "change-me", "abc123"])
def test_telegram_webhook_mode_refuses_a_missing_or_weak_secret(secret):
    env = {"CINQ_TELEGRAM_TOKEN": BOT, "CINQ_TELEGRAM_PUBLIC_URL": "https://cards.example",
           "CINQ_TELEGRAM_WEBHOOK_SECRET": secret}
    rc, out = start_role(["serve"], env)
    _one_line_refusal(rc, out, "CINQ_TELEGRAM_WEBHOOK_SECRET", secret)


@pytest.mark.parametrize("platform,setting", [
    ({"name": "telegram", "secrets": ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]}, "platforms.0.name"),
    ({"name": "daily", "secrets": ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]}, "platforms.0.name"),
    ({"name": "acme", "secrets": ["whsec_c2hvcnQtc2VjcmV0"]}, "platforms.0.secrets"),
    ({"name": "acme", "secrets": ["change-me-change-me-change-me"]}, "platforms.0.secrets"),
])
def test_a_webhook_platform_with_a_reserved_name_or_a_weak_secret_is_refused(platform, setting):
    env = {"CINQ_WEBHOOK_PLATFORMS": json.dumps([{**platform, "callback_url": "http://127.0.0.1:9/cinq"}])}
    rc, out = start_role(["serve"], env)
    _one_line_refusal(rc, out, setting, platform["secrets"][0])


def test_the_web_table_refuses_a_published_bot_token():
    env = {"CINQ_WEB_PUBLIC_URL": "https://cards.example", "CINQ_WEB_BOT_TOKEN": "123456:change-me"}
    rc, out = start_role(["serve"], env)
    _one_line_refusal(rc, out, "CINQ_WEB_BOT_TOKEN", "123456:change-me")


def test_the_embedded_store_needs_no_configuration():
    rc, out = start_role(["play", "cinquillo", "--auto"], {"REDIS_URL": None, "CINQ_TOKEN_SECRETS": None})
    assert rc == 0, out[-1500:]


async def test_links_tokens_and_init_data_forged_with_published_secrets_open_nothing(tmp_path):
    async with deployed(tmp_path) as d:
        await d.say("ana", "/play cinquillo 2")
        hand = await d.platform.wait_for(
            lambda: [m for m in d.platform.to_user("ana") if m["kind"] == "hand"], 30)
        table = hand[-1]["table"]
        status, _ = await d.get(hand[-1]["link"].replace("/t?k=", "/api/state?k="))
        assert status == 200  # the genuine link opens Ana's hand
        for known in PUBLISHED:
            forged = issue_link(known.encode(), table=table, expires=time.time() + 600, platform="acme",
                                user="ana")
            status, body = await d.get(f"{d.web}/api/state", k=forged)
            assert status == 401 and "hand" not in body, body[:300]
            token = issue(known.encode(), table=table, seat=0, version=1, move="5o")
            status, body = await d.post(f"{d.web}/api/move", {"token": token},
                                        headers={"Authorization": f"Link {forged}"})
            assert status == 401, body[:300]
            init = sign_init_data(f"123456:{known}", {"auth_date": str(int(time.time())),
                                                      "user": json.dumps({"id": 5, "first_name": "Eve"}),
                                                      "start_param": table})
            status, body = await d.post(f"{d.web}/api/session", {"init_data": init})
            assert status == 401, body[:300]
        assert TOKEN_SECRET not in d.log()


async def test_forged_telegram_updates_are_refused_in_webhook_mode(tmp_path):
    fake = FakeTelegram()
    fake.started |= {11, 12, 13}  # people who have opened the bot: it may write to them
    await fake.start()
    port = free_port()
    secret = "tg-webhook-secret-of-the-security-suite-0123"
    env = {"CINQ_TELEGRAM_TOKEN": "4242:AAbbCCddEEffGGhhIIjjKKllMMnn", "CINQ_TELEGRAM_API_URL": fake.url,
           "CINQ_TELEGRAM_PUBLIC_URL": f"http://127.0.0.1:{port}", "CINQ_TELEGRAM_PORT": str(port),
           "CINQ_TELEGRAM_HOST": "127.0.0.1", "CINQ_TELEGRAM_WEBHOOK_SECRET": secret,
           "CINQ_TELEGRAM_AUTO_PASS_S": "0"}
    try:
        async with deployed(tmp_path, env) as d:
            url = f"http://127.0.0.1:{port}/telegram/webhook"
            for _ in range(600):
                if fake.webhook_set:
                    break
                await _sleep(0.1)
            assert fake.webhook_set, d.log()[-1500:]
            group = {"id": -100777, "type": "group", "title": "G"}
            forged = [_update(1, group, 11, "Ana", "/new cinquillo 2"), _update(2, group, 12, "Bea", "/join"),
                      _update(3, group, 11, "Ana", "/start")]
            for update in forged:
                for header in (None, "wrong-secret", "change-me"):
                    assert await fake.post_update(url, header, update) == 401
            # The genuine Telegram (the secret it was given) is heard.
            assert await fake.post_update(url, secret, _update(4, {"id": 13, "type": "private"}, 13, "Cal",
                                                               "/start")) == 200
            for _ in range(300):
                if fake.chat_messages(13):
                    break
                await _sleep(0.1)
            assert fake.chat_messages(13), "the genuine update was not answered"
            assert not any(fake.chat_messages(c) for c in (-100777, 11, 12))
            assert not [k for k in await d.redis.keys("*") if b":events" in k]  # no table was made
    finally:
        await fake.stop()


def _update(uid: int, chat: dict, user: int, name: str, text: str) -> dict:
    sender = {"id": user, "is_bot": False, "first_name": name, "language_code": "en"}
    return {"update_id": uid, "message": {"message_id": uid, "date": int(time.time()), "text": text,
                                          "chat": chat, "from": sender}}


async def _sleep(s: float) -> None:
    import asyncio

    await asyncio.sleep(s)


@pytest.mark.parametrize("name", sorted(RESERVED))
def test_every_reserved_platform_name_is_refused(name):
    # issue 32 #8: a webhook platform named after an identity the service uses would act as its users
    with pytest.raises(ValueError, match="reserved"):
        Platform(name=name, secrets=["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"], callback_url="http://127.0.0.1:9/")


def test_the_matrix_bridge_keeps_its_platform_name():
    # the bridge registers as the webhook platform "matrix" (bridges/matrix/README.md)
    assert {"telegram", "web", "terminal", "daily"} <= RESERVED and "matrix" not in RESERVED
    assert Platform(name="matrix", secrets=["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
                    callback_url="http://127.0.0.1:9/").name == "matrix"
