"""The chat command protocol (docs/design.md): every command, alias, refusal code and move normalisation."""

from __future__ import annotations

import contextlib
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.protocol.parse import MAX_LENGTH, Command, ProtocolError, parse_command


def refused(text: str, **kwargs: str) -> ProtocolError:
    with pytest.raises(ProtocolError) as info:
        parse_command(text, **kwargs)
    return info.value


@pytest.mark.parametrize(("text", "name"), [
    ("/join", "join"), ("/unirse", "join"), ("/leave", "leave"), ("/salir", "leave"),
    ("/start", "start"), ("/empezar", "start"), ("/cancel", "cancel"), ("/cancelar", "cancel"),
    ("/hand", "hand"), ("/mano", "hand"), ("/stats", "stats"), ("/estadisticas", "stats"),
    ("/estadísticas", "stats"), ("/help", "help"), ("/ayuda", "help"), ("/AYUDA", "help"),
    ("/new 535", "new"), ("/nueva 535", "new"), ("/play 535", "play"), ("/jugar 535", "play"),
    ("/move pass", "move"), ("/mover pass", "move"), ("/rules", "rules"), ("/reglas", "rules"),
    ("/lang es", "lang"), ("/idioma es", "lang"), ("/replay ab12", "replay"), ("/repetir ab12", "replay"),
    ("/bots 1", "bots"),
])
def test_every_command_and_alias(text: str, name: str) -> None:
    assert parse_command(text).name == name


def test_no_argument_commands_have_empty_args() -> None:
    for text in ("/join", "/leave", "/cancel", "/hand", "/stats", "/help"):
        assert parse_command(text).args == {}


def test_bot_suffix_is_dropped_and_surrounding_space_ignored() -> None:
    assert parse_command("  /join@CinqBot  ") == Command("join", {})
    assert parse_command("/move@CinqBot 5o", bot="cinqbot") == Command("move", {"move": "5o"})


def test_a_command_for_another_bot_is_refused_as_other_bot() -> None:
    err = refused("/join@OtherBot", bot="CinqBot")
    assert err.code == "other_bot" and err.params["bot"] == "OtherBot"


def test_start_takes_an_optional_deep_link_payload() -> None:
    assert parse_command("/start").args == {"payload": None}
    assert parse_command("/start t_AB12").args == {"payload": "t_AB12"}
    assert refused("/start a b").code == "unexpected_argument"
    assert refused("/start a!b").code == "bad_argument"


# --- /new and /play -------------------------------------------------------------------------------

@pytest.mark.parametrize(("word", "game"), [
    ("cinquillo", "cinquillo"), ("Cinquillo", "cinquillo"), ("cinq", "cinquillo"), ("535", "535"),
    ("cinco-tres-cinco", "535"), ("five35", "535"),
])
def test_game_aliases(word: str, game: str) -> None:
    assert parse_command(f"/new {word}").args == {"game": game, "options": {}, "players": None}


def test_options_key_value_with_typed_values() -> None:
    cmd = parse_command("/new cinquillo target=30 chips=on teams=no cabron=Sí deal=tradicional")
    assert cmd.args["options"] == {"target": 30, "chips": True, "teams": False, "cabron": True,
                                   "deal": "tradicional"}


@pytest.mark.parametrize(("word", "option"), [
    ("clasico", ("preset", "clasico")), ("clásico", ("preset", "clasico")),
    ("tradicional", ("preset", "tradicional")), ("chips", ("chips", True)), ("pago", ("chips", True)),
    ("points", ("points", True)), ("puntaje", ("points", True)), ("double_turn", ("double_turn", True)),
    ("doble", ("double_turn", True)), ("teams", ("teams", True)), ("parejas", ("teams", True)),
    ("cabron", ("cabron", True)), ("cabrón", ("cabron", True)), ("CABRÓN", ("cabron", True)),
    ("clockwise", ("direction", "clockwise")), ("counterclockwise", ("direction", "counterclockwise")),
    ("antihorario", ("direction", "counterclockwise")), ("preset=clásico", ("preset", "clasico")),
    ("direction=horario", ("direction", "clockwise")),
])
def test_bare_words_presets_and_flags(word: str, option: tuple[str, object]) -> None:
    assert parse_command(f"/new cinquillo {word}").args["options"] == dict([option])


def test_players_for_play_by_key_or_bare_number() -> None:
    assert parse_command("/play cinquillo players=3").args == {
        "game": "cinquillo", "options": {}, "players": 3}
    assert parse_command("/jugar 535 4 tradicional").args["players"] == 4
    assert parse_command("/play 535 jugadores=5").args["players"] == 5


@pytest.mark.parametrize("text", [
    "/new cinquillo =3", "/new cinquillo x=", "/new cinquillo foo", "/new cinquillo 9x=1",
    "/new cinquillo chips chips", "/new cinquillo clockwise counterclockwise",
    "/new cinquillo target=a+b", "/play 535 players=x", "/play 535 3 players=4", "/play 535 players=on",
])
def test_malformed_options_are_bad_option(text: str) -> None:
    err = refused(text)
    assert err.code == "bad_option" and "option" in err.params


def test_option_semantics_are_left_to_the_engine() -> None:
    # target=0 and an unknown key are syntactically fine: engine.new_game raises ValueError later.
    assert parse_command("/new 535 target=0 whatever=1").args["options"] == {"target": 0, "whatever": 1}


@pytest.mark.parametrize("text", ["/new chess", "/play poker", "/rules mus"])
def test_unknown_game(text: str) -> None:
    err = refused(text)
    assert err.code == "unknown_game" and err.params["game"] == text.split()[1]


# --- /bots ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "args"), [
    ("/bots 2", {"n": 2, "level": "medium"}), ("/bots 5 hard", {"n": 5, "level": "hard"}),
    ("/bots 1 fácil", {"n": 1, "level": "easy"}), ("/bots 1 facil", {"n": 1, "level": "easy"}),
    ("/bots 3 medio", {"n": 3, "level": "medium"}), ("/bots 3 Difícil", {"n": 3, "level": "hard"}),
    ("/bots 3 dificil", {"n": 3, "level": "hard"}), ("/bots 4 easy", {"n": 4, "level": "easy"}),
])
def test_bots(text: str, args: dict[str, object]) -> None:
    assert parse_command(text).args == args


@pytest.mark.parametrize(("text", "name"), [
    ("/bots 0", "n"), ("/bots 6", "n"), ("/bots two", "n"), ("/bots -1", "n"), ("/bots ²", "n"),
    ("/bots 2 godlike", "level"),
])
def test_bad_bots(text: str, name: str) -> None:
    err = refused(text)
    assert err.code == "bad_argument" and err.params["name"] == name


# --- /move ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("typed", "move"), [
    ("5o", "5o"), ("5O", "5o"), ("5 o", "5o"), ("12b", "12b"), ("10 C", "10c"), ("05e", "5e"),
    ("sota de copas", "10c"), ("Rey bastos", "12b"), ("caballo de espadas", "11e"), ("as de oros", "1o"),
    ("5 de oros", "5o"), ("king of clubs", "12b"), ("8o", "8o"),  # 8o: no such card, the engine says so
    ("pass", "pass"), ("PASS", "pass"), ("paso", "pass"), ("pasar", "pass"), ("Paso", "pass"),
])
def test_cinquillo_moves_are_normalised(typed: str, move: str) -> None:
    assert parse_command(f"/move {typed}").args == {"move": move}


@pytest.mark.parametrize(("typed", "move"), [
    ("play 7 7", "play 7 7"), ("PLAY   7  7", "play 7 7"), ("play 15 13 14", "play 13 14 15"),
    ("add 7 2", "add 2 7"), ("add 2", "add 2"), ("juega 9,7", "play 7 9"), ("añade 11 9", "add 9 11"),
    ("7 7", "play 7 7"), ("8", "play 8"),
])
def test_535_moves_are_normalised(typed: str, move: str) -> None:
    assert parse_command(f"/move {typed}").args == {"move": move}


@pytest.mark.parametrize("typed", ["hello", "play", "add x", "5z", "sota de nada", "play 7 seven"])
def test_unreadable_moves_are_bad_argument(typed: str) -> None:
    err = refused(f"/move {typed}")
    assert err.code == "bad_argument" and err.params == {"command": "move", "name": "move", "value": typed}


# --- /rules, /lang, /replay ----------------------------------------------------------------------

def test_rules_game_is_optional() -> None:
    assert parse_command("/rules").args == {"game": None}
    assert parse_command("/reglas Cinquillo").args == {"game": "cinquillo"}


@pytest.mark.parametrize(("word", "locale"), [
    ("es", "es"), ("EN", "en"), ("español", "es"), ("english", "en"), ("inglés", "en"), ("es-ES", "es"),
    ("en_GB", "en"),
])
def test_lang(word: str, locale: str) -> None:
    assert parse_command(f"/lang {word}").args == {"locale": locale}


def test_bad_lang_and_table() -> None:
    assert refused("/lang fr").params == {"command": "lang", "name": "locale", "value": "fr"}
    assert refused("/replay a/b").params["name"] == "table"
    assert parse_command("/replay Tb_12-x").args == {"table": "Tb_12-x"}


# --- refusals -------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["hola", "", "   ", "join", "¿/join?"])
def test_not_a_command(text: str) -> None:
    assert refused(text).code == "not_a_command"


def test_unknown_command_names_it() -> None:
    err = refused("/dance now")
    assert err.code == "unknown_command" and err.params == {"command": "dance"}
    assert refused("/").code == "unknown_command"


@pytest.mark.parametrize(("text", "name"), [
    ("/new", "game"), ("/play", "game"), ("/bots", "n"), ("/move", "move"), ("/lang", "locale"),
    ("/replay", "table"), ("/mover   ", "move"),
])
def test_missing_argument(text: str, name: str) -> None:
    err = refused(text)
    assert err.code == "missing_argument" and err.params["name"] == name


@pytest.mark.parametrize("text", ["/join now", "/help me", "/bots 2 hard now", "/rules 535 cinquillo",
                                  "/lang es en", "/replay a b"])
def test_unexpected_argument(text: str) -> None:
    assert refused(text).code == "unexpected_argument"


def test_too_long() -> None:
    assert parse_command("/move " + " " * (MAX_LENGTH - 10) + "5o").args == {"move": "5o"}
    err = refused("/move " + "7 " * MAX_LENGTH)
    assert err.code == "too_long" and err.params == {"limit": MAX_LENGTH}
    # a long message that is not a command is simply not a command (ignored in groups)
    assert refused("x" * 10_000).code == "not_a_command"


def test_protocol_error_carries_code_and_params() -> None:
    err = ProtocolError("bad_argument", name="n", value="9")
    assert (err.code, err.params) == ("bad_argument", {"name": "n", "value": "9"})
    assert "bad_argument" in repr(err)


@given(st.text(max_size=600))
def test_parse_never_raises_anything_but_protocol_error(text: str) -> None:
    try:
        cmd = parse_command(text)
    except ProtocolError as err:
        assert isinstance(err.code, str)
    else:
        assert isinstance(cmd, Command)


@given(st.lists(st.sampled_from(["/new", "/play", "/move", "/bots", "cinquillo", "535", "play", "add", "7",
                                 "12", "o", "de", "sota", "x=1", "=", "chips", "fácil", "@", "/lang", "es",
                                 "paso", "players=3", "3", "ñ", "²"]), max_size=8))
def test_parse_near_misses_never_crash(words: list[str]) -> None:
    with contextlib.suppress(ProtocolError):
        parse_command(" ".join(words))


def test_every_name_a_command_is_shown_or_routed_by_is_one_the_parser_reads_as_it():
    # Telegram's "/" menu and its command filters take their names from the protocol (issue 18).
    from service.protocol.chats import COMMAND_CHATS
    from service.protocol.names import names_of, shown_name

    for command in COMMAND_CHATS:
        for name in (shown_name(command, "es"), shown_name(command, "en"), *names_of(command)):
            assert re.fullmatch(r"[a-záéíóú]+", name), name
            args = {"new": " cinquillo", "play": " cinquillo", "bots": " 1", "move": " pass", "kick": " 1",
                    "set": " chips", "lang": " es", "replay": " t1", "tournament": " join"}.get(command, "")
            assert parse_command(f"/{name}{args}").name == command
    assert shown_name("hand", "es") == "mano" and shown_name("hand", "en") == "hand"


@pytest.mark.parametrize(("text", "level"), [
    ("/play 535 hard", "hard"), ("/jugar cinquillo difícil", "hard"), ("/play 535 level=easy", "easy"),
    ("/jugar 535 nivel=medio 3", "medium"), ("/play cinquillo tradicional", None)])
def test_play_takes_the_ai_level(text: str, level: str | None) -> None:
    # Issue 34 (12): "make play ARGS='535 hard'" was refused.
    args = parse_command(text).args
    assert args.get("level") == level and "level" not in args["options"]


@pytest.mark.parametrize("text", ["/play 535 hard easy", "/play 535 level=expert", "/new 535 hard"])
def test_a_second_level_an_unknown_one_or_a_level_in_a_lobby_is_refused(text: str) -> None:
    with pytest.raises(ProtocolError):
        parse_command(text)
