"""One batch of positions as parallel arrays: what every evaluator is asked about.

The encoded training data (:class:`knights.data.chunks.Encoded`) is a
:class:`Positions` with labels and moves added, so a training batch and the
positions the engine asks about go through the same code.

>>> import chess
>>> batch = positions_from_boards([chess.Board()])
>>> len(batch), int(batch.white[0]), batch.squares[0, 60:].tolist()
(1, 1, [6, 3, 2, 4])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import chess
import numpy as np

from knights.board.arrays import squares_from_board


@dataclass
class Positions:
    """N positions as parallel arrays (a training batch is one, with labels added)."""

    squares: np.ndarray   # int8 (N, 64) signed piece codes, a8..h1 (knights.board.arrays)
    white: np.ndarray     # int8 (N,) 1 if White is to move
    check: np.ndarray     # int8 (N,) 1 if the side to move is in check
    capture: np.ndarray   # int8 (N,) 1 if the move played from here captures; 0 at play time

    def __len__(self) -> int:
        return len(self.white)


@dataclass
class PlayedPositions(Positions):
    """Positions a move has just reached (the one-ply engine's), with the en-passant square the move
    left (an evaluator that plays the captures out, ``+quiesce``, searches en passant too) and the castling
    rights it left (``sparse+quiesce`` asks its members' mirrored twins only where no side can castle)."""

    ep: np.ndarray        # int8 (N,) en-passant square (python-chess, a1 = 0), -1 if none
    castling: np.ndarray  # int8 (N,) castling rights K=1 Q=2 k=4 q=8, as the data's (knights.board.arrays)


CASTLING_BITS = ((chess.H1, 1), (chess.A1, 2), (chess.H8, 4), (chess.A8, 8))
"""Each castling right's rook square and its bit in the data's castling code (K=1 Q=2 k=4 q=8)."""
_LOST = np.zeros(64, np.int8)
for _sq, _bits in ((chess.E1, 3), (chess.H1, 1), (chess.A1, 2), (chess.E8, 12), (chess.H8, 4), (chess.A8, 8)):
    _LOST[_sq] = _bits


def castling_code(board: chess.Board) -> int:
    """``board``'s castling rights as the data (and the compiled board) code them: K=1 Q=2 k=4 q=8. The rights as
    they stand, which python-chess keeps clean as moves are made (a board whose rights name a king or rook not at
    home is not standard chess: the compiled board refuses it).

    >>> castling_code(chess.Board()), castling_code(chess.Board("4k2r/8/8/8/8/8/8/R3K3 w Qk - 0 1"))
    (15, 6)
    """
    return sum(bit for square, bit in CASTLING_BITS if board.castling_rights & chess.BB_SQUARES[square])


def castling_after(code: int, moves: Sequence[chess.Move]) -> np.ndarray:
    """The castling code left after each of ``moves`` from a position whose code is ``code``: a right is lost
    when its king or rook moves or its rook is taken (a move from or to e1, h1, a1, e8, h8 or a8), as
    python-chess cleans them.

    >>> moves = [chess.Move.from_uci(m) for m in ("e1g1", "h1h5", "b2a8")]
    >>> castling_after(15, moves).tolist()
    [12, 14, 7]
    """
    lost = np.array([_LOST[m.from_square] | _LOST[m.to_square] for m in moves], np.int8).reshape(-1)
    return (np.int8(code) & ~lost).astype(np.int8)


def positions_from_boards(boards: Sequence[chess.Board]) -> Positions:
    """The arrays of python-chess boards (nothing is known of a next move: ``capture`` is 0)."""
    n = len(boards)
    squares = np.zeros((n, 64), dtype=np.int8)
    white = np.zeros(n, dtype=np.int8)
    check = np.zeros(n, dtype=np.int8)
    for i, b in enumerate(boards):
        squares[i] = squares_from_board(b)
        white[i] = b.turn == chess.WHITE
        check[i] = b.is_check()
    return Positions(squares, white, check, np.zeros(n, dtype=np.int8))
