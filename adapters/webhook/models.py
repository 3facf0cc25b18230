"""The wire format of the webhook contract (pydantic; the OpenAPI document is generated from these).

Inbound: a platform POSTs a :class:`MessageEvent` (text, in the chat command protocol) or an
:class:`ActionEvent` (a button press: the token of an earlier outbound message).  Outbound: the
service POSTs an :class:`OutboundMessage` per outbox message.  Refusals are RFC 9457 problem details.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from service.platform.outbox import Message

_ID = Field(min_length=1, max_length=128, description="The platform's own id (a string)")


class Chat(BaseModel):
    """Where a message was written: a private chat with one person, or a group."""

    model_config = ConfigDict(extra="forbid")

    id: str = _ID
    kind: Literal["private", "group"]


class FromChat(Chat):
    """Where an inbound event comes from: the chat, and a group's name when the platform has one
    (the daily deal's share buttons show it: "Post in <title>")."""

    title: str | None = Field(default=None, max_length=128,
                              description="a group's name, if the platform has one")


class User(BaseModel):
    """Who wrote it.  ``locale`` is a language tag (``es``, ``en-GB``): replies follow it."""

    model_config = ConfigDict(extra="forbid")

    id: str = _ID
    name: str = Field(default="", max_length=128)
    locale: str | None = Field(default=None, max_length=35)


MESSAGE_EXAMPLE: dict[str, Any] = {"type": "message", "chat": {"id": "g-42", "kind": "group"},
                                   "user": {"id": "u-1", "name": "Ana", "locale": "es"},
                                   "text": "/new cinquillo"}
ACTION_EXAMPLE: dict[str, Any] = {"type": "action", "chat": {"id": "dm-u-2", "kind": "private"},
                                  "user": {"id": "u-2", "name": "Bea", "locale": "es"},
                                  "token": "1vowsv3s2jp.1.4.=5o.wWlCQsgBduAKcXGVF-5oFQ"}


class MessageEvent(BaseModel):
    """A text message: a command of the chat command protocol (``/join``, ``/move 5o``, ...)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [MESSAGE_EXAMPLE]})

    type: Literal["message"]
    chat: FromChat
    user: User
    text: str = Field(max_length=4096)


class ActionEvent(BaseModel):
    """A button press: ``token`` is one of the ``buttons`` of an earlier outbound message."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [ACTION_EXAMPLE]})

    type: Literal["action"]
    chat: FromChat
    user: User
    token: str = Field(min_length=1, max_length=512)
    message: str | None = Field(
        default=None, max_length=128, description="the id of the outbound message whose button was pressed, "
        "if the platform has it: a callback that redraws that message (the /rating and /top buttons) names "
        "it in its replaces")


InboundEvent = Annotated[MessageEvent | ActionEvent, Field(discriminator="type")]
inbound: TypeAdapter[MessageEvent | ActionEvent] = TypeAdapter(InboundEvent)


class Accepted(BaseModel):
    """The answer to an accepted event: the service will act on it (replies come as callbacks)."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["accepted"] = "accepted"
    command_id: str


class Problem(BaseModel):
    """A refusal (RFC 9457 problem details, ``application/problem+json``)."""

    model_config = ConfigDict(extra="allow")

    type: str = "about:blank"
    title: str
    status: int
    detail: str


class Button(BaseModel):
    """Something the recipient may do: show ``label``, send ``token`` back in an ``action`` event."""

    model_config = ConfigDict(extra="forbid")

    label: str
    token: str
    kind: str | None = Field(default=None, description="what kind of move it is, to group a turn's choices: "
                             "pass, card (Cinquillo), single, group, run or add (535); rematch (the end's "
                             "Play again), accept or decline (a rematch's invitation); null for a board's")


class ToChat(BaseModel):
    """Addressed to a chat (everyone in it may see it)."""

    model_config = ConfigDict(extra="forbid")

    chat: Chat


class UserRef(BaseModel):
    """A person, by the platform's user id."""

    model_config = ConfigDict(extra="forbid")

    id: str


class ToUser(BaseModel):
    """Addressed to one person, privately (their hand and their moves): never show it in a group."""

    model_config = ConfigDict(extra="forbid")

    user: UserRef


class SeatPerson(BaseModel):
    """The person who sits in a seat: platform, user id and display name."""

    model_config = ConfigDict(extra="forbid")

    platform: str
    # A person of another platform (a table shown in rooms of several) keeps their id to themselves.
    id: str | None = Field(default=None, description="the user id on this platform; null for a person "
                           "of another platform")
    name: str = ""


class OutboundMessage(BaseModel):
    """A message the service sends to the platform's callback URL.

    ``text`` reads well by itself; ``buttons`` are the recipient's choices; ``view`` is the structured
    state of the table as this recipient may see it, for a platform's own rendering; ``link``, the web
    table this recipient may open (a button of the platform's own).  ``id`` is the
    idempotency key (also the ``webhook-id`` header): a retried or replayed delivery has the same.
    """

    model_config = ConfigDict(extra="forbid")

    type: Literal["message"] = "message"
    id: str
    platform: str
    to: ToChat | ToUser
    table: str | None
    version: int
    kind: str = Field(description="table, hand, reply, match_over or replay")
    locale: str
    text: str
    buttons: list[Button]
    view: dict[str, Any] | None
    deadline: float | None = Field(default=None, description="when the turn of the player to move "
                                   "runs out (unix seconds), for a countdown; null without a turn timer")
    code: str | None = Field(default=None, description="for a refusal: its machine-readable reason, "
                             "e.g. stale_token or not_your_turn")
    seats: list[SeatPerson | None] | None = Field(
        default=None, description="on a chat's match_over: who sat in each seat, in seat order (null for "
        "a seat an AI player played), to count wins per person; null on other messages")
    link: str | None = Field(
        default=None, description="the web table for this recipient, when the service runs one "
        "(CINQ_WEB_PUBLIC_URL): on a hand, the person's own signed link (it shows their cards: it is only "
        "ever on a message to that person, never on a chat's); on a chat's table or match_over, a "
        "spectator's link (no hand); on a replay, the replay page; null otherwise. A signed link "
        "expires (6 hours after delivery); a later message carries a fresh one")
    replaces: str | None = Field(
        default=None, description="the id of an earlier message this one redraws (the action event's "
        "message: a /rating or /top button pressed on it): edit that message in place if the platform "
        "can, else show this one as new; null for a message of its own")
    outcome: dict[str, Any] | None = Field(
        default=None, description="when a round has just ended or the match is over: `round` (the round "
        "that ended: `n`, `end`, `winners` (seats), `went_out`, `cards_left`, `points` and `chips` per "
        "seat, `pot`; null at a match of one round's end) and `standings` (`scoring`: points or "
        "round_wins, `target`, `lower_wins` (535: the fewest points win), `rows` per seat (`seat`, "
        "`score`, `shown` (the score as written, 16½), `rounds`, `chips`, `rank`), `order` (seats best "
        "first), `pot`, `teams`, `over`, `winners`) and, at the end of a match whose deal no other table "
        "plays, `seed`, for a platform's own score table; public facts only "
        "(how many cards were left, never which). `text` says the same in words. Null otherwise")

    @classmethod
    def of(cls, msg: Message) -> OutboundMessage:
        """The wire form of an outbox message (the adapter renders nothing: all is in the message)."""
        to: ToChat | ToUser
        if msg.to.room is not None:
            to = ToChat(chat=Chat(id=msg.to.room.chat, kind=msg.to.room.kind))
            platform = msg.to.room.platform
        else:
            assert msg.to.player is not None
            to = ToUser(user=UserRef(id=msg.to.player.user))
            platform = msg.to.player.platform
        return cls(id=msg.id, platform=platform, to=to, table=msg.table, version=msg.version, kind=msg.kind,
                   locale=msg.locale, text=msg.text, view=msg.view, deadline=msg.deadline, code=msg.code,
                   buttons=[Button(label=a.label, token=a.token, kind=a.kind or None) for a in msg.actions],
                   link=msg.link, replaces=msg.replaces, outcome=msg.outcome,
                   seats=None if msg.seats is None else
                   [None if p is None else SeatPerson(platform=p.platform, name=p.name,
                                                      id=p.user if p.platform == platform else None)
                    for p in msg.seats])
