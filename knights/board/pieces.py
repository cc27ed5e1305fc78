"""The project's one table of piece values, in pawns.

Everything that counts material (the material evaluator, the threat term, the
attack maps, the data generator's greedy player, the arena's material opponents
and adjudication) reads it from here::

    >>> import chess
    >>> PAWNS[chess.QUEEN], CENTIPAWNS[chess.ROOK]
    (9, 500)
    >>> PAWN_VALUES[[1, 2, 3, 6]].tolist()
    [1.0, 3.0, 3.0, 0.0]

Indexed by python-chess piece type (``chess.PAWN`` = 1 ... ``chess.KING`` = 6), which
is also the absolute value of a signed-squares code; index 0 (no piece) is 0. The king
is worth 0: it is never captured and material counts never include it.
"""

from __future__ import annotations

import chess
import numpy as np

PAWNS: tuple[int, ...] = (0, 1, 3, 3, 5, 9, 0)
"""Pawn values by piece type: none, P, N, B, R, Q, K."""

CENTIPAWNS: tuple[int, ...] = tuple(100 * v for v in PAWNS)
"""The same in centipawns (the arena's material opponents and adjudication)."""

PAWN_VALUES = np.array(PAWNS, dtype=np.float32)
"""The same as a float32 array, for indexing with ``abs(squares)``."""


def capture_gain(board: chess.Board, move: chess.Move) -> int:
    """Pawns ``move`` wins at once on ``board``: the piece it takes (a pawn for en
    passant) plus what a promotion adds; what may be lost back is not counted.

    >>> board = chess.Board("4k3/1P6/8/8/8/8/8/4K2r w - - 0 1")
    >>> capture_gain(board, chess.Move.from_uci("e1f1")), capture_gain(board, chess.Move.from_uci("b7b8q"))
    (0, 8)
    """
    gain = 0
    if board.is_en_passant(move):
        gain += PAWNS[chess.PAWN]
    else:
        gain += PAWNS[board.piece_type_at(move.to_square) or 0]
    if move.promotion:
        gain += PAWNS[move.promotion] - PAWNS[chess.PAWN]
    return gain
