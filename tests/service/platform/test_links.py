"""The web table's links in delivered messages (service.platform.links): who gets which link, and that
a person's link, which shows their hand, never reaches a room (G-1)."""

from __future__ import annotations

import math
from urllib.parse import parse_qs, urlparse

import pytest

from service.domain.identities import Player, Room
from service.domain.weblinks import LINK_TTL_S, LinkClaims, open_link
from service.foundation.settings import Settings
from service.platform.links import Links
from service.platform.outbox import Message, Recipient

SECRET = b"links-secret"
BASE = "https://cards.example/"
NOW = 1_700_000_000.0
ANA = Player(platform="acme", user="u1", name="Ana")
GROUP = Room(platform="acme", chat="g1", kind="group")
DM = Room(platform="acme", chat="dm-u1", kind="private")


def msg(kind: str, to: Recipient, table: str | None = "t1") -> Message:
    return Message(id=f"c:{kind}", table=table, version=3, to=to, locale="en", kind=kind)


def claims(url: str) -> LinkClaims:
    parts = urlparse(url)
    assert f"{parts.scheme}://{parts.netloc}/" == BASE and parts.path == "/t"
    return open_link([SECRET], parse_qs(parts.query)["k"][0], NOW)


@pytest.fixture
def links() -> Links:
    return Links(BASE, SECRET, clock=lambda: NOW)


def test_a_hand_carries_its_players_own_link_to_the_table(links):
    got = links.attach(msg("hand", Recipient(player=ANA)))
    assert got.link is not None
    c = claims(got.link)
    assert (c.table, c.platform, c.user, c.spectator) == ("t1", "acme", "u1", False)
    # Fresh for the link's lifetime from delivery, rounded up to ten minutes (an edit in place sees
    # the same link within a stretch of play).
    assert c.expires == math.ceil((NOW + LINK_TTL_S) / 600) * 600
    assert links.attach(msg("hand", Recipient(player=ANA))).link == got.link


@pytest.mark.parametrize("kind", ["table", "match_over"])
@pytest.mark.parametrize("room", [GROUP, DM])
def test_g1_a_rooms_table_carries_a_spectators_link_only(links, kind, room):
    got = links.attach(msg(kind, Recipient(room=room)))
    assert got.link is not None
    c = claims(got.link)
    assert c.spectator and (c.platform, c.user, c.table) == (None, None, "t1")


def test_g1_a_person_link_never_goes_on_a_message_a_room_reads(links):
    # A hand is addressed to its player; should one ever name a room, it gets no link at all.
    for to in (Recipient(room=GROUP), Recipient(room=DM, person=ANA)):
        assert links.attach(msg("hand", to)).link is None


def test_a_replay_links_to_the_replay_page(links):
    for to in (Recipient(room=GROUP), Recipient(room=DM, person=ANA), Recipient(player=ANA)):
        assert links.attach(msg("replay", to)).link == "https://cards.example/replay/t1"


@pytest.mark.parametrize("kind", ["reply", "table"])
def test_replies_and_table_less_messages_carry_no_link(links, kind):
    if kind == "reply":
        assert links.attach(msg("reply", Recipient(room=GROUP))).link is None
        assert links.attach(msg("reply", Recipient(player=ANA))).link is None
    else:
        assert links.attach(msg("table", Recipient(room=GROUP), table=None)).link is None


def test_links_exist_only_when_the_web_table_is_configured():
    assert Links.of(Settings(redis_url=None)) is None
    configured = Links.of(Settings(redis_url=None, web_public_url=BASE, token_secrets=["s1", "s2"]))
    assert configured is not None and configured.base == "https://cards.example"
    assert configured.secret == b"s1"  # signed with the signing secret; any listed one opens it
    with pytest.raises(ValueError):
        Links("", SECRET)
