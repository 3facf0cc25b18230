"""service/platform/inbound.py: first answers by request id, and the token bucket per sender, in one
script."""

from __future__ import annotations

from service.platform.inbound import Admission, Answer
from service.store.keys import Keys

KEYS = Keys(16, 2, "")
A = Answer("d1", 202, {"status": "accepted", "command_id": "x"})


async def test_the_recorded_answer_is_returned_to_a_repeat(any_redis):
    adm = Admission(any_redis, KEYS, rate=100, burst=100)
    assert (await adm.admit("acme", "u1", "msg_1", 1000.0)).kind == "first"
    await adm.record("acme", "u1", "msg_1", A)
    again = await adm.admit("acme", "u1", "msg_1", 1000.0)
    assert again.kind == "repeat" and again.earlier == A
    assert (await adm.admit("other", "u1", "msg_1", 1000.0)).kind == "first"  # ids are per platform
    assert 0 < await any_redis.ttl(adm.answer_key("acme", "u1", "msg_1")) <= 24 * 3600


async def test_a_request_not_recorded_acts_again_when_retried(any_redis):
    """Acting failed (nothing recorded): the platform's retry acts; acting is idempotent downstream."""
    adm = Admission(any_redis, KEYS, rate=100, burst=100)
    assert (await adm.admit("acme", "u1", "m", 1000.0)).kind == "first"
    assert (await adm.admit("acme", "u1", "m", 1000.0)).kind == "first"
    assert await any_redis.exists(adm.answer_key("acme", "u1", "m")) == 0


async def test_the_bucket_allows_a_burst_then_the_rate(any_redis):
    adm = Admission(any_redis, KEYS, rate=2.0, burst=3)
    now = 1000.0

    async def kind(sender: str, i: object, at: float) -> str:
        return (await adm.admit("acme", sender, f"m{i}-{at}", at)).kind

    assert [await kind("u1", i, now) for i in range(3)] == ["first"] * 3
    limited = await adm.admit("acme", "u1", "m4", now)
    assert limited.kind == "limited" and 0.4 < limited.wait_s <= 0.5
    assert await kind("u2", 0, now) == "first"  # another sender has its own bucket
    assert await kind("u1", 5, now + 0.5) == "first"  # one token back after 1/rate seconds
    assert await kind("u1", 6, now + 0.5) == "limited"
    assert [await kind("u1", i, now + 100) for i in range(4)].count("first") == 3  # never above burst


async def test_a_refused_request_is_not_remembered(any_redis):
    """A 429 leaves no answer behind: the platform's retry, later, acts."""
    adm = Admission(any_redis, KEYS, rate=1.0, burst=1)
    await adm.admit("acme", "u1", "a", 1000.0)
    assert (await adm.admit("acme", "u1", "b", 1000.0)).kind == "limited"
    assert (await adm.admit("acme", "u1", "b", 1002.0)).kind == "first"
