"""A compiled chess board: 64 squares in a numpy array, move generation, make/unmake, hashing.

The search's inner loop (:mod:`knights.play.fast.search`) runs in numba-compiled code, so
the board is plain numpy arrays and functions over them, no Python objects:

* ``board``: ``int8[64]``, the signed piece codes of :mod:`knights.features.sparse`
  (P=1 N=2 B=3 R=4 Q=5 K=6, negative for Black, 0 empty) on squares a8 = 0 ... h1 = 63,
  so a piece's network feature is a table lookup. Move generation walks a 10x12 mailbox
  (:data:`MAILBOX`: the board with a two-square border of "off" marks), so a ray stops at
  the edge without any arithmetic on files and ranks.
* ``st``: ``int64[N_STATE]``, the scalars: side to move, castling rights, en-passant
  square, half-move clock, Zobrist hash, the stack height (ply) and the kings' squares.
* ``undo``: ``int64[MAX_STACK, 6]``, what each move made on the stack changed (the move,
  the captured piece, the castling rights, en-passant square, clock and hash before it).
* ``hist``: the hashes of the game's positions since its last irreversible move, then of
  the line being searched (repetitions).

A move is an ``int32``: ``from | to << 6 | promotion piece type << 12 | flags << 16``.
Move generation is pseudo-legal; :func:`make_move` refuses (and takes back) a move that
leaves the mover's king attacked, which is how legality is decided everywhere (perft
included). python-chess stays the format at the edges: :func:`from_chess` builds the
arrays of a ``chess.Board``, :func:`to_chess_move` turns a move back into a ``chess.Move``.
"""

from __future__ import annotations

import chess
import numpy as np
from numba import njit

# -- the state vector ------------------------------------------------------------------------
SIDE, CASTLE, EP, HALFMOVE, HASH, PLY, WKING, BKING, HLEN, N_STATE = range(10)
"""Indices into ``st``: side to move (0 White, 1 Black), castling bits, en-passant square
(-1: none), half-move clock, hash, stack height, the White and Black kings' squares, the
number of hashes in ``hist``."""
MAX_STACK = 512
"""Moves on the stack at most (a search line plus the null moves in it)."""
MAX_HIST = 1024
U_MOVE, U_CAPTURED, U_CASTLE, U_EP, U_HALFMOVE, U_HASH = range(6)

# castling bits
WK, WQ, BK, BQ = 1, 2, 4, 8
# flags of a move
F_EP, F_CASTLE, F_DOUBLE, F_CAPTURE = 1, 2, 4, 8
PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING = 1, 2, 3, 4, 5, 6
MAX_MOVES = 320
"""Room for the pseudo-legal moves of one position (218 legal at most)."""


def _mailbox() -> tuple[np.ndarray, np.ndarray]:
    box = np.full(120, -1, dtype=np.int64)
    to120 = np.zeros(64, dtype=np.int64)
    for sq in range(64):
        i = 21 + (sq // 8) * 10 + sq % 8
        box[i] = sq
        to120[sq] = i
    return box, to120


MAILBOX, MAILBOX64 = _mailbox()
# offsets on the 10x12 board: rank 8 is the top row, so "north" (towards rank 8) is -10
KNIGHT_OFFSETS = np.array([-21, -19, -12, -8, 8, 12, 19, 21], dtype=np.int64)
BISHOP_OFFSETS = np.array([-11, -9, 9, 11], dtype=np.int64)
ROOK_OFFSETS = np.array([-10, -1, 1, 10], dtype=np.int64)
KING_OFFSETS = np.array([-11, -10, -9, -1, 1, 9, 10, 11], dtype=np.int64)


def _castle_masks() -> np.ndarray:
    """Castling rights kept when a move leaves or lands on each square."""
    mask = np.full(64, 15, dtype=np.int64)
    mask[56] &= ~WQ   # a1
    mask[63] &= ~WK   # h1
    mask[60] &= ~(WK | WQ)   # e1
    mask[0] &= ~BQ    # a8
    mask[7] &= ~BK    # h8
    mask[4] &= ~(BK | BQ)    # e8
    return mask


CASTLE_MASK = _castle_masks()


def _zobrist() -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    rng = np.random.default_rng(20240628)
    pieces = rng.integers(-(2**63), 2**63 - 1, size=(13, 64), dtype=np.int64)
    pieces[6, :] = 0           # the empty square
    castle = rng.integers(-(2**63), 2**63 - 1, size=16, dtype=np.int64)
    castle[0] = 0
    ep = rng.integers(-(2**63), 2**63 - 1, size=64, dtype=np.int64)
    side = int(rng.integers(-(2**63), 2**63 - 1, dtype=np.int64))
    return pieces, castle, ep, side


Z_PIECE, Z_CASTLE, Z_EP, Z_SIDE = _zobrist()


def new_state() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Empty ``board, st, undo, hist`` arrays."""
    return (np.zeros(64, np.int8), np.zeros(N_STATE, np.int64), np.zeros((MAX_STACK, 6), np.int64),
            np.zeros(MAX_HIST, np.int64))


# -- small helpers ------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def move_from(m):
    return m & 63


@njit(cache=True, inline="always")
def move_to(m):
    return (m >> 6) & 63


@njit(cache=True, inline="always")
def move_promo(m):
    return (m >> 12) & 7


@njit(cache=True, inline="always")
def move_flags(m):
    return (m >> 16) & 15


@njit(cache=True, inline="always")
def encode(frm, to, promo, flags):
    return np.int32(frm | (to << 6) | (promo << 12) | (flags << 16))


@njit(cache=True)
def ep_hash(board, ep, side):
    """The hash term of the en-passant square: only when a pawn of ``side`` could take there
    (so a double step that nobody can answer does not make a position look new)."""
    if ep < 0:
        return 0
    pawn = 1 if side == 0 else -1
    behind = ep + 8 if side == 0 else ep - 8     # the squares a capturing pawn stands on
    f = ep & 7
    if f > 0 and board[behind - 1] == pawn:
        return Z_EP[ep]
    if f < 7 and board[behind + 1] == pawn:
        return Z_EP[ep]
    return 0


@njit(cache=True)
def full_hash(board, st):
    h = 0
    for sq in range(64):
        p = board[sq]
        if p != 0:
            h ^= Z_PIECE[p + 6, sq]
    h ^= Z_CASTLE[st[CASTLE]]
    h ^= ep_hash(board, st[EP], st[SIDE])
    if st[SIDE] == 1:
        h ^= Z_SIDE
    return h


# -- attacks -----------------------------------------------------------------------------------------
@njit(cache=True)
def attacked(board, sq, by):
    """Whether side ``by`` (0 White, 1 Black) attacks ``sq``."""
    sign = 1 if by == 0 else -1
    i = MAILBOX64[sq]
    # pawns: a White pawn attacks towards rank 8 (north, -10), so it stands south of sq
    if by == 0:
        t = MAILBOX[i + 9]
        if t >= 0 and board[t] == 1:
            return True
        t = MAILBOX[i + 11]
        if t >= 0 and board[t] == 1:
            return True
    else:
        t = MAILBOX[i - 9]
        if t >= 0 and board[t] == -1:
            return True
        t = MAILBOX[i - 11]
        if t >= 0 and board[t] == -1:
            return True
    for k in range(8):
        t = MAILBOX[i + KNIGHT_OFFSETS[k]]
        if t >= 0 and board[t] == sign * KNIGHT:
            return True
        t = MAILBOX[i + KING_OFFSETS[k]]
        if t >= 0 and board[t] == sign * KING:
            return True
    for k in range(4):
        d = BISHOP_OFFSETS[k]
        j = i + d
        while True:
            t = MAILBOX[j]
            if t < 0:
                break
            p = board[t]
            if p != 0:
                if p == sign * BISHOP or p == sign * QUEEN:
                    return True
                break
            j += d
        d = ROOK_OFFSETS[k]
        j = i + d
        while True:
            t = MAILBOX[j]
            if t < 0:
                break
            p = board[t]
            if p != 0:
                if p == sign * ROOK or p == sign * QUEEN:
                    return True
                break
            j += d
    return False


@njit(cache=True)
def in_check(board, st):
    """Whether the side to move is in check."""
    side = st[SIDE]
    king = st[WKING] if side == 0 else st[BKING]
    return attacked(board, king, 1 - side)


# -- move generation ------------------------------------------------------------------------------------
@njit(cache=True)
def _add_pawn_moves(moves, n, frm, to, flags, promote):
    if promote:
        for promo in (QUEEN, KNIGHT, ROOK, BISHOP):
            moves[n] = encode(frm, to, promo, flags)
            n += 1
    else:
        moves[n] = encode(frm, to, 0, flags)
        n += 1
    return n


@njit(cache=True)
def generate(board, st, moves, captures_only):
    """Pseudo-legal moves of the side to move into ``moves`` (``int32[MAX_MOVES]``); their
    count. ``captures_only``: captures, en passant and promotions to a queen only."""
    side = st[SIDE]
    sign = 1 if side == 0 else -1
    n = 0
    fwd = -10 if side == 0 else 10
    start_row = 6 if side == 0 else 1      # rows from the top: White's pawns start on row 6
    promo_row = 0 if side == 0 else 7
    ep = st[EP]
    for sq in range(64):
        p = board[sq] * sign
        if p <= 0:
            continue
        i = MAILBOX64[sq]
        if p == PAWN:
            t = MAILBOX[i + fwd]
            if t >= 0 and board[t] == 0:
                promote = (t >> 3) == promo_row
                if promote:
                    if captures_only:
                        moves[n] = encode(sq, t, QUEEN, 0)
                        n += 1
                    else:
                        n = _add_pawn_moves(moves, n, sq, t, 0, True)
                elif not captures_only:
                    moves[n] = encode(sq, t, 0, 0)
                    n += 1
                    if (sq >> 3) == start_row:
                        t2 = MAILBOX[i + 2 * fwd]
                        if board[t2] == 0:
                            moves[n] = encode(sq, t2, 0, F_DOUBLE)
                            n += 1
            for d in (fwd - 1, fwd + 1):
                t = MAILBOX[i + d]
                if t < 0:
                    continue
                q = board[t] * sign
                if q < 0:
                    n = _add_pawn_moves(moves, n, sq, t, F_CAPTURE, (t >> 3) == promo_row)
                elif t == ep and q == 0:
                    moves[n] = encode(sq, t, 0, F_EP | F_CAPTURE)
                    n += 1
        elif p in (KNIGHT, KING):
            offsets = KNIGHT_OFFSETS if p == KNIGHT else KING_OFFSETS
            for k in range(8):
                t = MAILBOX[i + offsets[k]]
                if t < 0:
                    continue
                q = board[t] * sign
                if q < 0:
                    moves[n] = encode(sq, t, 0, F_CAPTURE)
                    n += 1
                elif q == 0 and not captures_only:
                    moves[n] = encode(sq, t, 0, 0)
                    n += 1
        else:
            for k in range(8):
                if k < 4:
                    if p == ROOK:
                        continue
                    d = BISHOP_OFFSETS[k]
                else:
                    if p == BISHOP:
                        continue
                    d = ROOK_OFFSETS[k - 4]
                j = i + d
                while True:
                    t = MAILBOX[j]
                    if t < 0:
                        break
                    q = board[t] * sign
                    if q == 0:
                        if not captures_only:
                            moves[n] = encode(sq, t, 0, 0)
                            n += 1
                    else:
                        if q < 0:
                            moves[n] = encode(sq, t, 0, F_CAPTURE)
                            n += 1
                        break
                    j += d
    if not captures_only:
        n = _castling(board, st, moves, n)
    return n


@njit(cache=True)
def _castling(board, st, moves, n):
    rights = st[CASTLE]
    if st[SIDE] == 0:
        if rights & (WK | WQ) and board[60] == KING and not attacked(board, 60, 1):
            if rights & WK and board[63] == ROOK and board[61] == 0 and board[62] == 0 \
                    and not attacked(board, 61, 1) and not attacked(board, 62, 1):
                moves[n] = encode(60, 62, 0, F_CASTLE)
                n += 1
            if rights & WQ and board[56] == ROOK and board[59] == 0 and board[58] == 0 and board[57] == 0 \
                    and not attacked(board, 59, 1) and not attacked(board, 58, 1):
                moves[n] = encode(60, 58, 0, F_CASTLE)
                n += 1
    else:
        if rights & (BK | BQ) and board[4] == -KING and not attacked(board, 4, 0):
            if rights & BK and board[7] == -ROOK and board[5] == 0 and board[6] == 0 \
                    and not attacked(board, 5, 0) and not attacked(board, 6, 0):
                moves[n] = encode(4, 6, 0, F_CASTLE)
                n += 1
            if rights & BQ and board[0] == -ROOK and board[3] == 0 and board[2] == 0 and board[1] == 0 \
                    and not attacked(board, 3, 0) and not attacked(board, 2, 0):
                moves[n] = encode(4, 2, 0, F_CASTLE)
                n += 1
    return n


# -- make / unmake --------------------------------------------------------------------------------------
@njit(cache=True)
def make_move(board, st, undo, hist, m, changes):
    """Play ``m`` and return how many rows of ``changes`` (``int64[4, 3]``) it filled: the
    pieces that left or joined a square, ``(code, square, -1 left / +1 joined)``, which is
    what the evaluator's accumulators need. ``-1`` (and nothing changed) when the move
    leaves the mover's king attacked: the one legality test."""
    frm = m & 63
    to = (m >> 6) & 63
    promo = (m >> 12) & 7
    flags = (m >> 16) & 15
    side = st[SIDE]
    sign = 1 if side == 0 else -1
    piece = board[frm]
    ply = st[PLY]
    u = undo[ply]
    u[U_MOVE] = m
    u[U_CASTLE] = st[CASTLE]
    u[U_EP] = st[EP]
    u[U_HALFMOVE] = st[HALFMOVE]
    u[U_HASH] = st[HASH]
    h = st[HASH] ^ ep_hash(board, st[EP], side) ^ Z_CASTLE[st[CASTLE]]
    nc = 0
    captured = 0
    if flags & F_EP:
        cap_sq = to + 8 if side == 0 else to - 8
        captured = board[cap_sq]
        board[cap_sq] = 0
        h ^= Z_PIECE[captured + 6, cap_sq]
        changes[nc, 0] = captured
        changes[nc, 1] = cap_sq
        changes[nc, 2] = -1
        nc += 1
    elif board[to] != 0:
        captured = board[to]
        h ^= Z_PIECE[captured + 6, to]
        changes[nc, 0] = captured
        changes[nc, 1] = to
        changes[nc, 2] = -1
        nc += 1
    u[U_CAPTURED] = captured
    board[frm] = 0
    h ^= Z_PIECE[piece + 6, frm]
    changes[nc, 0] = piece
    changes[nc, 1] = frm
    changes[nc, 2] = -1
    nc += 1
    placed = piece if promo == 0 else sign * promo
    board[to] = placed
    h ^= Z_PIECE[placed + 6, to]
    changes[nc, 0] = placed
    changes[nc, 1] = to
    changes[nc, 2] = 1
    nc += 1
    if flags & F_CASTLE:
        rf, rt = _rook_squares(to)
        rook = board[rf]
        board[rf] = 0
        board[rt] = rook
        h ^= Z_PIECE[rook + 6, rf] ^ Z_PIECE[rook + 6, rt]
        changes[nc, 0] = rook
        changes[nc, 1] = rf
        changes[nc, 2] = -1
        changes[nc + 1, 0] = rook
        changes[nc + 1, 1] = rt
        changes[nc + 1, 2] = 1
        nc += 2
    if piece == KING:
        st[WKING] = to
    elif piece == -KING:
        st[BKING] = to
    st[CASTLE] = st[CASTLE] & CASTLE_MASK[frm] & CASTLE_MASK[to]
    st[EP] = (frm + to) >> 1 if flags & F_DOUBLE else -1
    st[HALFMOVE] = 0 if (captured != 0 or piece * sign == PAWN) else st[HALFMOVE] + 1
    st[SIDE] = 1 - side
    st[PLY] = ply + 1
    king = st[WKING] if side == 0 else st[BKING]
    if attacked(board, king, 1 - side):
        _restore(board, st, undo)
        return -1
    h ^= Z_SIDE ^ Z_CASTLE[st[CASTLE]] ^ ep_hash(board, st[EP], 1 - side)
    st[HASH] = h
    hist[st[HLEN]] = h
    st[HLEN] += 1
    return nc


@njit(cache=True, inline="always")
def _rook_squares(king_to):
    """The castling rook's squares (from, to) for the king's target square."""
    if king_to == 62:
        return 63, 61
    if king_to == 58:
        return 56, 59
    if king_to == 6:
        return 7, 5
    return 0, 3


@njit(cache=True)
def _restore(board, st, undo):
    ply = st[PLY] - 1
    u = undo[ply]
    m = u[U_MOVE]
    frm = m & 63
    to = (m >> 6) & 63
    promo = (m >> 12) & 7
    flags = (m >> 16) & 15
    side = 1 - st[SIDE]          # the side that made the move
    piece = board[to] if promo == 0 else (PAWN if side == 0 else -PAWN)
    board[frm] = piece
    if flags & F_EP:
        board[to] = 0
        board[to + 8 if side == 0 else to - 8] = u[U_CAPTURED]
    else:
        board[to] = u[U_CAPTURED]
    if flags & F_CASTLE:
        rf, rt = _rook_squares(to)
        board[rf] = board[rt]
        board[rt] = 0
    if piece == KING:
        st[WKING] = frm
    elif piece == -KING:
        st[BKING] = frm
    st[CASTLE] = u[U_CASTLE]
    st[EP] = u[U_EP]
    st[HALFMOVE] = u[U_HALFMOVE]
    st[HASH] = u[U_HASH]
    st[SIDE] = side
    st[PLY] = ply


@njit(cache=True)
def unmake_move(board, st, undo, hist):
    """Take back the last (legal) move made."""
    _restore(board, st, undo)
    st[HLEN] -= 1


@njit(cache=True)
def make_null(board, st, undo, hist):
    """Pass the move (null-move pruning). The half-move clock restarts, so no repetition
    is looked for across it."""
    ply = st[PLY]
    u = undo[ply]
    u[U_MOVE] = 0
    u[U_CAPTURED] = 0
    u[U_CASTLE] = st[CASTLE]
    u[U_EP] = st[EP]
    u[U_HALFMOVE] = st[HALFMOVE]
    u[U_HASH] = st[HASH]
    h = st[HASH] ^ ep_hash(board, st[EP], st[SIDE]) ^ Z_SIDE
    st[EP] = -1
    st[HALFMOVE] = 0
    st[SIDE] = 1 - st[SIDE]
    st[PLY] = ply + 1
    st[HASH] = h
    hist[st[HLEN]] = h
    st[HLEN] += 1


@njit(cache=True)
def unmake_null(board, st, undo, hist):
    ply = st[PLY] - 1
    u = undo[ply]
    st[EP] = u[U_EP]
    st[HALFMOVE] = u[U_HALFMOVE]
    st[HASH] = u[U_HASH]
    st[SIDE] = 1 - st[SIDE]
    st[PLY] = ply
    st[HLEN] -= 1


@njit(cache=True)
def is_repetition(st, hist):
    """Whether the position repeats one since the last irreversible move (once is enough
    inside a search: the side that could repeat can repeat again)."""
    n = st[HLEN]
    h = st[HASH]
    lowest = n - 1 - st[HALFMOVE]
    if lowest < 0:
        lowest = 0
    i = n - 3
    while i >= lowest:
        if hist[i] == h:
            return True
        i -= 2
    return False


@njit(cache=True)
def insufficient_material(board):
    """Bare kings, or a king and one minor piece against a bare king."""
    minors = 0
    for sq in range(64):
        p = abs(board[sq])
        if p in (PAWN, ROOK, QUEEN):
            return False
        if p in (KNIGHT, BISHOP):
            minors += 1
            if minors > 1:
                return False
    return True


@njit(cache=True)
def perft(board, st, undo, hist, depth, buffers, changes):
    """Leaves of the legal move tree to ``depth`` (``buffers``: ``int32[depth, MAX_MOVES]``)."""
    if depth == 0:
        return 1
    moves = buffers[depth - 1]
    n = generate(board, st, moves, False)
    total = 0
    for k in range(n):
        if make_move(board, st, undo, hist, moves[k], changes) < 0:
            continue
        total += perft(board, st, undo, hist, depth - 1, buffers, changes)
        unmake_move(board, st, undo, hist)
    return total


@njit(cache=True)
def legal_moves(board, st, undo, hist, out, changes):
    """The legal moves into ``out``; their count."""
    buf = np.empty(MAX_MOVES, np.int32)
    n = generate(board, st, buf, False)
    k = 0
    for i in range(n):
        if make_move(board, st, undo, hist, buf[i], changes) >= 0:
            unmake_move(board, st, undo, hist)
            out[k] = buf[i]
            k += 1
    return k


# -- python-chess at the edges ---------------------------------------------------------------------------
class Position:
    """The arrays of one board, built from a ``chess.Board`` (standard chess only)."""

    def __init__(self, board: chess.Board) -> None:
        self.board, self.st, self.undo, self.hist = new_state()
        self.changes = np.zeros((4, 3), np.int64)
        set_from_chess(self, board)

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


def set_from_chess(pos: Position, board: chess.Board) -> None:
    """Fill ``pos`` with ``board``'s pieces and state; the history holds the hashes of the
    game's positions since its last irreversible move (python-chess's move stack)."""
    if not standard(board):
        raise ValueError(f"the compiled board plays standard chess only, not {board.fen()}")
    squares = np.zeros(64, np.int8)
    for sq, piece in board.piece_map().items():
        code = piece.piece_type if piece.color == chess.WHITE else -piece.piece_type
        squares[sq ^ 56] = code
    pos.board[:] = squares
    st = pos.st
    st[:] = 0
    st[SIDE] = 0 if board.turn == chess.WHITE else 1
    rights = 0
    for flag, sq in ((WK, chess.H1), (WQ, chess.A1), (BK, chess.H8), (BQ, chess.A8)):
        if board.castling_rights & chess.BB_SQUARES[sq]:
            rights |= flag
    st[CASTLE] = rights
    st[EP] = board.ep_square ^ 56 if board.ep_square is not None else -1
    st[HALFMOVE] = board.halfmove_clock
    st[WKING] = int(board.king(chess.WHITE)) ^ 56  # type: ignore[arg-type]
    st[BKING] = int(board.king(chess.BLACK)) ^ 56  # type: ignore[arg-type]
    st[HASH] = full_hash(pos.board, st)
    # earlier positions since the last irreversible move, oldest first, then this one
    earlier: list[int] = []
    if board.move_stack and board.halfmove_clock:
        back = board.copy()
        for _ in range(min(board.halfmove_clock, len(board.move_stack), MAX_HIST // 2)):
            back.pop()
            earlier.append(_hash_of(back))
    earlier.reverse()
    for i, h in enumerate(earlier):
        pos.hist[i] = h
    pos.hist[len(earlier)] = st[HASH]
    st[HLEN] = len(earlier) + 1


def _hash_of(board: chess.Board) -> int:
    squares = np.zeros(64, np.int8)
    for sq, piece in board.piece_map().items():
        squares[sq ^ 56] = piece.piece_type if piece.color == chess.WHITE else -piece.piece_type
    st = np.zeros(N_STATE, np.int64)
    st[SIDE] = 0 if board.turn == chess.WHITE else 1
    rights = 0
    for flag, sq in ((WK, chess.H1), (WQ, chess.A1), (BK, chess.H8), (BQ, chess.A8)):
        if board.castling_rights & chess.BB_SQUARES[sq]:
            rights |= flag
    st[CASTLE] = rights
    st[EP] = board.ep_square ^ 56 if board.ep_square is not None else -1
    return int(full_hash(squares, st))


def to_chess_move(m: int) -> chess.Move:
    """A compiled move as a ``chess.Move`` (squares back to python-chess's a1 = 0)."""
    promo = (m >> 12) & 7
    return chess.Move((m & 63) ^ 56, ((m >> 6) & 63) ^ 56, promotion=promo or None)


def from_chess_move(move: chess.Move) -> tuple[int, int, int]:
    """``(from, to, promotion)`` of a ``chess.Move`` in the compiled board's squares, to
    find it among the generated moves (which carry the flags)."""
    return move.from_square ^ 56, move.to_square ^ 56, move.promotion or 0
