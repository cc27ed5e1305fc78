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
    left: an evaluator that plays the captures out (``+quiesce``) searches en passant too."""

    ep: np.ndarray        # int8 (N,) en-passant square (python-chess, a1 = 0), -1 if none


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
