"""FEN strings to arrays: every encoding a model version uses, vectorised.

Everything starts from one compact form, the **signed squares** array: ``int8``
of shape ``(N, 64)``, square 0 = a8 ... 63 = h1 (row 0 is rank 8, as FEN reads),
holding the piece code (P=1 N=2 B=3 R=4 Q=5 K=6), positive for White, negative for
Black, 0 for empty. It is what the encoded cache stores; every encoding below is a
cheap NumPy function of it:

======================  ================  ======================================
encoding                shape             used by
======================  ================  ======================================
:func:`signed_plane`    (N, 1, 8, 8)      EL V1-V3 (one plane of signed codes)
:func:`six_planes`      (N, 6, 8, 8)      EL V4 on, classical learners
:func:`piece_counts`    (N, 10)           EL V8, classical learners
:func:`flat_features`   (N, 394)          classical learners (planes + counts)
======================  ================  ======================================

Parsing does not build a python-chess ``Board`` per row: the piece-placement field
is expanded with ``str.translate`` and decoded for the whole batch at once.

>>> sq, white, ok = parse_fens(["rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"])
>>> sq[0, :8].tolist(), bool(white[0]), bool(ok[0])
([-4, -2, -3, -5, -6, -3, -2, -4], False, True)
"""

from __future__ import annotations

from typing import Literal, Sequence

import numpy as np

PIECE_CODES = {"P": 1, "N": 2, "B": 3, "R": 4, "Q": 5, "K": 6}
START_COUNTS = np.array([8, 2, 2, 2, 1], dtype=np.float32)
"""Starting counts of P N B R Q."""
PIECE_VALUES = np.array([1.0, 3.0, 3.1, 5.0, 9.0], dtype=np.float32)
"""Values of P N B R Q in pawns, as the original weighed its piece counts."""

_EXPAND = str.maketrans({str(n): "." * n for n in range(1, 9)})
_ROW_LEN = 71  # 64 squares + 7 slashes
_SLASHES = np.arange(8, _ROW_LEN, 9)
_SQUARE_COLS = np.setdiff1d(np.arange(_ROW_LEN), _SLASHES)
_INVALID = np.int8(127)
_LUT = np.full(256, _INVALID, dtype=np.int8)
_LUT[ord(".")] = 0
for _ch, _code in PIECE_CODES.items():
    _LUT[ord(_ch)] = _code
    _LUT[ord(_ch.lower())] = -_code
_BAD_ROW = "?" * _ROW_LEN


def parse_fens(fens: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Decode FENs into ``(squares int8 (N,64), white_to_move bool (N,), valid bool (N,))``.

    A FEN is *valid* here when its placement has 8 ranks of 8 squares made of piece
    letters and digits, exactly one king per side, no pawn on the first or last
    rank, and its side-to-move field is ``w`` or ``b``. Rows that fail get zeros
    and ``valid=False``: callers skip and count them.
    """
    n = len(fens)
    expanded = []
    white = np.zeros(n, dtype=bool)
    side_ok = np.zeros(n, dtype=bool)
    for i, fen in enumerate(fens):
        placement, _, rest = fen.strip().partition(" ")
        row = placement.translate(_EXPAND)
        expanded.append(row if len(row) == _ROW_LEN else _BAD_ROW)
        side = rest[:1]
        white[i] = side == "w"
        side_ok[i] = (side == "w" or side == "b") and (len(rest) == 1 or rest[1:2] == " ")
    if n == 0:
        return np.zeros((0, 64), np.int8), white, side_ok
    raw = np.frombuffer("".join(expanded).encode("ascii", errors="replace"), dtype=np.uint8)
    raw = raw.reshape(n, _ROW_LEN)
    squares = _LUT[raw[:, _SQUARE_COLS]]
    valid = side_ok & (raw[:, _SLASHES] == ord("/")).all(axis=1) & (squares != _INVALID).all(axis=1)
    valid &= ((squares == 6).sum(axis=1) == 1) & ((squares == -6).sum(axis=1) == 1)
    edge_pawns = np.abs(squares[:, :8]) == 1
    edge_pawns |= np.abs(squares[:, 56:]) == 1
    valid &= ~edge_pawns.any(axis=1)
    squares[~valid] = 0
    return squares, white & valid, valid


def squares_from_board(board: "chess.Board") -> np.ndarray:
    """The signed squares (64,) of a python-chess board, without going through FEN."""
    out = np.zeros(64, dtype=np.int8)
    for square, piece in board.piece_map().items():
        # python-chess squares count from a1; ours from a8
        idx = (7 - (square >> 3)) * 8 + (square & 7)
        out[idx] = piece.piece_type if piece.color else -piece.piece_type
    return out


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
    hit = np.abs(sq) == kinds
    sign = np.sign(sq).astype(np.float32)
    scale = 1.0 if values == "ones" else kinds.astype(np.float32)
    return (hit * sign * scale).reshape(-1, 6, 8, 8).astype(np.float32, copy=False)


def piece_counts(squares: np.ndarray) -> np.ndarray:
    """Ten material features: White P N B R Q then Black P N B R Q, each
    ``count / starting count x value``, negative for Black. ``(N, 10)`` float32."""
    kinds = np.arange(1, 6, dtype=np.int8).reshape(1, 5, 1)
    sq = squares.reshape(-1, 1, 64)
    white = (sq == kinds).sum(axis=2).astype(np.float32)
    black = (sq == -kinds).sum(axis=2).astype(np.float32)
    weight = PIECE_VALUES / START_COUNTS
    return np.concatenate([white * weight, -black * weight], axis=1)


def flat_features(squares: np.ndarray) -> np.ndarray:
    """The classical learners' input: flattened six planes (+-1) and the ten piece
    counts, ``(N, 394)`` float32."""
    n = squares.shape[0]
    return np.concatenate([six_planes(squares).reshape(n, 384), piece_counts(squares)], axis=1)


def material_balance(squares: np.ndarray) -> np.ndarray:
    """Material from White's side in pawns (P=1 N=3 B=3 R=5 Q=9): the counting
    baseline every model is compared with. ``(N,)`` float32."""
    values = np.array([0, 1, 3, 3, 5, 9, 0], dtype=np.float32)
    return (np.sign(squares) * values[np.abs(squares)]).sum(axis=1).astype(np.float32)
