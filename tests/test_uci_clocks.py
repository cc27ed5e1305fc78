"""``knights uci`` on the clocks people play, through python-chess's UCI client as lichess-bot and GUIs
drive it: two engine processes with their defaults (the compiled search, the model loaded at
``isready``), each side's clock run by wall time around every ``play`` call (the GUI's view).

What the engine can promise depends on what a move costs beyond its own time: the pipes and the
client, its round trip. Every answer reports ``time`` (milliseconds since it read ``go``); the
client's wait less that is the round trip. While every round trip of a game stays within ``Move
Overhead`` (kept back for every move to come), the engine never loses on time and answers each
move within its share of the clock: asserted for each such game. A game whose round trip went
beyond it (a busy machine, where the engine's own answers come late too) is printed, not judged. Below
what a round trip costs (0.3 s a game: 120 moves of 2.5 ms) only legal moves, no error and each
answer within :data:`ANSWER_BOUND` of ``go`` are asserted.

A game at 1 + 0 or 3 + 0 takes two to six minutes, and reaches the clocks the shorter ones play
(a few seconds left) only after some sixty moves; those two play their opening moves here, whose
budgets are seconds long: each answered within its share of the clock. The shorter controls are
played in full. The python-chess logger's warnings are collected the whole time: an engine line
the client did not expect (``Unexpected engine output``), a line it could not parse, anything on
the engine's standard error.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.engine
import pytest

from knights.board.outcome import outcome
from knights.engine.clock import MOVE_OVERHEAD, GoLimits, move_budget

REPO = Path(__file__).resolve().parent.parent
ANSWER_BOUND = 0.25
"""Seconds from ``go`` to ``bestmove`` (the engine's own ``time``) that no move may exceed where the clock allows
none: the one-ply decision may take :data:`~knights.engine.clock.ONE_PLY_FLOOR`, the quick move well under a
millisecond."""
BUDGET_SLACK = 0.05
"""Seconds an answer may come after its budget ran out (the hard deadline is a tenth of the budget before it)."""


class Warnings(logging.Handler):
    """Every record of python-chess's ``chess.engine`` logger at WARNING or above."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append(record.getMessage())


def start_pair() -> list[chess.engine.SimpleEngine]:
    """Two ``knights uci`` processes with their defaults, loaded (``isready``)."""
    pair = [chess.engine.SimpleEngine.popen_uci([sys.executable, "-m", "knights.cli", "uci"], cwd=str(REPO),
                                                timeout=120) for _ in range(2)]
    for seed, engine in enumerate(pair):
        engine.configure({"Seed": 100 + seed})
        engine.ping()
    return pair


class Said(logging.Handler):
    """Every line python-chess read from an engine (its DEBUG records ``<engine>: >> line``)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if ": >> " in message:
            self.lines.append(message)


@pytest.fixture(scope="module")
def warnings() -> Iterator[Warnings]:
    """python-chess's warnings while the module's tests run."""
    from knights.engine.compiled_arrays import warm_up

    warm_up()    # numba's cache is written once here, not by two engine processes at once
    logger = logging.getLogger("chess.engine")
    handler = Warnings()
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)


@pytest.fixture(scope="module")
def engines(warnings: Warnings) -> Iterator[list[chess.engine.SimpleEngine]]:
    pair = start_pair()
    yield pair
    for engine in pair:
        engine.quit()


@dataclass
class Tally:
    """One game as the client saw it."""

    plies: int = 0
    illegal: int = 0
    errors: int = 0
    lost_on_time: bool = False
    least_left: float = float("inf")          # seconds, the lowest either clock fell
    worst_trip: float = 0.0                   # seconds, the longest wait beyond the engine's own time
    slowest: float = 0.0                      # seconds, the longest answer by the engine's own time
    late: list[tuple[int, float, float]] = field(default_factory=list)   # (ply, own time, budget) beyond it
    strings: list[str] = field(default_factory=list)                      # the info strings it saw


def clocked_game(white: chess.engine.SimpleEngine, black: chess.engine.SimpleEngine, base: float, inc: float, *,
                 max_plies: int, ponder: bool = False) -> Tally:
    """One game on a ``base`` + ``inc`` clock (seconds), ``max_plies`` at most; White ponders when asked. Each
    move's own ``time`` is held against its budget (:func:`~knights.engine.clock.move_budget` of the clock it was
    given, with the default ``Move Overhead``)."""
    board = chess.Board()
    clocks = {chess.WHITE: base, chess.BLACK: base}
    game = object()                        # a new game for python-chess: ucinewgame and isready first
    tally = Tally()
    while outcome(board) is None and len(board.move_stack) < max_plies:
        turn = board.turn
        engine = white if turn == chess.WHITE else black
        limit = chess.engine.Limit(white_clock=clocks[chess.WHITE], black_clock=clocks[chess.BLACK], white_inc=inc,
                                   black_inc=inc)
        ms = {color: round(clocks[color] * 1000) for color in clocks}
        budget = move_budget(GoLimits(wtime=ms[chess.WHITE], btime=ms[chess.BLACK], winc=round(inc * 1000),
                                      binc=round(inc * 1000)), turn, MOVE_OVERHEAD) or 0.0
        started = time.perf_counter()
        try:
            # a copy, as lichess-bot passes: python-chess keeps the board to tell a ponderhit later, and the game's own
            # board, moved on, made it take the next command for one (it sent no stop before an analysis)
            result = engine.play(board.copy(), limit, game=game, info=chess.engine.INFO_ALL,
                                 ponder=ponder and turn == chess.WHITE)
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError):
            tally.errors += 1
            break
        waited = time.perf_counter() - started
        own = float(result.info.get("time", waited))
        if "string" in result.info:
            tally.strings.append(result.info["string"])
        tally.worst_trip = max(tally.worst_trip, waited - own)
        tally.slowest = max(tally.slowest, own)
        if own > max(budget, ANSWER_BOUND) + BUDGET_SLACK:
            tally.late.append((len(board.move_stack), round(own, 3), round(budget, 3)))
        clocks[turn] -= waited
        tally.least_left = min(tally.least_left, clocks[turn])
        if clocks[turn] < 0:
            tally.lost_on_time = True
            break
        clocks[turn] += inc
        if result.move is None or result.move not in board.legal_moves:
            tally.illegal += 1
            break
        board.push(result.move)
        tally.plies += 1
    return tally


# (base s, increment s, games, plies at most): lichess's fastest, an engine-testing control, then bullet and blitz's
# opening moves (see the module's description)
CONTROLS = {"15s+0": (15.0, 0.0, 1, 160), "10s+0.1": (10.0, 0.1, 1, 160),
            "1+0": (60.0, 0.0, 1, 8), "3+0": (180.0, 0.0, 1, 4)}


@pytest.mark.slow
@pytest.mark.clock
@pytest.mark.parametrize("control", list(CONTROLS))
def test_no_loss_on_time_while_the_round_trip_stays_within_move_overhead(engines, warnings, control):
    base, inc, games, max_plies = CONTROLS[control]
    for g in range(games):
        tally = clocked_game(engines[g % 2], engines[1 - g % 2], base, inc, max_plies=max_plies)
        print(control, tally)
        assert tally.illegal == 0 and tally.errors == 0 and tally.plies >= 1, tally
        if tally.worst_trip <= MOVE_OVERHEAD:      # the engine's promise; beyond it the machine was too busy to judge
            assert not tally.lost_on_time and not tally.late, tally   # and each move within its share of the clock
    assert not warnings.seen, warnings.seen


@pytest.mark.slow
@pytest.mark.clock
def test_below_a_round_trip_every_move_is_legal_and_sent_at_once(engines, warnings):
    """0.3 s a game: 120 moves a side would leave 2.5 ms a move, less than a python-chess round trip on a
    busy machine, so the flag may fall whatever the engine does; what it promises is a legal move each
    time, sent within :data:`ANSWER_BOUND` of ``go`` (the quick move, or the one-ply decision)."""
    for g in range(2):
        tally = clocked_game(engines[g % 2], engines[1 - g % 2], 0.3, 0.0, max_plies=240)
        print("0.3s+0", tally)
        assert tally.illegal == 0 and tally.errors == 0 and tally.plies >= 1, tally
        assert tally.slowest <= ANSWER_BOUND, tally
    assert not warnings.seen, warnings.seen


def python_chess_match(pair: list[chess.engine.SimpleEngine], games: int, base: float, inc: float,
                       max_plies: int) -> list[Tally]:
    """``games`` games between the two engines as a client plays a match: each a new game (``ucinewgame``,
    ``isready``), White pondering (``go ponder``, then ``ponderhit`` or ``stop``), an analysis
    (``go infinite``, ``stop``) and a ``ping`` (``isready``) between games."""
    rows = []
    for g in range(games):
        rows.append(clocked_game(pair[g % 2], pair[1 - g % 2], base, inc, max_plies=max_plies, ponder=True))
        with pair[g % 2].analysis(chess.Board(), chess.engine.Limit(time=0.2)) as analysis:
            for _ in analysis:
                pass
        for engine in pair:
            engine.ping()
    return rows


@pytest.mark.slow
@pytest.mark.clock
def test_python_chess_sees_only_what_it_expects(warnings):
    """A client expects ``readyok`` alone after ``isready``, and only ``info`` lines and ``bestmove``
    during a search: the notice "KnightsKernels plays with ..." was sent while answering ``isready``,
    and on standard error, which python-chess logs as a warning: every game of the soak logged it. Now
    each engine says it once, in its first search's ``info string``."""
    logger = logging.getLogger("chess.engine")
    said = Said()
    level = logger.level
    logger.setLevel(logging.DEBUG)      # python-chess logs each line it reads at DEBUG
    logger.addHandler(said)
    try:
        pair = start_pair()
        try:
            rows = python_chess_match(pair, 2, 2.0, 0.05, 40)
        finally:
            for engine in pair:
                engine.quit()
    finally:
        logger.removeHandler(said)
        logger.setLevel(level)
    assert all(row.illegal == 0 and row.errors == 0 for row in rows), rows
    assert not warnings.seen, warnings.seen
    notices = [line for line in said.lines if "info string KnightsKernels plays with" in line]
    assert len(notices) == 2 and len({line.split(">:")[0] for line in notices}) == 2, notices   # once an engine
