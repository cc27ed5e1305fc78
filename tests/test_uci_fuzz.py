"""``knights uci`` under hostile input: a seeded protocol fuzzer, in-process and through the real
command. Real clocks through python-chess's UCI client are in ``test_uci_clocks.py``."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from collections import deque
from pathlib import Path

import chess
import chess.engine
import pytest

from knights.frontends.uci import UciSession

REPO = Path(__file__).resolve().parent.parent
GARBAGE = ["", "   ", "uci uci", "isready now", "go go go", "position", "position fen", "position startpos moves",
           "position startpos moves e2e5", "position fen 8/8/8/8/8/8/8/8 w - - 0 1", "setoption", "setoption name",
           "setoption name Seed value -7", "setoption name Stochastic value maybe", "register later",
           "debug on", "debug", "frobnicate", "go wtime", "go movetime -5", "go searchmoves zz9 a1a1",
           "go wtime abc btime 1", "\t\tgo\t", "x" * 5000, "é♞ unicode ✓", "position fen " + "k" * 300,
           "go nodes 99999999999999999999999", "stop stop", "ponderhit now"]


def random_go(rng: random.Random) -> str:
    choice = rng.randrange(8)
    if choice == 0:
        return "go"
    if choice == 1:
        return f"go movetime {rng.choice([0, 1, 2, 5, 20, 50])}"
    if choice == 2:
        clock = rng.choice([1, 2, 3, 5, 10, 30, 100, 1000])
        return f"go wtime {clock} btime {clock} winc {rng.choice([0, 0, 1, 10])} binc 0"
    if choice == 3:
        return f"go wtime {rng.randint(-5, 200)} btime {rng.randint(-5, 200)} movestogo {rng.randint(0, 5)}"
    if choice == 4:
        return "go infinite"
    if choice == 5:
        return f"go ponder wtime {rng.randint(1, 50)} btime {rng.randint(1, 50)}"
    if choice == 6:
        return f"go depth {rng.randint(1, 9)} nodes {rng.randint(1, 10 ** 6)}"
    return "go searchmoves e2e4 d2d4 a7a6 movetime 10"


def random_position(rng: random.Random) -> str:
    board = chess.Board()
    moves = []
    for _ in range(rng.randint(0, 60)):
        legal = list(board.legal_moves)
        if not legal:
            break
        move = rng.choice(legal)
        moves.append(move.uci())
        board.push(move)
    kind = rng.randrange(4)
    if kind == 0:
        return "position startpos moves " + " ".join(moves)
    if kind == 1:
        return f"position fen {board.fen()}"
    if kind == 2:      # an illegal move somewhere in the list
        cut = rng.randint(0, len(moves))
        return "position startpos moves " + " ".join([*moves[:cut], "e1e8", *moves[cut:]])
    return "position fen " + rng.choice(["R5k1/5ppp/8/8/8/8/5PPP/6K1 b - - 0 1",   # mated
                                         "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",         # stalemate
                                         "4k3/8/8/8/8/8/8/4K3 w - - 0 1"])


def fuzz_lines(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        r = rng.random()
        if r < 0.3:
            lines.append(random_go(rng))
        elif r < 0.55:
            lines.append(random_position(rng))
        elif r < 0.65:
            lines.append(rng.choice(["stop", "ponderhit"]))
        elif r < 0.72:
            lines.append(rng.choice(["isready", "ucinewgame", "uci"]))
        else:
            lines.append(rng.choice(GARBAGE))
    return [*lines, "stop"]


@pytest.mark.clock
@pytest.mark.parametrize("seed", [1, 2])
def test_fuzzed_sessions_answer_every_go_with_one_legal_move(seed):
    """Garbage, early ``go`` (before ``uci``/``isready``), ``stop``/``ponderhit`` at any time,
    clocks down to 1 ms and random positions: the session never dies and every ``go`` gets
    exactly one ``bestmove``, legal in the position it was asked about (``(none)`` only when
    there is no legal move)."""
    out: list[str] = []
    session = UciSession(out.append, evaluator="material", seed=seed, depth=3, engine_process=True)
    expected: deque[chess.Board] = deque()
    go = session.cmd_go

    def noted_go(args: list[str]) -> None:     # the position a go searches: when it runs, which may be after
        expected.append(session.board.copy())  # the lines read during the search before it
        go(args)

    session.cmd_go = noted_go  # type: ignore[method-assign]
    answered = 0
    started = time.perf_counter()
    try:
        for line in fuzz_lines(seed, 300):
            before = len(out)
            assert session.handle(line) is True, line
            for reply in out[before:]:
                if reply.startswith("bestmove"):
                    assert expected, (line, reply)
                    board = expected.popleft()
                    move = reply.split()[1]
                    if move == "(none)":
                        assert not any(board.legal_moves), (line, board.fen())
                    else:
                        assert chess.Move.from_uci(move) in board.legal_moves, (line, reply, board.fen())
                    answered += 1
        assert not expected
        session.drain()                 # the engine process is alive and answers
        assert session.handle("isready") and out[-1] == "readyok"
    finally:
        session.close()
    assert answered > 50
    assert time.perf_counter() - started < 60


def test_fuzzed_bytes_through_the_real_command():
    """The same stream, with invalid bytes mixed in, through ``knights uci`` itself: exit 0,
    no traceback, one ``bestmove`` per ``go``."""
    rng = random.Random(3)
    lines = fuzz_lines(3, 200)
    raw = b"".join(line.encode() + (rng.choice([b"\xff", b"\xc3", b"\x00", b""]) if rng.random() < 0.1 else b"")
                   + b"\n" for line in lines)
    proc = subprocess.run([sys.executable, "-m", "knights.cli", "uci", "--evaluator", "material", "--depth", "3"],
                          input=raw + b"quit\n", capture_output=True, cwd=REPO, timeout=120, check=False)
    out, err = proc.stdout.decode(), proc.stderr.decode()
    assert proc.returncode == 0 and "Traceback" not in err, err[-2000:]
    def text(line: bytes) -> str | None:     # a line with an invalid byte is reported and skipped
        try:
            return line.decode()
        except UnicodeDecodeError:
            return None

    texts = [text(line) for line in raw.split(b"\n")]
    gos = sum(1 for t in texts if t is not None and t.split()[:1] == ["go"])
    assert out.count("info string input is not valid utf-8") == texts.count(None) > 0
    assert sum(1 for line in out.splitlines() if line.startswith("bestmove")) == gos
