"""The buttons of replies: a board's views (``/rating``, ``/top``) and a tournament's
sign-up.  Their data is an action token whose "table" is not a table: ``B`` (a board) or a tournament
id (``T…``), so neither is the move handler's business (one press per turn, staleness by version).

A board press is handed to the service with the id of the message it was on, which the answer then
redraws (:mod:`adapters.telegram.replies`); a sign-up press is the ``/tournament`` action for the
presser (a group admin may start it).  A refusal is the press's alert, as for every button.
"""

from __future__ import annotations

import re

from aiogram import Bot, F, Router
from aiogram.methods import AnswerCallbackQuery
from aiogram.types import CallbackQuery

from adapters.telegram.handlers.buttons import _alert, _submit
from adapters.telegram.handlers.people import is_moderator, player_of
from adapters.telegram.presses import Presses
from service.domain.identities import Room
from service.protocol.i18n import translate
from service.ratings.boards import BOARD
from service.write.gateway import Gateway

BOARD_RE = re.compile(rf"^1{BOARD}\.")
# Tournament ids: "T" and base32 in lower case (service.tournaments.director.tournament_id).
TOURNAMENT_RE = re.compile(r"^1T[a-z2-7]+\.[0-9a-z]+\.[0-9a-z]+\.(?P<move>[^.]+)\.")


async def reply_button_handler(cq: CallbackQuery, gateway: Gateway, bot: Bot, presses: Presses,
                               room: Room | None) -> AnswerCallbackQuery:
    """A board's or a sign-up's button: to the service for the presser; a refusal is the alert."""
    player = player_of(cq.from_user)
    locale = await gateway.locale_of(player, cq.from_user.language_code)
    if cq.message is None or room is None:
        return cq.answer(translate(locale, "tg.alert.closed"), show_alert=True)
    data = cq.data or ""
    board = BOARD_RE.match(data) is not None
    found = TOURNAMENT_RE.match(data)
    # "start" is encoded "=start" (service.domain.tokens); only starting is an admin's to do as well.
    moderator = found is not None and found["move"] == "=start" and \
        await is_moderator(bot, cq.message.chat, cq.from_user)
    refused = await _submit(cq, gateway, presses, None, user=player, room=room, token=data,
                            moderator=moderator, replaces=str(cq.message.message_id) if board else None)
    if refused is not None:
        return cq.answer(_alert(refused), show_alert=True)
    return cq.answer() if board else cq.answer(translate(locale, "tg.alert.sent"))


def router() -> Router:
    """A new router of this feature (each Dispatcher needs its own); before the move handler's."""
    r = Router(name="reply_buttons")
    r.callback_query.register(reply_button_handler, F.data.regexp(BOARD_RE) | F.data.regexp(TOURNAMENT_RE))
    return r
