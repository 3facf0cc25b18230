"""The bot's routers, one per feature, joined in order by :func:`routers`."""

from __future__ import annotations

from aiogram import Router

from adapters.telegram.handlers import boards, buttons, group, private


def routers() -> list[Router]:
    """Every router, in the order the dispatcher tries them (buttons first: they match on data; a
    reply's buttons before the moves', whose tokens look alike)."""
    return [boards.router(), buttons.router(), private.router(), group.router()]
