"""``cinq play``: scriptable (``--auto``, piped stdin, end of input) and playable to the end."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import pytest

from adapters.terminal import play
from service.ops.cli import main
from service.protocol.i18n import translate


@pytest.mark.parametrize("words", [["cinquillo"], ["535", "3"]])
async def test_auto_plays_a_whole_match_to_the_end(words):
    out = io.StringIO()
    assert await play(words, auto=True, lang="en", stdin=io.StringIO(""), stdout=out) == 0
    assert "The match is over" in out.getvalue()


async def test_numbers_and_moves_are_read_from_a_pipe_and_end_of_input_ends_cleanly():
    out = io.StringIO()
    stdin = io.StringIO("1\nnonsense\n/hand\n1\n")
    assert await play(["cinquillo"], lang="es", stdin=stdin, stdout=out) == 0
    text = out.getvalue()
    assert translate("es", "terminal.prompt").strip() in text
    assert "  1. " in text  # the legal moves are numbered
    assert text.rstrip().endswith(translate("es", "terminal.bye"))


@pytest.mark.parametrize("lang,words,said", [("en", ["535", "hard"], "3 AI players sit down (level hard)."),
                                              ("es", ["cinquillo", "players=2", "fácil"],
                                               "Se sienta 1 jugador IA (nivel fácil).")])
async def test_the_ai_level_is_taken_from_the_words_and_said(lang, words, said):
    # Issue 34 (12): `make play ARGS="535 hard"` was refused; the level is now a word of /play's, and
    # the terminal says which level sits down.
    out = io.StringIO()
    assert await play(words, lang=lang, stdin=io.StringIO("q\n"), stdout=out) == 0
    assert said in out.getvalue()


@pytest.mark.parametrize("lang", ["en", "es"])
async def test_words_it_cannot_read_and_numbers_of_no_move_are_answered_in_plain_words(lang):
    # Issue 34 (11): the terminal answered "Usage: /move <move>, for example /move 5o" (the chat's).
    out = io.StringIO()
    stdin = io.StringIO("nonsense\n99\nadd 9\nq\n")
    assert await play(["cinquillo", "players=3"], lang=lang, stdin=stdin, stdout=out) == 0
    text = " ".join(out.getvalue().split())
    assert translate(lang, "terminal.bad_choice", text="nonsense") in text
    assert translate(lang, "terminal.bad_choice", text="add 9") in text  # 535's words in Cinquillo
    assert "5o" not in text  # the chat's notation
    no_move = translate(lang, "terminal.bad_number", n="99", last="@").replace("@", r"\d+")
    assert re.search(no_move, text), text
    assert "/mov" not in text and "/join" not in text and "/bots" not in text


async def test_q_quits():
    out = io.StringIO()
    assert await play(["535"], lang="en", stdin=io.StringIO("q\n"), stdout=out) == 0
    assert out.getvalue().rstrip().endswith(translate("en", "terminal.bye"))


async def test_bad_options_are_explained_and_exit_non_zero():
    out = io.StringIO()
    assert await play(["cinquillo", "colour=red"], lang="en", stdin=io.StringIO(""), stdout=out) == 1
    assert "colour" in out.getvalue()


def test_the_console_script_plays_auto_with_stdin_not_a_tty():
    env = {**os.environ, "LANG": "en_US.UTF-8"}
    env.pop("REDIS_URL", None)
    proc = subprocess.run([sys.executable, "-m", "service.ops.cli", "play", "535", "--auto"], env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "The match is over" in proc.stdout


def test_verify_needs_a_finished_table(capsys, monkeypatch):
    # On the embedded store there is no table: refused, said plainly.
    monkeypatch.setenv("CINQ_LOG_LEVEL", "WARNING")
    monkeypatch.delenv("REDIS_URL", raising=False)
    with pytest.warns(UserWarning, match="REDIS_URL"):
        assert main(["verify", "nosuchtable"]) == 1
    assert "no such table: nosuchtable" in capsys.readouterr().err


async def test_play_again_starts_a_rematch_with_the_same_players_and_options():
    # Issue 34 (7): the terminal exited at the end; now it offers the service's rematch.
    out = io.StringIO()
    again = translate("en", "terminal.again").strip()

    class Player:
        """Types the first move shown, "y" at the first end and "n" at the second."""

        answered = 0

        def readline(self) -> str:
            if out.getvalue().rstrip().endswith(again):
                Player.answered += 1
                return "y\n" if Player.answered == 1 else "n\n"
            return "1\n"

    assert await play(["cinquillo", "players=3", "hard"], lang="en", stdin=Player(), stdout=out) == 0
    text = out.getvalue()
    assert Player.answered == 2 and text.count("The match is over.") == 2
    assert "Rematch of table" in text and text.rstrip().endswith(translate("en", "terminal.bye"))


async def test_the_prompt_shows_the_turn_timer():
    out = io.StringIO()
    assert await play(["cinquillo", "turn=40"], lang="en", stdin=io.StringIO("q\n"), stdout=out) == 0
    assert re.search(r"Your move, (40|39|38) s left", out.getvalue()), out.getvalue()[-300:]
