"""Whole group matches through real HTTP: a fake platform on loopback, three people and one AI player.

The people press the buttons of their private messages (and sometimes type ``/move`` or ``/hand``);
every request is signed and every callback's signature is checked.  At the end, every message the
service addressed to this platform arrived exactly as written, to its recipient only, in order per
chat, and none shows a card its recipient may not see (G-1).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from service.domain.identities import Player, Room
from service.domain.tables.replay import verify
from service.platform.outbox import Action, Message, Recipient
from service.store.repository import history
from tests.adapters.webhook.support import PLATFORM, FakePlatform, Harness, event, on_platform
from tests.polling import eventually
from tests.service.write.test_matches import _states, check_no_leaks

PEOPLE = [("u1", "Ana", "es"), ("u2", "Bea", "en"), ("u3", "Cal", "en")]
GROUP = "g1"


def _dm(user: str) -> str:
    return f"dm-{user}"


async def play_match(h: Harness, platform: FakePlatform, new: str, seed: int) -> str:
    """Play one match to its end through HTTP; returns the table id."""
    rng = random.Random(seed)
    c = h.client

    async def say(user: str, text: str, chat: str = GROUP, kind: str = "group") -> None:
        name, locale = next((n, loc) for u, n, loc in PEOPLE if u == user)
        status, _, body = await c.post(event(text, user=user, chat=chat, kind=kind, name=name, locale=locale))
        assert status == 202, body

    await say("u1", new)
    await platform.wait_for(lambda: platform.to_chat(GROUP))
    # The worker indexes the chat's table just after writing its messages: wait for the index too.
    room = Room(platform=PLATFORM, chat=GROUP, kind="group")
    await eventually(lambda: h.adapter.gateway.table_of(room))
    for user in ("u2", "u3"):
        await say(user, "/join")
    await say("u1", "/bots 1")
    await say("u1", "/start")

    acted: set[tuple[str, int]] = set()
    for _ in range(2000):
        def turn() -> Any:
            if any(m["kind"] == "match_over" for m in platform.received):
                return "over"
            hands = [m for m in platform.received if m["kind"] == "hand" and m["buttons"]]
            if hands and (hands[-1]["to"]["user"]["id"], hands[-1]["version"]) not in acted:
                return hands[-1]
            return None

        got = await platform.wait_for(turn, timeout=15)
        if got == "over":
            break
        user, version = got["to"]["user"]["id"], got["version"]
        acted.add((user, version))
        button = rng.choice(got["buttons"])
        roll = rng.random()
        if roll < 0.05:
            # Asked in the group, the hand comes privately again, with the same buttons.
            await say(user, "/hand")
            acted.discard((user, version))
            await platform.wait_for(lambda v=version, u=user, g=got: [
                m for m in platform.to_user(u) if m["kind"] == "hand" and m["version"] == v and m is not g])
            continue
        status, _, body = await c.post(event(user=user, chat=_dm(user), kind="private", token=button["token"],
                                             locale=next(loc for u, _n, loc in PEOPLE if u == user)))
        assert status == 202, body
    else:
        pytest.fail("the match did not end")
    table = await h.adapter.gateway.table_of(Room(platform=PLATFORM, chat=GROUP, kind="group"))
    assert table is not None
    return table


def _as_message(wire: dict[str, Any], source: Message) -> Message:
    """A received callback as an outbox message (the actions' moves come from the source: the wire
    form shows labels and tokens only, and those must match)."""
    to = wire["to"]
    if "chat" in to:
        rec = Recipient(room=Room(platform=PLATFORM, chat=to["chat"]["id"], kind=to["chat"]["kind"]))
    else:
        rec = Recipient(player=Player(platform=PLATFORM, user=to["user"]["id"]))
    moves = {a.token: a.move for a in source.actions}
    return Message(id=wire["id"], table=wire["table"], version=wire["version"], to=rec, locale=wire["locale"],
                   kind=wire["kind"], text=wire["text"], view=wire["view"],
                   actions=[Action(label=b["label"], move=moves.get(b["token"], "?"), token=b["token"])
                            for b in wire["buttons"]])


async def check_everything_arrived_once_to_its_recipient(h: Harness, platform: FakePlatform,
                                                         table: str) -> None:
    outbox = {m.id: m for m in await h.outbox()}
    assert platform.bad_signatures == 0
    expected = {i for i, m in outbox.items() if (m.to.room or m.to.player).platform == PLATFORM}  # type: ignore[union-attr]
    await platform.wait_for(lambda: {m["id"] for m in platform.received} >= expected, timeout=15)
    received = {m["id"]: m for m in platform.received}
    assert set(received) == expected, "every message for the platform, and only those, arrived"
    for wire in platform.received:
        src = outbox[wire["id"]]
        got = _as_message(wire, src)
        # Addressed exactly as the service addressed it: a private message reached its player only.
        assert got.to.room == (src.to.room.model_copy(update={"platform": PLATFORM}) if src.to.room else None)
        assert (got.to.player is None) == (src.to.player is None)
        if src.to.player is not None:
            assert got.to.player is not None and got.to.player.user == src.to.player.user
            assert wire["to"] == {"user": {"id": src.to.player.user}}
        assert (got.text, got.view, got.kind, got.version) == (src.text, src.view, src.kind, src.version)
        assert got.text.strip(), "every message reads by itself"
        assert all(a.label for a in got.actions)
        assert [(a.label, a.token) for a in got.actions] == [(a.label, a.token) for a in src.actions]
        # Issue 34: each button says its kind, and a round's or the match's end its outcome, as written.
        assert [b["kind"] for b in wire["buttons"]] == [a.kind for a in src.actions]
        assert wire["outcome"] == src.outcome
    # The end reached the chat with the final standings, structured and in words.
    [over] = [w for w in platform.received if w["kind"] == "match_over" and w["table"] == table]
    standings = over["outcome"]["standings"]
    assert standings["over"] and sorted(standings["order"]) == list(range(len(standings["rows"])))
    winners = standings["winners"]
    assert winners and set(standings["order"][:len(winners)]) == set(winners)  # the winners first
    # Order per chat: each recipient got the table's messages in version order.
    per: dict[str, list[int]] = {}
    for wire in platform.received:
        if wire["table"] == table:
            per.setdefault(str(wire["to"]), []).append(wire["version"])
    assert per and all(v == sorted(v) for v in per.values())
    # Nobody saw a card they may not see (checked on what was received).
    stored = await history(h.workers[0].store, table)
    assert verify(stored).ok
    seed = next(s.event.seed for s in stored if type(s.event).__name__ == "MatchStarted")
    mine = [_as_message(w, outbox[w["id"]]) for w in platform.received if w["table"] == table]
    # The leak check matches recipients to seats by (platform, user): give players their real names back.
    assert check_no_leaks(mine, _states(stored), seed, stored) > 20


@pytest.mark.parametrize("game", ["cinquillo", "535"])
async def test_a_whole_group_match_over_http_on_fakeredis(fake_redis, game):
    async with on_platform(fake_redis) as (platform, h):
        table = await play_match(h, platform, f"/new {game}", seed=3)
        await check_everything_arrived_once_to_its_recipient(h, platform, table)
        # The private messages went to each person, and the AI player got none.
        users = {m["to"]["user"]["id"] for m in platform.received if "user" in m["to"]}
        assert users == {"u1", "u2", "u3"}


async def test_a_whole_group_match_over_http_on_real_redis_with_two_adapters(real_redis):
    """Two adapter processes (HTTP and delivery each) and two workers on a real Redis: the platform
    talks to either, and the deliveries share the outbox without breaking the order per chat."""
    platform = FakePlatform()
    await platform.start()
    h1 = await Harness(real_redis, platform.url, workers=2).start()
    h2 = await Harness(real_redis, platform.url, workers=0).start()
    # Alternate between the two adapters' HTTP endpoints.
    urls = [h1.client.base_url, h2.client.base_url]
    original = h1.client.post

    async def post(*a: Any, **kw: Any) -> Any:
        h1.client.base_url = urls[0]
        urls.reverse()
        return await original(*a, **kw)

    h1.client.post = post  # type: ignore[method-assign]
    try:
        table = await play_match(h1, platform, "/new cinquillo", seed=11)
        await check_everything_arrived_once_to_its_recipient(h1, platform, table)
        # The partitions end up split between the two processes (a short match may finish before
        # the second one got its share: the leases move every third of a lease), never shared.
        ds = h1.adapter.deliveries + h2.adapter.deliveries
        await eventually(lambda: all(d.owned for d in ds))
        owned = [set(d.owned) for d in ds]
        assert not owned[0] & owned[1], "each partition is delivered by one process"
    finally:
        await h2.close()
        await h1.close()
        await platform.close()
