"""Sparse piece-square features, seen from each side: the inputs of an efficiently updatable network.

A position is the set of its pieces. Seen from one side (the *perspective*), each piece
is one of 768 features: whether it is the perspective's own piece or the opponent's,
its type, and its square, with the board flipped top to bottom when the perspective
is Black (so "my pawn on my second rank" is the same feature for both sides)::

    index = 384 * (piece is the opponent's) + 64 * (type - 1) + square
    square: a8 = 0 ... h1 = 63 as seen by White; XOR 56 (ranks flipped) for Black

At most 32 pieces stand on a board, so a position is two short lists of indices, one
per perspective, padded with :data:`PAD`. A network sums one learned column per
listed feature (:class:`knights.learn.nnue.SparseNet`); a move changes two to four
features, which is what makes the sum cheap to update during a search
(:mod:`knights.play.incremental`).

>>> import chess
>>> from knights.board.positions import positions_from_boards
>>> stm, other, white = SparseSpec().encode(positions_from_boards([chess.Board()]))
>>> int((stm[0] != PAD).sum()), int(white[0])
(32, 1)
>>> sorted(stm[0])[:2] == sorted(other[0])[:2]     # the start position looks the same from both sides
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from knights.board.positions import Positions

N_FEATURES = 768
"""Features per perspective: 2 owners x 6 piece types x 64 squares."""
PAD = N_FEATURES
"""The index that fills a list up to :data:`MAX_PIECES`: a feature no piece has (weight zero)."""
MAX_PIECES = 32


def feature_index(code: int, square: int, white_view: bool) -> int:
    """The feature of the piece ``code`` (signed: P=1 ... K=6, negative for Black) on
    ``square`` (a8 = 0 ... h1 = 63) seen from White (``white_view``) or from Black."""
    own = (code > 0) == white_view
    sq = square if white_view else square ^ 56
    return (0 if own else 384) + 64 * (abs(code) - 1) + sq


def _white_table() -> np.ndarray:
    """``table[code + 6, square]``: the feature of every piece on every square seen from
    White (PAD for an empty square)."""
    table = np.full((13, 64), PAD, dtype=np.int16)
    for code in range(-6, 7):
        if code:
            for sq in range(64):
                table[code + 6, sq] = feature_index(code, sq, True)
    return table


WHITE_TABLE = _white_table()


def view_features(squares: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The padded feature lists of positions ``squares`` (N, 64) from White's and from
    Black's view: two int16 arrays (N, 32), pieces first (in board order), then :data:`PAD`.

    White's list is looked up in :data:`WHITE_TABLE`; Black's follows from it by arithmetic,
    as the same piece seen from the other side is the other owner (``+ 384 mod 768``) on the
    square with its rank flipped (``XOR 56``: the square is the index's low six bits)."""
    sq = np.asarray(squares)
    occupied = sq != 0
    counts = occupied.sum(axis=1)
    if len(sq) and counts.max() > MAX_PIECES:
        raise ValueError(f"a position has more than {MAX_PIECES} pieces")
    flat = np.flatnonzero(occupied)                     # every piece, row by row, in board order
    row = flat >> 6
    first = np.zeros(len(sq) + 1, dtype=np.int64)
    np.cumsum(counts, out=first[1:])
    slot = np.arange(len(flat)) - first[row]            # its place in its row's list
    codes = sq.ravel()[flat].astype(np.intp) + 6
    white_view = np.full((len(sq), MAX_PIECES), PAD, dtype=np.int16)
    white_view.ravel()[row * MAX_PIECES + slot] = WHITE_TABLE.ravel()[codes * 64 + (flat & 63)]
    black_view = ((white_view + 384) % N_FEATURES) ^ 56
    black_view[white_view == PAD] = PAD
    return white_view, black_view


@dataclass(frozen=True)
class SparseSpec:
    """The inputs of EL V13: each position as the feature lists of the side to move
    and of the other side, and who is to move (to turn the network's verdict, which is
    from the mover's side, into White's). Used as a version's ``INPUTS``, like
    :class:`knights.features.inputs.InputSpec`."""

    def encode(self, pos: Positions) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(mover's features (N, 32), the other side's (N, 32), white to move (N,))``."""
        white_view, black_view = view_features(pos.squares)
        white = np.asarray(pos.white, dtype=bool)
        stm = np.where(white[:, None], white_view, black_view)
        other = np.where(white[:, None], black_view, white_view)
        return stm, other, white.astype(np.int8)

    def tensors(self, pos: Positions, device: torch.device | str = "cpu") -> tuple[torch.Tensor, ...]:
        stm, other, white = self.encode(pos)
        return (torch.from_numpy(stm.astype(np.int64)).to(device, non_blocking=True),
                torch.from_numpy(other.astype(np.int64)).to(device, non_blocking=True),
                torch.from_numpy(white).to(device, non_blocking=True))

    def describe(self) -> dict[str, object]:
        return {"sparse": "768 piece-square features from each side (knights.features.sparse)"}
