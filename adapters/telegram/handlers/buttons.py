"""Button presses: moves (action tokens), lobby buttons, the settings keyboard.  Every press is answered.

The answer to a press is the handler's return value (an ``answerCallbackQuery`` method): in webhook mode
it goes back in the HTTP response to Telegram's request and costs no Bot API call; in polling mode
aiogram sends it.

A move button's data is the outbox action token.  The service is the authority on staleness, but a
press is first checked cheaply here so that it can be answered with an alert at once: a token older
than what the message now wants to show is stale, and one turn (table, seat, version) accepts one
press — the second click of a double click is answered "already done" and never reaches the service.

A press that reaches the service waits a moment for its verdict (:mod:`adapters.telegram.presses`):
a refusal (its ``Message.code``: ``stale_token``, ``not_your_turn``, ``not_creator``...) is the alert
that answers the press, not a message in the chat.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiogram import Bot, F, Router
from aiogram.methods import AnswerCallbackQuery
from aiogram.types import CallbackQuery, InlineKeyboardMarkup

from adapters.telegram import keyboards, menu
from adapters.telegram.callbacks import GAMES, TOKEN_RE, Cfg, Daily, Lobby
from adapters.telegram.content import MAIN, PLATFORM, Content, Edit
from adapters.telegram.handlers.people import is_moderator, player_of, said_by
from adapters.telegram.handlers.private import end_previous
from adapters.telegram.polling import durable
from adapters.telegram.presses import Presses, command_id
from adapters.telegram.sender import Sender
from service.domain.identities import Player, Room
from service.domain.inputs import Input
from service.domain.requests import Bots, Join, Plain, Typed
from service.domain.tokens import Claims, TokenError, open_token
from service.platform.platform_state import PlatformState
from service.protocol.i18n import translate
from service.write.gateway import Gateway

# One press per turn is remembered this long (a turn never waits that long for a press).
PRESS_TTL_S = 24 * 3600
# What each lobby button asks the table, typed (the gateway parses no text for a button).
LOBBY_COMMANDS: dict[str, Typed] = {
    "join": Join(name="join"), "leave": Plain(name="leave"), "bots": Bots(name="bots", n=1, level="medium"),
    "start": Plain(name="start"), "cancel": Plain(name="cancel")}
# Telegram shows at most 200 characters in a callback query's alert.
MAX_ALERT = 200


def _label(cq: CallbackQuery) -> str:
    """The text of the pressed button, from the message's own keyboard."""
    # getattr: the message may be missing or inaccessible (too old), with no reply_markup
    markup: InlineKeyboardMarkup | None = getattr(cq.message, "reply_markup", None)
    for row in markup.inline_keyboard if markup else []:
        for button in row:
            if button.callback_data == cq.data:
                return button.text
    return ""


def _alert(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_ALERT else text[: MAX_ALERT - 1] + "…"


async def _submit(cq: CallbackQuery, gateway: Gateway, presses: Presses, request: Typed | None, *,
                  user: Player, room: Room, token: str | None = None, claims: Claims | None = None,
                  moderator: bool | Callable[[], Awaitable[bool]] = False,
                  replaces: str | None = None) -> str | None:
    """Hand the press to the service and wait a moment for its verdict: the refusal's text, or None
    (accepted, or no verdict in time)."""
    cid = command_id(cq.id)
    presses.expect(cid)
    try:
        said = Input(user, room, command_id=cid, language=cq.from_user.language_code, moderator=moderator,
                     replaces=replaces)
        await gateway.submit(said, request=request, token=token, claims=claims)
    except BaseException:
        presses.discard(cid)
        raise
    durable()  # stored: polling may confirm the press to Telegram while it waits for the verdict
    verdict = await presses.wait(cid)
    if verdict is not None and verdict.code is not None and verdict.kind == "reply":
        return verdict.text
    return None


async def move_handler(cq: CallbackQuery, gateway: Gateway, platform_state: PlatformState,
                       secrets: list[bytes], presses: Presses, room: Room | None) -> AnswerCallbackQuery:
    """A move: check the token is current, act once, answer with the move's name (or the refusal)."""
    player = player_of(cq.from_user)
    locale = await gateway.locale_of(player, cq.from_user.language_code)
    try:
        claims = open_token(secrets, cq.data or "")
    except TokenError:
        return cq.answer(translate(locale, "tg.alert.invalid"), show_alert=True)
    if room is None:
        return cq.answer(translate(locale, "tg.alert.stale"), show_alert=True)
    ref = await platform_state.get_message_ref(PLATFORM, room.chat, claims.table, MAIN)
    if ref is not None and ref.rank[0] > claims.version:
        return cq.answer(translate(locale, "tg.alert.stale"), show_alert=True)
    # One press a turn; the same press again (Telegram's redelivery) may go on: it may not have been
    # handed to the service before the process that marked it died.
    if not await platform_state.mark_once(PLATFORM, f"press:{claims.table}:{claims.seat}:{claims.version}",
                                          PRESS_TTL_S, owner=cq.id):
        return cq.answer(translate(locale, "tg.alert.once"), show_alert=True)
    refused = await _submit(cq, gateway, presses, None, user=player, room=room, token=cq.data, claims=claims)
    if refused is not None:
        return cq.answer(_alert(refused), show_alert=True)
    return cq.answer(translate(locale, "tg.alert.played", move=_label(cq)))


async def lobby_handler(cq: CallbackQuery, callback_data: Lobby, gateway: Gateway, bot: Bot,
                        presses: Presses, room: Room | None) -> AnswerCallbackQuery:
    """Join, Leave, Add AI, Start, Cancel: the chat commands, sent for the presser; Settings explains."""
    player = player_of(cq.from_user)
    locale = await gateway.locale_of(player, cq.from_user.language_code)
    if cq.message is None or room is None:
        return cq.answer(translate(locale, "tg.alert.closed"), show_alert=True)
    if await gateway.table_of(room) != callback_data.table:
        return cq.answer(translate(locale, "tg.alert.closed"), show_alert=True)
    if callback_data.op not in LOBBY_COMMANDS:
        # Settings: the options of an open lobby are changed with /set (explained in the alert).
        return cq.answer(translate(locale, "tg.lobby_settings"), show_alert=True)
    chat = cq.message.chat
    refused = await _submit(cq, gateway, presses, LOBBY_COMMANDS[callback_data.op], user=player, room=room,
                            moderator=lambda: is_moderator(bot, chat, cq.from_user))
    if refused is not None:
        return cq.answer(_alert(refused), show_alert=True)
    return cq.answer(translate(locale, "tg.alert.sent"))


async def settings_handler(cq: CallbackQuery, callback_data: Cfg, gateway: Gateway, sender: Sender,
                           presses: Presses, platform_state: PlatformState,
                           room: Room | None) -> AnswerCallbackQuery:
    """The settings keyboard of a new table: change one option, or create the table (``go``).  The
    keyboard's edits go through the chat's queue like every other message (merged, within the limits).

    The press's ``op`` is applied to the latest state the keyboard was given (three quick taps on
    "players" count three times, whichever keyboard they came from), and only ever reaches a state
    the engine accepts (:mod:`adapters.telegram.menu`)."""
    player = player_of(cq.from_user)
    locale = await gateway.locale_of(player, cq.from_user.language_code)
    op = callback_data.op
    if cq.message is None or room is None or not hasattr(cq.message, "message_id"):
        return cq.answer(translate(locale, "tg.alert.closed"), show_alert=True)
    shown = Content.of_message(getattr(cq.message, "text", None), getattr(cq.message, "reply_markup", None))
    latest = sender.latest_edit(room.chat, cq.message.message_id) or shown
    current = menu.state_of(latest)
    if current is None:
        # The keyboard is gone (its table was created): a late or repeated tap on a stale copy would
        # create a second table and re-send the identical edit (Bot API 400 "message is not modified").
        return cq.answer(translate(locale, "tg.alert.closed"), show_alert=True)
    state = callback_data if op == "show" else current
    if callback_data.game != state.game or callback_data.where != state.where:
        state = callback_data  # another game's keyboard: the button's own state
    if op == "go":
        if not menu.valid(state):  # cannot happen with our keyboards; an old or forged button
            return cq.answer(translate(locale, "tg.alert.invalid"), show_alert=True)
        if state.where == "p":
            await end_previous(gateway, platform_state, player, room, command_id(cq.id),
                               cq.from_user.language_code)
        refused = await _submit(cq, gateway, presses, menu.request(state), user=player, room=room)
        if refused is not None:
            return cq.answer(_alert(refused), show_alert=True)
        sender.submit(Edit(room.chat, cq.message.message_id, Content(latest.text)))  # the keyboard goes
        return cq.answer(translate(locale, "tg.alert.sent"))
    default_turn = gateway.settings.turn_seconds
    state = menu.apply(state, op, default_turn)
    content = menu.settings_content(locale, state, default_turn)
    if content != latest:  # never an edit to what the message already shows
        sender.submit(Edit(room.chat, cq.message.message_id, content))
    return cq.answer()


async def page_handler(cq: CallbackQuery, gateway: Gateway, platform_state: PlatformState, sender: Sender,
                       room: Room | None) -> AnswerCallbackQuery:
    """A step of a two-step move pick (:mod:`adapters.telegram.keyboards`): show a kind's moves, or
    the kinds again.  The pages are in the slot's content in Redis; a page of an older turn is stale."""
    locale = await gateway.locale_of(player_of(cq.from_user), cq.from_user.language_code)
    parsed = keyboards.parse_page(cq.data or "")
    if parsed is None or room is None or cq.message is None or not hasattr(cq.message, "message_id"):
        return cq.answer(translate(locale, "tg.alert.invalid"), show_alert=True)
    table, version, name = parsed
    ref = await platform_state.get_message_ref(PLATFORM, room.chat, table, MAIN)
    if ref is None or ref.want is None or ref.rank[0] != version:
        return cq.answer(translate(locale, "tg.alert.stale"), show_alert=True)
    shown = keyboards.page(Content.from_json(ref.want), name)
    if shown is None:
        return cq.answer(translate(locale, "tg.alert.invalid"), show_alert=True)
    sender.submit(Edit(room.chat, cq.message.message_id, shown))
    return cq.answer()


async def daily_handler(cq: CallbackQuery, callback_data: Daily, gateway: Gateway,
                        room: Room | None) -> AnswerCallbackQuery:
    """The greeting's daily deal buttons: ``/daily <game>`` from the person, in their private chat (the
    attempt's hand, or their standing, comes as the command's answer)."""
    game = GAMES.get(callback_data.game)
    if game is None or room is None or room.kind != "private":
        locale = await gateway.locale_of(player_of(cq.from_user), cq.from_user.language_code)
        return cq.answer(translate(locale, "tg.alert.invalid"), show_alert=True)
    await gateway.submit(said_by(cq.from_user, room, command_id(cq.id)), f"/daily {game}")
    return cq.answer()


async def unknown_handler(cq: CallbackQuery, gateway: Gateway) -> AnswerCallbackQuery:
    """Any other button (an old version of the bot's keyboards): answered, nothing done."""
    locale = await gateway.locale_of(player_of(cq.from_user), cq.from_user.language_code)
    return cq.answer(translate(locale, "tg.alert.invalid"), show_alert=True)


def router() -> Router:
    """A new router of this feature (each Dispatcher needs its own)."""
    r = Router(name="buttons")
    r.callback_query.register(move_handler, F.data.regexp(TOKEN_RE))
    r.callback_query.register(lobby_handler, Lobby.filter())
    r.callback_query.register(settings_handler, Cfg.filter())
    r.callback_query.register(daily_handler, Daily.filter())
    r.callback_query.register(page_handler, F.data.startswith(keyboards.PAGE_PREFIX))
    r.callback_query.register(unknown_handler)
    return r
