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
(:mod:`knights.engine.incremental`).

With ``king_zones`` (:class:`SparseSpec`), each piece is also a second feature: the same
768, once more for each zone the perspective's own king can stand in (:data:`KING_ZONE`:
where it castled, whether it has stepped up), so the network can value a piece by where
its own king is, as Stockfish's king-relative features do, coarsely. The plain feature
stays (a *factorised* input): what holds wherever the king stands is learned once, from
every row, and each zone's columns learn only the difference. A move of the king into
another zone changes all of that side's features; any other move still changes a few.

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
from typing import TYPE_CHECKING

import numpy as np

from knights.board.positions import Positions

if TYPE_CHECKING:        # torch is imported where tensors are made, so the compiled search reads KING_ZONE without it
    import torch

N_FEATURES = 768
"""Features per perspective: 2 owners x 6 piece types x 64 squares."""
PAD = N_FEATURES
"""The index that fills a list up to :data:`MAX_PIECES`: a feature no piece has (weight zero).
A list with the king's zones is filled with :attr:`SparseSpec.n_features` instead."""
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


def _king_zones() -> np.ndarray:
    """``KING_ZONE[square]``, the square seen from the king's own side (a8 = 0 ... h1 = 63 for
    White; ranks flipped for Black): on the back rank, queenside (a-c), in the centre (d-e) or
    kingside (f-h) (0-2); the same on the second rank (3-5); on the third or fourth rank (6);
    further up (7). Mirroring the files swaps queenside and kingside and keeps the rest."""
    zone = np.empty(64, dtype=np.int64)
    for sq in range(64):
        rank, file = 7 - sq // 8, sq % 8            # rank 0 = the own back rank
        side = 0 if file <= 2 else 1 if file <= 4 else 2
        zone[sq] = side if rank == 0 else 3 + side if rank == 1 else 6 if rank <= 3 else 7
    return zone


KING_ZONE = _king_zones()
N_KING_ZONES = 8


def zoned(view: np.ndarray, king_square: np.ndarray, pad: int) -> np.ndarray:
    """Plain feature lists ``view`` (N, 32) of one perspective, whose own king stands on
    ``king_square`` (N,) as that perspective sees it, with each piece's zoned feature added:
    (N, 64), the plain features then the zoned ones, padded with ``pad``."""
    empty = view == PAD
    offset = N_FEATURES * (1 + KING_ZONE[king_square])[:, None]
    return np.concatenate([np.where(empty, pad, view), np.where(empty, pad, view + offset)], axis=1)


@dataclass(frozen=True)
class SparseSpec:
    """The inputs of EL V13: each position as the feature lists of the side to move
    and of the other side, and who is to move (to turn the network's verdict, which is
    from the mover's side, into White's). Used as a version's ``INPUTS``, like
    :class:`knights.features.inputs.InputSpec`. ``king_zones``: also each piece's
    feature in its own king's zone (:func:`zoned`; 768 x 9 features, 64 per list)."""

    king_zones: bool = False

    @property
    def n_features(self) -> int:
        """Features per perspective (the padding index)."""
        return N_FEATURES * (1 + N_KING_ZONES) if self.king_zones else N_FEATURES

    def encode(self, pos: Positions) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(mover's features (N, 32), the other side's (N, 32), white to move (N,))``
        (64 a list with ``king_zones``)."""
        white_view, black_view = view_features(pos.squares)
        if self.king_zones:
            squares = np.asarray(pos.squares)
            if len(squares) and not ((squares == 6).any(axis=1) & (squares == -6).any(axis=1)).all():
                raise ValueError("a position without both kings has no king's zone")
            white_king = np.argmax(squares == 6, axis=1)
            black_king = np.argmax(squares == -6, axis=1) ^ 56
            white_view = zoned(white_view, white_king, self.n_features)
            black_view = zoned(black_view, black_king, self.n_features)
        white = np.asarray(pos.white, dtype=bool)
        stm = np.where(white[:, None], white_view, black_view)
        other = np.where(white[:, None], black_view, white_view)
        return stm, other, white.astype(np.int8)

    def tensors(self, pos: Positions, device: torch.device | str = "cpu") -> tuple[torch.Tensor, ...]:
        import torch

        stm, other, white = self.encode(pos)
        return (torch.from_numpy(stm.astype(np.int64)).to(device, non_blocking=True),
                torch.from_numpy(other.astype(np.int64)).to(device, non_blocking=True),
                torch.from_numpy(white).to(device, non_blocking=True))

    def describe(self) -> dict[str, object]:
        if self.king_zones:
            return {"sparse": "768 piece-square features from each side, and again for each of the own king's "
                              "8 zones (knights.features.sparse)"}
        return {"sparse": "768 piece-square features from each side (knights.features.sparse)"}
