"""Zobrist hashes of positions, updated move by move (Polyglot's keys).

A Zobrist hash gives each (piece, square) pair, each castling right, each en passant
file and the side to move a fixed random 64-bit key; a position's hash is the XOR of
the keys of what is true in it. A move changes only a few of those facts, so the
child's hash is the parent's with a few keys XORed in and out: a handful of integer
operations instead of a walk over 32 pieces. The search (:mod:`knights.engine.search`)
keys its transposition table, its evaluation cache and its repetition check by it.

The keys are Polyglot's (python-chess's ``chess.polyglot.POLYGLOT_RANDOM_ARRAY``), and
so is every rule (an en passant file counts only when a pawn stands ready to take), so
:func:`hash_after` always equals ``chess.polyglot.zobrist_hash`` of the position after
the move, which the tests check over thousands of random moves::

    >>> board = chess.Board()
    >>> h = zobrist(board)
    >>> move = chess.Move.from_uci("e2e4")
    >>> child = hash_after(board, h, move)
    >>> board.push(move)
    >>> child == chess.polyglot.zobrist_hash(board)
    True
"""

from __future__ import annotations

import chess
import chess.polyglot

KEYS = chess.polyglot.POLYGLOT_RANDOM_ARRAY
_CASTLE = 768      # + 0..3: White king side, White queen side, Black king side, Black queen side
_EP = 772          # + file
TURN_KEY = KEYS[780]  # in the hash when White is to move
_ROOK_CORNERS = ((chess.BB_H1, 0), (chess.BB_A1, 1), (chess.BB_H8, 2), (chess.BB_A8, 3))


def zobrist(board: chess.Board) -> int:
    """The position's hash from scratch (the same as ``chess.polyglot.zobrist_hash``)."""
    return chess.polyglot.zobrist_hash(board)


def _piece_key(piece_type: int, color: bool, square: int) -> int:
    return KEYS[64 * ((piece_type - 1) * 2 + int(color)) + square]


def _castle_keys(rights: int) -> int:
    key = 0
    for corner, index in _ROOK_CORNERS:
        if rights & corner:
            key ^= KEYS[_CASTLE + index]
    return key


def _ep_key(board: chess.Board) -> int:
    """The en passant key of ``board`` as it stands (0 when no pawn can take)."""
    ep = board.ep_square
    if ep is None:
        return 0
    mask = chess.shift_down(chess.BB_SQUARES[ep]) if board.turn == chess.WHITE else chess.shift_up(chess.BB_SQUARES[ep])
    mask = chess.shift_left(mask) | chess.shift_right(mask)
    return KEYS[_EP + chess.square_file(ep)] if mask & board.pawns & board.occupied_co[board.turn] else 0


def hash_after(board: chess.Board, parent_hash: int, move: chess.Move) -> int:
    """The hash of the position after the legal ``move``, without playing it.

    ``parent_hash`` is ``board``'s own hash. Standard chess only (no Chess960 castling)."""
    us = board.turn
    frm, to = move.from_square, move.to_square
    mover = board.piece_type_at(frm)
    if mover is None:
        raise ValueError(f"no piece on {chess.square_name(frm)} for {move.uci()} in {board.fen()}")
    h = parent_hash ^ TURN_KEY ^ _ep_key(board) ^ _piece_key(mover, us, frm)
    # what is taken
    if mover == chess.PAWN and to == board.ep_square and not board.piece_type_at(to):
        h ^= _piece_key(chess.PAWN, not us, to - 8 if us == chess.WHITE else to + 8)
    else:
        taken = board.piece_type_at(to)
        if taken is not None:
            h ^= _piece_key(taken, not us, to)
    # where the mover lands (a promotion lands as its new piece); castling moves the rook too
    h ^= _piece_key(move.promotion or mover, us, to)
    if mover == chess.KING and abs(to - frm) == 2:
        rank = chess.square_rank(frm)
        rook_from, rook_to = (chess.square(7, rank), chess.square(5, rank)) if to > frm else \
            (chess.square(0, rank), chess.square(3, rank))
        h ^= _piece_key(chess.ROOK, us, rook_from) ^ _piece_key(chess.ROOK, us, rook_to)
    # castling rights: cleared by anything leaving or landing on a rook corner, or a king move
    rights = board.clean_castling_rights()
    after = rights & ~chess.BB_SQUARES[frm] & ~chess.BB_SQUARES[to]
    if mover == chess.KING:
        after &= ~(chess.BB_RANK_1 if us == chess.WHITE else chess.BB_RANK_8)
    if after != rights:
        h ^= _castle_keys(rights) ^ _castle_keys(after)
    # a double pawn push leaves an en passant square; it counts when an enemy pawn is beside it
    if mover == chess.PAWN and abs(to - frm) == 16:
        beside = chess.shift_left(chess.BB_SQUARES[to]) | chess.shift_right(chess.BB_SQUARES[to])
        if beside & board.pawns & board.occupied_co[not us]:
            h ^= KEYS[_EP + chess.square_file(to)]
    return h


def hash_after_null(board: chess.Board, parent_hash: int) -> int:
    """The hash after a null move (the side to move passes; no en passant square is left)."""
    return parent_hash ^ TURN_KEY ^ _ep_key(board)
