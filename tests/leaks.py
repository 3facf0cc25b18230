"""What a G-1 test searches in what someone was shown: every string in it, hidden cards' codes included."""

from __future__ import annotations

from typing import Any


def strings_in(value: Any) -> list[str]:
    """Every string in a JSON-like value (a view, a message): its dict keys and values, at any depth."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in (*strings_in(k), *strings_in(v))]
    if isinstance(value, list | tuple):
        return [x for v in value for x in strings_in(v)]
    return []
