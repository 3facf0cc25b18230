"""What the daily deal shows: nothing of the day's deal before it is revealed (every message scanned),
the standing, the week, the boards, and the share text that names no card, posted in a group of the
person's by its button; forged and foreign buttons (rules G-1, D-4, D-5 of docs/rules.md)."""

from __future__ import annotations

import json
import re

import pytest

import engine
from service.domain import daily
from service.domain.identities import Room
from service.domain.inputs import Input
from service.domain.tokens import issue
from service.store.repository import load
from service.write.gateway import Gateway
from tests.service.daily.support import DAY, dm, harness, play
from tests.service.support import ANA, BEA, CAL, card_tokens

GROUP = Room(platform="tg", chat="-100777", kind="group")
# Card names in words, in both languages: a share text must hold none.
_CARD_WORDS = re.compile(r"\b(oros|copas|espadas|bastos|coins|cups|swords|clubs|sota|caballo|rey|jack|"
                         r"knight|king|as|ace)\b", re.I)


def _scanned(m) -> str:
    """A message as JSON, its action tokens blanked (opaque: their base-36 parts may read "1b")."""
    return json.dumps({**m.model_dump(), "actions": [a.move for a in m.actions]})


@pytest.mark.parametrize("game", daily.GAMES)
async def test_g1_nothing_of_the_days_deal_shows_before_it_is_revealed(any_redis, game):
    h = harness(any_redis)
    await h.send(ANA, f"/daily {game}", room=dm(ANA))
    await play(h, ANA)
    table = daily.table_id(h.gateway.secrets[0], ANA, game, DAY)
    await h.send(ANA, f"/daily {game}", room=dm(ANA))  # the standing, the share text
    await h.send(ANA, f"/replay {table}", room=dm(ANA))
    await h.send(BEA, f"/replay {table}", room=dm(BEA))
    await h.send(BEA, f"/daily {game} board", room=dm(BEA))
    t = await load(h.worker.store, table)
    assert t.status == "finished"
    # The AI players' cards never played: nobody saw them while playing, nobody may see them now.
    unseen = [engine.view(t.engine, s)["hand"] for s in (1, 2, 3)]
    everything = [_scanned(m) for m in h.messages]
    assert not any(t.seed in s for s in everything), "the seed shown before the day's deal is revealed"
    if game == "cinquillo":
        hidden = {c for hand in unseen for c in hand}
        assert hidden, "the scan needs cards to look for"
        assert not set().union(*(card_tokens(s) for s in everything)) & hidden
    for m in h.messages:  # a view only ever holds its own person's hand
        if m.view is not None:
            assert m.view.get("hand") in (None, engine.view(t.engine, 0)["hand"]) or m.view.get("seat") == 0
            assert "hands" not in m.view and "seed" not in m.view
    refusals = [m.code for m in h.messages if m.code == "deal_embargoed"]
    assert len(refusals) == 2  # the person's own /replay too: their finished attempt stays secret


async def test_d4_the_standing_the_week_and_the_share_text_which_names_no_card(fake_redis):
    h = harness(fake_redis)
    for p in (BEA, CAL):
        await h.send(p, "/daily", room=dm(p))
        await play(h, p, lambda a: a[-1])
    await h.send(ANA, "/daily", room=dm(ANA))
    await play(h, ANA)
    msgs = await h.send(ANA, "/daily", room=dm(ANA))
    standing = msgs[0].text
    att = await h.gateway.daily.store.mine(ANA, "cinquillo", DAY)
    st = await h.gateway.daily.store.standing("cinquillo", DAY, att.score)
    assert f"rank {st.rank} of 3 players" in standing and f"better than {st.percentile}%" in standing
    assert "day(s) in a row" in standing and att.marks in standing
    share = await h.gateway.daily.share_text(ANA, "cinquillo", "es", h.clock())
    assert share is not None and att.marks in share and "cinq" in share
    assert card_tokens(share) == set() and not _CARD_WORDS.search(share)
    for line in att.marks.splitlines():
        assert set(line) <= {daily.PLAYED, daily.PASSED, daily.OUT}
    week = (await h.send(ANA, "/daily week", room=dm(ANA)))[0].text
    assert week.count(": —") == 6 and "2026-12-06: place" in week
    board = (await h.send(ANA, "/diario tabla", room=dm(ANA)))[0].text
    assert "the best of 3 players" in board and "Ana" in board and "Bea" in board


async def test_d4_a_groups_board_lists_its_members_who_played(fake_redis):
    h = harness(fake_redis)
    for p in (ANA, BEA):
        await h.send(p, "/daily", room=GROUP)  # seen in the group: members of its board
    for p in (ANA, BEA, CAL):
        await h.send(p, "/daily", room=dm(p))
        await play(h, p)
    msgs = await h.send(ANA, "/daily cinquillo", room=GROUP)
    assert "in this group (2 players)" in msgs[0].text
    assert "Ana" in msgs[0].text and "Bea" in msgs[0].text and "Cal" not in msgs[0].text


async def test_d5_the_share_button_posts_the_pressers_own_result_once_in_their_group(fake_redis):
    h = harness(fake_redis)
    await h.gateway.submit(Input(ANA, GROUP, room_title="Los del mus"), "/join")  # no table: refused
    await h.send(ANA, "/daily", room=dm(ANA))
    await play(h, ANA)
    standing = (await h.send(ANA, "/daily", room=dm(ANA)))[0]
    share = next(a for a in standing.actions if a.label == "📣 Post in Los del mus")
    posted = await h.send(ANA, room=dm(ANA), token=share.token)
    in_group = [m for m in posted if m.to.room is not None and m.to.room.same(GROUP)]
    mine = await h.gateway.daily.store.mine(ANA, "cinquillo", DAY)
    assert len(in_group) == 1 and mine.marks in in_group[0].text
    assert card_tokens(in_group[0].text) == set()
    assert any("Posted in Los del mus" in m.text for m in posted)
    again = await h.send(ANA, room=dm(ANA), token=share.token)
    assert [m for m in again if m.to.room is not None and m.to.room.same(GROUP)] == []  # once
    # Bea presses Ana's button (a forwarded message): it would post Bea's result, but she is not
    # known in that group: refused, nothing posted.
    msgs = await h.send(BEA, room=dm(BEA), token=share.token)
    assert [m.code for m in msgs] == ["daily_unknown_group"]
    # /daily share in the group itself: the sender's own share text, or a refusal before playing
    msgs = await h.send(CAL, "/daily share", room=GROUP)
    assert [m.code for m in msgs] == ["daily_nothing_to_share"]


async def test_hostile_forged_and_malformed_daily_buttons_are_refused(fake_redis):
    h = harness(fake_redis)
    forged = issue(b"not-the-secret", table="D", seat=0, version=0, move="b c")
    odd = issue(h.gateway.secrets[0], table="D", seat=0, version=0, move="s c")
    unknown = issue(h.gateway.secrets[0], table="D", seat=0, version=0, move="x c")
    for token, code in ((forged, "token_forged"), (odd, "token_forged"), (unknown, "token_forged")):
        msgs = await h.send(ANA, room=dm(ANA), token=token)
        assert [m.code for m in msgs] == [code]


async def test_hostile_another_persons_attempt_stays_theirs(fake_redis):
    h = harness(fake_redis)
    await h.send(ANA, "/daily", room=dm(ANA))
    table = daily.table_id(h.gateway.secrets[0], ANA, "cinquillo", DAY)
    hand = [m for m in h.messages if m.kind == "hand" and m.actions][-1]
    before = await h.events(table)
    msgs = await h.send(BEA, room=dm(BEA), token=hand.actions[0].token)  # Ana's button, pressed by Bea
    assert [m.code for m in msgs] == ["not_seated"]
    msgs = await h.send(BEA, f"/replay {table}", room=dm(BEA))
    assert [m.code for m in msgs] == ["not_finished"]
    assert await h.events(table) == before
    assert all(m.to.player is None or not BEA.same(m.to.player) or m.view is None for m in h.messages)


async def test_a_role_with_another_daily_secret_is_refused_rather_than_dealing_another_deal(fake_redis):
    h = harness(fake_redis)
    await h.send(ANA, "/daily", room=dm(ANA))
    other = Gateway(fake_redis, h.settings.model_copy(update={"daily_secret": None}), h.keys, clock=h.clock)
    await other.submit(Input(BEA, dm(BEA)), "/daily")
    msgs = await h.settle()
    assert [m.code for m in msgs] == ["daily_unavailable"]
    assert await other.daily.store.mine(BEA, "cinquillo", DAY) is None


async def test_a_day_leaves_redis_into_the_archive_like_finished_tables(fake_redis, tmp_path):
    from service.daily.retention import archive_days
    from service.ops.retention import retain_once

    h = harness(fake_redis, retain_finished_days=30, archive_dir=str(tmp_path))
    await h.send(ANA, "/daily", room=dm(ANA))
    await play(h, ANA)
    date = daily.day_name(DAY)
    board, att = h.keys.daily_board("cinquillo", date), h.keys.daily_attempts("cinquillo", date)
    revealed = daily.day_end(DAY) + daily.GRACE_S
    assert await archive_days(fake_redis, h.keys, str(tmp_path), 30, revealed + 29 * 86400) == []
    assert await fake_redis.exists(board, att) == 2  # not yet: kept as long as finished tables
    later = revealed + 30 * 86400 + 1
    await retain_once(fake_redis, h.keys, h.settings, later)
    assert await fake_redis.exists(board, att) == 0
    archived = tmp_path / f"cinq-daily-{daily.day_name(int(later // 86400))}.jsonl"
    lines = [json.loads(line) for line in archived.read_text().splitlines()]
    assert [(d["daily"], d["day"], [m for m, _ in d["board"]]) for d in lines] == \
        [("cinquillo", date, ["tg:1"])]
    assert lines[0]["attempts"]["tg:1"]["p"] in (1, 2, 3, 4)
    # the person keeps their days (their streak), and the table itself went to the tables' archive
    assert await h.gateway.daily.store.mine(ANA, "cinquillo", DAY) is not None
    table = daily.table_id(h.gateway.secrets[0], ANA, "cinquillo", DAY)
    assert not await fake_redis.exists(h.keys.events(table))
