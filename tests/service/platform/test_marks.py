"""Marks set once (``PlatformState.mark_once``), on fakeredis and a real Redis: one press a turn, and a
press redelivered by its platform (the process that marked it died before handing it on) still gets
through, while a second press of the same turn does not."""

from __future__ import annotations

from service.platform.platform_state import PlatformState
from service.store.keys import Keys


async def test_a_mark_is_set_once(any_redis):
    ps = PlatformState(any_redis, Keys())
    assert await ps.mark_once("tg", "post:1")
    assert not await ps.mark_once("tg", "post:1")  # no owner: never again, whoever asks


async def test_the_same_owner_gets_through_again_and_another_does_not(any_redis):
    ps = PlatformState(any_redis, Keys())
    assert await ps.mark_once("tg", "press:t1:0:7", owner="cq-1")
    assert await ps.mark_once("tg", "press:t1:0:7", owner="cq-1")  # the same press, redelivered
    assert not await ps.mark_once("tg", "press:t1:0:7", owner="cq-2")  # a double click
    assert not await ps.mark_once("tg", "press:t1:0:7")
    assert await ps.mark_once("tg", "press:t1:0:8", owner="cq-2")  # the next turn


async def test_an_owned_mark_expires(any_redis):
    ps = PlatformState(any_redis, Keys())
    assert await ps.mark_once("tg", "k", ttl_s=100, owner="a")
    ttl = await any_redis.ttl(ps.keys.pf_once("tg", "k"))
    assert 0 < ttl <= 100
