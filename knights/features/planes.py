"""Board planes and piece counts: the encodings the networks and the classical learners read.

Each is a cheap NumPy function of the signed squares (:mod:`knights.board.arrays`):

======================  ================  ======================================
encoding                shape             used by
======================  ================  ======================================
:func:`signed_plane`    (N, 1, 8, 8)      EL V1-V3 (one plane of signed codes)
:func:`six_planes`      (N, 6, 8, 8)      EL V4 on, classical learners
:func:`twelve_planes`   (N, 12, 8, 8)     EL V11, V12 (a plane per colour and piece)
:func:`piece_counts`    (N, 10)           EL V8, classical learners
:func:`flat_features`   (N, 394)          classical learners (planes + counts)
======================  ================  ======================================

>>> import numpy as np
>>> from knights.board.arrays import parse_fens
>>> squares, _, _ = parse_fens(["4k3/8/8/8/8/8/8/R3K3 w - - 0 1"])
>>> six_planes(squares).shape, piece_counts(squares)[0, 3]
((1, 6, 8, 8), np.float32(2.5))
"""

from __future__ import annotations

from typing import Literal

import numpy as np

START_COUNTS = np.array([8, 2, 2, 2, 1], dtype=np.float32)
"""How many pawns, knights, bishops, rooks and queens a side starts with."""

COUNT_WEIGHTS = np.array([1.0, 3.0, 3.1, 5.0, 9.0], dtype=np.float32)
"""The original's weights of the P N B R Q counts (its bishop is 3.1, a nudge above the
knight); a feature scale, not the project's table of piece values
(:data:`knights.board.pieces.PAWNS`)."""


def signed_plane(squares: np.ndarray) -> np.ndarray:
    """One 8x8 plane of signed piece codes: ``(N, 1, 8, 8)`` float32 (V1-V3)."""
    return squares.reshape(-1, 1, 8, 8).astype(np.float32)


def six_planes(squares: np.ndarray, values: Literal["ones", "codes"] = "ones") -> np.ndarray:
    """Six 8x8 planes, one per piece type P N B R Q K: ``(N, 6, 8, 8)`` float32.

    ``values="ones"`` writes +1 for a White piece and -1 for a Black one (the
    paper); ``values="codes"`` writes the signed piece code +-1..6 into its plane,
    as the original's shipped code did.
    """
    sq = squares.reshape(-1, 1, 64)
    kinds = np.arange(1, 7, dtype=np.int8).reshape(1, 6, 1)
    planes: np.ndarray = (np.abs(sq) == kinds) * (np.sign(sq) if values == "ones" else sq)   # int8: small temporaries
    return planes.astype(np.float32).reshape(-1, 6, 8, 8)


def twelve_planes(squares: np.ndarray) -> np.ndarray:
    """Twelve 0/1 planes, White P N B R Q K then Black P N B R Q K: ``(N, 12, 8, 8)``
    float32. The colours get planes of their own instead of a sign, so that a
    convolution's filters need not learn to tell +1 from -1.

    >>> twelve_planes(np.array([[1] + [0] * 62 + [-6]], np.int8)).sum(axis=(2, 3))[0].tolist()
    [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    """
    sq = squares.reshape(-1, 1, 64)
    codes = np.array([1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6], dtype=np.int8).reshape(1, 12, 1)
    planes: np.ndarray = (sq == codes).astype(np.float32)
    return planes.reshape(-1, 12, 8, 8)


def piece_counts(squares: np.ndarray) -> np.ndarray:
    """Ten material features: White P N B R Q then Black P N B R Q, each
    ``count / starting count x value``, negative for Black. ``(N, 10)`` float32."""
    n = squares.shape[0]
    # one histogram of the 13 square values (-6..6) per row
    index = squares.astype(np.int32) + (6 + 13 * np.arange(n, dtype=np.int32))[:, None]
    hist = np.bincount(index.ravel(), minlength=13 * n).reshape(n, 13).astype(np.float32)
    weight = COUNT_WEIGHTS / START_COUNTS
    return np.concatenate([hist[:, 7:12] * weight, -hist[:, 5:0:-1] * weight], axis=1)


def flat_features(squares: np.ndarray) -> np.ndarray:
    """The classical learners' input: flattened six planes (+-1) and the ten piece
    counts, ``(N, 394)`` float32."""
    n = squares.shape[0]
    return np.concatenate([six_planes(squares).reshape(n, 384), piece_counts(squares)], axis=1)
