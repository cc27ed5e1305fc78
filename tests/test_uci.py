"""``knights uci``: through python-chess's own UCI client (as GUIs and lichess-bot
use it), and line by line for malformed input."""

from __future__ import annotations

import contextlib
import os
import random
import select
import subprocess
import sys
import time
from pathlib import Path

import chess
import chess.engine
import pytest

from knights.engine.clock import DecisionCost
from knights.frontends.uci import UciSession

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def uci_engine():
    engine = chess.engine.SimpleEngine.popen_uci([sys.executable, "-m", "knights.cli", "uci"], timeout=120,
                                                 cwd=str(REPO))
    engine.configure({"Evaluator": "material"})
    yield engine
    engine.quit()


def test_identity_and_options(uci_engine):
    assert "KnightsKernels" in uci_engine.id["name"]
    options = uci_engine.options
    assert options["Evaluator"].type == "combo" and "material" in options["Evaluator"].var
    assert options["Stochastic"].type == "check" and options["Stochastic"].default is True
    assert options["Seed"].type == "spin" and options["Seed"].min == -1
    assert options["CaptureBonus"].type == "spin"
    assert options["Depth"].type == "spin" and options["Depth"].min == 1 and options["Depth"].default > 1


LIMITS = [chess.engine.Limit(time=0.05), chess.engine.Limit(depth=5), chess.engine.Limit(nodes=1000),
          chess.engine.Limit(white_clock=30, black_clock=30, white_inc=1, black_inc=1),
          chess.engine.Limit(white_clock=2, black_clock=2, remaining_moves=10), chess.engine.Limit(mate=2)]


# games 1 and 2 search on real clocks (up to 1.8 s a move): end-to-end runs, make test plays them
@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=[pytest.mark.slow, pytest.mark.clock]),
                                  pytest.param(2, marks=[pytest.mark.slow, pytest.mark.clock])])
def test_whole_games_against_random_and_itself(uci_engine, seed):
    """Game 0 at Depth 1 (the one-ply bot: every answer is depth 1), games 1 and 2 searching."""
    one_ply = seed == 0
    uci_engine.configure({"Stochastic": True, "Seed": seed, "Depth": 1 if one_ply else 64})
    rng = random.Random(seed)
    board = chess.Board()
    while not board.is_game_over(claim_draw=True) and len(board.move_stack) < 160:
        if seed == 2 or board.turn == (seed % 2 == 0):   # game 2: the bot against itself
            result = uci_engine.play(board, LIMITS[len(board.move_stack) % len(LIMITS)], info=chess.engine.INFO_ALL)
            assert result.move in board.legal_moves
            assert (result.info["depth"] == 1 if one_ply else result.info["depth"] >= 1) and "score" in result.info
            board.push(result.move)
        else:
            board.push(rng.choice(list(board.legal_moves)))


def test_scores_from_the_side_to_move(uci_engine):
    uci_engine.configure({"Stochastic": False})
    black = chess.Board("4k3/8/8/3p4/4Q3/8/8/4K3 b - - 0 1")         # ...dxe4 wins the queen
    info = uci_engine.analyse(black, chess.engine.Limit(depth=1))
    assert info["pv"][0] == chess.Move.from_uci("d5e4")
    assert info["score"].relative == chess.engine.Cp(100)           # +1 pawn for Black, to move
    assert info["score"].white() == chess.engine.Cp(-100)
    mate = chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    info = uci_engine.analyse(mate, chess.engine.Limit(time=0.1))
    assert info["score"].relative == chess.engine.Mate(1) and info["pv"][0] == chess.Move.from_uci("a1a8")


def test_searchmoves_and_infinite(uci_engine):
    uci_engine.configure({"Stochastic": False})
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    only = [chess.Move.from_uci("h2h3"), chess.Move.from_uci("g2g4")]
    assert uci_engine.play(board, chess.engine.Limit(time=0.05), root_moves=only).move in only
    with uci_engine.analysis(board) as analysis:       # go infinite ... stop
        first = analysis.get()
        analysis.stop()
        best = analysis.wait()
    assert first["depth"] == 1 and best.move == chess.Move.from_uci("a1a8")


def test_game_over_position(uci_engine):
    mated = chess.Board("R5k1/5ppp/8/8/8/8/5PPP/6K1 b - - 0 1")
    result = uci_engine.play(mated, chess.engine.Limit(time=0.05))
    assert result.move is None


# -- line by line ------------------------------------------------------------------------------------
@pytest.fixture
def session():
    lines: list[str] = []
    s = UciSession(lines.append, evaluator="material", seed=1, engine_process=True)
    s.lines = lines  # type: ignore[attr-defined]
    yield s
    s.close()


def exchange(session, *commands: str) -> list[str]:
    session.lines.clear()
    for command in commands:
        assert session.handle(command)
        session.drain()     # option changes run in the engine process, in order
    return list(session.lines)


def bestmove(lines: list[str]) -> str:
    (line,) = [x for x in lines if x.startswith("bestmove")]
    return line.split()[1]


def test_handshake(session):
    out = exchange(session, "uci", "isready", "ucinewgame", "isready")
    assert out[0].startswith("id name ") and "uciok" in out and out.count("readyok") == 2
    assert any(x.startswith("option name Evaluator type combo default material") for x in out)


def test_malformed_input_gets_info_string_and_the_engine_carries_on(session):
    out = exchange(session, "position startpos moves e2e4 e7e5")
    assert out == []
    before = session.board.fen()
    for command, words in [
        ("position fen not a fen", "invalid FEN"),
        ("position fen 8/8/8/8/8/8/8/8 w - - 0 1", "invalid FEN"),
        ("position", "position needs"),
        ("position sideways", "invalid position command"),
        ("frobnicate now", "unknown command"),
        ("setoption name Nope value 3", "unknown option"),
        ("setoption name Seed value many", "Seed must be an integer"),
        ("setoption name Stochastic value maybe", "Stochastic must be true or false"),
        ("setoption name Evaluator value EL/v99", "unknown evaluator"),
        ("setoption Evaluator material", "setoption needs"),
    ]:
        out = exchange(session, command)
        assert len(out) == 1 and out[0].startswith("info string ") and words in out[0], (command, out)
        assert session.board.fen() == before, command
    move = bestmove(exchange(session, "go wtime 1000 btime 1000"))
    assert chess.Move.from_uci(move) in session.board.legal_moves


def test_illegal_move_in_the_list(session):
    out = exchange(session, "position startpos moves e2e4 e7e5 e2e5 g1f3")
    assert len(out) == 1 and "illegal move 'e2e5'" in out[0] and "before it" in out[0]
    assert session.board.move_stack == [chess.Move.from_uci("e2e4"), chess.Move.from_uci("e7e5")]
    out = exchange(session, "position startpos moves e2e4 xyz")
    assert "illegal move 'xyz'" in out[0] and len(session.board.move_stack) == 1
    out = exchange(session, "position startpos moves e2e4 " + "x" * 5000)    # quoted by a short prefix
    assert len(out) == 1 and "illegal move 'xxx" in out[0] and "\u2026" in out[0] and len(out[0]) < 200, out
    out = exchange(session, "position fen " + "y" * 5000)
    assert len(out) == 1 and "invalid FEN 'yyy" in out[0] and len(out[0]) < 300, out


def test_go_variants(session):
    exchange(session, "position fen 6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    for go in ("go", "go depth 1", "go nodes 5", "go movetime 500", "go mate 1", "go wtime 5000 btime 5 movestogo 3",
               "go depth", "go sideways 3", "go searchmoves a1a8 h2h3 depth 1"):
        out = exchange(session, go)
        assert bestmove(out) == "a1a8", go
        assert any("score mate 1" in x for x in out), go
    out = exchange(session, "go searchmoves h2h3 g2g3")
    assert bestmove(out) in ("h2h3", "g2g3") and any("score cp " in x for x in out)
    out = exchange(session, "go infinite")
    assert not any(x.startswith("bestmove") for x in out) and out[0].startswith("info depth 1")
    assert bestmove(exchange(session, "stop")) == "a1a8"
    assert exchange(session, "stop") == []
    exchange(session, "go ponder")
    assert bestmove(exchange(session, "ponderhit")) == "a1a8"


def test_no_legal_moves_and_quit(session):
    exchange(session, "position fen R5k1/5ppp/8/8/8/8/5PPP/6K1 b - - 0 1")
    out = exchange(session, "go")
    assert out[-1] == "bestmove (none)" and "checkmate" in out[0]
    assert session.handle("quit") is False


def test_options_change_the_engine(session):
    exchange(session, "setoption name Stochastic value false", "setoption name CaptureBonus value 15",
             "setoption name Seed value 7", "setoption name Depth value 1", "isready")
    state = session.state()
    assert state["stochastic"] is False and state["capture_bonus"] == pytest.approx(0.15)
    assert state["seed"] == 7 and state["depth"] == 1
    exchange(session, "position fen 4k3/7p/8/3n4/8/2N5/7P/4K3 w - - 0 1")
    out = exchange(session, "go")
    assert bestmove(out) == "c3d5" and any("score cp 315" in x for x in out)


def test_evaluator_names_resolve_as_everywhere_else():
    """The option and the flag take any spelling the one resolver takes (knights.evaluate.names)."""
    lines: list[str] = []
    flagged = UciSession(lines.append, evaluator="el/v8", seed=1)
    flagged.handle("uci")
    assert any(x.startswith("option name Evaluator type combo default EL/v8") for x in lines)
    for spelling, canonical in (("el/8", "EL/v8"), ("Material+THREATS", "material+threats"), ("ensemble", "democracy")):
        lines.clear()
        assert flagged.handle(f"setoption name Evaluator value {spelling}")
        flagged.drain()
        assert lines == []
        assert flagged.state()["evaluator"] == canonical
    flagged.handle("isready")
    assert flagged.state()["engine"] == "democracy"
    flagged.close()


# -- issue 12: stray bytes, start-up time, clocks ------------------------------------------------
class Uci:
    """A real ``knights uci`` process, read line by line with a deadline."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "knights.cli", "uci", *args], cwd=REPO, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.buffer = b""

    def send(self, data: bytes) -> float:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()
        return time.perf_counter()

    def until(self, prefix: str, timeout: float = 120) -> tuple[list[str], float]:
        """Lines up to the first that starts with ``prefix``, and when it arrived."""
        assert self.proc.stdout is not None
        lines: list[str] = []
        deadline = time.perf_counter() + timeout
        while True:
            while b"\n" in self.buffer:
                raw, self.buffer = self.buffer.split(b"\n", 1)
                lines.append(raw.decode())
                if lines[-1].startswith(prefix):
                    return lines, time.perf_counter()
            left = deadline - time.perf_counter()
            assert left > 0, lines
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                assert chunk, (lines, self.proc.stderr.read() if self.proc.stderr else "")
                self.buffer += chunk

    def close(self) -> int:
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.send(b"quit\n")
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def test_invalid_byte_is_reported_and_the_session_goes_on():
    """Under a strict UTF-8 stdin, ``b"\\xff"`` made ``stdin.readline()`` raise
    UnicodeDecodeError and ``knights uci`` died; now it is one ``info string``."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    proc = subprocess.run([sys.executable, "-m", "knights.cli", "uci", "--evaluator", "material"],
                          input=b"uci\n\xff\nposition startpos moves e2e4\xfe\nisready\nposition startpos\n"
                                b"go movetime 2000\nquit\n",
                          capture_output=True, cwd=REPO, timeout=120, check=False, env=env)
    out, err = proc.stdout.decode(), proc.stderr.decode()
    assert proc.returncode == 0 and "Traceback" not in err, err
    assert "info string input is not valid utf-8 (byte ff at column 1); line ignored" in out
    assert "(byte fe at column 29)" in out
    assert "readyok" in out
    (best,) = [line for line in out.splitlines() if line.startswith("bestmove")]
    assert chess.Move.from_uci(best.split()[1]) in chess.Board().legal_moves


UCIOK_PROBE = """
import sys
import time
from knights.cli import main

class Probe:
    def __init__(self, stream):
        self.stream = stream
    def write(self, text):
        if text.startswith("uciok"):
            print("torch at uciok:", "torch" in sys.modules, file=sys.stderr, flush=True)
        return self.stream.write(text)
    def flush(self):
        self.stream.flush()

sys.stdout = Probe(sys.stdout)
sys.exit(main(["uci"]))
"""


def test_uciok_comes_before_torch_is_imported():
    """``uci`` used to import torch (and list evaluators through the library, which imports
    it) before ``uciok``: 2-3 s, past python-chess's 10 s start-up timeout under load. The
    real ``knights uci`` entry point is run with stdout wrapped so that it reports, at the
    moment ``uciok`` is written, whether torch is in ``sys.modules``."""
    proc = subprocess.run([sys.executable, "-c", UCIOK_PROBE], input=b"uci\nisready\nquit\n", capture_output=True,
                          cwd=REPO, timeout=120, check=False)
    err = proc.stderr.decode()
    assert proc.returncode == 0, err
    assert "torch at uciok: False" in err
    assert b"uciok" in proc.stdout and b"readyok" in proc.stdout


@pytest.mark.slow   # two real processes timed from go to bestmove, seconds each
@pytest.mark.clock
@pytest.mark.parametrize("movetime", [100, 300])
def test_go_before_isready_honours_movetime(movetime):
    """The default evaluator (the democracy) takes seconds to load; a ``go``
    that arrives before ``isready`` used to wait for it. Now the answer comes within
    ``movetime`` (measured from writing ``go`` to reading ``bestmove``, pipes included),
    and after ``isready`` the full one-ply decision answers."""
    uci = Uci()
    try:
        uci.send(b"uci\n")
        uci.until("uciok")
        sent = uci.send(f"position startpos moves e2e4\ngo movetime {movetime}\n".encode())
        lines, arrived = uci.until("bestmove")
        assert (arrived - sent) * 1000 < movetime, (arrived - sent, lines)
        board = chess.Board()
        board.push_uci("e2e4")
        assert chess.Move.from_uci(lines[-1].split()[1]) in board.legal_moves
        uci.send(b"isready\n")
        uci.until("readyok")
        uci.send(b"go movetime 2000\n")
        lines, _ = uci.until("bestmove")
        assert any(line.startswith("info depth 1 ") for line in lines), lines
    finally:
        assert uci.close() == 0


@pytest.mark.clock
def test_tiny_clocks_get_an_instant_legal_move(session):
    """With 1-20 ms left the engine used to spend a whole decision (~20 ms) and lose on
    time; now it answers with the static material move (``info depth 0``), which never waits
    for the engine (timing it here would only measure the machine's load). On a clock
    (``wtime``/``btime``), a one-ply decision measured to cost no more than
    :data:`~knights.engine.clock.ONE_PLY_FLOOR` is played instead (issue 25: lichess-bot sends
    the clock less its 1 s margin, and the network's one-ply move fits in that margin)."""
    exchange(session, "isready", "position fen r3k3/8/8/8/8/8/8/R3K2q w Q - 0 1")
    clocks = ("go wtime 1 btime 1", "go wtime 20 btime 20 winc 0 binc 0", "go wtime 0 btime 0",
              "go wtime -50 btime 30000")
    for go in ("go movetime 1", "go movetime 0 wtime 60000 btime 60000"):
        out = exchange(session, go)
        assert any(line.startswith("info depth 0 ") for line in out), (go, out)   # the quick move, not a search
        assert bestmove(out) == "e1f2", go     # a safe king move (Kd2, Ke2, Kf2 gain nothing; the first wins)
    session.link._cost = DecisionCost()        # a one-ply decision measured to fit the floor (the measured one
    session.link._cost.note(0.001)             # is the machine's: under load it may not): the decision is played
    for go in clocks:
        out = exchange(session, go)
        assert any(line.startswith("info depth 1 ") for line in out), (go, out)   # the one-ply decision
        assert chess.Move.from_uci(bestmove(out)) in chess.Board("r3k3/8/8/8/8/8/8/R3K2q w Q - 0 1").legal_moves
    session.link._cost = DecisionCost()        # a one-ply decision that does not fit: the quick move again
    session.link._cost.note(1.0)
    for go in clocks:
        out = exchange(session, go)
        assert any(line.startswith("info depth 0 ") for line in out), (go, out)
        assert bestmove(out) == "e1f2", go
    exchange(session, "position fen 4k3/8/8/3q4/4P3/8/8/4K3 w - - 0 1")
    assert bestmove(exchange(session, "go movetime 5")) == "e4d5"    # the queen, even in no time


def test_move_budget_follows_the_clock():
    from knights.engine.clock import GoLimits, move_budget

    white, black = chess.WHITE, chess.BLACK
    assert move_budget(GoLimits(movetime=1000), white) == pytest.approx(0.9)
    assert move_budget(GoLimits(movetime=100), white) == pytest.approx(0.08)
    assert move_budget(GoLimits(movetime=20), white) == pytest.approx(0.01)
    assert move_budget(GoLimits(wtime=3000, btime=3000), white) == pytest.approx(0.1)
    assert move_budget(GoLimits(wtime=3000, btime=60, winc=0, binc=0), black) == pytest.approx(0.002)
    assert move_budget(GoLimits(wtime=1000, btime=1000, winc=10, binc=10), white) == pytest.approx(1 / 30 + 0.008)
    assert move_budget(GoLimits(wtime=1000, btime=1000, movestogo=1), white) == pytest.approx(0.48)
    assert move_budget(GoLimits(wtime=10, btime=10), white) == 0.0
    assert move_budget(GoLimits(wtime=60000, btime=60000, movetime=50), white) == pytest.approx(0.04)


def test_the_option_list_is_the_builders():
    """``uci`` lists the builder's names (read off the files, no torch) and its default for the Depth option."""
    from knights.engine.build import available, default_evaluator

    lines: list[str] = []
    session = UciSession(lines.append, seed=1, engine_process=False)
    session.handle("uci")
    (option,) = [x for x in lines if x.startswith("option name Evaluator ")]
    names = available()
    assert option == f"option name Evaluator type combo default {default_evaluator(64, names)} " + " ".join(
        f"var {n}" for n in names)
    assert "EL/v21+quiesce" in names and "EL/v10+quiesce" not in names   # compiled networks only
    assert default_evaluator(1, names) == "sparse+quiesce" and default_evaluator(64, names) == "EL/v25"
    assert default_evaluator(1, ["material", "material+threats"]) == "material"
    assert default_evaluator(64, ["material", "EL/v10"]) == "EL/v10"     # the fallback: the newest network
    for spelling, canonical in (("el/8", "EL/v8"), ("eL/V10", "EL/v10"), ("material+THREATS", "material+threats"),
                                ("ensemble", "democracy"), ("el/21+QUIESCE", "EL/v21+quiesce")):
        assert UciSession(lambda _: None, evaluator=spelling, engine_process=False)._choices()[1] in (
            canonical, default_evaluator(64, names))


# -- issue 14: the search behind the protocol ------------------------------------------------------
MIDDLEGAME = "position fen r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP2BPPP/R2QKB1R w KQ - 0 9"


def depths(lines: list[str]) -> list[int]:
    return [int(x.split()[2]) for x in lines if x.startswith("info depth ")]


def test_go_depth_reports_every_iteration_and_a_ponder_move(session):
    out = exchange(session, "isready", MIDDLEGAME, "go depth 3")
    assert depths(out)[:3] == [1, 2, 3] and max(depths(out)) == 3
    best = next(x for x in out if x.startswith("bestmove")).split()
    board = chess.Board(MIDDLEGAME.split(" ", 2)[2])
    assert chess.Move.from_uci(best[1]) in board.legal_moves
    assert best[2] == "ponder"
    board.push_uci(best[1])
    assert chess.Move.from_uci(best[3]) in board.legal_moves
    final = [x for x in out if x.startswith("info depth 3") and " pv " in x][-1]
    assert final.split(" pv ")[1].split()[0] == best[1]


def test_depth_option_one_is_the_one_ply_bot_whatever_go_asks(session):
    out = exchange(session, "setoption name Depth value 1", "isready", MIDDLEGAME, "go depth 6")
    assert set(depths(out)) == {1}
    out = exchange(session, "setoption name Depth value 0")
    assert "Depth must be an integer from 1" in out[0]


def test_infinite_search_streams_info_until_stop():
    """Through the real command: ``go infinite`` sends iterations while it runs and
    ``bestmove`` only after ``stop``."""
    uci = Uci("--evaluator", "material")
    try:
        uci.send(f"uci\nisready\n{MIDDLEGAME}\ngo infinite\n".encode())
        uci.until("readyok")
        lines, _ = uci.until("info depth 3")
        assert not any(x.startswith("bestmove") for x in lines)
        uci.send(b"stop\n")
        lines, _ = uci.until("bestmove")
        move = lines[-1].split()[1]
        assert chess.Move.from_uci(move) in chess.Board(MIDDLEGAME.split(" ", 2)[2]).legal_moves
    finally:
        assert uci.close() == 0


@pytest.mark.clock
def test_ponderhit_turns_the_ponder_search_into_a_timed_one():
    uci = Uci("--evaluator", "material")
    try:
        uci.send(f"uci\nisready\n{MIDDLEGAME}\n".encode())
        uci.until("readyok")
        uci.send(b"go ponder wtime 3000 btime 3000\n")
        lines, _ = uci.until("info depth 2")
        assert not any(x.startswith("bestmove") for x in lines)
        sent = uci.send(b"ponderhit\n")
        lines, arrived = uci.until("bestmove")
        assert arrived - sent < 3.0 / 30 + 0.5      # its share of the clock, then the answer
        assert chess.Move.from_uci(lines[-1].split()[1]) in chess.Board(MIDDLEGAME.split(" ", 2)[2]).legal_moves
    finally:
        assert uci.close() == 0


@pytest.mark.clock
def test_isready_is_answered_during_an_infinite_search(session):
    exchange(session, "isready", MIDDLEGAME)
    assert session.handle("go infinite")      # no drain: the engine is busy until stop
    started = time.perf_counter()
    assert session.handle("isready") and session.lines[-1] == "readyok"
    assert time.perf_counter() - started < 1.0      # it used to wait forever for the search
    assert chess.Move.from_uci(bestmove(exchange(session, "stop"))) in chess.Board(
        MIDDLEGAME.split(" ", 2)[2]).legal_moves


def test_a_deep_go_depth_can_be_stopped():
    """``go depth 40`` without a clock used to block the protocol until the search ended."""
    uci = Uci("--evaluator", "material")
    try:
        uci.send(f"uci\nisready\n{MIDDLEGAME}\ngo depth 40\n".encode())
        uci.until("info depth 2")
        sent = uci.send(b"isready\n")
        uci.until("readyok")
        uci.send(b"stop\n")
        lines, arrived = uci.until("bestmove")
        assert arrived - sent < 5.0
        assert chess.Move.from_uci(lines[-1].split()[1]) in chess.Board(MIDDLEGAME.split(" ", 2)[2]).legal_moves
    finally:
        assert uci.close() == 0


# -- issue 51: stop, isready, quit and the end of input answered at once in every state -------------------------
ANSWER_BOUND = 2.0
"""Seconds from ``stop`` (or ``quit``, or the end of input) to ``bestmove`` that fail no machine: the answer
comes within :data:`~knights.frontends.uci.STOP_GRACE` (50 ms) plus the pipes; before, 6 s for ``go movetime 8000`` and
never for the huge values."""
STOP_STATES = ["go movetime 8000", "go wtime 240000 btime 240000 winc 2000 binc 2000",
               "go wtime 9223372036854775808 btime 9223372036854775808 movestogo 1",
               "go movetime 9223372036854775807", "go infinite", "go ponder wtime 60000 btime 60000", "go depth 60",
               "go nodes 99999999999"]


def _legal(line: str, board: chess.Board) -> bool:
    return line.startswith("bestmove ") and chess.Move.from_uci(line.split()[1]) in board.legal_moves


@pytest.mark.slow
@pytest.mark.clock
def test_stop_isready_and_quit_are_answered_at_once_in_every_state():
    """The issue's probe through the real command: after each ``go`` has finished an iteration,
    ``isready`` is answered ``readyok`` and ``stop`` with a legal ``bestmove`` within
    :data:`ANSWER_BOUND`; then ``quit`` during a search answers it and ends the process."""
    board = chess.Board(MIDDLEGAME.split(" ", 2)[2])
    uci = Uci("--evaluator", "material")
    try:
        uci.send(b"uci\nisready\n")
        uci.until("readyok")
        for go in STOP_STATES:
            uci.send(f"{MIDDLEGAME}\n{go}\n".encode())
            uci.until("info depth 1 ")
            sent = uci.send(b"isready\n")
            _, arrived = uci.until("readyok", timeout=ANSWER_BOUND)
            assert arrived - sent < ANSWER_BOUND, go
            sent = uci.send(b"stop\n")
            lines, arrived = uci.until("bestmove", timeout=ANSWER_BOUND)
            assert arrived - sent < ANSWER_BOUND and _legal(lines[-1], board), (go, lines)
        uci.send(f"{MIDDLEGAME}\ngo movetime 9223372036854775807\n".encode())
        uci.until("info depth 1 ")
        sent = uci.send(b"quit\n")
        lines, arrived = uci.until("bestmove", timeout=ANSWER_BOUND)
        assert _legal(lines[-1], board)
        assert uci.proc.wait(timeout=30) == 0
    finally:
        uci.close()


@pytest.mark.slow
@pytest.mark.clock
def test_the_end_of_input_and_a_stop_before_the_model_loads_are_answered_at_once():
    """``stop`` while the model still loads (a ``go`` before ``isready``) is answered with the quick
    move; the end of input during a search is taken as ``quit``, as Stockfish takes it: the search
    answers at once and the process ends (it used to wait for the whole budget: never, for a huge
    clock)."""
    board = chess.Board(MIDDLEGAME.split(" ", 2)[2])
    uci = Uci()
    try:
        uci.send(b"uci\n")
        uci.until("uciok")
        uci.send(f"{MIDDLEGAME}\ngo movetime 9223372036854775807\n".encode())
        sent = uci.send(b"stop\n")
        lines, arrived = uci.until("bestmove", timeout=ANSWER_BOUND)
        assert arrived - sent < ANSWER_BOUND and _legal(lines[-1], board), lines
        uci.send(b"isready\n")
        uci.until("readyok")
        uci.send(f"{MIDDLEGAME}\ngo wtime 9223372036854775808 btime 9223372036854775808 movestogo 1\n".encode())
        uci.until("info depth 1 ")
        assert uci.proc.stdin is not None
        uci.proc.stdin.close()
        sent = time.perf_counter()
        lines, arrived = uci.until("bestmove", timeout=ANSWER_BOUND)
        assert _legal(lines[-1], board), lines
        assert uci.proc.wait(timeout=30) == 0
    finally:
        if uci.proc.poll() is None:
            uci.proc.kill()
            uci.proc.wait()


@pytest.mark.parametrize("go", ["go movetime 9223372036854775807", "go infinite", "go depth 60"])
def test_a_piped_search_is_answered_at_the_end_of_input(go):
    """``printf '...go movetime 9223372036854775807\\n' | knights uci`` ran until killed; now the end of
    input stops the search and it answers, legal, as Stockfish's does."""
    out = subprocess.run([sys.executable, "-m", "knights.cli", "uci", "--evaluator", "material"],
                         input=f"uci\nisready\nposition startpos\n{go}\n", capture_output=True, text=True,
                         timeout=120, cwd=str(REPO), check=True).stdout.splitlines()
    (best,) = [line for line in out if line.startswith("bestmove ")]
    assert chess.Move.from_uci(best.split()[1]) in chess.Board().legal_moves
