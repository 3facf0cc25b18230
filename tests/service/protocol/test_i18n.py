"""The gettext catalogues: es and en in step, every key that code uses exists, the API behaves."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from service.protocol.i18n import SUPPORTED, domains, msgids, pick_locale, placeholders, plurals, translate
from service.protocol.i18n.reasons import error_text, illegal_text
from service.protocol.parse import ProtocolError, parse_command

ROOT = Path(__file__).resolve().parents[3]
_LITERAL_USE = re.compile(r"""\b(?:translate|_t)\(\s*[^,()"']+,\s*["']([A-Za-z0-9_.]+)["']""")
_ALL_DOMAINS = domains()

PROTOCOL_CODES = ("not_a_command", "other_bot", "too_long", "unknown_command", "missing_argument",
                  "unexpected_argument", "bad_argument", "unknown_game", "bad_option", "wrong_chat")
CINQUILLO_CODES = ("bad_notation", "not_in_hand", "must_open_with_5o", "not_playable", "blocked",
                   "cannot_pass", "game_over")
FIVE35_CODES = ("bad_notation", "not_in_hand", "leader_cannot_pass", "not_a_pile", "too_many_cards",
                "wrong_type_or_size", "does_not_beat", "cannot_add_to_single", "add_does_not_fit",
                "too_long", "game_over", "nothing_to_add_to", "illegal")


def _text(locale: str, msgid: str) -> str:
    return translate(locale, msgid)


def test_there_is_a_messages_domain() -> None:
    assert "messages" in _ALL_DOMAINS and _ALL_DOMAINS[0] == "messages"


@pytest.mark.parametrize("domain", _ALL_DOMAINS)
def test_es_and_en_have_the_same_msgids(domain: str) -> None:
    assert msgids(domain, "es") == msgids(domain, "en")
    assert msgids(domain, "en"), f"domain {domain} is empty"


@pytest.mark.parametrize("domain", _ALL_DOMAINS)
def test_placeholders_match_between_languages(domain: str) -> None:
    for msgid in msgids(domain):
        es, en = (translate(loc, msgid) for loc in SUPPORTED)
        assert placeholders(es) == placeholders(en), msgid


@pytest.mark.parametrize("domain", _ALL_DOMAINS)
def test_every_entry_is_translated_not_the_key(domain: str) -> None:
    for msgid in msgids(domain):
        for loc in SUPPORTED:
            text = translate(loc, msgid)
            assert text and text != msgid, (loc, msgid)


def test_no_msgid_is_in_two_domains() -> None:
    seen: dict[str, str] = {}
    for domain in _ALL_DOMAINS:
        for msgid in msgids(domain):
            assert msgid not in seen, f"{msgid} is in {seen[msgid]} and {domain}"
            seen[msgid] = domain


def test_every_literal_msgid_used_in_code_exists() -> None:
    known = set().union(*(msgids(d) for d in _ALL_DOMAINS))
    used: dict[str, str] = {}
    for folder in ("service", "adapters"):
        for path in (ROOT / folder).rglob("*.py"):
            for msgid in _LITERAL_USE.findall(path.read_text(encoding="utf-8")):
                used[msgid] = str(path.relative_to(ROOT))
    assert used, "the scan found no use at all: the pattern is broken"
    missing = {m: p for m, p in used.items() if m not in known}
    assert not missing


def test_every_protocol_error_code_raised_has_a_message() -> None:
    # the parser and the modules it reads options and moves with: every module of the protocol package
    modules = sorted((ROOT / "service" / "protocol").glob("*.py"))
    source = "".join(p.read_text(encoding="utf-8") for p in modules)
    raised = set(re.findall(r'ProtocolError\("(\w+)"', source))
    assert raised == set(PROTOCOL_CODES)
    for code in raised:
        assert f"error.{code}" in msgids("messages")


def test_every_engine_refusal_code_has_a_message() -> None:
    codes = set(CINQUILLO_CODES) | set(FIVE35_CODES)
    for path in (ROOT / "engine").rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        codes |= set(re.findall(r'IllegalMove\(\s*"(\w+)"', source))
        codes |= set(re.findall(r'\berr == "(\w+)"', source))
    missing = sorted(c for c in codes if f"illegal.{c}" not in msgids("messages"))
    assert not missing


def test_help_and_rules_exist_in_both_languages() -> None:
    for msgid in ("help.text", "rules.cinquillo", "rules.535"):
        es, en = translate("es", msgid), translate("en", msgid)
        assert es != en and len(es) > 200 and len(en) > 200
    assert "/ayuda" in translate("es", "help.text") and "/help" in translate("en", "help.text")


@pytest.mark.parametrize(("code", "locale"), [
    ("es", "es"), ("es-ES", "es"), ("es-419", "es"), ("ES_mx", "es"), ("ca", "es"), ("gl", "es"),
    ("eu", "es"), ("en", "en"), ("en-GB", "en"), ("fr", "en"), ("pt-BR", "en"), ("", "en"), (None, "en"),
])
def test_pick_locale(code: str | None, locale: str) -> None:
    assert pick_locale(code) == locale


def test_translate_fills_placeholders_and_falls_back() -> None:
    assert translate("es", "error.unknown_game", game="mus") == (
        "No conozco el juego «mus». Los juegos son cinquillo y 535.")
    assert translate("en", "error.unknown_game", game="mus").startswith("I don't know the game “mus”")
    assert translate("fr", "move.pass") == "pass"  # unknown locale -> English
    assert translate(None, "move.pass") == "pass"
    assert translate("es-AR", "move.pass") == "paso"
    assert translate("es", "no.such.key") == "no.such.key"  # never raises
    assert translate("es", "error.unknown_game") == (  # a missing param stays visible, no crash
        "No conozco el juego «{game}». Los juegos son cinquillo y 535.")
    assert translate("es", "error.unknown_game", game="{x}", extra=1).count("{x}") == 1


@pytest.mark.parametrize("locale", SUPPORTED)
@pytest.mark.parametrize("text", ["hola", "/dance", "/new", "/new chess", "/new 535 x", "/bots 9",
                                  "/join now", "/move 7" + " 7" * 300, "/join@Other"])
def test_every_protocol_error_reads_well(locale: str, text: str) -> None:
    with pytest.raises(ProtocolError) as info:
        parse_command(text, bot="CinqBot")
    reply = error_text(locale, info.value)
    assert "{" not in reply and "error." not in reply and "arg." not in reply and "usage." not in reply


def test_error_text_names_the_argument_and_usage_in_the_language() -> None:
    with pytest.raises(ProtocolError) as info:
        parse_command("/bots")
    assert error_text("es", info.value) == (
        "Falta el número de bots (de 1 a 5). Uso: /bots <1-5> [fácil|medio|difícil]")
    assert error_text("en", info.value) == (
        "Missing the number of bots (1 to 5). Usage: /bots <1-5> [easy|medium|hard]")


@pytest.mark.parametrize("locale", SUPPORTED)
def test_illegal_text_with_the_engine_params(locale: str) -> None:
    cases = [
        ("cinquillo", "not_playable", {"card": "10c", "reason": "suit_not_open", "needed": ["5c"]}),
        ("cinquillo", "not_playable", {"card": "3o", "reason": "not_adjacent", "needed": ["4o", "10o"]}),
        ("cinquillo", "cannot_pass", {"playable": ["4o", "6o"]}),
        ("cinquillo", "blocked", {"card": "2e"}),
        ("535", "does_not_beat", {"cards": [7, 7], "pile": [9, 9]}),
        ("535", "too_long", {"cards": [9], "limit": 4}),
        ("535", "no_such_code", {}),
    ]
    for game, code, params in cases:
        text = illegal_text(locale, game, code, params)
        assert "{" not in text and "illegal." not in text, text
    es = illegal_text("es", "cinquillo", "not_playable",
                      {"card": "3o", "reason": "not_adjacent", "needed": ["4o", "10o"]})
    assert es == "3 de oros no se puede jugar: en ese palo solo entra 4 de oros o Sota de oros."


# --- plural forms (gettext's msgid_plural / msgstr[n], picked with ngettext) -----------------------

def _catalogue_files() -> list[Path]:
    return sorted((ROOT / "service" / "protocol" / "i18n" / "locales").glob("*/LC_MESSAGES/*.po"))


@pytest.mark.parametrize("path", _catalogue_files(), ids=lambda p: f"{p.parts[-3]}/{p.name}")
def test_every_catalogue_declares_two_plural_forms(path: Path) -> None:
    # Without the header Babel would take CLDR's rules (three forms for es), and msgstr[1] would
    # not be the form for 2.
    assert '"Plural-Forms: nplurals=2; plural=(n != 1);\\n"' in path.read_text(encoding="utf-8")


@pytest.mark.parametrize("domain", _ALL_DOMAINS)
def test_plural_entries_are_the_same_in_both_languages_and_name_their_count(domain: str) -> None:
    es, en = plurals(domain, "es"), plurals(domain, "en")
    assert es == en
    for loc in SUPPORTED:
        catalogue = ROOT / "service" / "protocol" / "i18n" / "locales" / loc / "LC_MESSAGES" / f"{domain}.po"
        with catalogue.open("rb") as f:
            forms = {m.id[0]: m.string for m in read_po(f) if isinstance(m.id, tuple)}
        assert forms.keys() == en.keys()
        for msgid, (_plural_id, count) in en.items():
            assert count, f"{msgid}: no '#. count: <param>' comment"
            one, many = forms[msgid]
            # the count shows in both forms, and both forms take the same parameters
            assert count in placeholders(one) and placeholders(one) == placeholders(many), (loc, msgid)
            assert one != many, f"{loc} {msgid}: the singular is the plural"


def test_plural_entries_exist() -> None:
    found = set().union(*(plurals(d) for d in _ALL_DOMAINS))
    assert {"table.bots_added", "refusal.player_count", "table.started"} <= found


@pytest.mark.parametrize(("locale", "n", "expected"), [
    ("es", 1, "Se sienta 1 jugador IA (nivel medio)."),
    ("es", 2, "Se sientan 2 jugadores IA (nivel medio)."),
    ("es", 5, "Se sientan 5 jugadores IA (nivel medio)."),
    ("en", 1, "1 AI player sits down (level medium)."),
    ("en", 2, "2 AI players sit down (level medium)."),
    ("en", 0, "0 AI players sit down (level medium)."),
])
def test_bots_added_agrees_with_its_count(locale: str, n: int, expected: str) -> None:
    level = translate(locale, "level.medium")
    assert translate(locale, "table.bots_added", n=n, level=level) == expected
    # deferred text renders its parameters to strings first: the digits count as well
    assert translate(locale, "table.bots_added", n=str(n), level=level) == expected


def test_deferred_text_picks_the_form_when_the_message_is_read() -> None:
    from service.protocol import text
    item = text.t("table.bots_added", n=1, level=text.t("level.easy"))
    assert text.render(item, "es") == "Se sienta 1 jugador IA (nivel fácil)."
    assert text.render(item, "en") == "1 AI player sits down (level easy)."
    many = text.t("refusal.player_count", players=7)
    assert text.render(many, "es") == "No se puede jugar con 7 jugadores con estas opciones."
    assert text.render(text.t("refusal.player_count", players=1), "en") == (
        "This game cannot be played by 1 player with these options.")


@pytest.mark.parametrize("count", [None, "many", True, "١"])
def test_a_plural_message_without_a_usable_count_takes_the_plural_and_never_raises(count: object) -> None:
    params = {} if count is None else {"n": count}
    out = translate("es", "table.bots_added", level="x", **params)
    assert out.startswith("Se sientan ") and out.endswith(" jugadores IA (nivel x).")
