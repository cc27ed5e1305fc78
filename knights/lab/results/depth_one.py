"""An evaluator searched one ply, as Stockfish at depth 1 is: ``EL/v25+quiesce depth 1``.

The results tables set every evaluator beside Stockfish at depth 1. That yardstick is not a static
evaluation: Stockfish at depth 1 plays every legal move, follows the captures after each (its
quiescence search) and reports the best line's value. A network judged where the captures end
(``EL/v25+quiesce``, :mod:`knights.engine.judged`) does the second half of that and not the
first. :class:`DepthOneEvaluator` adds the first: the value of a position is the value of its
best child, each child judged by the inner evaluator, with checkmates, stalemates and the draws
the rules give scored by the rules. That is exactly the verdict the one-ply bot
(:class:`~knights.engine.one_ply.OnePlyEngine`, stochastic opening off) forms when it chooses its move,
so this row of the tables also says how well the one-ply bot judges the position it is in.

A position with no legal moves is scored by the rules (mated: lost; stalemate: level); a mate
(the child checkmates, or the opponent mates at once after every move) reads ``mate_pawns``, as
the labels read one. This is a search, so ``knights results`` lists it as its own kind
(``search``) beside the static evaluators, and never as the set's best evaluator.

    >>> import chess
    >>> from knights.evaluate.base import MaterialEvaluator
    >>> ev = DepthOneEvaluator(MaterialEvaluator())
    >>> ev.name
    'material depth 1'
    >>> ev.evaluate_boards([chess.Board("4k3/8/8/8/8/8/3q4/R3K3 w - - 0 1"),    # Kxd2 wins the queen back
    ...                     chess.Board("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1"),      # Black is mated: won for White
    ...                     chess.Board("6k1/5ppp/8/8/8/8/8/R3K3 w - - 0 1")])  # Ra8 mates
    array([ 5., 10., 10.], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Sequence

import chess
import numpy as np

from knights.board.arrays import boards_from_arrays
from knights.board.positions import Positions
from knights.data.csslab import MATE_PAWNS
from knights.engine import build as bot_build
from knights.engine.constants import MATE_SCORE
from knights.engine.judged import JudgedDemocracy, QuiescenceEvaluator
from knights.engine.one_ply import OnePlyEngine
from knights.evaluate.base import Evaluator
from knights.evaluate.names import QUIESCE_SUFFIX, SPARSE_NAME
from knights.learn import registry

SUFFIX = " depth 1"
"""What the name of an evaluator searched one ply ends with."""


class DepthOneEvaluator:
    """``inner``'s value of each position's best child (pawns, White's side): the one-ply engine's own verdict.
    ``mate_pawns``: what a mate reads (default: the labels' mate value)."""

    def __init__(self, inner: Evaluator, *, mate_pawns: float = MATE_PAWNS) -> None:
        self.inner = inner
        self.name = f"{inner.name}{SUFFIX}"
        self.mate_pawns = float(mate_pawns)
        self.engine = OnePlyEngine(inner, stochastic=False)

    def value(self, board: chess.Board) -> float:
        """The value of ``board``, pawns from White's side."""
        if not any(board.generate_legal_moves()):
            return (-self.mate_pawns if board.turn == chess.WHITE else self.mate_pawns) if board.is_check() else 0.0
        score = self.engine.choose(board).score
        if abs(score) >= MATE_SCORE:
            return float(np.sign(score)) * self.mate_pawns
        return float(score)

    def evaluate_boards(self, boards: Sequence[chess.Board]) -> np.ndarray:
        return np.array([self.value(b) for b in boards], np.float32)

    def evaluate(self, positions: Positions) -> np.ndarray:
        """The rows' values; a data set's rows carry their castling rights and en-passant square, and are searched
        with them."""
        return self.evaluate_boards(boards_from_arrays(positions.squares, positions.white,
                                                       getattr(positions, "castling", None),
                                                       getattr(positions, "ep", None)))


def judged_evaluators() -> list[tuple[str, QuiescenceEvaluator | JudgedDemocracy | DepthOneEvaluator]]:
    """What ``knights results`` measures beside the evaluators of :mod:`knights.evaluate`, as (kind, evaluator):
    the two newest trained networks of :data:`~knights.learn.registry.FAST_NETWORKS` judged where the captures end
    (two, so that a newest version that did not improve on its parent, as EL/v26 on EL/v25, does not hide the
    parent's row), and ``sparse+quiesce`` when its members are trained; a mate read as the labels read one. Then
    each of them searched one ply (:class:`~knights.lab.results.depth_one.DepthOneEvaluator`, kind ``search``), as
    Stockfish at depth 1, the tables' yardstick, is searched."""
    trained = [name for name in registry.FAST_NETWORKS if registry.get(name).is_trained()]
    judged: list[tuple[str, QuiescenceEvaluator | JudgedDemocracy | DepthOneEvaluator]] = [
        ("network", QuiescenceEvaluator(name, mate_pawns=MATE_PAWNS)) for name in trained[-2:]]
    if f"{SPARSE_NAME}{QUIESCE_SUFFIX}" in bot_build.judged_names(trained):   # the one rule of when it is offered
        judged.append(("democracy", JudgedDemocracy(mate_pawns=MATE_PAWNS)))
    return judged + [("search", DepthOneEvaluator(ev, mate_pawns=MATE_PAWNS)) for _, ev in judged]
