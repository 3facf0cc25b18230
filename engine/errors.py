"""The engine's one exception type for refused moves (rule G-2)."""

from __future__ import annotations

from typing import Any


class IllegalMove(Exception):
    """A move the rules do not allow; the state it was tried on is unchanged.

    ``code`` is a stable machine-readable reason (the service translates it into the player's
    language), ``message`` a readable English sentence, and ``params`` the values that the
    sentence mentions (the card, the suit...), so that a translation can mention them too.
    """

    def __init__(self, code: str, message: str, **params: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.params = params

    def __repr__(self) -> str:
        return f"IllegalMove({self.code!r}, {self.message!r})"
