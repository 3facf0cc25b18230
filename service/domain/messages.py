"""The outbox message: its one model, and the plain dicts the worker writes of it.  Pure.

:class:`Message` (with :class:`Recipient` and :class:`Action`) is the one declaration of the wire
shape.  The worker writes a message for every change of every table, and building and dumping a
pydantic model costs ~8x a plain dict (``model_construct`` included), so the hot path writes dicts
drawn from the same declaration: :func:`wire` fills in the model's own defaults, never a field the
model does not have; readers validate the JSON as a :class:`Message`.  ``tests/service/domain/test_events.py``
checks that what the builders write validates and dumps back the same.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field

from service.domain.identities import Player, Room
from service.protocol.i18n.render import move_kind, move_text
from service.protocol.text import render_lines

Wire = dict[str, Any]
"""A message (or a part of one) as the plain dict written to the outbox: the JSON form of its model."""


class Recipient(BaseModel):
    """Exactly one of ``room`` and ``player``.  ``person``, on a private chat's message: the person in
    that chat, when the message answers them (the order of their messages is kept per person,
    whichever way they are addressed: see :func:`service.platform.delivery.recipient_key`)."""

    model_config = ConfigDict(frozen=True)

    room: Room | None = None
    player: Player | None = None
    person: Player | None = None


class Action(BaseModel):
    """One thing the recipient may do: a label to show and the token to send back.

    ``label`` is filled in the recipient's language when the message is read (see ``rendered``), and
    ``kind`` with it: what kind of move it is (``pass``, ``card``; 535's ``single``, ``group``,
    ``run``, ``add``: :func:`~service.protocol.i18n.render.move_kind`), so that every surface groups a
    turn's choices the same way.
    """

    model_config = ConfigDict(frozen=True)

    move: str
    token: str
    label: str = ""
    kind: str = ""


class Message(BaseModel):
    """One outbox message.  ``kind`` is ``table``, ``hand``, ``reply``, ``match_over`` or ``replay``.

    The worker writes ``lines`` (deferred text, see :mod:`service.protocol.text`) and leaves ``text`` empty;
    :meth:`rendered` (called by :class:`~service.platform.outbox.OutboxReader`) fills ``text`` and the
    action labels in the recipient's locale, from the message alone.
    """

    model_config = ConfigDict(frozen=True, cache_strings="keys")  # ids are new each time: see TableCommand

    id: str
    table: str | None
    version: int
    to: Recipient
    locale: str
    kind: str
    text: str = ""
    lines: list[Any] = Field(default_factory=list)
    game: str | None = None
    view: dict[str, Any] | None = None
    actions: list[Action] = Field(default_factory=list)
    # When the person to move runs out of time (unix seconds; None: no turn timer, or no person's turn).
    deadline: float | None = None
    # A refusal's machine-readable code (``stale_token``, ``not_your_turn``...; None: not a refusal).
    code: str | None = None
    # When a round just ended or the match is over: the round's result and the standings, drawn from
    # the public view (service.domain.tables.outcome); None on every other message.
    outcome: dict[str, Any] | None = None
    # On a room's ``match_over``: who sits in each seat, in seat order (the person, or None for a seat
    # an AI player plays), so that a platform can count wins per person; None on other messages.
    seats: list[Player | None] | None = None
    # The recipient's address of the web table (a person's own link on their hand, a spectator's on a
    # room's table, the replay page on a replay), set on delivery when the web table is configured
    # (:mod:`service.platform.links`); never written to the outbox.
    link: str | None = None
    # The platform's own reference to an earlier message this one redraws (a /top button pressed on
    # it: ``service.ratings.boards``), given by the adapter with the press: edit that message in place
    # where the platform can, else post this one.  None: a message of its own.
    replaces: str | None = None

    def dumps(self) -> str:
        """The JSON written to the outbox stream."""
        return self.model_dump_json()

    def rendered(self, locale: str | None = None) -> Message:
        """The message with its text and action labels in the recipient's language, or in ``locale``
        (an adapter that knows better, e.g. a group's own ``/lang``).  The one renderer: a message
        already rendered in another language is put into words again from its deferred lines, so
        its text and its buttons always agree.  A text written in words (a gateway reply: no
        lines) stays as it is."""
        loc = locale or self.locale
        again = loc != self.locale
        text = self.text
        if self.lines and (again or not text):
            text = render_lines(self.lines, loc, self.view, self.outcome)
        # A reply in words keeps its labels too (a board's buttons, labelled and marked by the gateway).
        actions = [a if a.label and a.kind and (not again or not self.lines) else
                   a.model_copy(update={"label": a.label if a.label and (not again or not self.lines)
                                        else move_text(self.game, a.move, loc),
                                        "kind": a.kind or move_kind(self.game, a.move)})
                   for a in self.actions]
        return self.model_copy(update={"text": text, "actions": actions, "locale": loc})


def _default(field: Any) -> Any:
    # A list default is written as an empty tuple (orjson writes it as []): one shared value that no
    # one can change.
    value = field.get_default(call_default_factory=True)
    return () if value == [] else value


def _builder(model: type[BaseModel], written: tuple[str, ...]) -> Callable[..., Wire]:
    """A function that writes ``model`` as a plain dict: its required fields and those in ``written``
    in the model's order (the model's default where not given), then any other field given (a
    field neither written nor given is left out: the model's default applies when it is read).
    The order is the model's so that the JSON reads as a dump of it would (``id`` first).

    The function is generated with keyword parameters and one dict display, as ``dataclasses``
    generates ``__init__``: the worker writes several messages and actions per command, and copying
    a template and updating it from a keyword dict cost twice as much (bench/results/pipeline.txt)."""
    fields = model.model_fields
    assert set(written) <= set(fields), f"{model.__name__} has no field {set(written) - set(fields)}"
    names = [n for n, f in fields.items() if f.is_required() or n in written]
    assert all(n.isidentifier() and not keyword.iskeyword(n) for n in names)
    defaults = {n: _default(fields[n]) for n in names if not fields[n].is_required()}
    params = ", ".join(n if n not in defaults else f"{n}=_defaults[{n!r}]" for n in names)
    display = ", ".join(f"{n!r}: {n}" for n in names)
    source = (f"def build(*, {params}, **more):\n"
              f"    out = {{{display}}}\n"
              "    if more:\n"
              "        out.update(more)\n"
              "    return out\n")
    namespace: dict[str, Any] = {"_defaults": defaults}
    exec(source, namespace)  # the source is made of the model's own field names only
    build: Callable[..., Wire] = namespace["build"]
    build.__doc__ = f"A {model.__name__} as the dict written to the outbox (keywords: its fields)."
    return build


# Every field but those only some messages carry: ``seats`` (a match's end), ``outcome`` (a round's or
# a match's end) and ``link`` (set on delivery, never written).
wire = _builder(Message, ("text", "lines", "game", "view", "actions", "deadline", "code"))
# A recipient carries ``person`` only when it answers someone in a private chat.
recipient_wire = _builder(Recipient, ("room", "player"))
# An action's label is filled in when the message is read.
action_wire = _builder(Action, ("label",))


def wire_of(m: Room | Player) -> Wire:
    """A room or a player as written in a message: ``model_dump()`` of these flat models (str fields
    only), without pydantic's serializer: a pydantic v2 model keeps its field values in ``__dict__``
    (tests/service/domain/test_events.py checks that both agree)."""
    return m.__dict__.copy()


def wire_json(message: Wire) -> bytes:
    """The JSON of a message for the outbox.  orjson refuses a dict key that is not a string unless
    told to accept them, an option that makes every dump ~40% slower: it is used only when needed
    (the text is the same either way)."""
    try:
        return orjson.dumps(message)
    except TypeError:
        return orjson.dumps(message, option=orjson.OPT_NON_STR_KEYS)
