"""A small, fast UCI client for Stockfish over pipes.

python-chess's :mod:`chess.engine` is the general tool (and the tests use it to check
our own UCI engine); for labelling a million positions we want a client with no
event loop between us and the engine, so that our throughput is the engine's own.

>>> with Stockfish() as sf:                      # doctest: +SKIP
...     sf.analyse("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1", depth=8)
Analysis(cp=-31, mate=None, bestmove='e7e5', depth=8)
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

DEBIAN_PATH = "/usr/games/stockfish"
INSTALL_HINT = "install Debian's package: `sudo apt-get install stockfish` (or `make setup` as root)"


class StockfishMissing(RuntimeError):
    """Raised when no Stockfish binary can be found."""


def find_stockfish() -> str:
    """Path of the Stockfish binary: ``$KNIGHTS_STOCKFISH``, then Debian's
    ``/usr/games/stockfish``, then ``stockfish`` on the PATH."""
    candidates = [os.environ.get("KNIGHTS_STOCKFISH"), DEBIAN_PATH, shutil.which("stockfish")]
    for path in candidates:
        if path and Path(path).is_file() and os.access(path, os.X_OK):
            return path
    raise StockfishMissing(f"Stockfish not found; {INSTALL_HINT}")


@dataclass(frozen=True)
class Analysis:
    """One search result, scores from the side to move's point of view."""

    cp: int | None
    mate: int | None
    bestmove: str | None
    depth: int
    shallow: tuple[str, ...] = ()
    """The first move of the principal variation after each finished iteration: ``shallow[d - 1]``
    is the move this search ranked first after iteration ``d`` (at no cost). Not what a fresh
    depth-``d`` search plays: the iterations start from whatever the hash already holds."""

    def white_pov(self, white_to_move: bool) -> Analysis:
        """The same analysis with the score from White's side."""
        if white_to_move:
            return self
        return Analysis(
            None if self.cp is None else -self.cp,
            None if self.mate is None else -self.mate,
            self.bestmove,
            self.depth,
            self.shallow,
        )


class Stockfish:
    """A running Stockfish process speaking UCI on its standard input and output."""

    def __init__(self, path: str | None = None, *, threads: int = 1, hash_mb: int = 16,
                 options: dict[str, object] | None = None) -> None:
        self.path = path or find_stockfish()
        self._proc = subprocess.Popen(
            [self.path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, bufsize=1,
        )
        self.name = ""
        self._send("uci")
        for line in self._read_until("uciok"):
            if line.startswith("id name "):
                self.name = line[len("id name "):].strip()
        self.configure({"Threads": threads, "Hash": hash_mb, **(options or {})})

    # -- plumbing ---------------------------------------------------------------
    def _send(self, command: str) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.write(command + "\n")
        self._proc.stdin.flush()

    def _read_until(self, prefix: str) -> list[str]:
        assert self._proc.stdout is not None
        lines = []
        while True:
            line = self._proc.stdout.readline()
            if not line:
                raise RuntimeError(f"Stockfish ({self.path}) exited unexpectedly")
            lines.append(line)
            if line.startswith(prefix):
                return lines

    def _sync(self) -> None:
        self._send("isready")
        self._read_until("readyok")

    # -- API --------------------------------------------------------------------
    def configure(self, options: dict[str, object]) -> None:
        for name, value in options.items():
            if isinstance(value, bool):
                value = "true" if value else "false"
            self._send(f"setoption name {name} value {value}")
        self._sync()

    def new_game(self) -> None:
        """Forget everything (clears the hash): searches become reproducible."""
        self._send("ucinewgame")
        self._sync()

    def analyse(self, fen: str, *, depth: int | None = None, nodes: int | None = None,
                movetime_ms: int | None = None) -> Analysis:
        """Search ``fen`` to the given limit and return the final score and best move."""
        limits = []
        if depth is not None:
            limits.append(f"depth {depth}")
        if nodes is not None:
            limits.append(f"nodes {nodes}")
        if movetime_ms is not None:
            limits.append(f"movetime {movetime_ms}")
        if not limits:
            raise ValueError("analyse needs a depth, nodes or movetime limit")
        self._send(f"position fen {fen}")
        self._send("go " + " ".join(limits))
        return parse_search_output(self._read_until("bestmove"))

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                self._send("quit")
                self._proc.wait(timeout=5)
            except (BrokenPipeError, subprocess.TimeoutExpired, OSError):
                self._proc.kill()

    def __enter__(self) -> Stockfish:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def parse_search_output(lines: list[str]) -> Analysis:
    """The last exact score (not a bound) among ``info`` lines, and the best move."""
    cp = mate = None
    depth = 0
    fallback: tuple[int | None, int | None, int] | None = None
    bestmove = None
    shallow: dict[int, str] = {}
    for line in lines:
        if line.startswith("bestmove"):
            parts = line.split()
            bestmove = parts[1] if len(parts) > 1 and parts[1] != "(none)" else None
            continue
        if not line.startswith("info") or " score " not in line:
            continue
        tokens = line.split()
        i = tokens.index("score")
        kind, value = tokens[i + 1], int(tokens[i + 2])
        d = int(tokens[tokens.index("depth") + 1]) if "depth" in tokens else 0
        parsed = (value, None, d) if kind == "cp" else (None, value, d)
        if i + 3 < len(tokens) and tokens[i + 3] in ("lowerbound", "upperbound"):
            fallback = parsed
            continue
        cp, mate, depth = parsed
        if "pv" in tokens and tokens.index("pv") + 1 < len(tokens):
            shallow[d] = tokens[tokens.index("pv") + 1]
    if cp is None and mate is None and fallback is not None:
        cp, mate, depth = fallback
    moves: list[str] = []
    for d in range(1, max(shallow, default=0) + 1):   # a depth with no exact line keeps the one before
        moves.append(shallow.get(d, moves[-1] if moves else ""))
    return Analysis(cp, mate, bestmove, depth, tuple(moves))
