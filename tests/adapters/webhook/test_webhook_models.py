"""The wire form of outbound messages: everything an adapter needs is carried over as it is."""

from __future__ import annotations

from adapters.webhook.models import OutboundMessage
from service.domain.identities import Player, Room
from service.platform.outbox import Action, Message, Recipient


def test_a_refusal_carries_its_code_and_a_turn_message_its_deadline_to_the_platform() -> None:
    refusal = Message(id="c1:0", table="t1", version=3, locale="es", kind="reply", text="Ese botón es viejo.",
                      to=Recipient(player=Player(platform="acme", user="u1", name="Ana")), code="stale_token")
    wire = OutboundMessage.of(refusal)
    assert (wire.code, wire.deadline, wire.platform, wire.to.user.id) == ("stale_token", None, "acme", "u1")

    turn = Message(id="c2:1", table="t1", version=4, locale="en", kind="hand", text="Your turn",
                   to=Recipient(room=Room(platform="acme", chat="g1", kind="group")),
                   deadline=1_800_000_000.5,
                   actions=[Action(label="5 of coins", move="5o", token="tok")])
    wire = OutboundMessage.of(turn)
    assert (wire.code, wire.deadline) == (None, 1_800_000_000.5)
    assert [(b.label, b.token) for b in wire.buttons] == [("5 of coins", "tok")]
    assert "move" not in wire.model_dump_json()  # buttons carry labels and tokens only


def test_the_end_of_a_match_carries_who_sat_where_and_other_messages_null() -> None:
    ana = Player(platform="acme", user="u1", name="Ana")
    end = Message(id="c3:0", table="t1", version=9, locale="en", kind="match_over", text="Ana wins",
                  to=Recipient(room=Room(platform="acme", chat="g1", kind="group")), seats=[ana, None])
    wire = OutboundMessage.of(end)
    assert wire.model_dump(mode="json")["seats"] == [{"platform": "acme", "id": "u1", "name": "Ana"}, None]
    plain = Message(id="c3:1", table="t1", version=9, locale="en", kind="table", text="x",
                    to=Recipient(room=Room(platform="acme", chat="g1", kind="group")))
    assert OutboundMessage.of(plain).model_dump(mode="json")["seats"] is None


def test_a_person_of_another_platform_is_named_without_their_id() -> None:
    ana = Player(platform="acme", user="u1", name="Ana")
    tg = Player(platform="tg", user="987654", name="Bea")
    end = Message(id="c4:0", table="t1", version=9, locale="en", kind="match_over", text="Ana wins",
                  to=Recipient(room=Room(platform="acme", chat="g1", kind="group")), seats=[ana, tg])
    seats = OutboundMessage.of(end).model_dump(mode="json")["seats"]
    assert seats == [{"platform": "acme", "id": "u1", "name": "Ana"},
                     {"platform": "tg", "id": None, "name": "Bea"}]
    assert "987654" not in OutboundMessage.of(end).model_dump_json()
