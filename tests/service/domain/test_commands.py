"""TableCommand as the worker reads it: a plain object from its JSON, checked field by field, with
its typed request (issue 33: no pydantic model built per command on the worker's path)."""

from __future__ import annotations

import orjson
import pytest

from service.domain.commands import TableCommand
from service.domain.identities import Player, Room
from service.domain.requests import Create, Move, Press, Tick, Unknown, parse_request

ANA = Player(platform="tg", user="1", name="Ana")
GROUP = Room(platform="tg", chat="-5", kind="group")

COMMANDS = [
    TableCommand(id="c1", table="t1", name="move", args={"move": "5o"}, actor=ANA, room=GROUP, locale="en",
                 at=12.5),
    TableCommand(id="c2", table="t1", name="tick", args={"version": 7}, locale="es"),
    TableCommand(id="c3", table="t1", name="action", args={"seat": 1, "version": 3, "move": "pass"},
                 actor=ANA, token="tok", moderator=True),
    TableCommand(id="c4", table="t2", name="new", args={"game": "cinquillo", "options": {"target": 30}},
                 actor=ANA, room=Room(platform="web", chat="w1")),
    TableCommand(id="c5", table="t2", name="dance", args={"how": "slowly"}),
]


@pytest.mark.parametrize("cmd", COMMANDS, ids=lambda c: c.name)
def test_a_command_reads_back_as_it_was_written(cmd):
    back = TableCommand.loads(cmd.dumps())
    assert back == cmd
    assert back.request == cmd.request
    assert back.actor == cmd.actor and back.room == cmd.room
    # None fields are left out of the JSON, as the pydantic model's dump did (exclude_none)
    written = orjson.loads(cmd.dumps())
    assert all(v is not None for v in written.values())


def test_the_typed_request_is_the_unions_member():
    assert isinstance(COMMANDS[0].request, Move) and COMMANDS[0].request.move == "5o"
    assert isinstance(COMMANDS[1].request, Tick) and COMMANDS[1].request.version == 7
    assert isinstance(COMMANDS[2].request, Press) and COMMANDS[2].request.seat == 1
    assert isinstance(COMMANDS[3].request, Create) and COMMANDS[3].request.options == {"target": 30}
    assert isinstance(COMMANDS[4].request, Unknown)
    assert COMMANDS[3].creates_table and not COMMANDS[0].creates_table


def test_requests_of_plain_arguments_are_shared_but_told_apart_by_type():
    assert parse_request("move", {"move": "5o"}) is parse_request("move", {"move": "5o"})
    one = parse_request("tick", {"version": 1})
    assert isinstance(one, Tick) and one.version == 1
    # True == 1 as a dict key: the argument's type keeps them apart (a bool is no version)
    flag = parse_request("kick", {"seat": True})
    assert isinstance(flag, Unknown)  # Kick.seat is a strict int
    assert isinstance(parse_request("kick", {"seat": 1}), type(parse_request("kick", {"seat": 2})))
    assert parse_request("kick", {"seat": 1}).seat == 1


def test_identities_read_from_commands_are_shared_models():
    a = TableCommand.loads(COMMANDS[0].dumps())
    b = TableCommand.loads(COMMANDS[0].dumps())
    assert a.actor is b.actor and isinstance(a.actor, Player) and a.actor.name == "Ana"
    assert a.room is b.room and a.room.kind == "group"


@pytest.mark.parametrize("raw", [
    b"[]", b"not json", b'{"table": "t", "name": "move"}', b'{"id": 5, "table": "t", "name": "move"}',
    b'{"id": "c", "table": "t", "name": "move", "args": []}',
    b'{"id": "c", "table": "t", "name": "move", "actor": "ana"}',
    b'{"id": "c", "table": "t", "name": "move", "actor": {"platform": "tg"}}',
    b'{"id": "c", "table": "t", "name": "move", "at": "now"}',
    b'{"id": "c", "table": "t", "name": "move", "moderator": 1}',
    b'{"id": "c", "table": "t", "name": "move", "locale": null}',
    b'{"id": "c", "table": "t", "name": "move", "surprise": 1}',
])
def test_what_is_not_a_command_is_refused_when_read(raw):
    with pytest.raises((ValueError, TypeError)):
        TableCommand.loads(raw)


def test_replace_makes_a_checked_copy():
    cmd = COMMANDS[0]
    later = cmd.replace(at=99)
    assert later.at == 99.0 and type(later.at) is float and cmd.at == 12.5
    assert later.replace(at=12.5) == cmd
    with pytest.raises(TypeError):
        cmd.replace(moderator="yes")
