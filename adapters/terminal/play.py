"""``cinq play``: one person at a terminal against AI players, through the whole pipeline.

Input becomes ``submit`` calls (a number picks an action token, other text is a move or a command),
and outbox messages for this room or player are printed.  Works at a TTY and with piped stdin: at
end of input it stops cleanly.  With ``--auto`` an AI player plays the person's seat too.
"""

from __future__ import annotations

import asyncio
import os
import sys
import zlib
from typing import IO, Any

from service.domain.identities import Player, Room
from service.ops.runtime import build
from service.ops.settings import Settings
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

    def say(text: str) -> None:
        out.write(text + "\n")
        out.flush()

    say(translate(locale, "terminal.embedded"))
    me = Player(platform="terminal", user="you",
                name=os.environ.get("USER") or translate(locale, "view.player", n=1))
    room = Room(platform="terminal", chat="tty", kind="private")
    reader = OutboxReader(rt.redis, rt.keys, [rt.keys.outbox(b) for b in range(rt.keys.buckets)])
    worker = asyncio.create_task(rt.worker.run())
    try:
        await rt.gateway.submit("/play " + " ".join(words or ["cinquillo"]), user=me, room=room,
                                language_code=locale)
        await rt.redis.hset(rt.keys.player_prefs("terminal", "you"), "locale", locale)
        return await _loop(rt, reader, me, room, auto, stdin, say, locale)
    finally:
        rt.worker.stop.set()
        await worker


async def _loop(rt: Any, reader: OutboxReader, me: Player, room: Room, auto: bool, stdin: IO[str],
                say: Any, locale: str) -> int:
    started = False
    hand: Message | None = None
    while True:
        msgs = [m for m in await reader.read(block_ms=200) if _for_me(m, me, room)]
        if not msgs:
            continue
        new_hand = next((m for m in reversed(msgs) if m.kind == "hand"), None)
        answered = False
        for m in msgs:
            # The private hand message shows the table too: skip the room's copy of that version.
            if new_hand is not None and m.to.room is not None and m.kind == "table" \
                    and m.version == new_hand.version:
                continue
            if m.kind == "hand" and m is not new_hand:
                continue
            say(m.text)
            if m.kind in ("table", "hand"):
                started = True
            if m.kind == "match_over":
                return 0
            if m.kind == "reply":
                if not started:
                    return 1  # the match could not be created (bad options): the reply said why
                answered = True
        if new_hand is not None:
            hand = new_hand
        elif not answered:
            continue
        if hand is None or not hand.actions:
            continue
        # A new turn, or an answer to what was typed (a refusal): ask again.
        for i, a in enumerate(hand.actions, 1):
            say(f"  {i}. {a.label}")
        if auto:
            seed = zlib.crc32(f"{hand.table}:{hand.version}".encode())
            move = bots.choose_move(hand.view or {}, "easy", seed)
            action = next(a for a in hand.actions if a.move == move)
            say(f"> {action.label}")
            await rt.gateway.submit(user=me, room=room, token=action.token)
            continue
        line = text = ""
        while not text:
            say(translate(locale, "terminal.prompt").rstrip())
            line = await asyncio.to_thread(stdin.readline)
            text = line.strip()
            if not line:
                break
        if not line or text.lower() in ("q", "quit", "exit", "salir"):
            say(translate(locale, "terminal.bye"))
            return 0
        if text.isdigit() and 1 <= int(text) <= len(hand.actions):
            await rt.gateway.submit(user=me, room=room, token=hand.actions[int(text) - 1].token)
        elif text.startswith("/"):
            await rt.gateway.submit(text, user=me, room=room)
        else:
            await rt.gateway.submit(f"/move {text}", user=me, room=room)


def main(words: list[str], *, auto: bool = False, lang: str | None = None) -> int:
    """The ``cinq play`` entry point (registered as the ``terminal`` adapter)."""
    try:
        return asyncio.run(play(words, auto=auto, lang=lang))
    except KeyboardInterrupt:
        return 130
