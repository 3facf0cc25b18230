"""service/platform/outbox.py: a message is put into words by one renderer, in one language at a time."""

from __future__ import annotations

from service.domain.identities import Room
from service.platform.outbox import Action, Message, Recipient
from service.protocol import text
from service.protocol.i18n.render import move_text


def _lobby(locale: str) -> Message:
    room = Room(platform="tg", chat="g1", kind="group")
    return Message(id="c:0", table="t1", version=3, to=Recipient(room=room), locale=locale, kind="table",
                   lines=[text.t("table.your_turn")], game="cinquillo",
                   actions=[Action(move="5o", token="tok-1"), Action(move="12b", token="tok-2")])


def test_a_message_rendered_for_another_language_has_its_text_and_buttons_in_that_one():
    """A person's /lang en and the group's /lang es: the group's message is all Spanish, not an English
    text with Spanish buttons (or the reverse)."""
    once_en = _lobby("en").rendered()
    again_es = once_en.rendered("es")
    direct_es = _lobby("es").rendered()
    assert again_es.text == direct_es.text and again_es.text != once_en.text
    assert [a.label for a in again_es.actions] == [a.label for a in direct_es.actions] == \
        [move_text("cinquillo", "5o", "es"), move_text("cinquillo", "12b", "es")]
    assert again_es.locale == "es"
    # Rendering in the same language again changes nothing.
    assert once_en.rendered() == once_en and once_en.rendered("en") == once_en


def test_a_reply_written_in_words_keeps_its_words():
    reply = Message(id="c:0", table=None, version=0, to=_lobby("en").to, locale="en", kind="reply",
                    text="Unknown command")
    assert reply.rendered("es").text == "Unknown command"
