"""A static threat term: what the side to move can win at once by one capture.

A one-ply engine judges the positions after its own moves, where the *opponent* is
to move. A learned evaluation that errs by about a pawn does not reliably see that
the opponent can simply take a piece left hanging; this term says so explicitly.
For the side to move it is the best gain over its legal captures, where a capture
on a square the other side defends is assumed to lose the capturing piece back
(a one-step static exchange):

    gain(capture) = value(victim) - (value(attacker) if defended else 0)
    threat        = max(0, best gain)                  (pawns; P=1 N=3 B=3 R=5 Q=9)

:class:`ThreatAwareEvaluator` adds it to any evaluator, from White's side: plus when
White is to move, minus when Black is. It is part of the static evaluation; the
engine still looks one ply ahead and evaluates all children in one batched call.
"""

from __future__ import annotations

import chess
import numpy as np

from knights.board.arrays import boards_from_arrays
from knights.board.positions import Positions
from knights.evaluate.base import BoardsMixin, Evaluator

THREATS_SUFFIX = "+threats"
"""Appended to any evaluator name: the same evaluator plus the static capture-threat term."""

VALUES = {chess.PAWN: 1.0, chess.KNIGHT: 3.0, chess.BISHOP: 3.0, chess.ROOK: 5.0, chess.QUEEN: 9.0, chess.KING: 0.0}


def capture_threat(board: chess.Board) -> float:
    """Best immediate capture gain (pawns, >= 0) for the side to move."""
    best = 0.0
    them = not board.turn
    for move in board.generate_legal_captures():
        if board.is_en_passant(move):
            victim = 1.0
        else:
            victim = VALUES[board.piece_type_at(move.to_square)]
        attacker = VALUES[board.piece_type_at(move.from_square)]
        gain = victim - (attacker if board.is_attacked_by(them, move.to_square) else 0.0)
        if gain > best:
            best = gain
    return best


class ThreatAwareEvaluator(BoardsMixin):
    """``base`` plus ``weight`` x the side to move's capture threat (White's view)."""

    def __init__(self, base: Evaluator, weight: float = 1.0) -> None:
        self.base = base
        self.weight = weight
        self.name = f"{base.name}{THREATS_SUFFIX}"

    def evaluate(self, positions: Positions) -> np.ndarray:
        values = np.asarray(self.base.evaluate(positions), dtype=np.float32).copy()
        for i, board in enumerate(boards_from_arrays(positions.squares, positions.white)):
            threat = capture_threat(board)
            if threat:
                values[i] += self.weight * threat if board.turn else -self.weight * threat
        return values
