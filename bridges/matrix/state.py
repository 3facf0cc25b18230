"""What the bridge must remember across restarts, in one SQLite file.

- ``kv``: the bot's access token and device (so Matrix deduplicates our transaction ids across a
  restart) and the sync token (so no message is read twice or missed).
- ``rooms``: each room's kind (``private`` with one person, or ``group``); ``dms``: a person's DM room.
- ``posted``: the Matrix event of a table's last table/hand message in a room, the one edits replace,
  and what it showed (``phase``: the lobby, or the match).
- ``drawn``: the table version each table/hand message of a room shows now: an older callback (a
  retry, callbacks overtaking each other) is never drawn over it.
- ``bottom``: the latest event the bridge knows of in each room (its own posts, people's messages): a
  table message that is no longer at the bottom is posted anew rather than edited far up.
- ``pending``: the action tokens a room may answer by number, the room's language, the Matrix
  event that offered them (an action names it as its ``message``: a board redraws that event), and
  the table and version that offered them (only a newer version of that table withdraws them).
- ``offered``: the events the bridge posted with choices, per room (a day of them): a callback's
  ``replaces`` is honoured only for one of these, so the bridge edits nothing but its own messages.
- ``done``: callback ids already shown (cinq retries a callback whose answer it did not get).
- ``showing``: the callbacks being shown now (written before anything reaches Matrix, deleted with the
  ``done`` row): one left by a crash may be in a room already, its choices unrecorded, and is shown
  again (the same transaction id: Matrix keeps one event) before the next start reads what people
  wrote, so a number typed against it while the bridge was down takes its choice (``Bridge.resume``).
  A callback whose send's outcome is unknown (a timeout, a gateway's 5xx) keeps its row too.
- ``inbox``: people's messages read from the sync and not yet handed on, in the order read, stored in
  the same transaction as the sync token that follows them: the token moves on past a message only once
  the message is here, and a message leaves only once it was handed on (``inbox.Inbox``), so a room
  whose numbers wait does not hold up the sync, and a kill loses none and hands none on twice.
- ``dm_intent``: the people a DM room is being created for (written before the homeserver is asked):
  one left by a crash, or by a create whose answer was lost, is looked for among the bot's rooms before
  another is created, so a person never gets a second DM room.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS rooms (room TEXT PRIMARY KEY, kind TEXT NOT NULL, user TEXT);
CREATE TABLE IF NOT EXISTS dms (user TEXT PRIMARY KEY, room TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS posted (room TEXT, tbl TEXT, kind TEXT, event TEXT NOT NULL,
                                   PRIMARY KEY (room, tbl, kind));
CREATE TABLE IF NOT EXISTS pending (room TEXT PRIMARY KEY, tokens TEXT NOT NULL, locale TEXT NOT NULL,
                                    event TEXT, tbl TEXT, version INTEGER);
CREATE TABLE IF NOT EXISTS drawn (room TEXT, tbl TEXT, kind TEXT, version INTEGER NOT NULL,
                                  PRIMARY KEY (room, tbl, kind));
CREATE TABLE IF NOT EXISTS offered (room TEXT, event TEXT, at REAL NOT NULL, PRIMARY KEY (room, event));
CREATE TABLE IF NOT EXISTS done (id TEXT PRIMARY KEY, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS bottom (room TEXT PRIMARY KEY, event TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS showing (id TEXT PRIMARY KEY, msg TEXT NOT NULL, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS dm_intent (user TEXT PRIMARY KEY, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS inbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, room TEXT NOT NULL,
                                  sender TEXT NOT NULL, name TEXT NOT NULL, body TEXT NOT NULL,
                                  event TEXT NOT NULL UNIQUE);
CREATE INDEX IF NOT EXISTS inbox_room ON inbox (room, seq);
"""
# cinq retries a callback for minutes, and replays keep their ids: a day of ids is plenty.
DONE_TTL_S = 24 * 3600


class State:
    """The bridge's state; every write is committed (and synced by SQLite) before it returns."""

    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self._synchronous = int(self.db.execute("PRAGMA synchronous").fetchone()[0])
        self.db.executescript(SCHEMA)
        # A state file from an older bridge lacks the later columns of ``pending``: add them.
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(pending)")}
        for column in ("event TEXT", "tbl TEXT", "version INTEGER"):
            if column.split()[0] not in columns:
                self.db.execute(f"ALTER TABLE pending ADD COLUMN {column}")
        # Nor ``posted.phase``, from before a table was posted anew when the match starts.
        if "phase" not in {row[1] for row in self.db.execute("PRAGMA table_info(posted)")}:
            self.db.execute("ALTER TABLE posted ADD COLUMN phase TEXT")

    def close(self) -> None:
        """Close the file."""
        self.db.close()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        # The connection commits each statement by itself (isolation_level=None), and ``with self.db``
        # opens no transaction then: what must be written together is written between BEGIN and COMMIT.
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def get(self, key: str) -> str | None:
        """A stored value (``access_token``, ``device_id``, ``since``)."""
        row = self.db.execute("SELECT value FROM kv WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def put(self, key: str, value: str) -> None:
        """Store a value."""
        self.db.execute("INSERT OR REPLACE INTO kv VALUES (?, ?)", (key, value))

    def set_room(self, room: str, kind: str, user: str | None = None) -> None:
        """Record a room's kind; a private room is also the DM of ``user``."""
        with self._transaction():
            self.db.execute("INSERT OR REPLACE INTO rooms VALUES (?, ?, ?)", (room, kind, user))
            if kind == "private" and user:
                self.db.execute("INSERT OR REPLACE INTO dms VALUES (?, ?)", (user, room))
                self.db.execute("DELETE FROM dm_intent WHERE user = ?", (user,))

    def known_room(self, room: str) -> bool:
        """Whether the bridge recorded ``room`` (an invite, or a DM it created)."""
        return self.db.execute("SELECT 1 FROM rooms WHERE room = ?", (room,)).fetchone() is not None

    def intend_dm(self, user: str, now: float) -> None:
        """Record, before the homeserver is asked, that a DM room is being created for ``user``."""
        self.db.execute("INSERT OR REPLACE INTO dm_intent VALUES (?, ?)", (user, now))

    def dm_intended(self, user: str) -> float | None:
        """When a DM room was last asked for ``user`` and never recorded (a crash, a lost answer: the
        homeserver may have made it, or be making it still); None: not asked."""
        row = self.db.execute("SELECT at FROM dm_intent WHERE user = ?", (user,)).fetchone()
        return None if row is None else float(row[0])

    def forget_dm_intent(self, user: str) -> None:
        """The homeserver refused to create ``user``'s DM room: nothing was made."""
        self.db.execute("DELETE FROM dm_intent WHERE user = ?", (user,))

    def room_kind(self, room: str) -> str:
        """``private`` or ``group``; a room the bridge never heard of is a group (the safe side: a
        group is never sent anyone's hand)."""
        row = self.db.execute("SELECT kind FROM rooms WHERE room = ?", (room,)).fetchone()
        return "group" if row is None else str(row[0])

    def dm(self, user: str) -> str | None:
        """The DM room of ``user``, if there is one."""
        row = self.db.execute("SELECT room FROM dms WHERE user = ?", (user,)).fetchone()
        return None if row is None else str(row[0])

    def posted(self, room: str, table: str, kind: str) -> str | None:
        """The event id a new table/hand message of ``table`` in ``room`` replaces."""
        row = self.db.execute(
            "SELECT event FROM posted WHERE room = ? AND tbl = ? AND kind = ?", (room, table, kind)
        ).fetchone()
        return None if row is None else str(row[0])

    def phase(self, room: str, table: str, kind: str) -> str | None:
        """What the posted message of ``table`` shows: ``lobby``, ``match`` (None: not known)."""
        row = self.db.execute(
            "SELECT phase FROM posted WHERE room = ? AND tbl = ? AND kind = ?", (room, table, kind)
        ).fetchone()
        return None if row is None or row[0] is None else str(row[0])

    def bottom(self, room: str) -> str | None:
        """The latest event the bridge knows of in ``room``."""
        row = self.db.execute("SELECT event FROM bottom WHERE room = ?", (room,)).fetchone()
        return None if row is None else str(row[0])

    def at_bottom(self, room: str, event: str) -> None:
        """``event`` is now the latest in ``room`` (a person wrote, or the bridge posted)."""
        self.db.execute("INSERT OR REPLACE INTO bottom VALUES (?, ?)", (room, event))

    def drawn(self, room: str, table: str, kind: str) -> int | None:
        """The table version the table/hand message of ``table`` in ``room`` shows now, if any."""
        row = self.db.execute(
            "SELECT version FROM drawn WHERE room = ? AND tbl = ? AND kind = ?", (room, table, kind)
        ).fetchone()
        return None if row is None else int(row[0])

    def offered_at(self, room: str) -> tuple[str | None, int | None]:
        """The table and version whose message offered the room's pending choices (None: not a
        table's, or not known)."""
        row = self.db.execute("SELECT tbl, version FROM pending WHERE room = ?", (room,)).fetchone()
        if row is None:
            return None, None
        return (None if row[0] is None else str(row[0])), (None if row[1] is None else int(row[1]))

    def pending(self, room: str) -> tuple[list[str], str | None, str | None]:
        """The tokens a number typed in ``room`` chooses among, the room's last language, and the
        event that offered them (None when not known: a state file from an older bridge)."""
        row = self.db.execute("SELECT tokens, locale, event FROM pending WHERE room = ?", (room,)).fetchone()
        if row is None:
            return [], None, None
        return json.loads(row[0]), str(row[1]), None if row[2] is None else str(row[2])

    def ever_offered(self, room: str) -> bool:
        """Whether the bridge posted choices in ``room`` lately (a day): a number typed there when none
        are pending answers a withdrawn choice, not a chat line."""
        return self.db.execute("SELECT 1 FROM offered WHERE room = ? LIMIT 1", (room,)).fetchone() is not None

    def offered(self, room: str, event: str) -> bool:
        """Whether ``event`` is a message the bridge posted in ``room`` with choices (a board)."""
        row = self.db.execute("SELECT 1 FROM offered WHERE room = ? AND event = ?", (room, event)).fetchone()
        return row is not None

    def showing(self, msg: dict[str, Any], now: float) -> None:
        """Record that callback ``msg`` (the OutboundMessage document) is about to be shown."""
        # Not waiting for the disk: the row is against a crash of this process, and once in the WAL the
        # OS has it; ``shown``'s commit, which waits, takes it to the disk.  So a callback still costs
        # one wait for the disk (tens of ms on a loaded machine), not two.
        self.db.execute("PRAGMA synchronous=NORMAL")
        try:
            self.db.execute("INSERT OR REPLACE INTO showing VALUES (?, ?, ?)",
                            (msg["id"], json.dumps(msg), now))
        finally:
            self.db.execute(f"PRAGMA synchronous={self._synchronous}")

    def not_showing(self, msg_id: str) -> None:
        """Forget that callback ``msg_id`` was being shown (it failed: cinq sends it again)."""
        self.db.execute("DELETE FROM showing WHERE id = ?", (msg_id,))

    def unfinished(self) -> list[tuple[dict[str, Any], float]]:
        """The callbacks a previous process began to show and never finished, oldest first, with when
        each was begun."""
        rows = self.db.execute("SELECT msg, at FROM showing ORDER BY at, rowid").fetchall()
        return [(json.loads(row[0]), float(row[1])) for row in rows]

    def is_done(self, msg_id: str) -> bool:
        """Whether callback ``msg_id`` was already shown."""
        return self.db.execute("SELECT 1 FROM done WHERE id = ?", (msg_id,)).fetchone() is not None

    def shown(
        self,
        msg_id: str,
        room: str,
        locale: str,
        tokens: list[str] | None,
        posted: tuple[str, str, str, str | None] | None = None,
        event: str | None = None,
        drawn: tuple[str, str, int] | None = None,
    ) -> None:
        """Record, in one transaction, that callback ``msg_id`` was shown in ``room``: the room's
        choices (``None`` keeps them, ``[]`` clears them) and ``event``, the message that shows them
        (the original event when it was edited), the event later edits replace, and ``drawn``:
        (table, kind, version) of the table/hand message it drew (None: nothing drawn)."""
        now = time.time()
        with self._transaction():
            if tokens is not None:
                table, version = (drawn[0], drawn[2]) if drawn is not None else (None, None)
                self.db.execute(
                    "INSERT OR REPLACE INTO pending (room, tokens, locale, event, tbl, version) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (room, json.dumps(tokens), locale, event if tokens else None, table, version),
                )
            if drawn is not None:
                self.db.execute("INSERT OR REPLACE INTO drawn VALUES (?, ?, ?, ?)", (room, *drawn))
            if tokens and event is not None:
                self.db.execute("INSERT OR REPLACE INTO offered VALUES (?, ?, ?)", (room, event, now))
                self.db.execute("DELETE FROM offered WHERE at < ?", (now - DONE_TTL_S,))
            if posted is not None:
                self.db.execute("INSERT OR REPLACE INTO posted (room, tbl, kind, event, phase) "
                                "VALUES (?, ?, ?, ?, ?)", (room, *posted))
            self.db.execute("INSERT OR IGNORE INTO done VALUES (?, ?)", (msg_id, now))
            self.db.execute("DELETE FROM showing WHERE id = ?", (msg_id,))
            self.db.execute("DELETE FROM done WHERE at < ?", (now - DONE_TTL_S,))

    def queue(
        self, messages: Sequence[tuple[str, str, str, str, str]], since: str, per_room: int
    ) -> tuple[list[str], int]:
        """Store a sync batch's messages (room, sender, name, body, event id) and the sync token after
        them, in one transaction; returns the rooms with messages queued, and how many messages were
        not: a room already holding ``per_room`` messages takes no more (the inbox stays bounded)."""
        rooms: list[str] = []
        dropped = 0
        with self._transaction():
            for message in messages:
                room = message[0]
                waiting = self.db.execute("SELECT COUNT(*) FROM inbox WHERE room = ?", (room,)).fetchone()[0]
                if waiting >= per_room:
                    dropped += 1
                    continue
                self.db.execute("INSERT OR IGNORE INTO inbox (room, sender, name, body, event) "
                                "VALUES (?, ?, ?, ?, ?)", message)
                if room not in rooms:
                    rooms.append(room)
            self.db.execute("INSERT OR REPLACE INTO kv VALUES ('since', ?)", (since,))
        return rooms, dropped

    def next_in(self, room: str) -> tuple[int, str, str, str, str] | None:
        """The oldest message of ``room`` not yet handed on: (seq, sender, name, body, event id)."""
        row = self.db.execute("SELECT seq, sender, name, body, event FROM inbox WHERE room = ? "
                              "ORDER BY seq LIMIT 1", (room,)).fetchone()
        return None if row is None else (int(row[0]), str(row[1]), str(row[2]), str(row[3]), str(row[4]))

    def handed_on(self, seq: int) -> None:
        """Message ``seq`` was handed on (or given up): it leaves the inbox."""
        self.db.execute("DELETE FROM inbox WHERE seq = ?", (seq,))

    def waiting_rooms(self) -> list[str]:
        """The rooms with messages not yet handed on (a previous process stopped before it could)."""
        return [str(row[0]) for row in self.db.execute("SELECT DISTINCT room FROM inbox ORDER BY room")]
