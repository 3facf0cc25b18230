"""The service through its single entry point: gateway -> command stream -> worker -> outbox.

Runs on fakeredis and on a real Redis (``any_redis``).  Every refusal gets a reply in the sender's
language and leaves the table's stream untouched.
"""

from __future__ import annotations

import json

import pytest

from service.domain.inputs import Input
from service.domain.tables.replay import verify
from service.protocol.i18n import translate
from service.store.repository import history
from tests.service.support import ANA, BEA, CAL, DAN, GROUP, OTHER_GROUP, Harness, card_tokens, private, to


@pytest.fixture
def h(any_redis):
    return Harness(any_redis)


async def unchanged(h, table, action):
    """Run ``action`` and return its messages, checking the table's stream did not change."""
    before = await h.events(table)
    msgs = await action()
    assert await h.events(table) == before
    return msgs


def reply(msgs, locale="en"):
    [m] = [m for m in msgs if m.kind == "reply"]
    assert m.locale == locale
    return m.text


async def test_a_lobby_fills_starts_and_plays_through_action_tokens(h):
    table = await h.lobby(ANA, BEA)
    msgs = await h.send(ANA, "/bots 1 easy")
    assert "AI" in to(msgs, GROUP)[0].text
    msgs = await h.send(ANA, "/start")
    started = to(msgs, GROUP)[0]
    assert "SHA-256" in started.text and started.view["hand"] is None
    moves = 0
    while True:
        hands = [m for m in h.messages if m.kind == "hand" and m.actions]
        last = hands[-1]
        person = ANA if last.to.player.same(ANA) else BEA
        msgs = await h.send(person, token=last.actions[0].token)
        moves += 1
        if any(m.kind == "match_over" for m in msgs):
            break
        assert moves < 200
    over = next(m for m in h.messages if m.kind == "match_over")
    stored = await history(h.worker.store, table)
    started_event = next(s.event for s in stored if type(s.event).__name__ == "MatchStarted")
    assert started_event.seed in over.text  # revealed at the end, and only there
    assert not any(started_event.seed in m.model_dump_json() for m in h.messages if m.kind != "match_over")
    assert verify(stored).ok


async def test_the_end_tells_rooms_who_sat_where_and_nothing_hidden(h):
    # Ana, Bea, Cal (another platform) and an AI player; Cal leaves mid-match and an AI takes his seat.
    table = await h.lobby(ANA, BEA, CAL)
    await h.send(ANA, "/bots 1 easy")
    await h.send(ANA, "/start")
    await h.send(CAL, "/leave")
    for _ in range(300):
        if h.over():
            break
        last = h.last_hand()
        await h.send(ANA if last.to.player.same(ANA) else BEA, token=last.actions[0].token)
    [over] = [m for m in h.messages if m.kind == "match_over"]
    assert over.to.room == GROUP
    # Seat order; a person is their identity (platform, user id, name), an AI player's seat is null.
    assert over.seats == [ANA, BEA, None, None]
    raw = over.model_dump(mode="json")["seats"]
    assert [sorted(p) if p else None for p in raw] == [["name", "platform", "user"]] * 2 + [None] * 2
    seed = next(s.event.seed for s in await history(h.worker.store, table)
                if type(s.event).__name__ == "MatchStarted")
    assert not card_tokens(json.dumps(raw)) and seed not in json.dumps(raw)  # identities only
    # Only the end carries seats: the table, hands and replies never wrote the field.
    others = [m for m in h.messages if m.kind != "match_over"]
    assert others and not any("seats" in m.model_fields_set for m in others)


async def test_replay_of_a_finished_table_verifies_the_deal(h):
    await h.send(ANA, "/play cinquillo 2", room=private(ANA))
    table = await h.table_of(private(ANA))
    await h.send(ANA, "/leave", room=private(ANA))  # an AI player finishes the match
    msgs = await h.send(BEA, f"/replay {table}", room=private(BEA))
    [m] = [m for m in msgs if m.kind == "replay"]
    assert translate("en", "table.replay_ok") in m.text


async def test_refusal_replay_of_an_unknown_table(h):
    msgs = await h.send(ANA, "/replay nosuchtab")
    assert reply(msgs) == translate("en", "refusal.no_table", table="nosuchtab")
    assert await h.events("nosuchtab") == []


async def test_refusal_replay_of_a_running_table(h):
    table = await h.lobby(ANA, BEA)
    msgs = await unchanged(h, table, lambda: h.send(CAL, f"/replay {table}"))
    assert reply(msgs) == translate("en", "refusal.not_finished", table=table)


async def test_refusal_no_table_in_this_room(h):
    msgs = await h.send(ANA, "/join")
    assert reply(msgs) == translate("en", "refusal.no_table_here")


async def test_refusal_unknown_command_in_the_players_language(h):
    msgs = await h.send(ANA, "/bailar", language_code="es")
    assert reply(msgs, "es").startswith(translate("es", "error.unknown_command", command="bailar")[:10])


async def test_refusal_malformed_options(h):
    msgs = await h.send(ANA, "/new cinquillo colour=red")
    assert reply(msgs).startswith(translate("en", "refusal.bad_options", reason="")[:10])
    assert await h.gateway.table_of(GROUP) is None


async def test_join_right_after_new_before_any_worker_runs_is_accepted(h):
    # The gateway points the room at the new table itself: the /join finds it at once.
    await h.gateway.submit(Input(ANA, GROUP), "/new cinquillo")
    await h.gateway.submit(Input(BEA, GROUP), "/join")
    msgs = await h.settle()
    assert not [m for m in msgs if m.kind == "reply"]
    table = await h.table_of()
    stored = await history(h.worker.store, table)
    assert [type(s.event).__name__ for s in stored][-1] == "PlayerJoined"
    assert [s.event.player.user for s in stored if type(s.event).__name__ == "PlayerJoined"] == ["1", "2"]


async def test_a_refused_new_leaves_the_room_on_its_table(h):
    table = await h.lobby(ANA, BEA)
    msgs = await h.send(ANA, "/new cinquillo colour=red")
    assert reply(msgs).startswith(translate("en", "refusal.bad_options", reason="")[:10])
    assert await h.gateway.table_of(GROUP) == table
    msgs = await h.send(ANA, "/start")
    assert not [m for m in msgs if m.kind == "reply"]


async def test_refusal_syntax_error_never_reaches_a_stream(h, any_redis):
    await h.send(ANA, "/bots many")
    for key in h.keys.all_commands():
        assert await any_redis.xlen(key) == 0


async def test_refusal_full_table(h):
    table = await h.lobby(ANA, BEA, CAL, DAN)
    msgs = await unchanged(h, table, lambda: h.send(ANA.model_copy(update={"user": "9"}), "/join"))
    assert reply(msgs) == translate("en", "refusal.table_full", table=table, seats=4)


async def test_refusal_not_your_turn_and_illegal_move(h):
    table = await h.lobby(ANA, BEA)
    await h.send(ANA, "/start")
    hand = h.last_hand()
    mover, waiter = (ANA, BEA) if hand.to.player.same(ANA) else (BEA, ANA)
    msgs = await unchanged(h, table, lambda: h.send(waiter, "/move 5o"))
    assert reply(msgs) == translate("en", "refusal.not_your_turn", table=table)
    msgs = await unchanged(h, table, lambda: h.send(mover, "/move pass"))
    # The reason names the mover's playable cards: it goes to them alone, the group gets a neutral line.
    [private] = [m for m in msgs if m.kind == "reply" and m.to.player is not None]
    assert private.to.player.same(mover) and private.text.startswith("You cannot pass")
    assert reply(to(msgs, GROUP)) == translate("en", "refusal.move_refused_private", name=mover.name)


async def test_refusal_wrong_seat_stale_and_forged_tokens(h):
    table = await h.lobby(ANA, BEA)
    await h.send(ANA, "/start")
    hand = h.last_hand()
    mover, waiter = (ANA, BEA) if hand.to.player.same(ANA) else (BEA, ANA)
    token = hand.actions[0].token
    msgs = await unchanged(h, table, lambda: h.send(waiter, token=token))
    assert reply(msgs) == translate("en", "refusal.wrong_seat", table=table)
    forged = token[:-3] + ("AAA" if token[-3:] != "AAA" else "BBB")
    msgs = await unchanged(h, table, lambda: h.send(mover, token=forged))
    assert reply(msgs) == translate("en", "refusal.token_forged")
    await h.send(mover, token=token)
    msgs = await unchanged(h, table, lambda: h.send(mover, token=token))
    assert reply(msgs) in (translate("en", "refusal.stale_token", table=table),
                           translate("en", "refusal.not_your_turn", table=table))


async def test_a_duplicate_delivery_is_answered_once_and_not_acted_on(h):
    table = await h.lobby(ANA)
    await h.send(BEA, "/join", command_id="upd-1")
    # The platform delivers the same update again: nothing happens and nobody is told anything twice.
    msgs = await unchanged(h, table, lambda: h.send(BEA, "/join", command_id="upd-1"))
    assert msgs == []
    # The same for a command the gateway answers itself (no table).
    await h.send(BEA, "/help", command_id="upd-2")
    first = [m for m in h.messages if m.id.startswith("upd-2")]
    msgs = await unchanged(h, table, lambda: h.send(BEA, "/help", command_id="upd-2"))
    assert len(first) == 1 and msgs == []


async def test_a_redelivered_command_is_not_applied_or_answered_twice(h, any_redis):
    table = await h.lobby(ANA)
    await h.send(BEA, "/join")
    raw = (await any_redis.xrange(h.keys.commands_for(table)))[-1][1][b"c"]
    await any_redis.xadd(h.keys.commands_for(table), {"c": raw})  # the stream delivers it again
    msgs = await unchanged(h, table, h.settle)
    assert msgs == []


async def test_refusals_of_the_lobby(h):
    table = await h.lobby(ANA, BEA)
    for who, text, code in ((BEA, "/start", "not_creator"), (BEA, "/bots 1", "not_creator"),
                            (BEA, "/cancel", "not_creator"), (BEA, "/join", "already_seated"),
                            (CAL, "/leave", "not_seated"), (ANA, "/move 5o", "not_started"),
                            (ANA, "/hand", "not_started")):
        msgs = await unchanged(h, table, lambda who=who, text=text: h.send(who, text))
        assert reply(msgs) == translate("en", f"refusal.{code}", table=table), text


async def test_lang_switches_the_reply_language(h):
    msgs = await h.send(ANA, "/lang es")
    assert reply(msgs, "es") == translate("es", "lang.changed")
    msgs = await h.send(ANA, "/join")
    assert reply(msgs, "es") == translate("es", "refusal.no_table_here")


async def test_help_rules_and_stats_are_answered_by_the_gateway(h, any_redis):
    assert reply(await h.send(ANA, "/help")) == translate("en", "help.text")
    assert translate("en", "rules.535") in reply(await h.send(ANA, "/rules 535"))
    assert reply(await h.send(ANA, "/stats")) == translate("en", "table.stats", played=0, won=0)


async def test_stats_count_finished_matches(h):
    await h.send(ANA, "/play 535 2", room=private(ANA))
    await h.send(ANA, "/leave", room=private(ANA))
    assert reply(await h.send(ANA, "/stats")) == translate("en", "table.stats", played=1, won=0) or \
        reply(await h.send(ANA, "/stats")) == translate("en", "table.stats", played=1, won=1)


async def test_a_player_leaving_a_match_is_replaced_by_an_ai_player(h):
    table = await h.lobby(ANA, BEA)
    await h.send(ANA, "/start")
    msgs = await h.send(BEA, "/leave")
    assert translate("en", "table.bot_took_seat_left", name="Bea") in to(msgs, GROUP)[0].text
    # From now on only Ana gets hands; the AI seat plays by itself.
    while not h.over():
        hand = h.last_hand()
        assert hand.to.player.same(ANA)
        await h.send(ANA, token=hand.actions[0].token)
    assert await h.events(table)


async def test_cancel_by_the_creator(h):
    table = await h.lobby(ANA, BEA)
    await h.send(ANA, "/start")
    msgs = await h.send(ANA, "/cancel")
    assert translate("en", "table.cancelled", name="Ana") in to(msgs, GROUP)[0].text
    msgs = await unchanged(h, table, lambda: h.send(BEA, "/hand"))
    assert reply(msgs) == translate("en", "refusal.table_cancelled", table=table)


async def test_several_rooms_show_one_table(h):
    table = await h.lobby(ANA)
    await h.send(BEA, f"/start {table}", room=OTHER_GROUP)  # an invitation link opened elsewhere
    msgs = await h.send(ANA, "/start")
    assert {m.to.room.chat for m in msgs if m.to.room is not None} == {GROUP.chat, OTHER_GROUP.chat}


async def test_one_player_sits_at_several_tables(h, any_redis):
    t1 = await h.lobby(ANA, BEA)
    await h.send(ANA, "/new 535", room=OTHER_GROUP)
    t2 = await h.table_of(OTHER_GROUP)
    members = await any_redis.smembers(h.keys.player_tables(ANA.platform, ANA.user))
    assert {m.decode() for m in members} == {t1, t2}


async def test_the_hand_command_resends_the_private_view(h):
    await h.lobby(ANA, BEA)
    await h.send(ANA, "/start")
    msgs = await h.send(BEA, "/hand")
    [m] = to(msgs, BEA)
    assert m.kind == "hand" and m.view["seat"] == 1


async def test_in_a_private_chat_a_person_at_one_table_means_that_table(h):
    await h.lobby(ANA, BEA)
    await h.send(ANA, "/start")
    msgs = await h.send(BEA, "/hand", room=private(BEA))
    assert [m.kind for m in to(msgs, BEA)] == ["hand"]
    await h.send(ANA, "/new 535", room=OTHER_GROUP)  # Ana sits at two tables: /hand means the running one
    msgs = await h.send(ANA, "/hand", room=private(ANA))
    assert [m.kind for m in to(msgs, ANA)] == ["hand"]
    await h.send(CAL, "/join", room=OTHER_GROUP)
    await h.send(CAL, "/new cinquillo", room=GROUP)  # Cal sits at two lobbies: ambiguous
    msgs = await h.send(CAL, "/join", room=private(CAL))
    assert reply(msgs) == translate("en", "refusal.no_table_here")


async def test_the_derived_indexes_are_rebuilt_from_the_streams(h, any_redis):
    from service.write.reindex import reindex

    t1 = await h.lobby(ANA, BEA)
    await h.send(CAL, "/play 535 2", room=private(CAL))
    await h.send(CAL, "/leave", room=private(CAL))  # finished: a stat for Cal
    t2 = await h.table_of(private(CAL))
    before = sorted(await any_redis.keys("*player:*"))
    rooms = {k: await any_redis.get(k) for k in await any_redis.keys("room:*")}
    for k in [*before, *rooms]:
        await any_redis.delete(k)
    assert await reindex(any_redis, h.keys) == 2
    assert {k: await any_redis.get(k) for k in await any_redis.keys("room:*")} == rooms
    ana = await any_redis.smembers(h.keys.player_tables(ANA.platform, ANA.user))
    assert {m.decode() for m in ana} == {t1}
    assert await any_redis.hget(h.keys.player_stats(CAL.platform, CAL.user), "played") == b"1"
    assert t2
