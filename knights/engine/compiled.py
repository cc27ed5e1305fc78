"""Every compiled function of the fast search, in one module: the board, EL/v13's
accumulators and head, the piece-square fallback and the alpha-beta search.

One module on purpose: numba caches compiled code on disk per source file and checks only
that file's time stamp, so a function compiled into a caller in another file would stay
stale in the caller's cache when its own file changes. Here any edit invalidates all.
The tables the compiled code reads (mailbox, Zobrist keys, piece-square values) live here
for the same reason: their values are frozen into the compiled code.

The board (see :mod:`knights.engine.compiled_board` for python-chess at its edges):

The search's inner loop (:mod:`knights.engine.compiled`) runs in numba-compiled code, so
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

The evaluation (see :mod:`knights.engine.incremental` for packing the weights): a stack of
accumulator pairs, one per ply (:func:`acc_update` on make, popped on unmake, rebuilt
only at the root by :func:`acc_refresh`), and the head alone per node (:func:`head_pawns`).

The search:

Everything below the root runs inside numba-compiled code: no Python object is made,
no PyTorch call is paid and no reference is counted at any node (:data:`HOT`). The Python driver
(:mod:`knights.engine.compiled_search`) runs the iterations, the aspiration windows and the clock, and talks
python-chess.

Per node (:func:`negamax`):

* **draws** (repetition of any position since the last irreversible move, the fifty-move
  rule, bare kings or a lone minor piece) score 0; **mate** in ``n`` plies scores
  ``MATE - n`` (:data:`~knights.engine.constants.MATE`, as everywhere);
* **check extension**: a side in check is searched a ply deeper;
* a **transposition table** (always replace; hash move, bounds and exact values);
* **reverse futility** near the horizon and **null-move pruning** (a reduction of 3, one ply more
  for every 3 of depth and every 200 centipawns above beta, up to 3 of these: the constants'
  ``NULL_*``), never in check or at a principal-variation node, never without a piece;
* **move ordering**: the hash move, winning and equal captures by static exchange
  (most valuable victim, least valuable attacker among them), queen promotions, two
  killers per ply, quiet moves by the history table, losing captures last; a quiet move that
  cuts off gains in the history table and the quiet moves tried before it lose as much
  (the **history malus**: :func:`_reward`), every value kept within
  :data:`~knights.engine.constants.HISTORY_LIMIT`; the same for the **continuation history**, the
  value of a quiet move after the opponent's last move (by their pieces and squares), which adds
  to it;
* **static-exchange pruning**: near the horizon, a move (not the first, not a check) that loses
  material by :func:`see` beyond a margin growing with the depth is not searched;
* **internal iterative reduction**: a node from depth 4 with no hash move is searched a
  ply shallower;
* **principal-variation search** with **late move reductions** (quiet moves after the
  fourth, from depth 3, by a table logarithmic in the depth and the move's number:
  :data:`LMR_TABLE`, less for a move with a good history) and **late move pruning** (near
  the horizon, quiet moves after the first few are not searched at all); a node whose static
  value is no better than two plies before (not **improving**) reduces a ply more and prunes
  after half as many moves;
* **quiescence search** at the horizon: stand pat on the static value, captures that do
  not lose material by static exchange (:func:`see`) and queen promotions; in check every
  evasion, no standing pat.

Static values come from :mod:`knights.engine.incremental`: EL/v13's head on the
accumulators (kept per ply on make, popped on unmake), or the piece-square fallback; against a lone king, a
**mop-up** slope (:func:`mop_up`) drives it to the edge.
``cfg`` switches each pruning feature on or off (:data:`CFG_NULL` ...), so self-play
matches can measure what each one is worth without recompiling
(:mod:`knights.lab.arena.search_ab`, ``make search-ab``).
"""

from __future__ import annotations

import os
import tempfile
from collections import namedtuple
from pathlib import Path
from typing import Any

import numpy as np

from knights.board.pieces import CENTIPAWNS
from knights.engine import constants as C
from knights.engine.constants import (
    DELTA,
    FUTILITY_MARGIN,
    HISTORY_LIMIT,
    IIR_DEPTH,
    INF,
    KING_SEE,
    LMP_BASE,
    LMP_DEPTH,
    LMR_AFTER,
    LMR_BASE,
    LMR_DIVISOR,
    LMR_HISTORY,
    LMR_MIN_DEPTH,
    MATE,
    MATE_BOUND,
    MAX_PLY,
    MOPUP_CLOSE,
    MOPUP_EDGE,
    MOPUP_FROM,
    NULL_DEEP_DEPTH,
    NULL_DEPTH_STEP,
    NULL_MARGIN,
    NULL_MARGIN_PLIES,
    NULL_MIN_DEPTH,
    NULL_REDUCTION,
    REVERSE_FUTILITY_DEPTH,
    REVERSE_FUTILITY_MARGIN,
    SEE_CAPTURE_MARGIN,
    SEE_PRUNE_DEPTH,
    SEE_QUIET_MARGIN,
)
from knights.features.sparse import N_FEATURES  # numpy only, no torch
from knights.learn.targets import MAX_PAWNS, PAWN_LOGIT  # the network's own constants (numpy only, no torch)

# numba keeps its compiled code beside this file; where that folder is not writable (an
# installed copy, another user) and no cache folder was named, use one in the temp folder,
# or numba refuses to compile ("no locator available")
if "NUMBA_CACHE_DIR" not in os.environ and not os.access(Path(__file__).parent, os.W_OK):
    os.environ["NUMBA_CACHE_DIR"] = str(Path(tempfile.gettempdir()) / f"knights-numba-{os.getuid()}")


def _forget_stale_cache() -> None:
    """numba's cache knows this file's stamp, not the numbers it froze in from :mod:`knights.engine.constants`,
    the piece table and the network's constants: a stamp of them sits beside the cache, and when it differs the
    cached code of this module is dropped (it compiles afresh)."""
    folder = Path(os.environ.get("NUMBA_CACHE_DIR") or Path(__file__).parent / "__pycache__")
    if os.environ.get("NUMBA_CACHE_DIR"):
        folder = folder / Path(__file__).parent.relative_to(Path(__file__).parents[2]).as_posix().replace("/", "_")
    key = f"{C.cache_key()} {N_FEATURES} {MAX_PAWNS!r} {PAWN_LOGIT!r}"
    stamp = Path(__file__).parent / "__pycache__" / "compiled.constants"
    try:
        if stamp.exists() and stamp.read_text() == key:
            return
        for pattern in ("compiled.*.nbi", "compiled.*.nbc"):
            for cached in list(folder.glob(pattern)) + list((Path(__file__).parent / "__pycache__").glob(pattern)):
                cached.unlink(missing_ok=True)
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(key)
    except OSError:   # a folder we may not write: numba decides for itself, as before
        pass


_forget_stale_cache()

from numba import njit  # noqa: E402 - after the cache folder is settled and stale code dropped

COUNTED = bool(os.environ.get("KNIGHTS_NUMBA_COUNTED"))
"""Set (by the environment's ``KNIGHTS_NUMBA_COUNTED``) only in the process that ``knights bench fast_search`` runs as a
baseline, with a cache folder of its own (:func:`knights.lab.bench.search.counted_cost`): :data:`HOT` is then numba's
default, reference counts on."""
HOT: dict[str, Any] = {"cache": True} if COUNTED else {"cache": True, "_nrt": False}
"""numba's options for every compiled function here but the few that allocate an array (:func:`legal_moves`,
:func:`has_legal_move`, :func:`mates_in_one`, :func:`opponent_mates_after`, :func:`evaluate_squares`): no reference
counts. Every array the search touches is held by Python for the whole call, so counting references to it (an atomic
increment and decrement wherever a compiled function takes an array out of a tuple, slices one or passes one on) is work
for nothing; ``knights bench fast_search`` measures what leaving it out buys (``fast_search_vs_counted``). A function
compiled so may not allocate an array."""

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
@njit(inline="always", **HOT)
def move_from(m):
    return m & 63


@njit(inline="always", **HOT)
def move_to(m):
    return (m >> 6) & 63


@njit(inline="always", **HOT)
def move_promo(m):
    return (m >> 12) & 7


@njit(inline="always", **HOT)
def move_flags(m):
    return (m >> 16) & 15


@njit(inline="always", **HOT)
def encode(frm, to, promo, flags):
    return np.int32(frm | (to << 6) | (promo << 12) | (flags << 16))


@njit(**HOT)
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


@njit(**HOT)
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
@njit(**HOT)
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
        if _ray_meets(board, i, BISHOP_OFFSETS[k], sign * BISHOP, sign * QUEEN):
            return True
        if _ray_meets(board, i, ROOK_OFFSETS[k], sign * ROOK, sign * QUEEN):
            return True
    return False


@njit(inline="always", **HOT)
def _ray_meets(board, i, d, piece, queen):
    """Whether the first man on the ray from mailbox square ``i`` in direction ``d`` is ``piece`` or ``queen``."""
    j = i + d
    while True:
        t = MAILBOX[j]
        if t < 0:
            return False
        p = board[t]
        if p != 0:
            return p in (piece, queen)
        j += d


@njit(**HOT)
def may_give_check(board, st, m):
    """Whether the quiet move ``m`` (no capture, no en passant) of the side to move gives check, read on the
    board alone (the piece lifted and set down, no accumulators, no state): exact for every move but castling,
    which answers True (the rook's check is left to the full make)."""
    if (m >> 16) & F_CASTLE:
        return True
    side = st[SIDE]
    frm = m & 63
    to = (m >> 6) & 63
    promo = (m >> 12) & 7
    piece = board[frm]
    board[to] = piece if promo == 0 else (promo if side == 0 else -promo)
    board[frm] = 0
    gives = attacked(board, st[BKING] if side == 0 else st[WKING], side)
    board[frm] = piece
    board[to] = 0
    return gives


@njit(**HOT)
def in_check(board, st):
    """Whether the side to move is in check."""
    side = st[SIDE]
    king = st[WKING] if side == 0 else st[BKING]
    return attacked(board, king, 1 - side)


# -- move generation ------------------------------------------------------------------------------------
@njit(**HOT)
def _add_pawn_moves(moves, n, frm, to, flags, promote):
    if promote:
        for promo in (QUEEN, KNIGHT, ROOK, BISHOP):
            moves[n] = encode(frm, to, promo, flags)
            n += 1
    else:
        moves[n] = encode(frm, to, 0, flags)
        n += 1
    return n


@njit(**HOT)
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


@njit(**HOT)
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
@njit(**HOT)
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


@njit(inline="always", **HOT)
def _rook_squares(king_to):
    """The castling rook's squares (from, to) for the king's target square."""
    if king_to == 62:
        return 63, 61
    if king_to == 58:
        return 56, 59
    if king_to == 6:
        return 7, 5
    return 0, 3


@njit(**HOT)
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


@njit(**HOT)
def unmake_move(board, st, undo, hist):
    """Take back the last (legal) move made."""
    _restore(board, st, undo)
    st[HLEN] -= 1


@njit(**HOT)
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


@njit(**HOT)
def unmake_null(board, st, undo, hist):
    ply = st[PLY] - 1
    u = undo[ply]
    st[EP] = u[U_EP]
    st[HALFMOVE] = u[U_HALFMOVE]
    st[HASH] = u[U_HASH]
    st[SIDE] = 1 - st[SIDE]
    st[PLY] = ply
    st[HLEN] -= 1


@njit(**HOT)
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


@njit(**HOT)
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


@njit(**HOT)
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


@njit(cache=True)
def has_legal_move(board, st, undo, hist, changes):
    """Whether the side to move has a legal move (it stops at the first)."""
    buf = np.empty(MAX_MOVES, np.int32)
    n = generate(board, st, buf, False)
    for i in range(n):
        if make_move(board, st, undo, hist, buf[i], changes) >= 0:
            unmake_move(board, st, undo, hist)
            return True
    return False


@njit(cache=True)
def mates_in_one(board, st, undo, hist, changes):
    """Whether the side to move has a move that mates at once. A quiet move is made only when it may give
    check (:func:`may_give_check`); a capture always (it may uncover a check)."""
    buf = np.empty(MAX_MOVES, np.int32)
    n = generate(board, st, buf, False)
    for i in range(n):
        m = buf[i]
        if not (m >> 16) & F_CAPTURE and not may_give_check(board, st, m):
            continue
        if make_move(board, st, undo, hist, m, changes) < 0:
            continue
        mate = in_check(board, st) and not has_legal_move(board, st, undo, hist, changes)
        unmake_move(board, st, undo, hist)
        if mate:
            return True
    return False


@njit(cache=True)
def opponent_mates_after(board, st, undo, hist, moves, changes, out):
    """For each of ``moves`` (legal here): whether the opponent can mate at once after it (``out[k]``)."""
    for k in range(len(moves)):
        if make_move(board, st, undo, hist, moves[k], changes) < 0:
            out[k] = False
            continue
        out[k] = mates_in_one(board, st, undo, hist, changes)
        unmake_move(board, st, undo, hist)


# -- the compiled parts --------------------------------------------------------------------------
N_PLAIN = N_FEATURES
"""The plain features per view (:mod:`knights.features.sparse`); a network with the king's zones
packs one block of them per zone (``net.cols``: zones x 768 rows and the empty one)."""


@njit(**HOT)
def king_zone(net, sq, v):
    """The zone of view ``v``'s king standing on ``sq`` (``net.zone`` reads the square from the king's side)."""
    return net.zone[sq if v == 0 else sq ^ 56]


@njit(**HOT)
def own_king_zone(board, v, net):
    """The zone of view ``v``'s own king on ``board``: always 0 for a network without zones."""
    if net.cols.shape[0] <= N_PLAIN + 1:
        return 0
    king = 6 if v == 0 else -6
    for sq in range(64):
        if board[sq] == king:
            return king_zone(net, sq, v)
    return 0


@njit(**HOT)
def acc_refresh_view(acc, ply, v, board, net):
    """View ``v``'s accumulator of ``board`` from scratch into ``acc[ply, v]``."""
    hidden = net.cols.shape[1]
    a = acc[ply, v]
    for i in range(hidden):
        a[i] = net.bias[i]
    block = own_king_zone(board, v, net) * N_PLAIN
    for sq in range(64):
        p = board[sq]
        if p != 0:
            f = block + net.feat[v, p + 6, sq]
            for i in range(hidden):
                a[i] += net.cols[f, i]


@njit(**HOT)
def acc_refresh(acc, ply, board, net):
    """Both accumulators of ``board`` from scratch into ``acc[ply]`` (``acc``: float32
    (stack, 2, H))."""
    for v in range(2):
        acc_refresh_view(acc, ply, v, board, net)


@njit(fastmath=True, **HOT)
def acc_update(acc, ply, changes, n, cols, feat):
    """``acc[ply + 1]`` = ``acc[ply]`` with the columns ``cols`` of ``changes[:n]`` (code, square,
    +1 joined / -1 left) added or subtracted, in both views (``feat``: the network's feature table);
    a quiet move's two columns in one pass. A network with the king's zones takes
    :func:`acc_update_zoned` instead (:func:`play` chooses), so this loop stays free of the zones."""
    hidden = cols.shape[1]
    for v in range(2):
        f0 = feat[v, changes[0, 0] + 6, changes[0, 1]]
        f1 = feat[v, changes[1, 0] + 6, changes[1, 1]]
        s0 = np.float32(changes[0, 2])
        s1 = np.float32(changes[1, 2])
        if n == 2:
            for i in range(hidden):
                acc[ply + 1, v, i] = acc[ply, v, i] + s0 * cols[f0, i] + s1 * cols[f1, i]
            continue
        for i in range(hidden):
            acc[ply + 1, v, i] = acc[ply, v, i]
        for k in range(n):
            f = feat[v, changes[k, 0] + 6, changes[k, 1]]
            sk = np.float32(changes[k, 2])
            for i in range(hidden):
                acc[ply + 1, v, i] += sk * cols[f, i]


@njit(fastmath=True, **HOT)
def acc_update_zoned(acc, ply, changes, n, net, board, st):
    """:func:`acc_update` for a network with the king's zones: each view sums its own zone's
    columns, and a view whose own king moved into another zone is summed from scratch instead
    (every one of its features changed)."""
    hidden = net.cols.shape[1]
    for v in range(2):
        zone = king_zone(net, st[WKING] if v == 0 else st[BKING], v)
        king = 6 if v == 0 else -6
        moved = False
        for k in range(n):
            if changes[k, 0] == king and changes[k, 2] < 0 and king_zone(net, changes[k, 1], v) != zone:
                moved = True
        if moved:
            acc_refresh_view(acc, ply + 1, v, board, net)
            continue
        block = zone * N_PLAIN
        src = acc[ply, v]
        dst = acc[ply + 1, v]
        for i in range(hidden):
            dst[i] = src[i]
        for k in range(n):
            f = block + net.feat[v, changes[k, 0] + 6, changes[k, 1]]
            if changes[k, 2] > 0:
                for i in range(hidden):
                    dst[i] += net.cols[f, i]
            else:
                for i in range(hidden):
                    dst[i] -= net.cols[f, i]


@njit(**HOT)
def acc_copy(acc, ply):
    """``acc[ply + 1]`` = ``acc[ply]`` (a null move), element by element: a slice assignment may allocate."""
    for v in range(2):
        for i in range(acc.shape[2]):
            acc[ply + 1, v, i] = acc[ply, v, i]


@njit(**HOT)
def head_bucket(board, net):
    """Which head judges ``board``: 0 for a one-head network; with ``B`` heads by men on the
    board (:class:`knights.learn.nnue.BucketedSparseNet`), ``(men - 1) * B // 32``."""
    buckets = net.w0.shape[0]
    if buckets == 1:
        return 0
    men = 0
    for sq in range(64):
        if board[sq] != 0:
            men += 1
    b = (men - 1) * buckets // 32
    return 0 if b < 0 else (buckets - 1 if b >= buckets else b)


@njit(fastmath=True, **HOT)
def head_logit(acc, ply, side, net, bucket, x):
    """The mover's win-probability logit from the accumulators at ``acc[ply]``, ``side`` to
    move (0 White): head ``bucket`` on [mover's sums, other's sums] clipped to [0, 1]. ``x``: float32
    scratch of at least 2H + the first layer's width (the head's inputs, then that layer), so nothing is allocated
    (the search runs without numba's reference counts, :data:`HOT`)."""
    hidden = acc.shape[2]
    n0 = net.w0.shape[1]
    w0 = net.w0
    for i in range(hidden):
        a = acc[ply, side, i]
        x[i] = 0.0 if a < 0.0 else (1.0 if a > 1.0 else a)
        b = acc[ply, 1 - side, i]
        x[hidden + i] = 0.0 if b < 0.0 else (1.0 if b > 1.0 else b)
    h1 = 2 * hidden
    for j in range(n0):
        s = np.float32(0.0)
        for i in range(2 * hidden):
            s += w0[bucket, j, i] * x[i]
        s += net.b0[bucket, j]
        x[h1 + j] = 0.0 if s < 0.0 else (1.0 if s > 1.0 else s)
    w2 = net.w2
    z = np.float32(net.b4[bucket])
    for j in range(w2.shape[1]):
        s = np.float32(0.0)
        for i in range(n0):
            s += w2[bucket, j, i] * x[h1 + i]
        s += net.b2[bucket, j]
        s = 0.0 if s < 0.0 else (1.0 if s > 1.0 else s)
        z += net.w4[bucket, j] * s
    return z


@njit(**HOT)
def head_pawns(acc, ply, side, net, board, x):
    """The network's value for the side to move on ``board``, pawns, clipped to +-10 (SparseNet in eval mode);
    ``x``: :func:`head_logit`'s scratch."""
    p = head_logit(acc, ply, side, net, head_bucket(board, net), x) / PAWN_LOGIT
    if p > MAX_PAWNS:
        return MAX_PAWNS
    if p < -MAX_PAWNS:
        return -MAX_PAWNS
    return p


# -- the fallback: material and piece-square (centipawns, White's side of the board) ---------------------
def _pst() -> np.ndarray:
    """``pst[code + 6, square]`` in centipawns for White (positive) and Black (negative):
    material plus a few positional terms, written out as formulas rather than tables."""
    values = dict(enumerate(CENTIPAWNS))
    table = np.zeros((13, 64), np.int64)
    for piece in range(1, 7):
        for sq in range(64):
            row, col = sq // 8, sq % 8          # row 0 = rank 8 (White's far side)
            advance = 7 - row                    # White's ranks moved up from rank 1
            centre = 3.5 - max(abs(row - 3.5), abs(col - 3.5))     # 0 at the edge, 3 in the centre
            bonus = 0.0
            if piece == 1:
                bonus = [0, 0, 4, 8, 16, 30, 60, 0][advance] + (6 if col in (3, 4) and advance in (3, 4) else 0)
                bonus -= 8 if col in (3, 4) and advance == 1 else 0      # unmoved centre pawns block the bishops
            elif piece == 2:
                bonus = 9 * centre - 12 + (6 if advance >= 2 else 0)
            elif piece == 3:
                long_diagonal = (row - col) in (1, -1, 0) or (row + col) in (6, 7, 8)
                bonus = 4 * centre - 4 + (8 if long_diagonal else 0) - 6 * (advance == 0)
            elif piece == 4:
                bonus = 14 if advance == 6 else (3 if col in (3, 4) else 0)
            elif piece == 5:
                bonus = 3 * centre - 4
            elif piece == 6:
                sheltered = advance == 0 and col in (1, 2, 6)        # castled, behind its pawns
                bonus = (20 if sheltered else 0) - 12 * max(0, advance - 1) - 6 * (col in (3, 4, 5) and advance == 0)
            table[piece + 6, sq] = round(values[piece] + bonus)
            table[6 - piece, sq ^ 56] = -round(values[piece] + bonus)
    return table


PST = _pst()


@njit(**HOT)
def pst_eval(board, side):
    """Material + piece-square value for the side to move (``side`` 0 White), centipawns."""
    total = 0
    for sq in range(64):
        p = board[sq]
        if p != 0:
            total += PST[p + 6, sq]
    return total if side == 0 else -total


@njit(cache=True)
def evaluate_squares(squares, white, net):
    """Pawns from White's side of positions ``squares`` (N, 64) with ``white`` (N,) to move:
    the network summed from scratch (or the piece-square fallback), one position at a time."""
    n = squares.shape[0]
    out = np.empty(n, np.float64)
    hidden = net.cols.shape[1]
    acc = np.empty((1, 2, hidden), np.float32)
    x = np.empty(2 * hidden + net.w0.shape[1], np.float32)
    for k in range(n):
        side = 0 if white[k] else 1
        if net.use[0] == 1:
            acc_refresh(acc, 0, squares[k], net)
            value = np.float64(head_pawns(acc, 0, side, net, squares[k], x))
        else:
            value = pst_eval(squares[k], side) / 100.0
        out[k] = value if side == 0 else -value
    return out


EXACT, LOWER, UPPER = 0, 1, 2
# stats[] indices
S_NODES, S_QNODES, S_SELDEPTH, S_STOPPED, S_EVALS, S_DONE, S_MOVEGEN, S_MAKES = range(8)
N_STATS = 8
# ctl[] indices: written by the driver's watcher thread while a search runs
C_STOP, C_NODE_LIMIT = 0, 1
# cfg[] indices: features on (1) or off (0)
(CFG_NULL, CFG_LMR, CFG_SEE, CFG_CHECK_EXT, CFG_RFP, CFG_FUTILITY, CFG_CHECK_PLIES, CFG_LMR_LOG, CFG_LMP,
 CFG_HISTORY_MALUS, CFG_IIR, CFG_LMR_HISTORY, CFG_IMPROVING, CFG_NULL_ADAPTIVE, CFG_CONT_HISTORY,
 CFG_SEE_PRUNE, CFG_MOPUP, N_CFG) = range(18)
# cfg[CFG_CHECK_PLIES] (0 by default) is a count, not a switch: quiesce also plays the quiet moves that give check at
# plies below it (absolute plies: meant for a capture search called at ply 0, as quiesce.QuiescenceEvaluator does;
# the search's tables keep 0, so its leaves play captures only)
# cfg[CFG_LMR_LOG] off: the reductions before the table (one ply, two after the tenth move from depth 5), kept to
# measure the table against them
SEE_VALUE = np.array([*CENTIPAWNS[:6], KING_SEE], dtype=np.int64)
LMR_TABLE = np.array([[int(LMR_BASE + np.log(d) * np.log(m) / LMR_DIVISOR) if d and m else 0 for m in range(MAX_MOVES)]
                      for d in range(MAX_PLY)], dtype=np.int64)
"""Late move reductions in plies by depth and legal move number (:data:`~knights.engine.constants.LMR_BASE`)."""

Pos = namedtuple("Pos", "board st undo hist acc changes scratch")
"""A position's arrays (:mod:`knights.engine.compiled_board`), its accumulator stack and the head's scratch."""
Tables = namedtuple("Tables", "tt_key tt_move tt_score tt_depth tt_flag killers history evals moves scores "
                              "pv pv_len stats ctl cfg root_moves root_scores trace trace_values line cont scratch")
"""The search's memory: the transposition table, killers and history, the static value at each ply of the line
(:data:`NO_EVAL` in check), per-ply move lists,
the principal variation, the counters, the controls and the root's moves and values; and,
for tests, a trace of the positions evaluated (``trace``: int8 (N, 65), the squares and the
side to move; ``trace_values``: the network's pawns for the mover), empty unless asked for. ``line[ply]``: the move
played at each ply of the line and the piece it put on its square (:func:`_played`; 0: a null move); ``cont``: the
continuation history, a quiet move's value after the opponent's last move, by that move's piece and square and its own
(``[piece + 6, to, piece + 6, to]``); ``scratch``: :func:`see`'s working rows."""


def new_tables(tt_bits: int = 20, trace: int = 0) -> Tables:
    size = 1 << tt_bits
    tables = Tables(np.zeros(size, np.int64), np.zeros(size, np.int32), np.zeros(size, np.int32),
                  np.full(size, -1, np.int16), np.zeros(size, np.int8),
                  np.zeros((MAX_PLY + 2, 2), np.int32), np.zeros((2, 64, 64), np.int64),
                  np.zeros(MAX_PLY + 2, np.int64),
                  np.zeros((MAX_PLY + 2, MAX_MOVES), np.int32), np.zeros((MAX_PLY + 2, MAX_MOVES), np.int64),
                  np.zeros((MAX_PLY + 2, MAX_PLY + 2), np.int32), np.zeros(MAX_PLY + 2, np.int64),
                  np.zeros(N_STATS, np.int64), np.zeros(4, np.int64), np.ones(N_CFG, np.int64),
                  np.zeros(MAX_MOVES, np.int32), np.zeros(MAX_MOVES, np.int64),
                  np.zeros((trace, 65), np.int8), np.zeros(trace, np.float64),
                  np.zeros(MAX_PLY + 2, np.int32), np.zeros((13, 64, 13, 64), np.int64),
                  np.zeros((3, 34), np.int64))
    tables.cfg[CFG_CHECK_PLIES] = 0
    return tables


def new_pos(hidden: int, head: int = 32) -> Pos:
    """A position's arrays for a network of ``hidden`` sums a view and a first head layer of ``head``."""
    board, st, undo, hist = new_state()
    return Pos(board, st, undo, hist, np.zeros((MAX_STACK + 1, 2, max(hidden, 1)), np.float32),
               np.zeros((4, 3), np.int64), np.zeros(2 * max(hidden, 1) + head, np.float32))


# -- evaluation -----------------------------------------------------------------------------------
@njit(**HOT)
def evaluate(p, net, t):
    """The static value for the side to move, centipawns."""
    k = t.stats[S_EVALS]
    t.stats[S_EVALS] = k + 1
    if net.use[0] == 1:
        pawns = head_pawns(p.acc, p.st[PLY], p.st[SIDE], net, p.board, p.scratch)
        if k < t.trace.shape[0]:
            for sq in range(64):
                t.trace[k, sq] = p.board[sq]
            t.trace[k, 64] = p.st[SIDE]
            t.trace_values[k] = pawns
        value = np.int64(np.round(pawns * 100.0))
    else:
        value = np.int64(pst_eval(p.board, p.st[SIDE]))
    return mop_up(p.board, p.st, value) if t.cfg[CFG_MOPUP] == 1 else value


@njit(**HOT)
def mop_up(board, st, value):
    """``value`` (centipawns for the side to move) with the mop-up term (:data:`~knights.engine.constants.MOPUP_FROM`):
    where the side behind has its king alone and the side ahead mating material, a slope that drives the lone king to
    the edge and the other king toward it."""
    if abs(value) < MOPUP_FROM:
        return value
    ahead = st[SIDE] if value > 0 else 1 - st[SIDE]         # 0 White, 1 Black
    sign = 1 if ahead == 0 else -1
    heavy = minors = 0
    for sq in range(64):
        piece = board[sq] * sign
        if piece < 0 and piece != -KING:
            return value                                    # the side behind has more than its king
        if piece in (ROOK, QUEEN):
            heavy += 1
        elif piece in (BISHOP, KNIGHT):
            minors += 1
    if heavy == 0 and minors < 2:
        return value
    lone = st[BKING] if ahead == 0 else st[WKING]
    king = st[WKING] if ahead == 0 else st[BKING]
    file, rank = lone & 7, lone >> 3
    edge = max(3 - file, file - 4) + max(3 - rank, rank - 4)
    near = 14 - abs(file - (king & 7)) - abs(rank - (king >> 3))
    bonus = MOPUP_EDGE * edge + MOPUP_CLOSE * near
    return value + bonus if value > 0 else value - bonus


@njit(**HOT)
def play(p, net, t, m):
    """Make ``m`` with the accumulators; ``False`` when illegal (nothing changed)."""
    ply = p.st[PLY]
    n = make_move(p.board, p.st, p.undo, p.hist, m, p.changes)
    if n < 0:
        return False
    t.stats[S_MAKES] += 1
    if net.use[0] == 1:
        if net.cols.shape[0] > N_PLAIN + 1:
            acc_update_zoned(p.acc, ply, p.changes, n, net, p.board, p.st)
        else:
            acc_update(p.acc, ply, p.changes, n, net.cols, net.feat)
    return True


@njit(**HOT)
def take_back(p):
    unmake_move(p.board, p.st, p.undo, p.hist)


# -- static exchange ---------------------------------------------------------------------------------
@njit(**HOT)
def _least_attacker(board, sq, by):
    """The square of ``by``'s least valuable piece attacking ``sq`` (-1: none)."""
    sign = 1 if by == 0 else -1
    i = MAILBOX64[sq]
    if by == 0:
        for d in (9, 11):
            s = MAILBOX[i + d]
            if s >= 0 and board[s] == 1:
                return s
    else:
        for d in (-9, -11):
            s = MAILBOX[i + d]
            if s >= 0 and board[s] == -1:
                return s
    for k in range(8):
        s = MAILBOX[i + KNIGHT_OFFSETS[k]]
        if s >= 0 and board[s] == 2 * sign:
            return s
    best, best_value = -1, 99
    for k in range(4):
        for kind in range(2):
            d = BISHOP_OFFSETS[k] if kind == 0 else ROOK_OFFSETS[k]
            j = i + d
            while True:
                s = MAILBOX[j]
                if s < 0:
                    break
                q = board[s] * sign
                if q != 0:
                    if q > 0 and (q == 5 or (kind == 0 and q == 3) or (kind == 1 and q == 4)) and q < best_value:
                        best, best_value = s, q
                    break
                j += d
    if best >= 0:
        return best
    for k in range(8):
        s = MAILBOX[i + KING_OFFSETS[k]]
        if s >= 0 and board[s] == 6 * sign:
            return s
    return -1


@njit(**HOT)
def see(board, side, m, scratch):
    """Static exchange: the material ``side`` wins by ``m`` and the best sequence of
    recaptures on its target square (centipawns; pinned pieces count as free). ``scratch``: int64 (3, 34), the
    search's own (``t.scratch``), so that no call allocates."""
    frm = m & 63
    to = (m >> 6) & 63
    flags = (m >> 16) & 15
    gain = scratch[0]
    removed_sq = scratch[1]
    removed_piece = scratch[2]
    nr = 0
    if flags & F_EP:
        gain[0] = SEE_VALUE[1]
        cap = to + 8 if side == 0 else to - 8
        removed_sq[nr] = cap
        removed_piece[nr] = board[cap]
        nr += 1
        board[cap] = 0
    else:
        gain[0] = SEE_VALUE[abs(board[to])]
    on_square = SEE_VALUE[abs(board[frm])]
    removed_sq[nr] = frm
    removed_piece[nr] = board[frm]
    nr += 1
    board[frm] = 0
    target = board[to]
    who = 1 - side
    d = 0
    while True:
        s = _least_attacker(board, to, who)
        if s < 0:
            break
        d += 1
        gain[d] = on_square - gain[d - 1]
        on_square = SEE_VALUE[abs(board[s])]
        removed_sq[nr] = s
        removed_piece[nr] = board[s]
        nr += 1
        board[s] = 0
        who = 1 - who
        if d >= 32:
            break
    for k in range(nr - 1, -1, -1):
        board[removed_sq[k]] = removed_piece[k]
    board[to] = target
    while d > 0:
        if -gain[d - 1] > gain[d]:
            gain[d - 1] = gain[d - 1]
        else:
            gain[d - 1] = -gain[d]
        d -= 1
    return gain[0]


NO_EVAL = -(1 << 40)
"""``t.evals[ply]`` of a node in check, which has no static value."""


# -- ordering -------------------------------------------------------------------------------------------
@njit(**HOT)
def _score_moves(p, t, ply, n, hash_move):
    moves = t.moves[ply]
    scores = t.scores[ply]
    board = p.board
    side = p.st[SIDE]
    k0 = t.killers[ply, 0]
    k1 = t.killers[ply, 1]
    use_see = t.cfg[CFG_SEE] == 1
    last = _last_move(t, ply)
    for i in range(n):
        m = moves[i]
        if m == hash_move:
            scores[i] = 1 << 40
            continue
        flags = (m >> 16) & 15
        promo = (m >> 12) & 7
        frm = m & 63
        to = (m >> 6) & 63
        if flags & F_CAPTURE:
            victim = 1 if flags & F_EP else abs(board[to])
            attacker = abs(board[frm])
            mvv = SEE_VALUE[victim] * 16 - attacker
            if use_see and SEE_VALUE[victim] < SEE_VALUE[attacker] and see(board, side, m, t.scratch) < 0:
                scores[i] = -(1 << 30) + mvv        # losing captures after every quiet move
            else:
                scores[i] = (1 << 36) + mvv + (1 << 20 if promo == QUEEN else 0)
        elif promo == QUEEN:
            scores[i] = (1 << 35)
        elif promo != 0:
            scores[i] = -(1 << 31)
        elif m == k0:
            scores[i] = 1 << 34
        elif m == k1:
            scores[i] = (1 << 34) - 1
        else:
            scores[i] = t.history[side, frm, to]
            if last != 0:
                scores[i] += t.cont[last >> 24, (last >> 6) & 63, board[frm] + 6, to]


@njit(inline="always", **HOT)
def _pick(moves, scores, start, n):
    """Bring the best-scored move of ``start:n`` to ``start`` (selection sort, one step)."""
    best = start
    for i in range(start + 1, n):
        if scores[i] > scores[best]:
            best = i
    if best != start:
        m = moves[start]
        moves[start] = moves[best]
        moves[best] = m
        s = scores[start]
        scores[start] = scores[best]
        scores[best] = s
    return moves[start]


@njit(**HOT)
def _has_pieces(board, side):
    sign = 1 if side == 0 else -1
    for sq in range(64):
        q = board[sq] * sign
        if 1 < q < 6:
            return True
    return False


@njit(inline="always", **HOT)
def _tick(t):
    """Count a node; whether the search must stop (the stop flag or the node limit)."""
    nodes = t.stats[S_NODES] + 1
    t.stats[S_NODES] = nodes
    if t.ctl[C_STOP] != 0 or (t.ctl[C_NODE_LIMIT] > 0 and nodes >= t.ctl[C_NODE_LIMIT]):
        t.stats[S_STOPPED] = 1
    return t.stats[S_STOPPED] != 0


@njit(inline="always", **HOT)
def _to_tt(score, ply):
    if score > MATE_BOUND:
        return score + ply
    if score < -MATE_BOUND:
        return score - ply
    return score


@njit(inline="always", **HOT)
def _from_tt(score, ply):
    if score > MATE_BOUND:
        return score - ply
    if score < -MATE_BOUND:
        return score + ply
    return score


# -- quiescence -----------------------------------------------------------------------------------------
@njit(**HOT)
def quiesce(p, net, t, alpha, beta, ply):
    if _tick(t):
        return 0
    t.stats[S_QNODES] += 1
    t.pv_len[ply] = 0
    if ply > t.stats[S_SELDEPTH]:
        t.stats[S_SELDEPTH] = ply
    board = p.board
    check = in_check(board, p.st)
    checks_too = ply < t.cfg[CFG_CHECK_PLIES]
    if ply >= MAX_PLY:
        return 0 if check else evaluate(p, net, t)
    if check:
        best = -MATE + ply
        n = generate(board, p.st, t.moves[ply], False)
        stand = 0
    else:
        stand = evaluate(p, net, t)
        if stand >= beta:
            return stand
        if stand > alpha:
            alpha = stand
        best = stand
        n = generate(board, p.st, t.moves[ply], not checks_too)
    _score_moves(p, t, ply, n, 0)
    moves = t.moves[ply]
    scores = t.scores[ply]
    use_see = t.cfg[CFG_SEE] == 1
    for i in range(n):
        m = _pick(moves, scores, i, n)
        quiet_move = False
        if not check:
            flags = (m >> 16) & 15
            promo = (m >> 12) & 7
            quiet_move = checks_too and flags & F_CAPTURE == 0 and promo != QUEEN
            if promo == 0 and not quiet_move:
                victim = SEE_VALUE[1] if flags & F_EP else SEE_VALUE[abs(board[(m >> 6) & 63])]
                if stand + victim + DELTA <= alpha:
                    continue               # cannot raise alpha even with a margin
                if use_see and scores[i] < 0:
                    continue               # loses material by static exchange
        if quiet_move and not may_give_check(board, p.st, m):
            continue                       # a quiet move is searched only when it gives check
        if not play(p, net, t, m):
            continue
        if quiet_move and not in_check(p.board, p.st):
            take_back(p)                   # a quiet move is searched only when it gives check
            continue
        _played(p, t, ply, m)
        score = -quiesce(p, net, t, -beta, -alpha, ply + 1)
        take_back(p)
        if t.stats[S_STOPPED] != 0:
            return 0
        if score > best:
            best = score
            if score > alpha:
                alpha = score
                _update_pv(t, ply, m)
                if score >= beta:
                    break
    return best


@njit(**HOT)
def quiesce_rows(p, net, t, boards, states, alpha, beta, out):
    """:func:`quiesce` of each position ``boards[k]``, ``states[k]`` (a board and its ``st`` as
    :func:`knights.engine.compiled_board.states_from_boards` and ``states_from_arrays`` stack them: no game
    behind it, ply 0, read from the state like the bounds, not written as a literal) into ``out[k]``
    (centipawns for the side to move), the accumulators summed afresh for each: one call judges a
    decision's positions. ``alpha`` and ``beta`` come in as int64 arguments: a literal bound here would
    ask numba for another compilation of the recursive :func:`quiesce`, which it cannot load back from
    its cache (the process crashes the next time)."""
    for k in range(boards.shape[0]):
        for sq in range(64):                    # element by element: a slice assignment may allocate (HOT)
            p.board[sq] = boards[k, sq]
        for i in range(p.st.shape[0]):
            p.st[i] = states[k, i]
        p.hist[0] = states[k, HASH]
        ply = p.st[PLY]
        if net.use[0] == 1:
            acc_refresh(p.acc, ply, p.board, net)
        for i in range(t.stats.shape[0]):
            t.stats[i] = 0
        t.ctl[C_STOP] = 0
        t.ctl[C_NODE_LIMIT] = 0
        out[k] = quiesce(p, net, t, alpha, beta, ply)


@njit(inline="always", **HOT)
def _update_pv(t, ply, m):
    t.pv[ply, 0] = m
    n = t.pv_len[ply + 1]
    for k in range(n):
        t.pv[ply, k + 1] = t.pv[ply + 1, k]
    t.pv_len[ply] = n + 1


@njit(inline="always", **HOT)
def _gravity(h, bonus):
    # toward +-HISTORY_LIMIT by the bonus, less the nearer it is: a value never leaves the limit
    return h + bonus - h * abs(bonus) // HISTORY_LIMIT


@njit(inline="always", **HOT)
def _played(p, t, ply, m):
    """Note ``m`` (just made) as the line's move at ``ply``, with the piece it put on its square in bits 24 on."""
    t.line[ply] = m | ((p.board[(m >> 6) & 63] + 6) << 24)


@njit(inline="always", **HOT)
def _last_move(t, ply):
    """The opponent's last move as :func:`_played` noted it, when the continuation history is on (0: none)."""
    return t.line[ply - 1] if ply > 0 and t.cfg[CFG_CONT_HISTORY] == 1 else 0


@njit(inline="always", **HOT)
def _nudge(t, board, side, m, bonus, last):
    frm = m & 63
    to = (m >> 6) & 63
    t.history[side, frm, to] = _gravity(t.history[side, frm, to], bonus)
    if last != 0:           # and its value after the opponent's last move (the continuation history)
        b = (last >> 6) & 63
        piece = board[frm] + 6
        t.cont[last >> 24, b, piece, to] = _gravity(t.cont[last >> 24, b, piece, to], bonus)


@njit(**HOT)
def _reward(t, board, side, m, depth, ply, i):
    """A quiet move cut off the search: it gains ``depth**2`` in the history table (and, with the continuation
    history on, after the move before it); with the malus on, the quiet moves tried before it (``t.moves[ply, :i]``,
    in the order :func:`_pick` put them) lose as much."""
    bonus = min(depth * depth, HISTORY_LIMIT // 4)
    if t.cfg[CFG_HISTORY_MALUS] == 0:
        t.history[side, m & 63, (m >> 6) & 63] += depth * depth
        return
    last = _last_move(t, ply)
    _nudge(t, board, side, m, bonus, last)
    ply_moves = t.moves[ply]
    for j in range(i):
        other = ply_moves[j]
        if ((other >> 16) & 15) & F_CAPTURE == 0 and ((other >> 12) & 7) == 0:
            _nudge(t, board, side, other, -bonus, last)


# -- the main search --------------------------------------------------------------------------------------
@njit(**HOT)
def negamax(p, net, t, depth, alpha, beta, ply, allow_null):
    # every argument of a recursive call is an int64 of its own (never a literal or a bool):
    # numba's on-disk cache mislinks recursive functions whose calls need a cast
    """The value of the position for the side to move, searched ``depth`` plies (then
    quiescence), within ``(alpha, beta)``; centipawns, mates as ``MATE - plies``."""
    board = p.board
    st = p.st
    t.pv_len[ply] = 0
    if ply > 0:
        if is_repetition(st, p.hist) or insufficient_material(board):
            return 0
        if st[HALFMOVE] >= 100:
            return 0
        # mate distance: no line from here beats a mate already found nearer the root
        if alpha < -MATE + ply:
            alpha = -MATE + ply
        if beta > MATE - ply - 1:
            beta = MATE - ply - 1
        if alpha >= beta:
            return alpha
    check = in_check(board, st)
    if check and t.cfg[CFG_CHECK_EXT] == 1:
        depth += 1
    if depth <= 0 or ply >= MAX_PLY - 1:
        return quiesce(p, net, t, alpha, beta, ply)
    if _tick(t):
        return 0
    if ply > t.stats[S_SELDEPTH]:
        t.stats[S_SELDEPTH] = ply
    pv_node = beta - alpha > 1
    h = st[HASH]
    slot = h & (t.tt_key.shape[0] - 1)
    hash_move = 0
    if t.tt_key[slot] == h:
        hash_move = t.tt_move[slot]
        if not pv_node and t.tt_depth[slot] >= depth:
            score = _from_tt(np.int64(t.tt_score[slot]), ply)
            flag = t.tt_flag[slot]
            if flag == EXACT or (flag == LOWER and score >= beta) or (flag == UPPER and score <= alpha):
                return score
    side = st[SIDE]
    if t.cfg[CFG_IIR] == 1 and hash_move == 0 and depth >= IIR_DEPTH and not check:
        depth -= 1      # no move from an earlier search to try first: a shallower look costs less and finds one
    static = 0
    improving = True        # in check, or nothing to compare with: prune as little as when improving
    if check:
        t.evals[ply] = NO_EVAL
    else:
        static = evaluate(p, net, t)
        t.evals[ply] = static
        if t.cfg[CFG_IMPROVING] == 1 and ply >= 2 and t.evals[ply - 2] != NO_EVAL:
            improving = static > t.evals[ply - 2]
        if (t.cfg[CFG_RFP] == 1 and not pv_node and depth <= REVERSE_FUTILITY_DEPTH and abs(beta) < MATE_BOUND
                and static - REVERSE_FUTILITY_MARGIN * depth >= beta):
            return static
        if (t.cfg[CFG_NULL] == 1 and allow_null == 1 and not pv_node and depth >= NULL_MIN_DEPTH and static >= beta
                and abs(beta) < MATE_BOUND and _has_pieces(board, side)):
            if t.cfg[CFG_NULL_ADAPTIVE] == 1:        # deeper and further above beta: a shallower look suffices
                r = (NULL_REDUCTION + 1 + depth // NULL_DEPTH_STEP
                     + min((static - beta) // NULL_MARGIN, NULL_MARGIN_PLIES))
            else:
                r = NULL_REDUCTION + 1 if depth >= NULL_DEEP_DEPTH else NULL_REDUCTION
            NO = np.int64(0)
            t.line[ply] = 0
            make_null(board, st, p.undo, p.hist)
            if net.use[0] == 1:
                acc_copy(p.acc, st[PLY] - 1)
            score = -negamax(p, net, t, depth - 1 - r, -beta, -beta + 1, ply + 1, NO)
            unmake_null(board, st, p.undo, p.hist)
            if t.stats[S_STOPPED] != 0:
                return 0
            if score >= beta:
                return beta
    n = generate(board, st, t.moves[ply], False)
    t.stats[S_MOVEGEN] += 1
    _score_moves(p, t, ply, n, hash_move)
    moves = t.moves[ply]
    scores = t.scores[ply]
    best = -INF
    best_move = 0
    legal = 0
    old_alpha = alpha
    YES = np.int64(1)
    futile = (t.cfg[CFG_FUTILITY] == 1 and not pv_node and not check and depth == 1
              and static + FUTILITY_MARGIN <= alpha and abs(alpha) < MATE_BOUND)
    see_prune = (t.cfg[CFG_SEE_PRUNE] == 1 and not check and depth <= SEE_PRUNE_DEPTH)
    for i in range(n):
        m = _pick(moves, scores, i, n)
        flags = (m >> 16) & 15
        quiet = (flags & F_CAPTURE) == 0 and ((m >> 12) & 7) == 0
        losing = False      # loses too much by static exchange to be searched this near the horizon (unless a check)
        if see_prune and legal >= 1 and best > -MATE_BOUND and (quiet or scores[i] < 0):
            margin = SEE_QUIET_MARGIN * depth if quiet else SEE_CAPTURE_MARGIN * depth * depth
            losing = see(board, side, m, t.scratch) < -margin
        if not play(p, net, t, m):
            continue
        _played(p, t, ply, m)
        legal += 1
        gives_check = in_check(board, st)
        if (losing or (futile and quiet and legal > 1)) and not gives_check:
            take_back(p)
            continue
        if (t.cfg[CFG_LMP] == 1 and not pv_node and not check and depth <= LMP_DEPTH and quiet and not gives_check
                and legal > (LMP_BASE + depth * depth) // (1 if improving else 2) and best > -MATE_BOUND):
            take_back(p)
            continue
        if legal == 1:
            score = -negamax(p, net, t, depth - 1, -beta, -alpha, ply + 1, YES)
        else:
            r = 0
            if (t.cfg[CFG_LMR] == 1 and depth >= LMR_MIN_DEPTH and legal > LMR_AFTER and quiet and not check
                    and not gives_check
                    and scores[i] < (1 << 34) - 1):
                if t.cfg[CFG_LMR_LOG] == 1:
                    r = LMR_TABLE[min(depth, MAX_PLY - 1), legal] - (1 if pv_node else 0) + (0 if improving else 1)
                    least = 1
                    if t.cfg[CFG_LMR_HISTORY] == 1:     # scores[i]: history + continuation history (killers left out)
                        r -= max(-2, min(2, scores[i] // LMR_HISTORY))
                        least = 0
                    r = max(least, min(r, depth - 2))
                else:
                    r = 2 if (legal > 10 and depth >= 5) else 1
            score = -negamax(p, net, t, depth - 1 - r, -alpha - 1, -alpha, ply + 1, YES)
            if score > alpha and r > 0:
                score = -negamax(p, net, t, depth - 1, -alpha - 1, -alpha, ply + 1, YES)
            if alpha < score < beta:
                score = -negamax(p, net, t, depth - 1, -beta, -alpha, ply + 1, YES)
        take_back(p)
        if t.stats[S_STOPPED] != 0:
            return 0
        if score > best:
            best = score
            best_move = m
            if score > alpha:
                alpha = score
                _update_pv(t, ply, m)
                if score >= beta:
                    if quiet:
                        if t.killers[ply, 0] != m:
                            t.killers[ply, 1] = t.killers[ply, 0]
                            t.killers[ply, 0] = m
                        _reward(t, board, side, m, depth, ply, i)
                    break
    if legal == 0:
        return -MATE + ply if check else 0
    flag = EXACT
    if best >= beta:
        flag = LOWER
    elif best <= old_alpha:
        flag = UPPER
    t.tt_key[slot] = h
    t.tt_move[slot] = best_move if flag != UPPER else hash_move
    t.tt_score[slot] = _to_tt(best, ply)
    t.tt_depth[slot] = depth
    t.tt_flag[slot] = flag
    return best


@njit(nogil=True, **HOT)
def search_root(p, net, t, depth, alpha, beta, n_root, margin):
    """One iteration over the root moves ``t.root_moves[:n_root]`` (in that order), their
    values into ``t.root_scores`` (exact for the best; a bound just below alpha for the
    others; ``margin`` >= 0: exact for every move within ``margin`` of the best).
    ``t.stats[S_DONE]`` counts the moves finished before a stop. Returns the best index
    (-1: none finished) and its value."""
    best = -INF
    best_i = -1
    t.stats[S_DONE] = 0
    t.pv_len[0] = 0
    low = alpha
    ONE = np.int64(1)
    YES = np.int64(1)
    for i in range(n_root):
        m = t.root_moves[i]
        if not play(p, net, t, m):
            t.root_scores[i] = -INF
            continue
        _played(p, t, 0, m)
        if margin >= 0:
            floor = low if best == -INF else max(low, best - margin - 1)
            score = -negamax(p, net, t, depth - 1, -beta, -floor, ONE, YES)
            if score <= floor:
                score = min(score, floor)
        elif best == -INF:
            score = -negamax(p, net, t, depth - 1, -beta, -alpha, ONE, YES)
        else:
            score = -negamax(p, net, t, depth - 1, -alpha - 1, -alpha, ONE, YES)
            if alpha < score < beta:
                score = -negamax(p, net, t, depth - 1, -beta, -alpha, ONE, YES)
            elif score <= alpha:
                score = min(score, alpha - 1)      # a bound: never a tie with the best
        take_back(p)
        if t.stats[S_STOPPED] != 0:
            break
        t.root_scores[i] = score
        t.stats[S_DONE] = i + 1
        if score > best:
            best = score
            best_i = i
            _update_pv(t, 0, m)
            if margin < 0 and score > alpha:
                alpha = score
            if score >= beta:
                break
    return best_i, best


@njit(**HOT)
def time_parts(p, net, t, reps, which):
    """For the benchmark's split of the time: repeat one part of a node ``reps`` times on
    the current position (0: the static evaluation, 1: move generation, 2: making and
    unmaking every move with the accumulators). Returns a checksum (so nothing is skipped)."""
    total = 0
    ply = p.st[PLY]
    for _ in range(reps):
        if which == 0:
            total += evaluate(p, net, t)
        elif which == 1:
            total += generate(p.board, p.st, t.moves[ply], False)
        else:
            n = generate(p.board, p.st, t.moves[ply], False)
            for i in range(n):
                if play(p, net, t, t.moves[ply, i]):
                    total += 1
                    take_back(p)
    return total


@njit(**HOT)
def frozen_constants() -> tuple[int, ...]:
    """The numbers this module's compiled code holds (numba froze them in when it compiled): a test holds them
    against :mod:`knights.engine.constants` and the piece table, so a stale cache cannot hide."""
    return (INF, MATE, MATE_BOUND, MAX_PLY, DELTA, FUTILITY_MARGIN, REVERSE_FUTILITY_MARGIN, REVERSE_FUTILITY_DEPTH,
            NULL_MIN_DEPTH, NULL_REDUCTION, LMR_AFTER, SEE_VALUE[2], SEE_VALUE[6], LMP_DEPTH, LMP_BASE,
            LMR_TABLE[8, 20], HISTORY_LIMIT, IIR_DEPTH, LMR_HISTORY, NULL_DEPTH_STEP, NULL_MARGIN, NULL_MARGIN_PLIES,
            SEE_PRUNE_DEPTH, SEE_QUIET_MARGIN, SEE_CAPTURE_MARGIN, MOPUP_FROM, MOPUP_EDGE, MOPUP_CLOSE)
