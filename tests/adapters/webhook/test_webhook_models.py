"""The wire form of outbound messages: everything an adapter needs is carried over as it is."""

from __future__ import annotations

from adapters.webhook.models import OutboundMessage
from service.identities import Player, Room
from service.outbox import Action, Message, Recipient


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
