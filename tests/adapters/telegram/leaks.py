"""G-1 for the Telegram tests: scan everything the bot sent, to everyone, for cards a reader may not
see.  A card still in a hand at the end of a match was never played, so only its holder may ever
have seen it: it must appear in no group message and in no other person's private chat."""

from __future__ import annotations

import re
from typing import Any

from service.domain.tables.state import Table, evolve
from service.protocol.i18n.render import card_name
from service.store.repository import history
from tests.adapters.telegram.support import World, final_hands


def mentions(text: str, cards: set[str]) -> set[str]:
    """The cards of ``cards`` a text names, by code (as a whole word) or by name in either language."""
    found = {c for c in cards if re.search(rf"(?<![0-9A-Za-z_-]){c}(?![0-9A-Za-z_-])", text)}
    return found | {c for c in cards for loc in ("es", "en") if card_name(c, loc) in text}


# An action token's head (format, table, seat, version: service.domain.tokens): its base-36 version
# can read like a card code (".1e." at version 50, the ace of swords), which is no card; the move
# after it, which may name one, stays in what is scanned.
_TOKEN_HEAD = re.compile(r"\b1[A-Za-z0-9_-]{1,64}\.[0-9a-z]+\.[0-9a-z]+\.")


def _sent(call: Any) -> str:
    sent = f"{call.params.get('text', '')}\n{call.params.get('reply_markup', '')}"
    return _TOKEN_HEAD.sub("", sent)


async def assert_no_leak(w: World, table: str) -> int:
    """Fail if a card left in some hand at the end was shown to anyone but its holder (Cinquillo:
    card codes).  Returns how many messages were scanned (so a test can check it scanned some)."""
    stored = await history(w.workers[0].store, table)
    t: Table | None = None
    for s in stored:
        t = evolve(t, s.event, table_id=table, at=s.at)
    assert t is not None and t.game == "cinquillo"
    hands = final_hands(stored)
    holder = {c: (t.seats[i].player.user if t.seats[i].player else None)
              for i, hand in enumerate(hands) for c in hand}
    left = set(holder)
    assert left, "nobody holds a card at the end: the scan would prove nothing"
    scanned = 0
    for call in w.fake.calls:
        if call.method not in ("sendMessage", "editMessageText", "editMessageReplyMarkup"):
            continue
        scanned += 1
        chat = call.params.get("chat_id")
        seen = mentions(_sent(call), left)
        if chat is None or int(chat) < 0:
            assert not seen, (call.method, _sent(call))
        else:
            assert all(holder[c] == str(int(chat)) for c in seen), (chat, seen, _sent(call))
    return scanned
