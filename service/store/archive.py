"""The archive file of finished tables (written by ``cinq trim``, read by ``cinq replay|verify
--archive`` and ``cinq ratings rebuild --archive``).

JSON lines, one line per table: ``table``, ``phase``, ``archived_at``, ``events`` (every raw event in
order); appended, flushed and fsynced.  The last line of a table wins: a trim interrupted after the
fsync archives the table again next time.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

import orjson


@dataclass(frozen=True)
class Archived:
    """One table as the archive holds it."""

    table: str
    phase: str
    events: list[str]
    archived_at: float = 0.0


def write_archive(path: str, tables: Iterable[Archived]) -> None:
    """Append one JSON line per table to ``path``, then flush and fsync (the directory too when the
    file is new, so that the file itself survives a crash)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    new = not os.path.exists(path)
    with open(path, "ab") as f:
        for a in tables:
            f.write(orjson.dumps({"table": a.table, "phase": a.phase, "archived_at": a.archived_at,
                                  "events": a.events}) + b"\n")
        f.flush()
        os.fsync(f.fileno())
    if new:
        fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def load_archive(path: str) -> dict[str, Archived]:
    """Every table of an archive file by id (the last line of a table wins).

    Raises ``OSError`` if the file cannot be read and ``ValueError`` on a line that is not an archived
    table (the operator is told which line).
    """
    out: dict[str, Archived] = {}
    with open(path, "rb") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                d = orjson.loads(line)
                a = Archived(str(d["table"]), str(d["phase"]), [str(e) for e in d["events"]],
                             float(d.get("archived_at", 0.0)))
            except (orjson.JSONDecodeError, KeyError, TypeError) as e:
                raise ValueError(f"{path}:{n}: not an archived table ({type(e).__name__})") from e
            out[a.table] = a
    return out
