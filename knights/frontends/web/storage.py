"""Where the web games live: one SQLite file (the standard library's ``sqlite3``).

Every change to a game (a new game, each move, an undo, a resignation) is one
``INSERT ... ON CONFLICT DO UPDATE`` of its row, committed before the server answers,
so a server that stops, however it stops (Ctrl-C, a crash, SIGKILL), loses nothing
that it has answered. The journal is SQLite's write-ahead log, which survives a killed
process.

One table, one row a game::

    games(id TEXT PRIMARY KEY,   -- 16 hex digits, random (secrets.token_hex)
          human TEXT,            -- 'white' or 'black': the person's side
          settings TEXT,         -- the bot's settings, JSON (EngineSettings.as_json)
          start_fen TEXT,        -- where the game began (the start position in play)
          moves TEXT,            -- the moves since, UCI, space-separated
          resigned TEXT,         -- 'white', 'black' or NULL
          seen TEXT,             -- what the bot saw at each of its last MAX_SEEN moves, JSON
          started TEXT,          -- ISO date-time of the first move (the PGN's Date)
          used REAL)             -- Unix time of the last change or look: what pruning reads

Bounds: at most :data:`MAX_GAMES` games and none idle for more than :data:`IDLE_DAYS`
days (the least recently used go first, when a game is created and when the file is
opened); per game, what the bot saw is kept for its last :data:`MAX_SEEN` moves (about 2
KB each), the moves themselves all (5 bytes a ply). A typical file stays under a few MB;
the worst case is about ``MAX_GAMES * MAX_SEEN * 4 KB``, some 64 MB.

>>> db = GameDatabase(":memory:")
>>> db.save(GameRecord("ab", "white", {"depth": 1}, "startpos", ["e2e4"], None, {}, "2026-01-01T00:00:00"))
>>> db.load("ab").moves, len(db)
(['e2e4'], 1)
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_DB = Path("runs") / "web" / "games.sqlite3"
"""Where ``knights serve`` keeps its games unless told (``--db``), from the current
directory; git ignores ``runs/``."""
MAX_GAMES = 256
"""Games kept at most: a local page for one person, who rarely has more than a few going."""
IDLE_DAYS = 30.0
"""A game neither played nor looked at for this many days is dropped."""
MAX_SEEN = 64
"""What the bot saw is kept for its last this many moves in each game (the page shows the
last; undo walks back through the others)."""
SCHEMA_VERSION = 1

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id TEXT PRIMARY KEY,
    human TEXT NOT NULL CHECK (human IN ('white', 'black')),
    settings TEXT NOT NULL,
    start_fen TEXT NOT NULL,
    moves TEXT NOT NULL,
    resigned TEXT CHECK (resigned IS NULL OR resigned IN ('white', 'black')),
    seen TEXT NOT NULL,
    started TEXT NOT NULL,
    used REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS games_used ON games (used);
"""


class StorageError(RuntimeError):
    """The games database cannot be used (not a database, a newer schema, unwritable)."""


class StorageUnavailable(StorageError):
    """The games database refused a write while the server runs (a full or failing disk, a file
    made read-only): the change was not made. Reads go on; the server answers 503."""


@dataclass
class GameRecord:
    """One stored game, as plain values (see :mod:`knights.frontends.web.games` for the game)."""

    id: str
    human: str
    settings: dict[str, Any]
    start_fen: str
    moves: list[str]
    resigned: str | None
    seen: dict[int, dict[str, Any]]
    started: str


class GameDatabase:
    """The games in one SQLite file (``":memory:"``: in memory, for tests), thread-safe,
    pruned to ``limit`` games and ``idle_days`` days."""

    def __init__(self, path: str | Path = DEFAULT_DB, *, limit: int = MAX_GAMES,
                 idle_days: float = IDLE_DAYS) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        if not idle_days > 0:
            raise ValueError(f"idle_days must be above 0, not {idle_days}")
        self.path = str(path)
        self.limit = limit
        self.idle_seconds = idle_days * 86400
        self._lock = threading.Lock()
        self._last = 0.0
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=10, isolation_level=None, check_same_thread=False)
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StorageError(f"{self.path} holds games of a newer version (schema {version}; this one "
                                   f"reads {SCHEMA_VERSION}): give another file with --db")
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)
            self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except (sqlite3.Error, OSError) as exc:
            raise StorageError(f"cannot use {self.path} as the games database ({exc}): "
                               "give another file with --db") from None
        self.prune()

    def _write(self, sql: str, *params: Any) -> None:
        """Run one change (under the lock): :class:`StorageUnavailable` when the file refuses it."""
        try:
            self._db.execute(sql, params)
        except sqlite3.Error as exc:
            raise StorageUnavailable(f"the games database {self.path} cannot be written ({exc})") from None

    def _note_use(self, game_id: str) -> None:
        """Count ``game_id`` as used now (under the lock); skipped while the file cannot be
        written, so that reading a game never fails on it."""
        try:
            self._db.execute("UPDATE games SET used = ? WHERE id = ?", (self._now(), game_id))
        except sqlite3.Error as exc:
            log.debug("%s: not noted as used (%s)", game_id, exc)

    def _now(self) -> float:
        """Now, as Unix time, and always after the last call (so use orders every game)."""
        self._last = max(time.time(), self._last + 1e-6)
        return self._last

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM games").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def save(self, record: GameRecord) -> None:
        """Write ``record`` (a new game or a change), committed when this returns;
        :class:`StorageUnavailable` when the file refuses it (nothing changed there)."""
        row = (record.id, record.human, json.dumps(record.settings), record.start_fen, " ".join(record.moves),
               record.resigned, json.dumps({str(k): v for k, v in record.seen.items()}), record.started)
        with self._lock:
            self._write(
                "INSERT INTO games (id, human, settings, start_fen, moves, resigned, seen, started, used) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET human = excluded.human, "
                "settings = excluded.settings, start_fen = excluded.start_fen, moves = excluded.moves, "
                "resigned = excluded.resigned, seen = excluded.seen, started = excluded.started, "
                "used = excluded.used", *row, self._now())

    def load(self, game_id: str) -> GameRecord | None:
        """The stored game ``game_id`` (and it counts as used now), or ``None``.
        ValueError when its row cannot be read back."""
        with self._lock:
            row = self._db.execute("SELECT id, human, settings, start_fen, moves, resigned, seen, started "
                                   "FROM games WHERE id = ?", (game_id,)).fetchone()
            if row is None:
                return None
            self._note_use(game_id)
        try:
            seen = {int(k): v for k, v in json.loads(row[6]).items()}
            settings = json.loads(row[2])
            if not isinstance(settings, dict):
                raise ValueError("its settings are not a JSON object")
            return GameRecord(row[0], row[1], settings, row[3], row[4].split(), row[5], seen, row[7])
        except (ValueError, AttributeError, TypeError) as exc:
            raise ValueError(f"the stored game {game_id} cannot be read ({exc})") from None

    def touch(self, game_id: str) -> None:
        """Count ``game_id`` as used now (it stays longest)."""
        with self._lock:
            self._note_use(game_id)

    def ids(self) -> list[str]:
        """Every stored game's id, the least recently used first."""
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT id FROM games ORDER BY used, rowid")]

    def prune(self) -> list[str]:
        """Drop the games idle too long, then the least recently used beyond the limit;
        returns their ids (none while the file cannot be written: pruning waits)."""
        with self._lock:
            cutoff = time.time() - self.idle_seconds
            old = [r[0] for r in self._db.execute("SELECT id FROM games WHERE used < ?", (cutoff,))]
            extra = [r[0] for r in self._db.execute(
                "SELECT id FROM games WHERE used >= ? ORDER BY used DESC, rowid DESC LIMIT -1 OFFSET ?",
                (cutoff, self.limit))]
            dropped = old + extra
            if dropped:
                try:
                    self._db.execute("BEGIN")     # one transaction: all dropped, or none
                    self._db.executemany("DELETE FROM games WHERE id = ?", [(i,) for i in dropped])
                    self._db.execute("COMMIT")
                except sqlite3.Error as exc:
                    if self._db.in_transaction:
                        with contextlib.suppress(sqlite3.Error):
                            self._db.execute("ROLLBACK")
                    log.warning("the games database %s cannot be written (%s): %d old games kept for now",
                                self.path, exc, len(dropped))
                    return []
            return dropped
