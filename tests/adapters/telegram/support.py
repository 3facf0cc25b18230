"""A world for the bot's tests: the fake Bot API server, the service's workers in-process, the bot,
and simulated Telegram users who send messages and press the buttons they were sent.

How updates reach the bot (``transport``):

- ``direct`` — handed to the dispatcher; a handler's answer is then sent as a Bot API call, as aiogram's
  polling does (the default: quick and deterministic);
- ``reply`` — the same, but the answer is recorded as a webhook's HTTP response would carry it;
- ``polling`` — the real thing: the bot long-polls the fake server's ``getUpdates``;
- ``webhook`` — the real thing: the fake server POSTs each update to the bot's webhook over loopback,
  with the secret header, and reads the answer from the HTTP response.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import time
from datetime import UTC, datetime
from typing import Any

from aiogram import Bot
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.methods import TelegramMethod
from aiogram.types import CallbackQuery, Chat, InlineKeyboardMarkup, Message, Update, User

from adapters.telegram.app import TelegramBot, build
from adapters.telegram.callbacks import TOKEN_RE
from adapters.telegram.config import Limits, TelegramSettings
from service.foundation.settings import Settings
from service.ops.runtime import worker_for
from service.platform.delivery import DeliveryOptions
from service.store.keys import Keys
from service.write.gateway import Gateway
from service.write.worker import Worker
from tests.adapters.telegram.fake_api import FakeTelegram, Shown

TOKEN = "4242:TEST"
WEBHOOK_SECRET = "s3cret-token-of-the-telegram-tests-0123456"  # 32+: the bot refuses less
GROUP_ID = -1001
FAST = Limits(chat_interval_s=0.0, group_per_window=20, window_s=0.2, global_per_s=10_000, coalesce_s=0.02,
              group_interval_s=0.05)
# keep_s: the tests read the outbox as the record of what was sent (the retention's grace period).
DELIVERY = DeliveryOptions(block_ms=20, lease_ms=1500, partitions=2, backoff_base_s=0.05, backoff_cap_s=0.5,
                           max_attempts=20, keep_s=3600)
_updates = itertools.count(1)
_callbacks = itertools.count(1)


def settings(**kw: Any) -> Settings:
    """Service settings for the tests: few buckets, no turn timer, fast workers, no forced pass made
    for people unless a test asks (play_out presses whatever buttons a hand has, passes included)."""
    base: dict[str, Any] = dict(buckets=8, command_shards=2, turn_seconds=0, token_secrets=["tg-test"],
                                snapshot_every=10, claim_idle_ms=200, block_ms=20, timer_interval=0.2,
                                auto_pass_s=0)
    base.update(kw)
    return Settings(redis_url=None, **base)


def person(uid: int, name: str, lang: str = "en") -> User:
    """A Telegram user."""
    return User(id=uid, is_bot=False, first_name=name, language_code=lang)


class World:
    """Everything a bot test needs, on one Redis."""

    def __init__(self, redis: Any, *, limits: Limits = FAST, service: Settings | None = None,
                 workers: int = 1, webhook: bool = False, transport: str | None = None,
                 polling_timeout: int = 1, press_wait_s: float = 1.5, choose_move: Any = None,
                 rate: tuple[float, int] = (1000.0, 1000)) -> None:
        self.redis = redis
        # None: hard AI moves are thought in another process (whose wait quiet() cannot see)
        self.choose_move = choose_move
        self.transport = transport or ("reply" if webhook else "direct")
        self.webhook = self.transport in ("reply", "webhook")
        self.polling_timeout = polling_timeout
        self.press_wait_s = press_wait_s
        # Each person's rate of updates: scripted players press faster than people (test_throttle.py
        # sets a person's rate).
        self.rate = rate
        self.handled: set[int] = set()
        self.webhook_url = ""
        self.fake = FakeTelegram()
        self.settings = service or settings()
        self.limits = limits
        self.worker_count = workers
        self.workers: list[Worker] = []
        self.tasks: list[asyncio.Task[None]] = []
        self.tg: TelegramBot | None = None
        self.delivery: asyncio.Task[None] | None = None
        self.running: asyncio.Task[None] | None = None
        self.generation = 0

    async def __aenter__(self) -> World:
        await self.fake.start()
        for i in range(self.worker_count):
            w = worker_for(self.redis, self.settings, name=f"w{i}", choose_move=self.choose_move)
            self.workers.append(w)
            self.tasks.append(asyncio.create_task(w.run()))
        await self.start_bot()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop_bot()
        for w in self.workers:
            w.stop.set()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        await self.fake.stop()

    # -- the bot process --------------------------------------------------------------------------

    async def start_bot(self) -> TelegramBot:
        """A new bot process: new Bot, Dispatcher, sender and delivery, on the same Redis."""
        self.generation += 1
        bot = Bot(TOKEN, session=AiohttpSession(api=TelegramAPIServer.from_base(self.fake.url)))
        real = self.transport in ("polling", "webhook")
        tg = TelegramSettings(token=TOKEN, consumer="tg-test", webhook_secret=WEBHOOK_SECRET,
                              host="127.0.0.1", port=0, http=real, polling_timeout=self.polling_timeout,
                              press_wait_s=self.press_wait_s, rate=self.rate[0], burst=self.rate[1],
                              public_url="http://127.0.0.1" if self.transport == "webhook" else None)
        gateway = Gateway(self.redis, self.settings, Keys.of(self.settings))
        self.tg = await build(self.redis, self.settings, tg, gateway, bot=bot, limits=self.limits,
                              delivery_options=DELIVERY)
        if not real:
            self.delivery = asyncio.create_task(self.tg.deliver())
            return self.tg

        async def handled(handler: Any, event: Any, data: dict[str, Any]) -> Any:
            try:
                return await handler(event, data)
            finally:
                self.handled.add(event.update_id)

        self.tg.dispatcher.update.outer_middleware(handled)
        self.running = asyncio.create_task(self.tg.run())
        deadline = time.monotonic() + 10
        while self.tg.health.receiving is None or self.tg.port is None:
            if time.monotonic() > deadline or self.running.done():
                raise AssertionError("the bot did not start")
            await asyncio.sleep(0.01)
        self.webhook_url = f"http://127.0.0.1:{self.tg.port}{tg.webhook_path}"
        return self.tg

    async def stop_bot(self) -> None:
        """Stop the bot process abruptly (queued edits are not sent: Redis remembers them)."""
        if self.tg is None:
            return
        self.tg.flush_on_stop = False  # a crash, not a SIGTERM (test_telegram_shutdown.py has those)
        if self.running is not None:
            self.running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.running
            self.running = None
            self.tg = None
            return
        await self.tg.close(self.delivery)
        await self.tg.bot.session.close()
        self.tg = None

    async def restart_bot(self) -> None:
        """Stop the bot and start a new one, as a deployment would."""
        await self.stop_bot()
        await self.start_bot()

    # -- users' actions ---------------------------------------------------------------------------

    async def say(self, user: User, text: str, chat: int | None = None, title: str | None = None) -> None:
        """``user`` sends ``text`` in ``chat`` (default: their private chat with the bot; a group's
        ``title`` as Telegram sends it)."""
        assert self.tg is not None
        chat_id = user.id if chat is None else chat
        if chat_id > 0:
            self.fake.started.add(user.id)  # writing to the bot lets it write back
        kind = "private" if chat_id > 0 else "supergroup"
        msg = Message(message_id=next(_updates), date=datetime.now(UTC),
                      chat=Chat(id=chat_id, type=kind, title=title), from_user=user, text=text)
        await self._feed(Update(update_id=next(_updates), message=msg))

    async def migrate(self, user: User, old: int, new: int) -> None:
        """The group ``old`` is upgraded to the supergroup ``new``: Telegram refuses calls to ``old``
        from now on and tells the bot in both chats (a service message in each)."""
        assert self.tg is not None
        self.fake.migrate(old, new)
        now = datetime.now(UTC)
        for msg in (Message(message_id=next(_updates), date=now, chat=Chat(id=old, type="group"),
                            from_user=user, migrate_to_chat_id=new),
                    Message(message_id=next(_updates), date=now, chat=Chat(id=new, type="supergroup"),
                            from_user=user, migrate_from_chat_id=old)):
            await self._feed(Update(update_id=next(_updates), message=msg))

    async def press(self, user: User, shown: Shown, data: str) -> dict[str, Any]:
        """``user`` presses the button ``data`` of a message; returns how the press was answered."""
        assert self.tg is not None
        cq_id = f"cq{next(_callbacks)}"
        kind = "private" if shown.chat > 0 else "supergroup"
        markup = InlineKeyboardMarkup.model_validate(shown.markup) if shown.markup else None
        msg = Message(message_id=shown.id, date=datetime.now(UTC), chat=Chat(id=shown.chat, type=kind),
                      text=shown.text, reply_markup=markup)
        cq = CallbackQuery(id=cq_id, from_user=user, chat_instance="ci", data=data, message=msg)
        await self._feed(Update(update_id=next(_updates), callback_query=cq))
        return self.fake.answers.get(cq_id, {})

    async def start_in_group(self, creator: User, command: str, joiners: list[User],
                             chat: int = GROUP_ID) -> None:
        """``creator`` opens a lobby in the group with ``command``, ``joiners`` press Join, and the
        creator presses Start (waiting for the bot after each step)."""
        await self.say(creator, command, chat=chat)
        await self.quiet()
        lobby, join = self.button(chat, "lb:join")
        for p in joiners:
            await self.press(p, lobby, join)
            await self.quiet()
        await self.press(creator, lobby, self.button(chat, "lb:start")[1])
        await self.quiet()

    async def _feed(self, update: Update) -> None:
        """Hand an update to the dispatcher; what a handler returns is sent as Telegram would get it:
        in the webhook's HTTP response (no API call) or, when polling, as a call."""
        assert self.tg is not None
        if self.transport in ("polling", "webhook"):
            await self._deliver(update)
            return
        result = await self.tg.dispatcher.feed_update(self.tg.bot, update)
        if isinstance(result, TelegramMethod):
            if self.webhook:
                self.fake.webhook_reply(result.__api_method__, result.model_dump(exclude_none=True))
            else:
                await self.tg.bot(result)

    async def _deliver(self, update: Update) -> None:
        """Telegram's side: the update goes out by long polling or to the webhook; returns once the
        bot handled it and, for a button, once the press was answered."""
        wire = update.model_dump(mode="json", exclude_none=True, by_alias=True)
        if self.transport == "webhook":
            assert await self.fake.post_update(self.webhook_url, WEBHOOK_SECRET, wire) == 200
            return
        self.fake.push(wire)
        cq = update.callback_query
        deadline = time.monotonic() + 20
        while update.update_id not in self.handled or (cq is not None and cq.id not in self.fake.answers):
            if time.monotonic() > deadline:
                raise AssertionError(f"update {update.update_id} was not handled")
            await asyncio.sleep(0.002)

    # -- waiting ----------------------------------------------------------------------------------

    async def quiet(self, timeout: float = 20.0, still: float = 0.12) -> None:
        """Wait until nothing moves: no command in flight, every queue empty, no new call for ``still``."""
        deadline = time.monotonic() + timeout
        last: tuple[Any, ...] = ()
        since = time.monotonic()
        while time.monotonic() < deadline:
            fp = (len(self.fake.calls), await self._stream_lengths(), await self._undelivered(),
                  self.tg.delivery._inflight if self.tg else 0,
                  sum(len(c.queue) for c in self.tg.sender.chats.values()) if self.tg else 0)
            if fp != last:
                last, since = fp, time.monotonic()
            elif time.monotonic() - since >= still and fp[2] == 0 and fp[3] == 0 and fp[4] == 0:
                return
            await asyncio.sleep(0.02)
        raise AssertionError("the world never settled")

    async def _undelivered(self) -> int:
        """Outbox entries the bot's delivery has not read yet or not acknowledged."""
        keys = self.workers[0].keys
        n = 0
        for b in range(keys.buckets):
            stream = keys.outbox(b)
            info = await self.redis.xinfo_stream(stream)
            last = info["last-generated-id"]
            for g in await self.redis.xinfo_groups(stream):
                if g["name"] in (b"deliver:telegram", "deliver:telegram"):
                    n += int(g["pending"]) + (g["last-delivered-id"] != last)
        return n

    async def _stream_lengths(self) -> int:
        keys = self.workers[0].keys
        pipe = self.redis.pipeline(transaction=False)
        for k in keys.all_commands():
            pipe.xlen(k)
        for b in range(keys.buckets):
            pipe.xlen(keys.outbox(b))
        return sum(await pipe.execute())

    # -- what users see ---------------------------------------------------------------------------

    def move_buttons(self, chat: int) -> tuple[Shown, list[dict[str, Any]]] | None:
        """The latest message of a chat that has move buttons (action tokens of moves: not the end's
        "Play again" nor a rematch's invitation), and those buttons."""
        for m in sorted(self.fake.chat_messages(chat), key=lambda m: -m.seq):
            moves = [b for b in m.buttons() if TOKEN_RE.match(data := b.get("callback_data") or "")
                     and data.split(".")[3] not in ("=rematch", "=accept", "=decline")]
            if moves:
                return m, moves
        return None

    def button(self, chat: int, text_key: str) -> tuple[Shown, str]:
        """The latest message of ``chat`` with a button whose callback data starts with ``text_key``."""
        for m in sorted(self.fake.chat_messages(chat), key=lambda m: -m.seq):
            for b in m.buttons():
                if (b.get("callback_data") or "").startswith(text_key):
                    return m, b["callback_data"]
        raise AssertionError(f"no button {text_key!r} in chat {chat}")


async def play_out(world: World, players: list[User], rng: random.Random, max_presses: int = 3000,
                   over: Any = None) -> int:
    """Players press one of their move buttons (the latest message with some) until ``over()``.

    The player to move is the one whose buttons came last (the service sends a hand with buttons
    only to the seat to move).  Returns how many presses it took.
    """
    presses = 0
    while presses < max_presses:
        if over is not None and over():
            return presses
        candidates = [(p, world.move_buttons(p.id)) for p in players]
        ready = [(p, found) for p, found in candidates if found is not None]
        if not ready:
            await world.quiet()
            if over is not None and over():
                return presses
            ready = [(p, f) for p in players if (f := world.move_buttons(p.id)) is not None]
            if not ready:
                raise AssertionError("nobody has a move button and the match is not over")
        # The player whose hand changed last is the one to move.
        p, (shown, moves) = max(ready, key=lambda pf: pf[1][0].seq)
        await world.press(p, shown, rng.choice(moves)["callback_data"])
        presses += 1
        await world.quiet()
    raise AssertionError("the match did not end")


def final_hands(stored: list[Any]) -> list[list[str]]:
    """Every seat's hand at the end of a table, from its events."""
    import engine
    from service.domain.tables.state import evolve

    t = None
    for s in stored:
        t = evolve(t, s.event, table_id="x", at=s.at)
    assert t is not None and t.engine is not None
    return [list(engine.view(t.engine, seat).get("hand") or []) for seat in range(len(t.seats))]
