"""Where each command may be sent (``service.protocol.chats``): one table, followed by the parser, the worker,
``/help`` and the docs; a command sent where it is not for is refused and changes nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from service.domain.tables.decide import Refused, decide
from service.domain.tables.notify import refusal_messages
from service.protocol import chats
from service.protocol.i18n import msgids, translate
from service.protocol.i18n.reasons import error_text
from service.protocol.parse import _COMMANDS, ProtocolError, parse_command
from tests.service.support import ANA, BEA, GROUP, Harness, cmd, context, private

DOCS = Path(__file__).resolve().parents[3] / "docs" / "service.md"
# How /help names each command in each language (its first word on its line).
_ALIASES = {name: {"en": name, "es": next(k for k, v in _COMMANDS.items() if v == name and k != name)
                   if sum(v == name for v in _COMMANDS.values()) > 1 else name}
            for name in chats.COMMAND_CHATS}
_REFUSED = [(name, kind) for name, kinds in chats.COMMAND_CHATS.items() for kind in chats.KINDS
            if kind not in kinds]


def test_every_chat_command_has_its_chat_kinds_and_only_those():
    assert set(chats.COMMAND_CHATS) == set(_COMMANDS.values())
    assert all(kinds and kinds <= set(chats.KINDS) for kinds in chats.COMMAND_CHATS.values())
    assert ("play", "group") in _REFUSED


@pytest.mark.parametrize("name,kind", _REFUSED)
def test_a_command_refused_somewhere_says_where_it_belongs_in_both_languages(name, kind):
    assert f"wrong_chat.{name}" in msgids("messages", "es") & msgids("messages", "en")
    with pytest.raises(ProtocolError) as raised:
        parse_command(f"/{name} 535", chat=kind)
    error = raised.value
    assert error.code == "wrong_chat" and error.params["command"] == name
    es, en = error_text("es", error), error_text("en", error)
    assert es != en and "wrong_chat" not in es + en


def test_play_in_a_group_is_refused_pointing_to_new_and_accepted_in_private():
    for text in ("/play 535", "/jugar cinquillo", "/PLAY@cinqbot 535 players=3"):
        with pytest.raises(ProtocolError) as raised:
            parse_command(text, chat="group")
        error = raised.value
        assert "/new" in error_text("en", error) and "/nueva" in error_text("es", error)
    assert parse_command("/play 535", chat="private").name == "play"
    assert parse_command("/new 535", chat="group").name == "new"
    assert parse_command("/play 535").name == "play"  # no chat given: the kind is not checked


def test_help_says_where_each_restricted_command_belongs():
    where = {"private": {"en": "in a private chat", "es": "en privado"}, "group": {"en": "in a group",
                                                                                 "es": "en un grupo"}}
    for name, kinds in chats.restricted().items():
        for locale in ("es", "en"):
            lines = [line for line in translate(locale, "help.text").splitlines()
                     if line.startswith(f"/{_ALIASES[name][locale]} ")]
            assert lines, (name, locale)
            for kind in kinds:
                assert where[kind][locale] in lines[0], (name, locale, lines[0])


def test_the_docs_table_is_the_table():
    text = DOCS.read_text()
    rows = re.findall(r"^\| (private|group|private, group) \| ([^|]+) \|$", text, re.M)
    documented = {}
    for kinds, commands in rows:
        for c in re.findall(r"`/(\w+)`", commands):
            documented[c] = frozenset(k.strip() for k in kinds.split(","))
    assert documented == chats.COMMAND_CHATS


def test_decide_refuses_play_in_a_group_even_when_the_parser_was_not_asked():
    c = cmd("play", actor=ANA, room=GROUP, game="535", options={}, players=None)
    with pytest.raises(Refused) as r:
        decide(None, c, context())
    assert r.value.code == "wrong_chat"
    [m] = refusal_messages(c, r.value, None)
    assert m["to"]["room"]["chat"] == GROUP.chat and m["code"] == "wrong_chat"
    assert decide(None, cmd("play", actor=ANA, room=private(ANA), game="535", options={}, players=None),
                  context()).after is not None


@pytest.mark.parametrize("locale", ["es", "en"])
async def test_play_in_a_group_with_a_match_running_changes_nothing(any_redis, locale):
    h = Harness(any_redis)
    await h.send(ANA, f"/lang {locale}")
    await h.send(ANA, "/new cinquillo")
    await h.send(BEA, "/join")
    await h.send(ANA, "/start")
    table = await h.table_of()
    before = await h.events(table)
    tables_before = await any_redis.smembers(h.keys.player_tables(ANA.platform, ANA.user))
    msgs = await h.send(ANA, "/play 535")
    assert [m.to.room for m in msgs] == [GROUP]
    assert msgs[0].code == "wrong_chat"
    assert msgs[0].text == translate(locale, "wrong_chat.play")
    assert await h.table_of() == table  # the group's commands still go to its match
    assert await h.events(table) == before
    assert await any_redis.smembers(h.keys.player_tables(ANA.platform, ANA.user)) == tables_before
    hand = h.last_hand()
    mover = ANA if hand.to.player.same(ANA) else BEA
    await h.send(mover, f"/move {hand.actions[0].move}")
    assert len(await h.events(table)) == len(before) + 1  # and the match goes on


async def test_play_in_a_private_chat_still_starts_a_match_at_once(any_redis):
    h = Harness(any_redis)
    msgs = await h.send(ANA, "/play 535", room=private(ANA))
    assert any(m.kind == "hand" for m in msgs)
