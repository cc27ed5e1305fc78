"""A web game survives its server: ``knights serve`` as a real process on a free loopback
port, played over HTTP, killed with SIGKILL (no chance to save anything on the way out),
started again on the same database, and the same game goes on, PGN included.

The bot plays with the material evaluator, deterministically, so the game is the same
every run.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import pytest

from knights.frontends.web.app import board_library_missing

ROOT = Path(__file__).resolve().parent.parent
KNIGHTS = [sys.executable, "-m", "knights.cli"]
START_S = 60
URL_LINE = re.compile(r"open (http://127\.0\.0\.1:\d+/)")

pytestmark = [pytest.mark.slow, pytest.mark.clock]   # a server restarted while the page waits


class Server:
    """``knights serve --port PORT --db DB`` in its own process (port 0: a free one);
    ``url`` and ``port`` once it listens."""

    def __init__(self, db: Path, port: int = 0) -> None:
        if board_library_missing():
            if os.environ.get("CI") == "true":
                pytest.fail("the board library is missing; under CI=true this test must run ('make browser')")
            pytest.skip("the board library is not installed (make browser): knights serve refuses to start")
        self.process = subprocess.Popen([*KNIGHTS, "serve", "--port", str(port), "--db", str(db)], cwd=ROOT,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        found: list[str] = []
        reader = threading.Thread(target=lambda: found.append(self.process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        reader.join(timeout=START_S)
        line = found[0] if found else ""
        match = URL_LINE.search(line)
        if match is None:
            self.kill()
            raise AssertionError(f"knights serve did not start: {line!r} {self.process.stderr.read()!r}")  # type: ignore[union-attr]
        self.url = match.group(1)
        self.port = int(self.url.rstrip("/").rsplit(":", 1)[1])

    def kill(self) -> None:
        """SIGKILL: the hardest way to stop (nothing runs on the way out)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path.lstrip("/"), data=data, method=method,
                                         headers={"Content-Type": "application/json"} if data else {})
        with urllib.request.urlopen(request, timeout=60) as response:
            raw = response.read().decode()
            return json.loads(raw) if response.headers.get_content_type() == "application/json" else raw


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[list[Server]]:
    started: list[Server] = []
    yield started
    for server in started:
        server.kill()


def stored_moves(db: Path, game_id: str) -> list[str]:
    with sqlite3.connect(db) as con:
        row = con.execute("SELECT moves FROM games WHERE id = ?", (game_id,)).fetchone()
    return [] if row is None else str(row[0]).split()


def test_a_game_survives_a_killed_server(servers: list[Server], tmp_path: Path) -> None:
    db = tmp_path / "games.sqlite3"
    servers.append(Server(db))
    first = servers[-1]
    game = first.call("POST", "api/games", {"evaluator": "material", "stochastic": False})
    for uci in ("e2e4", "g1f3", "f1c4"):
        state = first.call("POST", f"api/games/{game['id']}/move", {"move": uci})
    before = first.call("GET", f"api/games/{game['id']}")
    assert before["moves"] == state["moves"] and len(before["moves"]) == 6
    first.kill()
    with pytest.raises(urllib.error.URLError):
        first.call("GET", "api/options")

    servers.append(Server(db))
    second = servers[-1]
    after = second.call("GET", f"api/games/{game['id']}")
    for key in ("moves", "fen", "human", "settings", "saw", "legal", "can_undo"):
        assert after[key] == before[key], key
    state = second.call("POST", f"api/games/{game['id']}/move", {"move": "d2d3"})
    assert state["moves"][:7] == [*before["moves"], "d2d3"] and len(state["moves"]) == 8
    pgn = chess.pgn.read_game(io.StringIO(second.call("GET", f"api/games/{game['id']}/pgn")))
    assert pgn is not None and not pgn.errors
    assert [m.uci() for m in pgn.mainline_moves()] == state["moves"]
    assert pgn.headers["White"] == "You" and "material" in pgn.headers["Black"]
    undone = second.call("POST", f"api/games/{game['id']}/undo")
    assert undone["moves"] == before["moves"] and undone["saw"] == before["saw"]


def test_a_move_made_while_the_bot_thinks_survives_a_kill_and_the_bot_moves_after(
        servers: list[Server], tmp_path: Path) -> None:
    """Killed while the bot searches: your move was written before it began; the restarted
    server says the bot is to move, and ``/bot`` makes it."""
    db = tmp_path / "games.sqlite3"
    servers.append(Server(db))
    first = servers[-1]
    game = first.call("POST", "api/games", {"evaluator": "material", "stochastic": False, "depth": 8,
                                            "movetime": 60})
    thread = threading.Thread(target=lambda: _ignore_errors(
        first.call, "POST", f"api/games/{game['id']}/move", {"move": "e2e4"}), daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while stored_moves(db, game["id"]) != ["e2e4"]:
        assert time.monotonic() < deadline, "the move was never written"
        time.sleep(0.05)
    first.kill()
    thread.join(timeout=30)

    servers.append(Server(db))
    second = servers[-1]
    state = second.call("GET", f"api/games/{game['id']}")
    assert state["moves"] == ["e2e4"] and state["bot_to_move"] and state["legal"] == []
    with sqlite3.connect(db) as con:      # a quicker bot for the rest of the test
        con.execute("UPDATE games SET settings = ? WHERE id = ?",
                    (json.dumps({**state["settings"], "movetime": 0.5}), game["id"]))
    second.kill()
    servers.append(Server(db))
    third = servers[-1]
    state = third.call("POST", f"api/games/{game['id']}/bot")
    board = chess.Board()
    for uci in state["moves"]:
        assert chess.Move.from_uci(uci) in board.legal_moves
        board.push_uci(uci)
    assert state["moves"][0] == "e2e4" and len(state["moves"]) == 2 and not state["bot_to_move"]
    assert stored_moves(db, game["id"]) == state["moves"]


def _ignore_errors(call: Any, *args: Any) -> None:
    with contextlib.suppress(OSError):    # the server was killed under it: expected (URLError is an OSError)
        call(*args)


def test_a_disk_that_fails_mid_game_refuses_changes_with_503_and_reads_go_on(servers: list[Server],
                                                                              tmp_path: Path) -> None:
    """Before: once the database could not be written, every request, reads included, answered
    500 'disk I/O error' and logged a traceback. The running server's file-size limit is set to
    0 (prlimit, as a full disk): every write it makes to a file fails, with SQLite's own error."""
    import resource

    db = tmp_path / "games.sqlite3"
    servers.append(Server(db))
    server = servers[-1]
    game = server.call("POST", "api/games", {"evaluator": "material", "stochastic": False})
    state = server.call("POST", f"api/games/{game['id']}/move", {"move": "e2e4"})
    pid = server.process.pid
    limits = resource.prlimit(pid, resource.RLIMIT_FSIZE)
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (0, limits[1]))
    try:
        assert server.call("GET", f"api/games/{game['id']}") == state
        assert "1. e4" in server.call("GET", f"api/games/{game['id']}/pgn")
        for path, body in ((f"api/games/{game['id']}/move", {"move": "d2d4"}), (f"api/games/{game['id']}/undo", None),
                           ("api/games", {"evaluator": "material"})):
            with pytest.raises(urllib.error.HTTPError) as refused:
                server.call("POST", path, body)
            answer = json.loads(refused.value.read().decode())
            assert refused.value.code == 503, answer
            assert answer["error"].startswith(f"the games database {db} cannot be written (disk I/O error): ")
        assert server.call("GET", f"api/games/{game['id']}") == state
    finally:
        resource.prlimit(pid, resource.RLIMIT_FSIZE, limits)
    after = server.call("POST", f"api/games/{game['id']}/move", {"move": "d2d4"})
    assert after["moves"][:3] == [*state["moves"], "d2d4"] and stored_moves(db, game["id"]) == after["moves"]
    server.kill()
    log = server.process.stderr.read()      # type: ignore[union-attr]
    assert "Traceback" not in log, log
    assert len([line for line in log.splitlines() if "cannot be written" in line]) == 3, log
