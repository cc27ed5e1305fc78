"""The positions after each legal move, as arrays, made for every move at once.

The engine (:mod:`knights.engine.one_ply`) scores the positions after each legal move;
:func:`expand` makes them, one row of signed squares per move, and says which
moves give check, capture, castle or take en passant:

>>> board = chess.Board("7k/8/6K1/8/8/8/8/R7 w - - 0 1")
>>> children = expand(board)              # one row per legal move, as signed squares
>>> children.squares.shape
(20, 64)
>>> [m.uci() for m, c in zip(children.moves, children.check) if c]   # the moves that give check
['a1a8', 'a1h1']

How ends of the game are found among them is :mod:`knights.engine.rules`.

How it stays fast
-----------------
* The children's signed-squares arrays are made by applying each move to the
  parent's array, all moves at once in NumPy (castling, en passant and promotion
  patched in afterwards), not by a python-chess ``Board`` per candidate.
* Check is detected on those arrays, vectorised: the opponent's king does not move,
  so its knight squares, pawn squares and eight rays are fixed for the whole batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import chess
import numpy as np

from knights.board.arrays import squares_from_board

_KNIGHT = ((-2, -1), (-2, 1), (-1, -2), (-1, 2), (1, -2), (1, 2), (2, -1), (2, 1))
_DIRECTIONS = ((-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))  # 4 orthogonal, 4 diagonal
_PAD = 64  # an extra, always empty column of the children array


def _on_board(r: int, c: int) -> bool:
    return 0 <= r < 8 and 0 <= c < 8


def _king_table(k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For a king on our square ``k`` (a8 = 0): knight squares, the squares of White
    and of Black pawns that would attack it, and its eight rays ``(8, 7)`` padded
    with the empty column."""
    r, c = divmod(k, 8)
    knights = np.array([(r + dr) * 8 + c + dc for dr, dc in _KNIGHT if _on_board(r + dr, c + dc)], np.intp)
    # White pawns move towards row 0, so a White pawn attacking (r, c) stands on row r + 1
    white_pawns = np.array([(r + 1) * 8 + c + dc for dc in (-1, 1) if _on_board(r + 1, c + dc)], np.intp)
    black_pawns = np.array([(r - 1) * 8 + c + dc for dc in (-1, 1) if _on_board(r - 1, c + dc)], np.intp)
    rays = np.full((8, 7), _PAD, np.intp)
    for d, (dr, dc) in enumerate(_DIRECTIONS):
        rr, cc, j = r + dr, c + dc, 0
        while _on_board(rr, cc):
            rays[d, j] = rr * 8 + cc
            rr, cc, j = rr + dr, cc + dc, j + 1
    return knights, white_pawns, black_pawns, rays


_KING_TABLES = [_king_table(k) for k in range(64)]
_RAY_OFFSETS = np.arange(0, 56, 7)


@dataclass
class Children:
    """The positions after ``moves`` (one row per move)."""

    moves: list[chess.Move]
    squares: np.ndarray   # int8 (n, 64) signed squares, a8 = 0
    check: np.ndarray     # bool (n,) the move gives check
    capture: np.ndarray   # bool (n,) the move captures (en passant included)
    zeroing: np.ndarray   # bool (n,) capture or pawn move (resets the fifty-move clock)
    castling: np.ndarray  # bool (n,)
    en_passant: np.ndarray  # bool (n,)
    ep: np.ndarray        # int8 (n,) the en-passant square a double pawn push leaves (python-chess, a1 = 0), else -1

    def __len__(self) -> int:
        return len(self.moves)


def expand(board: chess.Board, moves: Sequence[chess.Move] | None = None) -> Children:
    """Apply every move (legal in ``board``; all legal moves by default) to the
    board's signed squares array, vectorised. Equal, row for row, to
    ``squares_from_board`` of the board after ``push(move)``."""
    moves = list(board.legal_moves) if moves is None else list(moves)
    n = len(moves)
    sign = 1 if board.turn == chess.WHITE else -1
    parent = squares_from_board(board)
    kids = np.empty((n, 65), np.int8)
    kids[:, :64] = parent
    kids[:, _PAD] = 0
    if n == 0:
        empty = np.zeros(0, bool)
        return Children(moves, kids[:, :64], empty, empty, empty, empty, empty, np.zeros(0, np.int8))
    frm = np.fromiter((m.from_square ^ 56 for m in moves), np.intp, n)   # python-chess a1 = 0 -> ours a8 = 0
    to = np.fromiter((m.to_square ^ 56 for m in moves), np.intp, n)
    promo = np.fromiter((m.promotion or 0 for m in moves), np.int8, n)
    rows = np.arange(n)
    moving = parent[frm]
    target = parent[to]
    kind = np.abs(moving)
    pawn = kind == 1
    # castling: a king moving two files (standard) or onto its own rook (Chess960)
    castling = (kind == 6) & ((np.abs(frm % 8 - to % 8) > 1) | (target * sign == 4))
    en_passant = pawn & (frm % 8 != to % 8) & (target == 0)
    capture = ((target * sign) < 0) | en_passant
    kids[rows, frm] = 0
    kids[rows, to] = np.where(promo > 0, promo * sign, moving)
    for i in np.flatnonzero(en_passant):
        kids[i, to[i] + 8 * sign] = 0   # the captured pawn stands behind the target square
    for i in np.flatnonzero(castling):
        row = frm[i] // 8 * 8
        kingside = to[i] % 8 > frm[i] % 8
        rook_from = to[i] if target[i] * sign == 4 else row + (7 if kingside else 0)
        kids[i, to[i]] = 0
        kids[i, rook_from] = 0
        kids[i, row + (6 if kingside else 2)] = 6 * sign
        kids[i, row + (5 if kingside else 3)] = 4 * sign
    check = _gives_check(kids, parent, sign)
    # a double push leaves the square it passed over, as python-chess's push does (ours a8 = 0 -> a1 = 0)
    ep = np.where(pawn & (np.abs(to - frm) == 16), ((frm + to) // 2) ^ 56, -1).astype(np.int8)
    return Children(moves, kids[:, :64], check, capture, pawn | capture, castling, en_passant, ep)


def _gives_check(kids: np.ndarray, parent: np.ndarray, sign: int) -> np.ndarray:
    """Whether the opponent's king is attacked in each child (``kids`` has the pad column)."""
    n = kids.shape[0]
    where = np.flatnonzero(parent == -6 * sign)
    if len(where) != 1:
        return np.zeros(n, bool)
    knights, white_pawns, black_pawns, rays = _KING_TABLES[int(where[0])]
    check = (kids[:, knights] == 2 * sign).any(axis=1)
    check |= (kids[:, white_pawns if sign > 0 else black_pawns] == sign).any(axis=1)
    along = kids[:, rays].reshape(n, 56)                    # 8 rays of 7 squares
    first = (along.reshape(n, 8, 7) != 0).argmax(axis=2)    # first occupied square of each ray
    piece = along[np.arange(n)[:, None], first + _RAY_OFFSETS]   # its piece; 0 when the ray is empty
    straight, diagonal = piece[:, :4], piece[:, 4:]
    check |= ((straight == 4 * sign) | (straight == 5 * sign)).any(axis=1)
    check |= ((diagonal == 3 * sign) | (diagonal == 5 * sign)).any(axis=1)
    result: np.ndarray = check
    return result
