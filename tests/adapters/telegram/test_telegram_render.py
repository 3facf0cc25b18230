"""Outbox messages to Telegram operations: who gets what, which buttons, and what a button carries."""

from __future__ import annotations

import engine
from adapters.telegram.callbacks import GAMES, Cfg, Lobby
from adapters.telegram.content import HAND_RANK, ROOM_RANK, Post, Show
from adapters.telegram.menu import request, settings_content
from adapters.telegram.render import milestones, route
from service.domain.identities import Player, Room
from service.domain.requests import Create
from service.platform.outbox import Action, Message, Recipient
from service.protocol.i18n import translate

GROUP = Room(platform="telegram", chat="-5", kind="group")
ANA = Player(platform="telegram", user="9", name="Ana")


def msg(to: Recipient, kind: str, view: dict | None = None, actions: list[Action] | None = None,
        version: int = 7) -> Message:
    return Message(id="c1:0", table="tab123", version=version, to=to, locale="en", kind=kind, text="hello",
                   view=view, actions=actions or [])


def test_a_running_table_in_a_group_has_the_my_hand_link_and_the_time_left():
    view = {"game": "cinquillo", "to_move": 2}
    routed = route(msg(Recipient(room=GROUP), "table", view), bot_username="cinqbot", now=1010.0,
                   written_at=1000.0, turn_seconds=60)
    [op] = routed.ops
    assert isinstance(op, Show) and op.chat == "-5" and op.rank == (7, ROOM_RANK)
    assert op.content.rows == ((("🃏 My hand", "url", "https://t.me/cinqbot?start=tab123"),),)
    assert op.content.text.endswith(translate("en", "tg.time_under", seconds=60))
    assert routed.group_table == ("-5", "tab123")


def test_a_lobby_has_its_buttons_and_their_data_fits_telegram():
    routed = route(msg(Recipient(room=GROUP), "table", {"status": "lobby", "seats": ["Ana"]}),
                   bot_username="cinqbot")
    [op] = routed.ops
    data = [b[2] for row in op.content.rows for b in row]
    assert [Lobby.unpack(d).op for d in data] == ["join", "leave", "bots", "settings", "start", "cancel"]
    assert all(len(d.encode()) <= 64 for d in data)


def test_a_hand_goes_to_the_players_private_chat_with_one_button_per_legal_move():
    actions = [Action(label="5 of coins", move="5o", token="1tab.0.7.=5o.x"),
               Action(label="pass", move="pass", token="1tab.0.7.-.x")]
    [op] = route(msg(Recipient(player=ANA), "hand", {"hand": ["5o"]}, actions), bot_username="b").ops
    assert isinstance(op, Show) and op.chat == "9" and op.rank == (7, HAND_RANK)
    assert op.content.rows == ((("5 of coins", "data", "1tab.0.7.=5o.x"),),
                               ((translate("en", "tg.btn.pass"), "data", "1tab.0.7.-.x"),))
    assert op.turn  # the person's turn: it goes without waiting to merge (test_telegram_sender.py)
    [waiting] = route(msg(Recipient(player=ANA), "hand", {"hand": ["5o"]}), bot_username="b").ops
    assert isinstance(waiting, Show) and not waiting.turn


def test_replies_are_posted_and_other_platforms_are_ignored():
    [op] = route(msg(Recipient(room=GROUP), "reply"), bot_username="b").ops
    assert isinstance(op, Post) and op.key == "c1:0"
    other = Recipient(room=Room(platform="web", chat="x"))
    assert route(msg(other, "table", {}), bot_username="b").ops == []


def test_the_end_edits_the_table_and_posts_a_summary_with_replay():
    state = engine.new_game("535", players=2, seed=1, hand_size=3, target=3)
    while engine.to_move(state) is not None:
        state = engine.play(state, engine.legal_moves(state)[0])
    view = engine.view(state, None)
    bea = Player(platform="telegram", user="7", name="Bea")
    end = msg(Recipient(room=GROUP), "match_over", view).model_copy(update={"seats": [ANA, bea]})
    routed = route(end, bot_username="b", seat_names=["Ana", "Bea"])
    show, post = routed.ops
    assert isinstance(show, Show) and not show.content.rows
    assert isinstance(post, Post) and "/replay tab123" in post.content.text
    winners = view["result"]["winners"]
    # Counted by user id, with everyone's name (an AI player's seat, None, is no one).
    assert routed.group_result == ("-5", "tab123", [["9", "7"][w] for w in winners], {"9": "Ana", "7": "Bea"})
    assert "Ana" in show.content.text
    ai_won = end.model_copy(update={"seats": [None if i in winners else bea for i in range(2)]})
    assert route(ai_won, bot_username="b").group_result == ("-5", "tab123", [], {"7": "Bea"})
    # An end written before the service sent seats counts the match and no one's wins.
    old = end.model_copy(update={"seats": None})
    assert route(old, bot_username="b").group_result == ("-5", "tab123", [], {})


def test_the_settings_keyboard_builds_the_play_command_and_fits_telegram():
    cfg = Cfg(where="p", game="c", players=6, flags=0b11, op="go")
    # A typed command, not protocol text for the gateway to parse again (issue 18).
    assert request(cfg) == Create(name="play", game="cinquillo", players=6,
                                  options={"preset": "tradicional", "chips": True})
    content = settings_content("es", cfg)
    assert all(len(b[2].encode()) <= 64 for row in content.rows for b in row)
    assert set(GAMES.values()) == {"cinquillo", "535"}


def test_a_hand_tells_what_the_others_played_since_the_readers_last_move():
    history = [{"seat": 0, "move": "5o"}, {"seat": 1, "move": "pass"}, {"seat": 2, "move": "5e"}]
    view = {"game": "cinquillo", "seat": 0, "history": history, "hand": ["6o"]}
    actions = [Action(label="6 of coins", move="6o", token="1tab.0.7.=6o.x")]
    [op] = route(msg(Recipient(player=ANA), "hand", view, actions), bot_username="b",
                 seat_names=["Ana", "Bea", "AI 3"]).ops
    assert op.content.text.startswith("Since your last move: Bea: pass · AI 3: 5 of swords\n\nhello")
    # One move only: the view's own "last move" line says it already.
    view["history"] = [*history[:2], {"seat": 0, "move": "4o"}, {"seat": 1, "move": "6e"}]
    [op] = route(msg(Recipient(player=ANA), "hand", view, actions), bot_username="b").ops
    assert op.content.text == "hello"


def test_the_time_left_comes_from_the_services_deadline():
    view = {"game": "cinquillo", "to_move": 2}
    timed = msg(Recipient(room=GROUP), "table", view).model_copy(update={"deadline": 1030.0})
    [op] = route(timed, bot_username="cinqbot", now=1010.0, written_at=1000.0, turn_seconds=60).ops
    assert isinstance(op, Show) and op.content.text.endswith(translate("en", "tg.time_under", seconds=30))
    # It stays true: the table is edited again when 10 s are left (and says so), then time is up.
    assert milestones(timed, 1010.0) == [1020.0]
    [op] = route(timed, bot_username="cinqbot", now=1020.5).ops
    assert op.content.text.endswith(translate("en", "tg.time_under", seconds=10))
    [op] = route(timed, bot_username="cinqbot", now=1031.0).ops
    assert op.content.text.endswith(translate("en", "tg.time_up"))
    # The service says there is no deadline (no timer, or an AI player's turn): no time is shown.
    wire = msg(Recipient(room=GROUP), "table", view).model_dump()
    untimed = Message.model_validate({**wire, "deadline": None})
    [op] = route(untimed, bot_username="cinqbot", now=1010.0, written_at=1000.0, turn_seconds=60).ops
    assert isinstance(op, Show) and "⏳" not in op.content.text
