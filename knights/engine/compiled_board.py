"""The compiled board's edges: :func:`set_from_chess` fills its arrays from a ``chess.Board``,
:func:`set_from_arrays` from a data set's row (no python-chess board built), :func:`states_from_boards` and
:func:`states_from_arrays` stack many for one compiled call, :func:`to_chess_move` turns its packed move back into
a ``chess.Move``.

The arrays themselves (``board``, ``st``, ``undo``, ``hist``), the move encoding and how
legality is decided are described once, in :mod:`knights.engine.compiled`, beside the
code that reads and writes them.
"""


from __future__ import annotations

from collections.abc import Callable, Sequence

import chess
import numpy as np

from knights.board.positions import castling_code
from knights.engine.compiled import (
    BK,
    BKING,
    BQ,
    CASTLE,
    EP,
    HALFMOVE,
    HASH,
    HLEN,
    MAX_HIST,
    MAX_MOVES,
    N_STATE,
    PLY,
    SIDE,
    WK,
    WKING,
    WQ,
    full_hash,
    is_repetition,
    legal_moves,
    make_move,
    new_state,
    opponent_mates_after,
    perft,
    unmake_move,
)

__all__ = ["HASH", "MAX_MOVES", "N_STATE", "PLY", "Position", "full_hash", "is_repetition", "opponent_mates",
           "set_from_arrays", "set_from_chess", "standard", "states_from_arrays", "states_from_boards", "to_chess_move"]


# -- python-chess at the edges ---------------------------------------------------------------------------
class Position:
    """The arrays of one board, built from a ``chess.Board`` (standard chess only)."""

    def __init__(self, board: chess.Board, history: bool = True) -> None:
        self.board, self.st, self.undo, self.hist = new_state()
        self.changes = np.zeros((4, 3), np.int64)
        set_from_chess(self, board, history)

    def legal(self) -> list[int]:
        out = np.zeros(MAX_MOVES, np.int32)
        n = legal_moves(self.board, self.st, self.undo, self.hist, out, self.changes)
        return [int(m) for m in out[:n]]

    def push(self, move: int) -> bool:
        return bool(make_move(self.board, self.st, self.undo, self.hist, np.int32(move), self.changes) >= 0)

    def pop(self) -> None:
        unmake_move(self.board, self.st, self.undo, self.hist)

    def perft(self, depth: int) -> int:
        buffers = np.zeros((max(depth, 1), MAX_MOVES), np.int32)
        return int(perft(self.board, self.st, self.undo, self.hist, depth, buffers, self.changes))


def standard(board: chess.Board) -> bool:
    """Whether this board is one the compiled board can hold: standard chess rules, castling
    rights only with king and rook on their home squares, one king a side."""
    if board.chess960 or type(board) is not chess.Board:
        return False
    if len(board.pieces(chess.KING, chess.WHITE)) != 1 or len(board.pieces(chess.KING, chess.BLACK)) != 1:
        return False
    return board.clean_castling_rights() == board.castling_rights


def set_from_chess(pos: Position, board: chess.Board, history: bool = True) -> None:
    """Fill ``pos`` with ``board``'s pieces and state; the history holds the hashes of the
    game's positions since its last irreversible move (python-chess's move stack; with
    ``history=False`` this position's alone, for a question repetitions do not change)."""
    if not standard(board):
        raise ValueError(f"the compiled board plays standard chess only, not {board.fen()}")
    squares, st = pos.board, pos.st
    st[:] = 0
    _squares_and_state(board, squares, st)
    st[HALFMOVE] = board.halfmove_clock
    st[WKING] = int(board.king(chess.WHITE)) ^ 56  # type: ignore[arg-type]
    st[BKING] = int(board.king(chess.BLACK)) ^ 56  # type: ignore[arg-type]
    st[HASH] = full_hash(pos.board, st)
    # earlier positions since the last irreversible move, oldest first, then this one
    earlier: list[int] = []
    if history and board.move_stack and board.halfmove_clock:
        back = board.copy()
        for _ in range(min(board.halfmove_clock, len(board.move_stack), MAX_HIST // 2)):
            back.pop()
            earlier.append(_hash_of(back))
    earlier.reverse()
    for i, h in enumerate(earlier):
        pos.hist[i] = h
    pos.hist[len(earlier)] = st[HASH]
    st[HLEN] = len(earlier) + 1


_HOME = ((WK, 60, 63, 6), (WQ, 60, 56, 6), (BK, 4, 7, -6), (BQ, 4, 0, -6))
"""Each castling right with its king's and rook's home squares (a8 = 0, the compiled board's order) and king."""


def set_from_arrays(pos: Position, squares: np.ndarray, white: bool, castling: int = 0, ep: int = -1) -> None:
    """Fill ``pos`` with a position as the data's arrays hold it (:class:`~knights.board.positions.Positions`:
    ``squares`` signed piece codes with a8 = 0, the compiled board's own layout; ``castling`` K=1 Q=2 k=4 q=8; ``ep``
    python-chess's square or -1), no game behind it and the halfmove clock at 0: what :func:`set_from_chess` makes
    of the board :func:`knights.board.arrays.board_from_arrays` rebuilds, without building it; refused, as there, when
    a side has not one king or a castling right lacks its king or rook at home."""
    row = np.asarray(squares)
    kings = [np.flatnonzero(row == k) for k in (6, -6)]
    if len(kings[0]) != 1 or len(kings[1]) != 1:
        raise ValueError("the compiled board needs one king a side: this position has "
                         f"{len(kings[0])} white and {len(kings[1])} black")
    unbacked = [flag for flag, king, rook, code in _HOME
                if castling & flag and not (row[king] == code and row[rook] == 4 * (1 if code > 0 else -1))]
    if unbacked:
        raise ValueError(f"the compiled board plays standard chess only: castling rights {castling} name a king or "
                         "rook that is not at home")
    board, st = pos.board, pos.st
    board[:] = row
    st[:] = 0
    st[SIDE] = 0 if white else 1
    st[CASTLE] = castling & (WK | WQ | BK | BQ)
    st[EP] = ep ^ 56 if ep >= 0 else -1
    st[WKING], st[BKING] = int(kings[0][0]), int(kings[1][0])
    st[HASH] = full_hash(board, st)
    pos.hist[0] = st[HASH]
    st[HLEN] = 1


def states_from_boards(boards: Sequence[chess.Board]) -> tuple[np.ndarray, np.ndarray]:
    """The compiled board and ``st`` of each of ``boards`` (:func:`set_from_chess` without the game's
    history), stacked: ``int8 (N, 64)`` and ``int64 (N, N_STATE)``."""
    return _stacked(len(boards), lambda pos, i: set_from_chess(pos, boards[i], history=False))


def states_from_arrays(squares: np.ndarray, white: Sequence[bool], castling: Sequence[int],
                       ep: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`states_from_boards` of positions as a data set's arrays hold them (:func:`set_from_arrays`)."""
    if not len(squares) == len(white) == len(castling) == len(ep):
        raise ValueError(f"{len(squares)} boards, {len(white)} sides to move, {len(castling)} castling rights and "
                         f"{len(ep)} en-passant squares: one of each per position")
    return _stacked(len(white), lambda pos, i: set_from_arrays(pos, squares[i], white[i], castling[i], ep[i]))


def _stacked(n: int, fill: Callable[[Position, int], None]) -> tuple[np.ndarray, np.ndarray]:
    boards, states = np.zeros((n, 64), np.int8), np.zeros((n, N_STATE), np.int64)
    pos = Position.__new__(Position)
    pos.board, pos.st, pos.undo, pos.hist = new_state()
    for i in range(n):
        fill(pos, i)
        boards[i], states[i] = pos.board, pos.st
    return boards, states


def _squares_and_state(board: chess.Board, squares: np.ndarray, st: np.ndarray) -> None:
    """``board``'s pieces into ``squares`` (the compiled board's codes and square order) and
    its side to move, castling rights and en-passant square into ``st``."""
    squares[:] = 0
    for sq, piece in board.piece_map().items():
        squares[sq ^ 56] = piece.piece_type if piece.color == chess.WHITE else -piece.piece_type
    st[SIDE] = 0 if board.turn == chess.WHITE else 1
    st[CASTLE] = castling_code(board)
    st[EP] = board.ep_square ^ 56 if board.ep_square is not None else -1


def _hash_of(board: chess.Board) -> int:
    squares = np.zeros(64, np.int8)
    st = np.zeros(N_STATE, np.int64)
    _squares_and_state(board, squares, st)
    return int(full_hash(squares, st))


def to_chess_move(m: int) -> chess.Move:
    """A compiled move as a ``chess.Move`` (squares back to python-chess's a1 = 0)."""
    promo = (m >> 12) & 7
    return chess.Move((m & 63) ^ 56, ((m >> 6) & 63) ^ 56, promotion=promo or None)


def from_chess_move(move: chess.Move) -> tuple[int, int, int]:
    """``(from, to, promotion)`` of a ``chess.Move`` in the compiled board's squares, to
    find it among the generated moves (which carry the flags)."""
    return move.from_square ^ 56, move.to_square ^ 56, move.promotion or 0


def opponent_mates(board: chess.Board, moves: list[chess.Move]) -> np.ndarray:
    """For each of ``moves`` (legal on ``board``, a :func:`standard` one): whether the opponent can mate at once
    after it, ``(N,)`` bool; the compiled board's answer to :func:`knights.engine.rules.mates_in_one` after each
    move, tried on every reply that may give check (tested equal to python-chess's on random games)."""
    pos = Position(board, history=False)
    by_move = {to_chess_move(m): m for m in pos.legal()}
    encoded = np.array([by_move[m] for m in moves], np.int32)
    out = np.zeros(len(moves), np.bool_)
    opponent_mates_after(pos.board, pos.st, pos.undo, pos.hist, encoded, pos.changes, out)
    return out
