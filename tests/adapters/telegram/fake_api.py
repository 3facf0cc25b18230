"""A fake Telegram Bot API server on loopback (aiohttp), for the tests and ``bench/telegram.py``.

aiogram talks to it as to the real one (``TelegramAPIServer.from_base(url)``).  It keeps the chats'
messages (text and inline keyboard, edited in place), records every call with its time, answers 403
to a private chat whose user never started the bot, "message is not modified" to an identical edit,
and 429 with ``parameters.retry_after`` when told to (:meth:`FakeTelegram.flood`).

It also plays Telegram's side of receiving updates: ``getUpdates`` is a real long poll over the
updates given to :meth:`FakeTelegram.push`, and :meth:`FakeTelegram.post_update` delivers an update to
a bot's webhook (with the secret header) and records the method the bot answered with in the HTTP
response.  A group upgraded to a supergroup answers 400 with ``parameters.migrate_to_chat_id``
(:meth:`FakeTelegram.migrate`); :attr:`FakeTelegram.down` makes every call fail with 502, and
:attr:`FakeTelegram.slow` makes the calls about a chat take that long to answer.  Editing a deleted
message answers 400 "message to edit not found", and one in :attr:`FakeTelegram.frozen` (too old to
edit, as Telegram says of old messages) 400 "message can't be edited".
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

BOT_ID = 4242
BOT_USERNAME = "cinq_test_bot"
# The calls that send or edit a message: what Telegram's flood limits count.
SENDS = ("sendMessage", "editMessageText", "editMessageReplyMarkup")


@dataclass(frozen=True)
class FloodLimits:
    """Telegram's flood limits (https://core.telegram.org/bots/faq#my-bot-is-hitting-limits-how-do-i-avoid-this):
    about one message a second in a chat, twenty a minute in a group, thirty a second overall.
    Counted when a call arrives; a refused call is not counted."""

    chat_interval_s: float = 1.0
    group_per_window: int = 20
    window_s: float = 60.0
    global_per_s: int = 30
    second_s: float = 1.0

    def scaled(self, k: float) -> FloodLimits:
        """The same limits with every duration multiplied by ``k``."""
        return FloodLimits(self.chat_interval_s * k, self.group_per_window, self.window_s * k,
                           self.global_per_s, self.second_s * k)


@dataclass
class Call:
    """One Bot API call as received."""

    method: str
    params: dict[str, Any]
    at: float
    ok: bool = True
    answered: float | None = None  # when the answer was ready (later than ``at`` for a slow chat)

    @property
    def chat(self) -> int | None:
        """The chat the call is about, if any."""
        c = self.params.get("chat_id")
        return int(c) if c is not None else None


@dataclass
class Shown:
    """A message as the chat shows it now."""

    chat: int
    id: int
    text: str
    markup: dict[str, Any] | None
    edits: int = 0
    seq: int = 0

    def buttons(self) -> list[dict[str, Any]]:
        """Every inline button, in order."""
        return [b for row in (self.markup or {}).get("inline_keyboard", []) for b in row]


@dataclass
class FakeTelegram:
    """The server's state; :meth:`start` serves it on a free loopback port."""

    calls: list[Call] = field(default_factory=list)
    messages: dict[tuple[int, int], Shown] = field(default_factory=dict)
    started: set[int] = field(default_factory=set)
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    floods: list[tuple[str, int]] = field(default_factory=list)
    webhook_replies: list[Call] = field(default_factory=list)
    admins: set[tuple[int, int]] = field(default_factory=set)
    updates: list[dict[str, Any]] = field(default_factory=list)
    handed: int = 0  # the update_id up to which getUpdates has handed updates out
    confirmed: int = 0  # the update_id up to which a getUpdates offset confirmed them (forgotten)
    migrated: dict[int, int] = field(default_factory=dict)
    # setMyCommands: (scope as JSON, language code or "") -> the commands
    commands: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    down: bool = False
    webhook_set: bool = False
    closing: bool = False
    fail_set_webhook: bool = False
    slow: dict[int, float] = field(default_factory=dict)  # chat -> seconds its calls take to answer
    frozen: set[tuple[int, int]] = field(default_factory=set)  # (chat, message id): too old to edit
    enforce: FloodLimits | None = None  # Telegram's flood limits, kept by the server (None: not kept)
    flooded: list[Call] = field(default_factory=list)  # the calls refused with 429 by ``enforce``
    _last: dict[int, float] = field(default_factory=dict)  # chat -> when its last message call came
    _windows: dict[int, deque[float]] = field(default_factory=dict)  # group -> its calls in the window
    _second: deque[float] = field(default_factory=deque)  # every chat's calls in the last second
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)
    _ids: dict[int, int] = field(default_factory=dict)
    _seq: int = 0
    runner: web.AppRunner | None = None
    url: str = ""

    # -- control --------------------------------------------------------------------------------

    async def start(self) -> str:
        """Serve on 127.0.0.1 and return the base URL for ``TelegramAPIServer.from_base``."""
        app = web.Application()
        app.router.add_post("/bot{token}/{method}", self._handle)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"
        return self.url

    async def stop(self) -> None:
        """Stop serving (a long poll in progress returns at once)."""
        self.closing = True
        self._arrived.set()
        if self.runner is not None:
            await self.runner.cleanup()

    def webhook_reply(self, method: str, params: dict[str, Any]) -> None:
        """A method the bot returned in its answer to a webhook request: done, but not an API call."""
        self.webhook_replies.append(Call(method, params, time.monotonic()))
        if method == "answerCallbackQuery":
            self.answers[params["callback_query_id"]] = params

    def push(self, update: dict[str, Any]) -> None:
        """Queue an update for ``getUpdates`` (polling)."""
        self.updates.append(update)
        self._arrived.set()

    async def post_update(self, url: str, secret: str | None, update: dict[str, Any]) -> int:
        """Deliver an update to a webhook as Telegram does; the method the bot answered with in the
        response is recorded (:meth:`webhook_reply`).  Returns the HTTP status."""
        import aiohttp

        headers = {"X-Telegram-Bot-Api-Secret-Token": secret} if secret else {}
        async with aiohttp.ClientSession() as http, http.post(url, json=update, headers=headers) as resp:
            if resp.status == 200 and resp.content_type.startswith("multipart/"):
                reader = aiohttp.MultipartReader.from_response(resp)
                fields: dict[str, Any] = {}
                while (part := await reader.next()) is not None:
                    fields[part.name] = await part.text()  # type: ignore[union-attr]
                method = fields.pop("method")
                self.webhook_reply(method, {k: _value(v) if k in ("show_alert", "cache_time") else v
                                           for k, v in fields.items()})
            else:
                await resp.read()
            return resp.status

    def migrate(self, old: int, new: int) -> None:
        """The group ``old`` became the supergroup ``new``: calls to ``old`` are refused with its new id."""
        self.migrated[old] = new

    def flood(self, method: str, retry_after: int = 1) -> None:
        """Answer the next call of ``method`` with 429 and ``retry_after``."""
        self.floods.append((method, retry_after))

    # -- queries --------------------------------------------------------------------------------

    def chat_messages(self, chat: int) -> list[Shown]:
        """The messages of a chat, oldest first."""
        return sorted((m for (c, _), m in self.messages.items() if c == chat), key=lambda m: m.id)

    def calls_to(self, chat: int,
                 methods: tuple[str, ...] = ("sendMessage", "editMessageText")) -> list[Call]:
        """The calls that sent or edited a message in ``chat``."""
        return [c for c in self.calls if c.method in methods and c.chat == chat]

    # -- the API --------------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        form = await request.post()
        params: dict[str, Any] = {}
        for k, v in form.items():
            text = str(v)
            try:
                params[k] = json.loads(text) if k in ("reply_markup", "allowed_updates") else text
            except ValueError:
                params[k] = text
        call = Call(method, params, time.monotonic())
        self.calls.append(call)
        if self.down:
            call.ok = False
            return _error(502, "Bad Gateway")
        if call.chat is not None and call.chat in self.migrated:
            call.ok = False
            description = "Bad Request: group chat was upgraded to a supergroup chat"
            return web.json_response({"ok": False, "error_code": 400, "description": description,
                                      "parameters": {"migrate_to_chat_id": self.migrated[call.chat]}},
                                     status=400)
        if method == "getUpdates":
            return web.json_response({"ok": True, "result": await self._get_updates(params)})
        for i, (m, after) in enumerate(self.floods):
            if m == method:
                del self.floods[i]
                call.ok = False
                return web.json_response({"ok": False, "error_code": 429,
                                          "description": f"Too Many Requests: retry after {after}",
                                          "parameters": {"retry_after": after}}, status=429)
        if self.enforce is not None and method in SENDS and call.chat is not None:
            wait = self._over_limit(call.chat, call.at)
            if wait > 0:
                call.ok = False
                self.flooded.append(call)
                after = max(1, math.ceil(wait))
                return web.json_response({"ok": False, "error_code": 429,
                                          "description": f"Too Many Requests: retry after {after}",
                                          "parameters": {"retry_after": after}}, status=429)
        handler = getattr(self, f"_m_{method}", None)
        if handler is None:
            call.ok = False
            return _error(404, f"Not Found: method {method}")
        if call.chat in self.slow:
            until = time.monotonic() + self.slow[call.chat]
            while time.monotonic() < until and not self.closing:  # stop() does not wait for it
                await asyncio.sleep(0.02)
            if self.closing:
                call.ok = False
                return _error(502, "Bad Gateway")
        status, result = handler(params)
        call.answered = time.monotonic()
        if status != 200:
            call.ok = False
            return _error(status, result)
        return web.json_response({"ok": True, "result": result})

    def _over_limit(self, chat: int, now: float) -> float:
        """How long the call to ``chat`` arriving at ``now`` came too early (0: within the limits; then
        it is counted)."""
        lim = self.enforce
        assert lim is not None
        waits = [self._last.get(chat, -1e9) + lim.chat_interval_s - now]
        window = self._windows.setdefault(chat, deque()) if chat < 0 else None
        if window is not None:
            while window and window[0] <= now - lim.window_s:
                window.popleft()
            if len(window) >= lim.group_per_window:
                waits.append(window[0] + lim.window_s - now)
        while self._second and self._second[0] <= now - lim.second_s:
            self._second.popleft()
        if len(self._second) >= lim.global_per_s:
            waits.append(self._second[0] + lim.second_s - now)
        wait = max(waits)
        if wait <= 0:
            self._last[chat] = now
            if window is not None:
                window.append(now)
            self._second.append(now)
        return wait

    def _chat(self, chat: int) -> dict[str, Any]:
        if chat < 0:
            return {"id": chat, "type": "supergroup", "title": f"group {chat}"}
        return {"id": chat, "type": "private", "first_name": f"user {chat}"}

    def _message(self, m: Shown) -> dict[str, Any]:
        out = {"message_id": m.id, "date": int(time.time()), "chat": self._chat(m.chat), "text": m.text,
               "from": {"id": BOT_ID, "is_bot": True, "first_name": "Cinq", "username": BOT_USERNAME}}
        if m.markup:
            out["reply_markup"] = m.markup
        return out

    def _m_getMe(self, p: dict[str, Any]) -> tuple[int, Any]:
        return 200, {"id": BOT_ID, "is_bot": True, "first_name": "Cinq", "username": BOT_USERNAME}

    def _m_sendMessage(self, p: dict[str, Any]) -> tuple[int, Any]:
        chat = int(p["chat_id"])
        if not p.get("text"):
            return 400, "Bad Request: message text is empty"
        if _web_app_in_group(chat, p):
            return 400, "Bad Request: BUTTON_TYPE_INVALID"
        if chat > 0 and chat not in self.started:
            return 403, "Forbidden: bot can't initiate conversation with a user"
        self._ids[chat] = self._ids.get(chat, 0) + 1
        self._seq += 1
        m = Shown(chat, self._ids[chat], p["text"], p.get("reply_markup") or None, seq=self._seq)
        self.messages[(chat, m.id)] = m
        return 200, self._message(m)

    def _m_editMessageText(self, p: dict[str, Any]) -> tuple[int, Any]:
        key = (int(p["chat_id"]), int(p["message_id"]))
        m = self.messages.get(key)
        if m is None:
            return 400, "Bad Request: message to edit not found"
        if key in self.frozen:
            return 400, "Bad Request: message can't be edited"
        markup = p.get("reply_markup") or None
        if _web_app_in_group(key[0], p):
            return 400, "Bad Request: BUTTON_TYPE_INVALID"
        if m.text == p["text"] and m.markup == markup:
            return 400, "Bad Request: message is not modified"
        self._seq += 1
        m.text, m.markup, m.edits, m.seq = p["text"], markup, m.edits + 1, self._seq
        return 200, self._message(m)

    def _m_editMessageReplyMarkup(self, p: dict[str, Any]) -> tuple[int, Any]:
        key = (int(p["chat_id"]), int(p["message_id"]))
        m = self.messages.get(key)
        if m is None:
            return 400, "Bad Request: message to edit not found"
        if key in self.frozen:
            return 400, "Bad Request: message can't be edited"
        self._seq += 1
        m.markup, m.edits, m.seq = p.get("reply_markup") or None, m.edits + 1, self._seq
        return 200, self._message(m)

    def _m_deleteMessage(self, p: dict[str, Any]) -> tuple[int, Any]:
        self.messages.pop((int(p["chat_id"]), int(p["message_id"])), None)
        return 200, True

    def _m_answerCallbackQuery(self, p: dict[str, Any]) -> tuple[int, Any]:
        self.answers[p["callback_query_id"]] = p
        return 200, True

    def _m_getChatMember(self, p: dict[str, Any]) -> tuple[int, Any]:
        chat, user = int(p["chat_id"]), int(p["user_id"])
        status = "administrator" if (chat, user) in self.admins else "member"
        member: dict[str, Any] = {"status": status, "user": {"id": user, "is_bot": False, "first_name": "u"}}
        if status == "administrator":
            member.update(can_be_edited=False, is_anonymous=False, can_manage_chat=True,
                          can_delete_messages=True,
                          can_manage_video_chats=True, can_restrict_members=True, can_promote_members=False,
                          can_change_info=True, can_invite_users=True, can_post_stories=False,
                          can_edit_stories=False, can_delete_stories=False,
                          can_send_welcome_messages=False)  # required by aiogram 3.31's model
        return 200, member

    def _m_setWebhook(self, p: dict[str, Any]) -> tuple[int, Any]:
        if self.fail_set_webhook:
            return 400, "Bad Request: bad webhook: HTTPS url must be provided for webhook"
        self.webhook_set = True
        return 200, True

    def _m_setMyCommands(self, p: dict[str, Any]) -> tuple[int, Any]:
        commands = p.get("commands")
        scope = p.get("scope")
        self.commands[(json.dumps(json.loads(scope) if isinstance(scope, str) else scope, sort_keys=True),
                       p.get("language_code") or "")] = json.loads(commands) if isinstance(commands, str) \
            else commands
        return 200, True

    def _m_deleteWebhook(self, p: dict[str, Any]) -> tuple[int, Any]:
        self.webhook_set = False
        return 200, True

    async def _get_updates(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        """A long poll: the updates not confirmed yet from ``offset`` on, waiting up to ``timeout`` s."""
        offset = int(p.get("offset") or 0)
        # Below the offset: confirmed, and Telegram forgets them (no offset: the unconfirmed ones).
        self.confirmed = max(self.confirmed, offset - 1)
        self.handed = max(self.handed, self.confirmed)
        deadline = time.monotonic() + float(p.get("timeout") or 0)
        while True:
            ready = [u for u in self.updates if u["update_id"] > self.confirmed]
            left = deadline - time.monotonic()
            if ready or left <= 0 or self.closing:
                if ready:
                    self.handed = max(self.handed, ready[-1]["update_id"])
                return ready
            self._arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), timeout=left)


def _web_app_in_group(chat: int, params: dict[str, Any]) -> bool:
    """Telegram allows ``web_app`` buttons in private chats only (a group gets BUTTON_TYPE_INVALID)."""
    rows = (params.get("reply_markup") or {}).get("inline_keyboard", [])
    return chat < 0 and any("web_app" in b for row in rows for b in row)


def _value(text: str) -> Any:
    """A form field of a webhook answer: JSON where it parses (booleans, numbers), else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _error(status: int, description: str) -> web.Response:
    return web.json_response({"ok": False, "error_code": status, "description": description}, status=status)
