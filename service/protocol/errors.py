"""The one error of the chat protocol: text that is not a valid command."""

from __future__ import annotations

from typing import Any


class ProtocolError(Exception):
    """Chat text that is not a valid command.

    ``code`` is stable (``not_a_command``, ``other_bot``, ``too_long``, ``unknown_command``,
    ``missing_argument``, ``unexpected_argument``, ``bad_argument``, ``unknown_game``,
    ``bad_option``, ``wrong_chat``); ``params`` are the values its message names (``command``,
    ``name``, ``value``, ``game``, ``option``, ``limit``, ``bot``, ``chat``).
    """

    def __init__(self, code: str, **params: Any) -> None:
        super().__init__(code, params)
        self.code = code
        self.params = params

    def __repr__(self) -> str:
        return f"ProtocolError({self.code!r}, **{self.params!r})"
