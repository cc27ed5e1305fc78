"""Time management for the front ends (``knights uci``, lichess-bot's homemade engine): how long one ``go`` may
take, and a move in no time.

:func:`move_budget` turns ``go``'s ``movetime`` or ``wtime/btime/winc/binc/movestogo`` into
the seconds this move may take, and :func:`search_deadlines` into the soft and hard deadlines
of a search (no new iteration after the soft one, a stop at the hard one, answering
with the best move of the last finished iteration). The first, one-ply iteration cannot be
shortened: when the budget is less than it costs (a few to a few dozen milliseconds; more
while the model is still loading), or it runs past the budget, the front end answers with
:func:`quick_move`: a static one-ply material choice in pure python-chess (no model, no
torch), well under a millisecond.

Pure python-chess (and the piece values of :mod:`knights.board.pieces`) on purpose:
``knights uci`` answers ``uci`` before torch is imported.

>>> budget = move_budget(GoLimits(movetime=100), chess.WHITE)
>>> 0.07 <= budget < 0.1
True
>>> move_budget(GoLimits(), chess.WHITE) is None   # depth, nodes, infinite: no clock
True
>>> quick_move(chess.Board("4k3/8/8/3q4/4P3/8/8/4K3 w - - 0 1")).uci()
'e4d5'
"""

from __future__ import annotations

import statistics
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import chess

from knights.board.pieces import PAWNS, capture_gain

MOVETIME_MARGIN = 0.2       # keep 20% of movetime (10 ms to 100 ms) for reading, answering, the pipes
MOVETIME_MARGIN_MIN = 0.01
MOVETIME_MARGIN_MAX = 0.1
DEFAULT_MOVES_TO_GO = 30    # sudden death: plan as if 30 more moves were to come
CLOCK_RESERVE = 0.02        # never plan to leave less than this (or half the clock) on our clock
INCREMENT_SHARE = 0.8       # the part of the increment a move may spend
MOVE_OVERHEAD = 0.02
"""Seconds a move costs on the GUI's clock beyond our own budget (reading ``go``, the answer's
trip through the pipes, a busy machine), reserved for every move still to come; the UCI
option ``Move Overhead`` (milliseconds, Stockfish's name) sets it. Without it, a long game on
a short clock loses on time by a few milliseconds a move: 26 of 125 games at 3 s + 0 under a
load of 10-16, every one late in a game of 86 to 169 plies (``knights soak``)."""
SOFT_SHARE = 0.5           # a search starts no new iteration after half its time (one rarely finishes)
MOVETIME_SOFT_SHARE = 0.6  # at a fixed time a move of its own (SearchLimits.movetime): no new iteration after 60%
HARD_SHARE = 0.1           # and stops for good this share of its time (10 ms at least) before the end
HARD_MIN = 0.01
MAX_MOVE_SECONDS = 24 * 3600.0
"""The longest a move may take, whatever ``go`` says (``movetime 9223372036854775807``, a huge
``wtime``): beyond it, waits overflow the operating system's timers."""
MAX_GO_MS = 2**53
"""``go`` numbers are clamped to this (milliseconds, nodes): Python's ints are unbounded, floats are not."""
ONE_PLY_FLOOR = 0.03
"""Seconds the one-ply decision may always take on a clock (``wtime``/``btime``) that allows
less, when it is measured to cost no more: a GUI keeps a margin for the answer to travel
(lichess-bot keeps 1 s, its ``move_overhead``, and sends the clock less that margin, 0 below
it), so the network's one-ply move fits where a deeper search does not, and the material
quick move is only for a one-ply decision slower than this (still loading, a busy machine)."""
@dataclass(frozen=True)
class GoLimits:
    """The time limits of one ``go`` (milliseconds, as UCI sends them); ``None``: not given."""

    wtime: int | None = None
    btime: int | None = None
    winc: int | None = None
    binc: int | None = None
    movestogo: int | None = None
    movetime: int | None = None


def move_budget(limits: GoLimits, turn: chess.Color, overhead: float = 0.0) -> float | None:
    """The seconds this move may take from the moment ``go`` is read; ``None``: no limit
    (``depth``, ``nodes``, ``infinite``: the search's own limits apply).

    ``movetime`` less a margin; a clock: its share of the time left (``movestogo`` moves,
    default :data:`DEFAULT_MOVES_TO_GO`) plus most of the increment, never more than half
    the time left less :data:`CLOCK_RESERVE`; ``overhead`` (seconds, e.g.
    :data:`MOVE_OVERHEAD`) comes off the share of a clock, as every move to come costs it too
    (lichess-bot keeps its own ``move_overhead`` and sends the clock less it, so its homemade
    route passes 0). A negative or zero clock gives ``0.0``: answer at once; no move takes
    more than :data:`MAX_MOVE_SECONDS`.

    >>> three = GoLimits(wtime=3000)
    >>> round(move_budget(three, chess.WHITE), 3), round(move_budget(three, chess.WHITE, 0.02), 3)
    (0.1, 0.08)
    >>> move_budget(GoLimits(wtime=500), chess.WHITE, 0.02)    # 500 ms for 30 moves of 20 ms overhead: none left
    0.0

    >>> move_budget(GoLimits(movetime=9223372036854775807), chess.WHITE) == MAX_MOVE_SECONDS
    True
    """
    caps: list[float] = []
    if limits.movetime is not None:
        movetime = max(0, limits.movetime) / 1000
        margin = min(max(movetime * MOVETIME_MARGIN, MOVETIME_MARGIN_MIN), MOVETIME_MARGIN_MAX)
        caps.append(max(0.0, movetime - margin))
    left_ms = limits.wtime if turn == chess.WHITE else limits.btime
    if left_ms is not None:
        left = max(0, left_ms) / 1000
        inc = max(0, (limits.winc if turn == chess.WHITE else limits.binc) or 0) / 1000
        moves = limits.movestogo if limits.movestogo and limits.movestogo > 0 else DEFAULT_MOVES_TO_GO
        overhead = max(0.0, overhead)
        share = left / moves + INCREMENT_SHARE * inc - overhead
        caps.append(max(0.0, min(share, left / 2 - CLOCK_RESERVE - overhead)))
    return min(*caps, MAX_MOVE_SECONDS) if caps else None


def search_deadlines(seconds: float, now: float | None = None) -> tuple[float, float]:
    """Soft and hard deadlines (``time.monotonic()`` seconds) of a search that must answer
    within ``seconds``: no new iteration after the soft one; a stop at the hard one, early
    enough for the answer to travel back (:data:`HARD_SHARE`, at least :data:`HARD_MIN`).

    >>> soft, hard = search_deadlines(1.0, now=0.0)
    >>> soft, hard
    (0.5, 0.9)
    """
    start = time.monotonic() if now is None else now
    hard = max(0.0, seconds - max(HARD_MIN, HARD_SHARE * seconds))
    return start + min(SOFT_SHARE * seconds, hard), start + hard


def quick_move(board: chess.Board, moves: Sequence[chess.Move] | None = None,
               previous: Sequence[chess.Move] = ()) -> chess.Move:
    """A legal move in well under a millisecond, for when no decision fits the clock: the
    best static material gain (what is captured or promoted, less the mover when the
    target square is attacked and the mover is worth more than what it takes); ties go to
    the order of ``previous`` (the last decision's candidates, best first), then to the
    first legal move. ``moves`` (``searchmoves``) restricts the candidates when any is legal."""
    legal = list(board.legal_moves)
    if not legal:
        raise ValueError(f"no legal moves in {board.fen()}")
    if moves:
        allowed = [m for m in legal if m in set(moves)]
        legal = allowed or legal
    rank = {m: i for i, m in enumerate(previous)}
    them = not board.turn

    def gain(move: chess.Move) -> tuple[float, int]:
        value = float(capture_gain(board, move))
        mover = move.promotion or board.piece_type_at(move.from_square) or chess.PAWN
        if board.is_attacked_by(them, move.to_square) and PAWNS[mover] > value:
            value -= PAWNS[mover]
        return value, -rank.get(move, len(rank))

    return max(legal, key=gain)


COST_WINDOW = 7
"""Decisions whose median is the cost estimate (:class:`DecisionCost`)."""


class DecisionCost:
    """What a one-ply decision costs, as a front end compares it with a move's budget: the median of the last
    :data:`COST_WINDOW` measured (:meth:`note`; the lower of the middle two when they are even), ``None`` before the
    first. One slow decision (the first call of a compiled function, a page fault, a busy machine) does not turn
    every later move into a quick one: a quick move measures nothing, so an estimate stuck on one slow decision
    would never come down. When most of the decisions in the window were slow, it moves: then the machine is slow
    (and, as quick moves measure nothing, it stays there for the game: what it measured last is all it knows).

    >>> cost = DecisionCost()
    >>> cost.seconds is None
    True
    >>> cost.note(0.02); cost.note(0.5)
    >>> cost.seconds
    0.02
    >>> cost.note(0.6); cost.seconds
    0.5
    """

    def __init__(self, window: int = COST_WINDOW) -> None:
        self._seen: deque[float] = deque(maxlen=window)
        self.seconds: float | None = None

    def note(self, seconds: float | None) -> None:
        """Count one measured decision (``None``: nothing measured)."""
        if seconds is not None:
            self._seen.append(float(seconds))
            self.seconds = statistics.median_low(self._seen)
