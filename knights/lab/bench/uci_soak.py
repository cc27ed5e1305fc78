"""``uci_soak``: the bot against itself through python-chess's UCI client, under real clocks.

Two ``knights uci`` processes play each other as a GUI would drive them: each side's
clock is run by wall time around every ``play`` call, on 3 s + 0.02 s and 1 s + 0 a game
(lichess's 3+2 and 1+0 scaled down sixty times; :func:`soak` takes any other clocks).
Both engines run with their defaults, so they search and spend their clocks. A game that
ends with an illegal move, an engine error or a flag fall counts against the target,
which is every game clean. The full run plays 250 games on each clock (about 45 minutes
on two cores; ``$KNIGHTS_SOAK_GAMES`` sets another count); ``--quick`` 10.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence

import chess
import chess.engine

from knights.board.outcome import outcome
from knights.lab.bench.core import benchmark, make_result
from knights.learn import registry

CLOCKS = ((3.0, 0.02), (1.0, 0.0))
"""(base seconds, increment seconds) of the two clocks the benchmark plays."""
KEYS = ("plies", "illegal", "errors", "time_losses", "quick")


def clocked_game(white: chess.engine.SimpleEngine, black: chess.engine.SimpleEngine, base: float, inc: float,
                 max_plies: int) -> dict:
    """One game, each side's clock run by wall time around ``play`` (the GUI's view)."""
    board = chess.Board()
    clocks = {chess.WHITE: base, chess.BLACK: base}
    tally = {"plies": 0, "illegal": 0, "errors": 0, "time_losses": 0, "quick": 0, "least_left": base}
    while outcome(board) is None and len(board.move_stack) < max_plies:   # the project's one rule
        engine = white if board.turn == chess.WHITE else black
        limit = chess.engine.Limit(white_clock=clocks[chess.WHITE], black_clock=clocks[chess.BLACK],
                                   white_inc=inc, black_inc=inc)
        started = time.perf_counter()
        try:
            result = engine.play(board, limit, info=chess.engine.INFO_BASIC)
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError):
            tally["errors"] += 1
            break
        clocks[board.turn] -= time.perf_counter() - started
        tally["least_left"] = min(tally["least_left"], clocks[board.turn])
        if clocks[board.turn] < 0:
            tally["time_losses"] += 1
            break
        clocks[board.turn] += inc
        if result.move is None or result.move not in board.legal_moves:
            tally["illegal"] += 1
            break
        tally["quick"] += result.info.get("depth") == 0
        board.push(result.move)
        tally["plies"] += 1
    return tally


def soak(clocks: Sequence[tuple[float, float, int]], *, max_plies: int = 400, seed: int = 100) -> list[dict]:
    """Play ``games`` on each ``(base, inc, games)`` clock between two ``knights uci``
    processes (colours alternating); one tally row per clock."""
    command = [sys.executable, "-m", "knights.cli", "uci"]
    engines = [chess.engine.SimpleEngine.popen_uci(command, cwd=str(registry.REPO_ROOT), timeout=60)
               for _ in range(2)]
    rows = []
    try:
        for i, engine in enumerate(engines):
            engine.configure({"Seed": seed + i})
            engine.ping()      # isready: the model loads before the clocks start, as a GUI does
        for base, inc, games in clocks:
            counts = dict.fromkeys(("games", *KEYS), 0)
            least_left = base
            for g in range(games):
                tally = clocked_game(engines[g % 2], engines[1 - g % 2], base, inc, max_plies)
                counts["games"] += 1
                for key in KEYS:
                    counts[key] += int(tally[key])
                least_left = min(least_left, tally["least_left"])
            rows.append({**counts, "clock": f"{base:g}s+{inc:g}s", "least_left_ms": round(least_left * 1e3)})
    finally:
        for engine in engines:
            engine.quit()
    return rows


@benchmark("uci_soak")
def bench_uci_soak(quick: bool) -> list[dict]:
    games = 10 if quick else int(os.environ.get("KNIGHTS_SOAK_GAMES", "250"))
    t0 = time.perf_counter()
    rows = soak([(base, inc, games) for base, inc in CLOCKS])
    seconds = round(time.perf_counter() - t0, 1)
    return [make_result(f"uci_soak_{row['clock']}", row["games"] - row["illegal"] - row["errors"] - row["time_losses"],
                        row["games"], target=1.0, unit="games",
                        baseline="games played (every one clean: no illegal move, error or loss on time)",
                        details={**row, "seconds": seconds}) for row in rows]
