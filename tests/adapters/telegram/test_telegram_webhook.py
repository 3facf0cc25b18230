"""Webhook mode: updates come over HTTP, and only with the secret token header the bot registered."""

from __future__ import annotations

from aiohttp.test_utils import TestClient, TestServer

from tests.adapters.telegram.support import WEBHOOK_SECRET, World

UPDATE = {"update_id": 900, "message": {"message_id": 5, "date": 1_700_000_000, "text": "/start",
                                        "chat": {"id": 77, "type": "private", "first_name": "Eva"},
                                        "from": {"id": 77, "is_bot": False, "first_name": "Eva",
                                                 "language_code": "en"}}}


async def test_the_webhook_refuses_a_wrong_or_missing_secret_and_serves_the_right_one(fake_redis):
    async with World(fake_redis) as w:
        w.fake.started.add(77)
        client = TestClient(TestServer(w.tg.webhook_app()))
        await client.start_server()
        try:
            path = w.tg.tg.webhook_path
            wrong = await client.post(path, json=UPDATE, headers={"X-Telegram-Bot-Api-Secret-Token": "nope"})
            missing = await client.post(path, json=UPDATE)
            assert (wrong.status, missing.status) == (401, 401)
            await w.quiet()
            assert w.fake.calls_to(77) == []
            headers = {"X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET}
            right = await client.post(path, json=UPDATE, headers=headers)
            assert right.status == 200
            await w.quiet()
            [greeting] = w.fake.chat_messages(77)
            assert greeting.text.startswith("Hello Eva!")
        finally:
            await client.close()
