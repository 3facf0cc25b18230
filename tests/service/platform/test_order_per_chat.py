"""Order per chat, whatever the address (issue 36): every message of a table that lands in one chat —
addressed to the room, or to a person whose private chat the room is — goes down one delivery lane
(:func:`service.platform.delivery_model.recipient_key`), so it is delivered in the table's version order,
retries included.  The outside fault run saw a private table's (``/play``) room views and its
person's hand in two lanes, interleaved: an older version drawn over a newer one.

The end-to-end count of inversions per chat, under load and failovers, is in
``tests/faults/test_failover.py``.
"""

from __future__ import annotations

import dataclasses

from service.domain.identities import Room
from service.domain.tables import state
from service.platform.delivery_model import recipient_key
from tests.service.support import ANA, BEA, GROUP, Harness

ANA_HOME = Room(platform="tg", chat="dm-ana", kind="private")
BEA_HOME = Room(platform="tg", chat="dm-bea", kind="private")


def lanes(messages: list, table: str) -> dict[str, set[str]]:
    """For each chat the table's messages land in, the recipient keys they were delivered under."""
    out: dict[str, set[str]] = {}
    for m in messages:
        if m.table != table:
            continue
        # A person's own messages land in their private chat.
        chat = m.to.room.chat if m.to.room is not None else {"1": "dm-ana", "2": "dm-bea"}[m.to.player.user]
        out.setdefault(chat, set()).add(recipient_key(m))
    return out


async def test_a_private_tables_room_views_and_its_persons_hand_share_one_lane(fake_redis):
    h = Harness(fake_redis)
    await h.send(ANA, "/play cinquillo", room=ANA_HOME)
    table = await h.table_of(ANA_HOME)
    for _ in range(3):
        if h.over():
            break
        hand = h.last_hand()
        await h.send(ANA, token=hand.actions[0].token, room=ANA_HOME)
    mine = [m for m in h.messages if m.table == table]
    kinds = {m.kind for m in mine}
    assert {"table", "hand"} <= kinds  # both addresses are there...
    assert lanes(mine, table) == {"dm-ana": {"player:tg:1"}}  # ...and one lane for the chat


async def test_a_private_room_attached_by_a_join_is_ordered_with_its_persons_hand(fake_redis):
    h = Harness(fake_redis)
    await h.send(ANA, "/new cinquillo", room=GROUP)
    table = await h.table_of(GROUP)
    # Bea opens the table's deep link in her own chat: that room is attached, and is hers.
    await h.send(BEA, f"/start {table}", room=BEA_HOME)
    await h.send(ANA, "/start", room=GROUP)
    got = lanes(h.messages, table)
    assert got["dm-bea"] == {"player:tg:2"}
    assert got[GROUP.chat] == {f"room:tg:{GROUP.chat}"}  # a group is its own lane
    assert "player:tg:1" in got["dm-ana"]


def test_a_snapshot_from_before_room_people_still_knows_the_creators_room():
    t = state.Table(id="t1", version=1, game="cinquillo", options={}, max_seats=4, creator=ANA,
                    rooms=(ANA_HOME,), locale="en", turn_seconds=0)
    old = state.to_snapshot(t)
    del old["room_people"]
    assert state.from_snapshot(old).person_of(0) == ANA
    grouped = dataclasses.replace(t, rooms=(GROUP,))
    assert grouped.person_of(0) is None
