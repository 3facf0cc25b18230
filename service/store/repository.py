"""Loading and saving tables through the event store: snapshot + the events after it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import orjson

import engine
from service.domain.events import (
    MOVE,
    Event,
    MatchStarted,
    MovePlayed,
    Stored,
    decode,
    decode_envelope,
    move_played,
)
from service.domain.tables.state import Table, evolve, from_snapshot, to_snapshot
from service.store.event_store import EventStore, Loaded


def _apply_in_place(state: Any, move: str) -> Any:
    # Stored moves were checked when they were decided: replaying them needs neither the legality
    # check nor a copy per move, so the engine's fast path applies them in place.
    rules = engine.rules_for(state)
    rules.apply(state, rules.decode(state, move))
    return state


def fold(table_id: str, table: Table | None, raw_events: list[str], *, owned: bool = False,
         observe: Callable[[Table, Event, float], None] | None = None) -> Table | None:
    """Fold stored events onto a table (or onto nothing, from the first event).

    The engine state is changed in place once it is this fold's own copy: ``owned`` says that the
    starting table's engine state is not shared (it was just restored from a snapshot); otherwise it
    is copied once, before the first move.  ``observe(table after, event, at)`` is called for every
    event but the moves (a projection, such as the indexes of :mod:`service.write.projection`, follows the
    same fold instead of writing its own).
    """
    for raw in raw_events:
        env = orjson.loads(raw)
        compact = env.get(MOVE)
        is_move = compact is not None or (env.get("type") == "MovePlayed"
                                          and env.get("v", 1) == MovePlayed.schema_version)
        if is_move and table is not None and table.engine is not None:
            # Most of a load: stored moves.  They were validated when they were written (by this
            # code, at this schema version), so they are not validated again (pydantic was most of
            # the fold's time); any other event, or an older version, goes through ``decode``.
            if compact is not None:  # (service.domain.events.encode: a move by position)
                move = move_played(*compact)
            else:  # a move written in the envelope, before the compact form
                move = MovePlayed.model_construct(**env["data"])
            if not owned:
                table = replace(table, engine=engine.rules_for(table.engine).clone(table.engine))
                owned = True
            table = evolve(table, move, table_id=table_id, at=float(env.get("at", 0.0)), play=_apply_in_place)
            continue
        s = decode_envelope(env)  # parsed once (a MatchFinished carries every round: it is long)
        if isinstance(s.event, MovePlayed) and table is not None and table.engine is not None:
            if not owned:
                table = replace(table, engine=engine.rules_for(table.engine).clone(table.engine))
                owned = True
            table = evolve(table, s.event, table_id=table_id, at=s.at, play=_apply_in_place)
        else:
            table = evolve(table, s.event, table_id=table_id, at=s.at)
            if isinstance(s.event, MatchStarted):
                owned = True  # a new match: a fresh engine state
            if observe is not None:
                observe(table, s.event, s.at)
    return table


def from_loaded(table_id: str, loaded: Loaded, known: Table | None = None) -> Table | None:
    """The table a load returned: from its snapshot, or from ``known`` when only newer events came."""
    owned = True
    if loaded.snapshot is not None:
        base: Table | None = from_snapshot(orjson.loads(loaded.snapshot))
    elif known is not None and loaded.base == known.version:
        base, owned = known, False
    else:
        base = None
    return fold(table_id, base, loaded.events, owned=owned)


async def load(store: EventStore, table_id: str, known: Table | None = None) -> Table | None:
    """The current table (None if it has no events); ``known`` is a cached, maybe stale, copy."""
    loaded = await store.load(table_id, known.version if known is not None else None)
    return from_loaded(table_id, loaded, known)


def snapshot_json(table: Table) -> str:
    """The JSON a snapshot stores."""
    return orjson.dumps(to_snapshot(table), option=orjson.OPT_NON_STR_KEYS).decode()


async def history(store: EventStore, table_id: str) -> list[Stored]:
    """Every event of a table, decoded (for replays and audits)."""
    return [decode(raw) for raw in await store.events(table_id)]
