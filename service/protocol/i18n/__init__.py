"""Replies in the player's language, from gettext catalogues (``locales/<lang>/LC_MESSAGES/*.po``).

Message ids are stable dotted keys (``error.not_a_command``, ``illegal.not_playable``), never
English sentences, and both languages give the full text.  Each ``.po`` file is one *domain*
(``messages``: protocol errors, refusals, cards, help, rules, views; ``tables``: the table
lifecycle); :func:`translate` looks a key up in every domain, so callers need not know which file
holds it.  The ``.po`` files are read at first use (Babel compiles them in memory), so there is no
build step and no compiled file in the repository.

Placeholders are ``{name}``-style, filled with ``str.format``.  A missing key or placeholder never
raises: the key (or the ``{placeholder}``) shows in the text, and ``tests/service/protocol/test_i18n.py``
catches it before a player does.

A message with a count has plural forms (gettext's ``msgid_plural`` / ``msgstr[n]``, chosen by the
catalogue's ``Plural-Forms`` header through ``ngettext``).  Its entry names the parameter that
holds the count in an extracted comment, ``#. count: n``, so callers pass parameters as for any
other message (``translate("es", "table.bots_added", n=1, level=...)``) and :func:`translate` picks
the form.  The count may be an int or the digits of one (deferred text renders its parameters to
strings first); without a usable count the last (plural) form is used, its placeholder left visible.
"""

from __future__ import annotations

import gettext
import io
import re
import string
from functools import cache
from pathlib import Path
from typing import Any

from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

__all__ = ["DEFAULT", "SUPPORTED", "domains", "msgids", "pick_locale", "placeholders", "plural_templates",
           "plurals", "translate"]

SUPPORTED = ("es", "en")
DEFAULT = "en"
LOCALES_DIR = Path(__file__).parent / "locales"

# The extracted comment that names a plural entry's count parameter ("#. count: n").
_COUNT_COMMENT = re.compile(r"count:\s*([A-Za-z_]\w*)")

# Languages of Spain other than Spanish: their speakers read Spanish, and we have no catalogue.
_SPANISH_LIKE = frozenset({"es", "ca", "gl", "eu", "ast", "an", "oc"})


def pick_locale(language_code: str | None) -> str:
    """The supported locale for a platform's language code (``es-419`` -> ``es``, ``ca`` -> ``es``).

    Spanish and the other languages of Spain give ``"es"``; anything else, or None, ``"en"``.
    """
    if not language_code or not isinstance(language_code, str):
        return DEFAULT
    primary = language_code.strip().replace("_", "-").split("-", 1)[0].lower()
    return "es" if primary in _SPANISH_LIKE else DEFAULT


@cache
def domains() -> tuple[str, ...]:
    """The catalogue domains, ``messages`` first then the others by name (the lookup order)."""
    found = {p.stem for p in (LOCALES_DIR / DEFAULT / "LC_MESSAGES").glob("*.po")}
    return tuple(sorted(found, key=lambda d: (d != "messages", d)))


@cache
def _catalog(locale: str, domain: str) -> gettext.GNUTranslations | None:
    """The compiled catalogue of one locale and domain, or None when it has no ``.po`` file."""
    catalog = _read(locale, domain)
    if catalog is None:
        return None
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    buffer.seek(0)
    return gettext.GNUTranslations(buffer)


@cache
def _read(locale: str, domain: str) -> Catalog | None:
    path = LOCALES_DIR / locale / "LC_MESSAGES" / f"{domain}.po"
    if not path.is_file():
        return None
    with path.open("rb") as f:
        return read_po(f, locale=locale, domain=domain)


def msgids(domain: str, locale: str = DEFAULT) -> set[str]:
    """Every message id of ``domain`` in ``locale``'s catalogue (empty when there is none)."""
    return set(_msgids(domain, locale))


@cache
def _msgids(domain: str, locale: str) -> frozenset[str]:
    catalog = _read(locale, domain)
    if catalog is None:
        return frozenset()
    # a plural entry's id is the pair (msgid, msgid_plural): its key is the first
    return frozenset(str(m.id[0] if isinstance(m.id, tuple) else m.id) for m in catalog if m.id)


def plurals(domain: str, locale: str = DEFAULT) -> dict[str, tuple[str, str | None]]:
    """The plural entries of ``domain`` in ``locale``: msgid -> (msgid_plural, count parameter).

    The count parameter is the one the entry's ``#. count: <name>`` comment names (None without).
    """
    return dict(_plurals(locale, domain))


@cache
def _plurals(locale: str, domain: str) -> dict[str, tuple[str, str | None]]:
    # cached and shared: never mutated (plurals() hands out a copy)
    catalog = _read(locale, domain)
    if catalog is None:
        return {}
    out: dict[str, tuple[str, str | None]] = {}
    for m in catalog:
        if isinstance(m.id, tuple):
            found = (_COUNT_COMMENT.search(c) for c in m.auto_comments)
            name = next((f.group(1) for f in found if f), None)
            out[str(m.id[0])] = (str(m.id[1]), name)
    return out


def _count(value: Any) -> int | None:
    """A count parameter as an int: an int, or a str of digits; None for anything else."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit() and value.strip().isascii():
        return int(value)
    return None


def _lookup(locale: str, msgid: str, params: dict[str, Any]) -> str | None:
    for domain in domains():
        catalog = _catalog(locale, domain)
        if catalog is None:
            continue
        plural = _plurals(locale, domain).get(msgid)
        if plural is not None:
            plural_id, name = plural
            n = _count(params.get(name)) if name else None
            # No usable count: the plural form (2 selects it in both catalogues' Plural-Forms).
            text = catalog.ngettext(msgid, plural_id, 2 if n is None else n)
            if text not in (msgid, plural_id):  # the ids themselves: no translation here
                return text
            continue
        text = catalog.gettext(msgid)
        # gettext answers the msgid itself when it has no entry; our texts never equal their keys.
        if text != msgid:
            return text
    return None


class _Params(dict[str, Any]):
    """Format parameters that leave an unknown placeholder as it was instead of raising."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def translate(locale: str | None, msgid: str, **params: Any) -> str:
    """The text of ``msgid`` in ``locale`` (any platform code; unknown ones fall back to English),
    with its ``{placeholders}`` filled from ``params``.

    A key missing in ``locale`` falls back to English, then to the key itself: it never raises.
    """
    chosen = locale if locale in SUPPORTED else pick_locale(locale)
    text = _lookup(chosen, msgid, params)
    if text is None and chosen != DEFAULT:
        text = _lookup(DEFAULT, msgid, params)
    if text is None:
        return msgid
    try:
        # str.format_map (C) fills the same fields as string.Formatter (Python), ~4x faster: a
        # table's text is dozens of these, drawn on every delivery (issue 33).
        return text.format_map(_Params(params))
    except (ValueError, IndexError, AttributeError, KeyError):
        # A malformed template ("{0}", "{a.b}", an unmatched brace) is a catalogue bug: show the
        # text unfilled rather than fail the reply.
        return text


def plural_templates(locale: str, msgid: str) -> tuple[str, str] | None:
    """The two forms of a plural entry in ``locale`` as written, placeholders unfilled (for a page
    that fills the count itself), or None when ``msgid`` is no plural entry there."""
    chosen = locale if locale in SUPPORTED else pick_locale(locale)
    for domain in domains():
        plural = _plurals(chosen, domain).get(msgid)
        catalog = _catalog(chosen, domain)
        if plural is not None and catalog is not None:
            return catalog.ngettext(msgid, plural[0], 1), catalog.ngettext(msgid, plural[0], 2)
    return None


def placeholders(text: str) -> set[str]:
    """The ``{name}`` placeholders of a catalogue text (for the catalogue tests)."""
    return {field for _, field, _, _ in string.Formatter().parse(text) if field}
