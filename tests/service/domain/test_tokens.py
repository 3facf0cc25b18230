"""Signed action tokens: round trip, refusal of every tampering, rotation, the 64-byte bound."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.domain.tokens import MAX_BYTES, Claims, TokenError, issue, open_token

KEY = b"k" * 32
OLD = b"o" * 32
CLAIMS = {"table": "T7x_9-AbCdEf", "seat": 3, "version": 41, "move": "play 13 14 15"}


def token(**overrides: object) -> str:
    return issue(KEY, **{**CLAIMS, **overrides})  # type: ignore[arg-type]


def refused(tok: str, secrets: tuple[bytes, ...] = (KEY,)) -> str:
    with pytest.raises(TokenError) as info:
        open_token(secrets, tok)
    return info.value.code


@pytest.mark.parametrize("move", ["pass", "5o", "10c", "12b", "play 7", "play 7 7", "add 2 7",
                                  "play 13 14 15", "add 1 1 1", "play 8 9 11"])
def test_round_trip(move: str) -> None:
    assert open_token([KEY], token(move=move)) == Claims("T7x_9-AbCdEf", 3, 41, move)


def test_token_is_url_safe_ascii() -> None:
    tok = token()
    assert tok.isascii() and all(c.isalnum() or c in "._-=" for c in tok)


def test_longest_table_and_move_fit_in_64_bytes() -> None:
    for move in ("play 13 14 15", "add 13 14 15", "abcdefghijkl", "12b", "pass"):
        tok = issue(KEY, table="x" * 12, seat=35, version=2**31, move=move)
        assert len(tok.encode("ascii")) <= MAX_BYTES, (move, tok)


def test_tokens_are_deterministic_and_differ_per_field() -> None:
    assert token() == token()
    variants = {token(), token(table="T7x_9-AbCdEe"), token(seat=2), token(version=42), token(move="pass")}
    assert len(variants) == 5


@pytest.mark.parametrize("field", ["table", "seat", "version", "move"])
def test_changing_a_field_is_forged(field: str) -> None:
    # Splice another token's field under this token's signature.
    other = {"table": "T7x_9-AbCdEe", "seat": 2, "version": 42, "move": "play 7 7"}[field]
    mac = token().rpartition(".")[2]
    body = token(**{field: other}).rpartition(".")[0]
    assert refused(f"{body}.{mac}") == "forged"


def test_every_single_character_change_is_refused() -> None:
    tok = token()
    for i, ch in enumerate(tok):
        for repl in {"a", "0", "-", ".", "_", "Z"} - {ch}:
            tampered = tok[:i] + repl + tok[i + 1:]
            with pytest.raises(TokenError):
                open_token([KEY], tampered)


def test_truncation_and_extension_are_refused() -> None:
    tok = token()
    for n in range(len(tok)):
        with pytest.raises(TokenError):
            open_token([KEY], tok[:n])
    assert refused(tok + "A") == "malformed"
    assert refused("x" + tok) in ("malformed", "forged")


def test_wrong_secret_is_forged() -> None:
    assert refused(token(), (b"another secret",)) == "forged"


def test_rotation_accepts_any_listed_secret() -> None:
    old_token = issue(OLD, **CLAIMS)  # type: ignore[arg-type]
    assert open_token([KEY, OLD], old_token).move == "play 13 14 15"
    assert open_token([KEY, OLD], token()).seat == 3
    assert refused(old_token, (KEY,)) == "forged"


@pytest.mark.parametrize("junk", ["", ".", "hello", "1a.b.c.d", "1a.0.0.-." + "A" * 21, "é" * 40,
                                  "1" + "a" * 300, "2T.0.0.-." + "A" * 22])
def test_garbage_is_malformed(junk: str) -> None:
    assert refused(junk) == "malformed"


def test_non_string_token_is_malformed() -> None:
    assert refused(None) == "malformed"  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [{"table": ""}, {"table": "a.b"}, {"table": "x" * 65}, {"seat": -1},
                                 {"seat": True}, {"version": -3}, {"version": 1.5},
                                 {"move": "a.b"}, {"move": ""}, {"move": "5o "}])
def test_issue_refuses_what_it_cannot_encode(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        token(**bad)


def test_empty_secrets_are_a_programming_error() -> None:
    with pytest.raises(ValueError):
        issue(b"", **CLAIMS)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        open_token([], token())


_moves = st.one_of(
    st.just("pass"),
    st.builds(lambda r, s: f"{r}{s}", st.sampled_from([1, 2, 3, 4, 5, 6, 7, 10, 11, 12]),
              st.sampled_from("oceb")),
    st.builds(lambda v, rs: f"{v} {' '.join(map(str, sorted(rs)))}", st.sampled_from(["play", "add"]),
              st.lists(st.integers(1, 35), min_size=1, max_size=3)),
)


@given(table=st.from_regex(r"[A-Za-z0-9_-]{1,12}", fullmatch=True), seat=st.integers(0, 35),
       version=st.integers(0, 2**31), move=_moves)
def test_property_round_trip_and_bound(table: str, seat: int, version: int, move: str) -> None:
    tok = issue(KEY, table=table, seat=seat, version=version, move=move)
    assert len(tok.encode("ascii")) <= MAX_BYTES
    assert open_token([OLD, KEY], tok) == Claims(table, seat, version, move)
    with pytest.raises(TokenError):
        open_token([OLD], tok)


@given(st.text(max_size=100))
def test_property_arbitrary_text_never_opens(text: str) -> None:
    with pytest.raises(TokenError):
        open_token([KEY], text)
