"""service/inbound.py: first answers by request id, and the token bucket per sender, in one script."""

from __future__ import annotations

import asyncio

from service.inbound import Admission, Answer
from service.keys import Keys

KEYS = Keys(16, 2, "")
A = Answer("d1", 202, {"status": "accepted", "command_id": "x"})


async def test_the_first_answer_is_kept_and_returned_to_a_repeat(any_redis):
    adm = Admission(any_redis, KEYS, rate=100, burst=100)
    assert (await adm.admit("acme", "u1", "msg_1", A, 1000.0)).kind == "first"
    again = await adm.admit("acme", "u1", "msg_1", Answer("d2", 202, {"other": 1}), 1000.0)
    assert again.kind == "repeat" and again.earlier == A
    assert (await adm.admit("other", "u1", "msg_1", A, 1000.0)).kind == "first"  # ids are per platform
    assert 0 < await any_redis.ttl(adm.answer_key("acme", "u1", "msg_1")) <= 24 * 3600


async def test_of_concurrent_first_calls_exactly_one_acts(any_redis):
    adm = Admission(any_redis, KEYS, rate=100, burst=100)
    calls = [adm.admit("acme", "u1", "race", Answer(str(i), 202, {}), 1000.0) for i in range(8)]
    results = await asyncio.gather(*calls)
    assert sum(r.kind == "first" for r in results) == 1
    winner = next(str(i) for i, r in enumerate(results) if r.kind == "first")
    assert all(r.earlier is not None and r.earlier.digest == winner for r in results if r.kind != "first")


async def test_a_forgotten_answer_lets_the_next_call_act(any_redis):
    adm = Admission(any_redis, KEYS, rate=100, burst=100)
    await adm.admit("acme", "u1", "m", A, 1000.0)
    await adm.forget("acme", "u1", "m")
    assert (await adm.admit("acme", "u1", "m", A, 1000.0)).kind == "first"


async def test_the_bucket_allows_a_burst_then_the_rate(any_redis):
    adm = Admission(any_redis, KEYS, rate=2.0, burst=3)
    now = 1000.0

    async def kind(sender: str, i: object, at: float) -> str:
        return (await adm.admit("acme", sender, f"m{i}-{at}", A, at)).kind

    assert [await kind("u1", i, now) for i in range(3)] == ["first"] * 3
    limited = await adm.admit("acme", "u1", "m4", A, now)
    assert limited.kind == "limited" and 0.4 < limited.wait_s <= 0.5
    assert await kind("u2", 0, now) == "first"  # another sender has its own bucket
    assert await kind("u1", 5, now + 0.5) == "first"  # one token back after 1/rate seconds
    assert await kind("u1", 6, now + 0.5) == "limited"
    assert [await kind("u1", i, now + 100) for i in range(4)].count("first") == 3  # never above burst


async def test_a_refused_request_is_not_remembered(any_redis):
    """A 429 leaves no answer behind: the platform's retry, later, acts."""
    adm = Admission(any_redis, KEYS, rate=1.0, burst=1)
    await adm.admit("acme", "u1", "a", A, 1000.0)
    assert (await adm.admit("acme", "u1", "b", A, 1000.0)).kind == "limited"
    assert (await adm.admit("acme", "u1", "b", A, 1002.0)).kind == "first"
