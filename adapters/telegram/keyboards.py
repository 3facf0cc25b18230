"""The bot's inline keyboards: move buttons, the lobby's, the "My hand" and web table links.  Pure.

Cinquillo's buttons name the card as the hand shows it ("🪙 5", "⚔️ Sota").  535's moves are grouped
by the kind the service's message gives each (singles, groups of one rank, runs, adds), one kind per
row; when a turn has more than :data:`MAX_FLAT` moves the keyboard becomes a two-step pick: first
the kind ("👥 Groups (3)"), then its moves, with a way back.  Every page is kept in the slot's
content (:class:`Content.pages`, in Redis with it), so the pick works in any bot process; the page
buttons carry no move, only ``pk:<table>:<version>:<page>``, and the move buttons on a page are the
service's action tokens.
"""

from __future__ import annotations

from adapters.telegram.callbacks import Lobby
from adapters.telegram.content import ROW, Button, Content, Rows
from service.platform.outbox import Action, Message
from service.protocol.i18n import translate
from service.protocol.i18n.render import SUIT_EMOJI, rank_name

# The most buttons a turn shows at once (more: the two-step pick).
MAX_FLAT = 12
PAGE_PREFIX = "pk:"
KINDS = ("single", "group", "run", "add")
BACK = "-"


def page_data(table: str, version: int, page: str) -> str:
    """The callback data of a page button (well under Telegram's 64 bytes)."""
    return f"{PAGE_PREFIX}{table}:{version}:{page}"


def parse_page(data: str) -> tuple[str, int, str] | None:
    """``(table, version, page)`` of a page button's data, or None."""
    parts = data[len(PAGE_PREFIX):].split(":")
    if not data.startswith(PAGE_PREFIX) or len(parts) != 3 or not parts[1].isdigit():
        return None
    return parts[0], int(parts[1]), parts[2]


def label(game: str | None, action: Action, locale: str) -> str:
    """A button's text: a Cinquillo card with its suit symbol (ten of them fit a keyboard), anything
    else as the service's message labels it (535's piles in words: "pair of 7s")."""
    move = action.move
    if move == "pass":
        return translate(locale, "tg.btn.pass")
    if game == "cinquillo" and move[-1:] in SUIT_EMOJI and move[:-1].isdigit():
        return f"{SUIT_EMOJI[move[-1]]} {rank_name(int(move[:-1]), locale)}"
    return action.label or move


def _rows(buttons: list[tuple[str, str, str]]) -> Rows:
    return tuple(tuple(buttons[i:i + ROW]) for i in range(0, len(buttons), ROW))


def move_keyboard(msg: Message) -> Content:
    """The buttons of a hand message (``Content`` without text): its rows, and its pages if any."""
    loc, game = msg.locale, msg.game
    others = [a for a in msg.actions if a.kind in ("rematch", "accept", "decline")]
    if others:  # no move: the end's "Play again", a rematch's invitation
        return Content("", _rows([(label(game, a, loc), "data", a.token) for a in others]))
    plays = [(label(game, a, loc), "data", a.token) for a in msg.actions if a.move != "pass"]
    passes = tuple((label(game, a, loc), "data", a.token) for a in msg.actions if a.move == "pass")
    tail = (passes,) if passes else ()
    if game != "535":
        return Content("", _rows(plays) + tail)
    # The service's message says each move's kind (Action.kind): the same grouping on every surface.
    by_kind = {k: [b for a, b in zip([a for a in msg.actions if a.move != "pass"], plays, strict=True)
                   if a.kind == k] for k in KINDS}
    if len(plays) + len(passes) <= MAX_FLAT:
        rows: Rows = ()
        for k in KINDS:
            rows += _rows(by_kind[k])
        return Content("", rows + tail)
    table = msg.table or ""
    back = ((translate(loc, "tg.btn.back"), "data", page_data(table, msg.version, BACK)),)
    top = tuple((translate(loc, f"tg.kind.{k}", n=len(by_kind[k])), "data", page_data(table, msg.version, k))
                for k in KINDS if by_kind[k])
    pages = tuple((k, (*_rows(by_kind[k]), back)) for k in KINDS if by_kind[k])
    return Content("", _rows(list(top)) + tail, pages=((BACK, _rows(list(top)) + tail), *pages))


def page(content: Content, name: str) -> Content | None:
    """``content`` showing its page ``name`` (None: it has no such page)."""
    for key, rows in content.pages:
        if key == name:
            return Content(content.text, rows, pages=content.pages)
    return None


def lobby_rows(locale: str, table: str) -> Rows:
    """The lobby's buttons: Join, Leave / Add AI, Settings / Start, Cancel."""
    def b(op: str) -> Button:
        return translate(locale, f"tg.btn.{op}"), "data", Lobby(op=op, table=table).pack()

    return ((b("join"), b("leave")), (b("bots"), b("settings")), (b("start"), b("cancel")))


def hand_link(locale: str, bot_username: str, table: str) -> Button:
    """The "My hand" button: a deep link that opens the private chat with the bot on this table."""
    return translate(locale, "tg.btn.hand"), "url", f"https://t.me/{bot_username}?start={table}"


def web_button(msg: Message, *, group: bool, bot_username: str) -> Button | None:
    """The web table's button, when the message carries a link (the web table is configured).

    In a private chat, a Mini App (``web_app``) on the message's own link.  In a group, where Telegram
    allows no ``web_app`` button, a ``startapp`` deep link: the Mini App opens for whoever taps it,
    on this table, and shows that person's own hand if they play (they are known by Telegram's
    ``initData``, not by the link, which everyone in the group can tap).  A replay is public: its page
    is linked as it is."""
    if not msg.link or not msg.table:
        return None
    label = translate(msg.locale, "tg.btn.replay_web" if msg.kind == "replay" else "tg.btn.web")
    if not group:
        return label, "web_app", msg.link
    if msg.kind == "replay":
        return label, "url", msg.link
    return label, "url", f"https://t.me/{bot_username}?startapp={msg.table}"


def web_rows(msg: Message, group: bool, bot_username: str) -> Rows:
    """The web table's button as a row of its own (none without a link)."""
    button = web_button(msg, group=group, bot_username=bot_username)
    return ((button,),) if button else ()
