"""``cinq play``: one person at a terminal against AI players, through the whole pipeline.

Input becomes ``submit`` calls (a number picks the move shown with it, other text is a move or a
command), and outbox messages for this room or player are shown by :mod:`adapters.terminal.screen`
(a compact table redrawn in place at a TTY, plain lines when piped).  Works at a TTY and with piped stdin: at
end of input it stops cleanly.  With ``--auto`` an AI player plays the person's seat too.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import zlib
from typing import IO, Any

from adapters.terminal.screen import Screen
from service.domain.identities import Player, Room
from service.domain.inputs import Input
from service.foundation.settings import Settings
from service.ops.runtime import build
from service.platform.outbox import Message, OutboxReader
from service.protocol.i18n import pick_locale, translate
from service.write import bots

# The embedded store lives and dies with the process: a few buckets are plenty.
EMBEDDED_BUCKETS = 8


def _for_me(msg: Message, me: Player, room: Room) -> bool:
    to = msg.to
    return (to.room is not None and room.same(to.room)) or (to.player is not None and me.same(to.player))


async def play(words: list[str], *, auto: bool = False, lang: str | None = None,
               stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """Play one match; returns the exit status (0: the match ended, or the player quit)."""
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    locale = lang if lang in ("es", "en") else pick_locale(os.environ.get("LANG", "").split(".")[0])
    settings = Settings(redis_url=None, buckets=EMBEDDED_BUCKETS, turn_seconds=0)
    import fakeredis

    rt = build(settings, redis=fakeredis.FakeAsyncRedis())
    out = stdout
    screen = Screen(out, locale)
    say = screen.say

    say(translate(locale, "terminal.embedded"))
    me = Player(platform="terminal", user="you",
                name=os.environ.get("USER") or translate(locale, "view.player", n=1))
    room = Room(platform="terminal", chat="tty", kind="private")
    reader = OutboxReader(rt.redis, rt.keys, [rt.keys.outbox(b) for b in range(rt.keys.buckets)])
    worker = asyncio.create_task(rt.worker.run())
    try:
        await rt.gateway.submit(Input(me, room, language=locale), "/play " + " ".join(words or ["cinquillo"]))
        await rt.redis.hset(rt.keys.player_prefs("terminal", "you"), "locale", locale)
        return await _loop(rt, reader, me, room, auto, stdin, say, locale, screen)
    finally:
        rt.worker.stop.set()
        await worker


# The codes of a reply that could not read the words typed as a move (service.protocol.parse).
UNREAD = frozenset({"bad_argument", "missing_argument", "unexpected_argument", "bad_option"})


def _unread(reply: Message) -> bool:
    """Whether a reply says the words typed as a move could not be read (a command's usage, or the
    engine's notation for both games: the chat's words for it)."""
    return reply.code in UNREAD or any(isinstance(item, dict) and item.get("illegal") == "bad_notation"
                                       for item in reply.lines or [])


HELP = frozenset({"help", "ayuda", "?", "h"})
RULES = frozenset({"rules", "reglas"})
AGAIN = frozenset({"hand", "mano", "table", "mesa"})
QUIT = frozenset({"q", "quit", "exit", "salir"})


async def _checked(rt: Any, table: str | None) -> bool | None:
    """Whether the finished table's deal checks (its seed gives its hands and moves), read from the
    embedded store before it goes away with the process."""
    if not table:
        return None
    from service.domain.tables.replay import verify
    from service.store.repository import history

    return verify(await history(rt.worker.store, table)).ok


async def _loop(rt: Any, reader: OutboxReader, me: Player, room: Room, auto: bool, stdin: IO[str],
                say: Any, locale: str, screen: Screen) -> int:
    started = False
    typed: str | None = None  # the words last sent as a move: a reply that cannot read them says so
    hand: Message | None = None
    seat: int | None = None
    round_shown = False  # a round's result is on screen: a TTY waits for Enter before the next deal
    while True:
        msgs = [m for m in await reader.read(block_ms=200) if _for_me(m, me, room)]
        if not msgs:
            continue
        new_hand = next((m for m in reversed(msgs) if m.kind == "hand"), None)
        answered = False
        for m in msgs:
            if m.kind in ("table", "hand") and not started:
                started = True
                say(translate(locale, "terminal.intro", game=translate(locale, f"game.{m.game}")))
                say(translate(locale, "terminal.sealed"))
            if m.kind == "hand" and m.view is not None and m.view.get("seat") is not None:
                seat = m.view["seat"]
            if m.kind == "table":
                screen.events(m)  # one line per move or event; the table itself is drawn on a turn
                round_shown = round_shown or bool(m.outcome and m.outcome.get("round"))
            elif m.kind == "match_over":
                screen.end(m, me=seat, checked=await _checked(rt, m.table))
                if auto or not await _again(rt, reader, me, room, stdin, say, locale, msgs):
                    return 0
                hand, started, round_shown = None, True, False  # the rematch's messages come next
                break
            elif m.kind in ("reply", "replay"):
                if m.kind == "reply" and typed is not None and _unread(m):
                    # The chat's answer would teach its commands ("Usage: /move …"): plain words here.
                    say(translate(locale, "terminal.bad_choice", text=typed))
                else:
                    say(m.text)
                typed = None
                if m.kind == "reply" and not started:
                    return 1  # the match could not be created (bad options): the reply said why
                answered = True
        if new_hand is not None:
            hand = new_hand
        elif not answered:
            continue
        if hand is None or not hand.actions:
            continue
        if round_shown and screen.tty and not auto and new_hand is not None:
            # The round's result stays on screen until the player moves on.
            say(translate(locale, "terminal.next_round"))
            await asyncio.to_thread(stdin.readline)
        round_shown = False
        # A new turn: the table and the moves; an answer to what was typed (a refusal): the moves again.
        order = screen.turn(hand) if new_hand is not None else screen.moves(hand)
        if auto:
            seed = zlib.crc32(f"{hand.table}:{hand.version}".encode())
            move = bots.choose_move(hand.view or {}, "easy", seed)
            action = next(a for a in hand.actions if a.move == move)
            say(f"> {action.label}")
            await rt.gateway.submit(Input(me, room), token=action.token)
            continue
        while True:
            line = await _ask(hand, stdin, say, locale)
            text = line.strip()
            folded = text.lower()
            if not line or folded in QUIT:
                say(translate(locale, "terminal.bye"))
                return 0
            if folded in HELP:
                screen.help(hand.game)
            elif folded in AGAIN:
                order = screen.turn(hand)
            elif folded in RULES:
                await rt.gateway.submit(Input(me, room), f"/rules {hand.game}")
                break
            elif text.isdigit() and 1 <= int(text) <= len(order):
                await rt.gateway.submit(Input(me, room), token=order[int(text) - 1].token)
                break
            elif text.isdigit() and hand.game != "535":
                # No move has that number (in 535 a number may be a rank: "7" plays a 7).
                say(translate(locale, "terminal.bad_number", n=text, last=len(order)))
            elif text.startswith("/"):
                await rt.gateway.submit(Input(me, room), text)
                break
            elif text:
                typed = text
                await rt.gateway.submit(Input(me, room), f"/move {text}")
                break


YES = frozenset({"y", "yes", "s", "si", "sí"})


async def _again(rt: Any, reader: OutboxReader, me: Player, room: Room, stdin: IO[str], say: Any, locale: str,
                 msgs: list[Message]) -> bool:
    """At the end: play again with the same players?  The service's rematch, through the end's own
    "Play again" action (it comes with the player's last message of the match)."""
    ends = [m for m in msgs if m.kind == "hand" and any(a.move == "rematch" for a in m.actions)]
    for _ in range(25):  # the end's hand message is written with the match_over: at most a moment
        if ends:
            break
        ends = [m for m in await reader.read(block_ms=200) if _for_me(m, me, room) and m.kind == "hand"
                and any(a.move == "rematch" for a in m.actions)]
    if not ends:
        return False
    say(translate(locale, "terminal.again").rstrip())
    line = await asyncio.to_thread(stdin.readline)
    if line.strip().lower() not in YES:
        say(translate(locale, "terminal.bye"))
        return False
    action = next(a for a in ends[-1].actions if a.move == "rematch")
    await rt.gateway.submit(Input(me, room), token=action.token)
    return True


async def _ask(hand: Message, stdin: IO[str], say: Any, locale: str) -> str:
    """The prompt (with the time left when the turn has a timer) and the line typed ("" at the end
    of input)."""
    if hand.deadline:
        left = max(0, round(hand.deadline - time.time()))
        say(translate(locale, "terminal.prompt_timer", seconds=left).rstrip())
    else:
        say(translate(locale, "terminal.prompt").rstrip())
    return await asyncio.to_thread(stdin.readline)


def main(words: list[str], *, auto: bool = False, lang: str | None = None) -> int:
    """The ``cinq play`` entry point (registered as the ``terminal`` adapter)."""
    try:
        return asyncio.run(play(words, auto=auto, lang=lang))
    except KeyboardInterrupt:
        return 130
