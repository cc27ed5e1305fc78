"""The compiled search: negamax alpha-beta over :mod:`knights.play.fast.board`.

Everything below the root runs inside numba-compiled code: no Python object is made and
no PyTorch call is paid at any node. The Python driver (:mod:`knights.play.fast.engine`)
runs the iterations, the aspiration windows and the clock, and talks python-chess.

Per node (:func:`negamax`):

* **draws** (repetition of any position since the last irreversible move, the fifty-move
  rule, bare kings or a lone minor piece) score 0; **mate** in ``n`` plies scores
  ``MATE - n`` (:data:`MATE` as in :mod:`knights.play.search`);
* **check extension**: a side in check is searched a ply deeper;
* a **transposition table** (always replace; hash move, bounds and exact values);
* **reverse futility** near the horizon and **null-move pruning** (R = 2, 3 from depth 7),
  never in check or at a principal-variation node, never without a piece;
* **move ordering**: the hash move, winning and equal captures by static exchange
  (most valuable victim, least valuable attacker among them), queen promotions, two
  killers per ply, quiet moves by the history table, losing captures last;
* **principal-variation search** with **late move reductions** (quiet moves after the
  fourth, from depth 3, one ply or two);
* **quiescence search** at the horizon: stand pat on the static value, captures that do
  not lose material by static exchange (:func:`see`) and queen promotions; in check every
  evasion, no standing pat.

Static values come from :mod:`knights.play.incremental`: EL/v13's head on the
accumulators (kept per ply on make, popped on unmake), or the piece-square fallback.
``cfg`` switches each pruning feature on or off (:data:`CFG_NULL` ...), so self-play
matches can measure what each one is worth without recompiling.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from knights.play.fast.board import (
    BISHOP_OFFSETS,
    F_CAPTURE,
    F_EP,
    HALFMOVE,
    HASH,
    KING_OFFSETS,
    KNIGHT_OFFSETS,
    MAILBOX,
    MAILBOX64,
    MAX_MOVES,
    MAX_STACK,
    PLY,
    QUEEN,
    ROOK_OFFSETS,
    SIDE,
    generate,
    in_check,
    insufficient_material,
    is_repetition,
    make_move,
    make_null,
    unmake_move,
    unmake_null,
)
from knights.play.incremental import acc_copy, acc_update, head_pawns, pst_eval

INF = 1_000_000
MATE = 100_000
MATE_BOUND = MATE - 1_000
MAX_PLY = 128
EXACT, LOWER, UPPER = 0, 1, 2
# stats[] indices
S_NODES, S_QNODES, S_SELDEPTH, S_STOPPED, S_EVALS, S_DONE, S_MOVEGEN, S_MAKES = range(8)
N_STATS = 8
# ctl[] indices: written by the driver's watcher thread while a search runs
C_STOP, C_NODE_LIMIT = 0, 1
# cfg[] indices: features on (1) or off (0)
CFG_NULL, CFG_LMR, CFG_SEE, CFG_CHECK_EXT, CFG_RFP, CFG_FUTILITY, N_CFG = range(7)
SEE_VALUE = np.array([0, 100, 320, 330, 500, 950, 20000], dtype=np.int64)
RFP_MARGIN = 120
FUTILITY_MARGIN = 150
DELTA = 200

Pos = namedtuple("Pos", "board st undo hist acc changes")
"""A position's arrays (:mod:`knights.play.fast.board`) and its accumulator stack."""
Tables = namedtuple("Tables", "tt_key tt_move tt_score tt_depth tt_flag killers history moves scores "
                              "pv pv_len stats ctl cfg root_moves root_scores trace trace_values")
"""The search's memory: the transposition table, killers and history, per-ply move lists,
the principal variation, the counters, the controls and the root's moves and values; and,
for tests, a trace of the positions evaluated (``trace``: int8 (N, 65), the squares and the
side to move; ``trace_values``: the network's pawns for the mover), empty unless asked for."""


def new_tables(tt_bits: int = 20, trace: int = 0) -> Tables:
    size = 1 << tt_bits
    return Tables(np.zeros(size, np.int64), np.zeros(size, np.int32), np.zeros(size, np.int32),
                  np.full(size, -1, np.int16), np.zeros(size, np.int8),
                  np.zeros((MAX_PLY + 2, 2), np.int32), np.zeros((2, 64, 64), np.int64),
                  np.zeros((MAX_PLY + 2, MAX_MOVES), np.int32), np.zeros((MAX_PLY + 2, MAX_MOVES), np.int64),
                  np.zeros((MAX_PLY + 2, MAX_PLY + 2), np.int32), np.zeros(MAX_PLY + 2, np.int64),
                  np.zeros(N_STATS, np.int64), np.zeros(4, np.int64), np.ones(N_CFG, np.int64),
                  np.zeros(MAX_MOVES, np.int32), np.zeros(MAX_MOVES, np.int64),
                  np.zeros((trace, 65), np.int8), np.zeros(trace, np.float64))


def new_pos(hidden: int) -> Pos:
    from knights.play.fast.board import new_state

    board, st, undo, hist = new_state()
    return Pos(board, st, undo, hist, np.zeros((MAX_STACK + 1, 2, max(hidden, 1)), np.float32),
               np.zeros((4, 3), np.int64))


# -- evaluation -----------------------------------------------------------------------------------
@njit(cache=True)
def evaluate(p, net, t):
    """The static value for the side to move, centipawns."""
    k = t.stats[S_EVALS]
    t.stats[S_EVALS] = k + 1
    if net.use[0] == 1:
        pawns = head_pawns(p.acc, p.st[PLY], p.st[SIDE], net)
        if k < t.trace.shape[0]:
            t.trace[k, :64] = p.board
            t.trace[k, 64] = p.st[SIDE]
            t.trace_values[k] = pawns
        return np.int64(np.round(pawns * 100.0))
    return np.int64(pst_eval(p.board, p.st[SIDE]))


@njit(cache=True)
def play(p, net, t, m):
    """Make ``m`` with the accumulators; ``False`` when illegal (nothing changed)."""
    ply = p.st[PLY]
    n = make_move(p.board, p.st, p.undo, p.hist, m, p.changes)
    if n < 0:
        return False
    t.stats[S_MAKES] += 1
    if net.use[0] == 1:
        acc_update(p.acc, ply, p.changes, n, net)
    return True


@njit(cache=True)
def take_back(p):
    unmake_move(p.board, p.st, p.undo, p.hist)


# -- static exchange ---------------------------------------------------------------------------------
@njit(cache=True)
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


@njit(cache=True)
def see(board, side, m):
    """Static exchange: the material ``side`` wins by ``m`` and the best sequence of
    recaptures on its target square (centipawns; pinned pieces count as free)."""
    frm = m & 63
    to = (m >> 6) & 63
    flags = (m >> 16) & 15
    gain = np.zeros(34, np.int64)
    removed_sq = np.zeros(34, np.int64)
    removed_piece = np.zeros(34, np.int8)
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


# -- ordering -------------------------------------------------------------------------------------------
@njit(cache=True)
def _score_moves(p, t, ply, n, hash_move, quiet_too):
    moves = t.moves[ply]
    scores = t.scores[ply]
    board = p.board
    side = p.st[SIDE]
    k0 = t.killers[ply, 0]
    k1 = t.killers[ply, 1]
    use_see = t.cfg[CFG_SEE] == 1
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
            if use_see and SEE_VALUE[victim] < SEE_VALUE[attacker] and see(board, side, m) < 0:
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


@njit(cache=True, inline="always")
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


@njit(cache=True)
def _has_pieces(board, side):
    sign = 1 if side == 0 else -1
    for sq in range(64):
        q = board[sq] * sign
        if 1 < q < 6:
            return True
    return False


@njit(cache=True, inline="always")
def _tick(t):
    """Count a node; whether the search must stop (the stop flag or the node limit)."""
    nodes = t.stats[S_NODES] + 1
    t.stats[S_NODES] = nodes
    if t.ctl[C_STOP] != 0 or (t.ctl[C_NODE_LIMIT] > 0 and nodes >= t.ctl[C_NODE_LIMIT]):
        t.stats[S_STOPPED] = 1
    return t.stats[S_STOPPED] != 0


@njit(cache=True, inline="always")
def _to_tt(score, ply):
    if score > MATE_BOUND:
        return score + ply
    if score < -MATE_BOUND:
        return score - ply
    return score


@njit(cache=True, inline="always")
def _from_tt(score, ply):
    if score > MATE_BOUND:
        return score - ply
    if score < -MATE_BOUND:
        return score + ply
    return score


# -- quiescence -----------------------------------------------------------------------------------------
@njit(cache=True)
def quiesce(p, net, t, alpha, beta, ply):
    if _tick(t):
        return 0
    t.stats[S_QNODES] += 1
    t.pv_len[ply] = 0
    if ply > t.stats[S_SELDEPTH]:
        t.stats[S_SELDEPTH] = ply
    board = p.board
    check = in_check(board, p.st)
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
        n = generate(board, p.st, t.moves[ply], True)
    _score_moves(p, t, ply, n, 0, check)
    moves = t.moves[ply]
    scores = t.scores[ply]
    use_see = t.cfg[CFG_SEE] == 1
    for i in range(n):
        m = _pick(moves, scores, i, n)
        if not check:
            flags = (m >> 16) & 15
            promo = (m >> 12) & 7
            if promo == 0:
                victim = SEE_VALUE[1] if flags & F_EP else SEE_VALUE[abs(board[(m >> 6) & 63])]
                if stand + victim + DELTA <= alpha:
                    continue               # cannot raise alpha even with a margin
                if use_see and scores[i] < 0:
                    continue               # loses material by static exchange
        if not play(p, net, t, m):
            continue
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


@njit(cache=True, inline="always")
def _update_pv(t, ply, m):
    t.pv[ply, 0] = m
    n = t.pv_len[ply + 1]
    for k in range(n):
        t.pv[ply, k + 1] = t.pv[ply + 1, k]
    t.pv_len[ply] = n + 1


# -- the main search --------------------------------------------------------------------------------------
@njit(cache=True)
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
    static = 0
    if not check:
        static = evaluate(p, net, t)
        if (t.cfg[CFG_RFP] == 1 and not pv_node and depth <= 3 and abs(beta) < MATE_BOUND
                and static - RFP_MARGIN * depth >= beta):
            return static
        if (t.cfg[CFG_NULL] == 1 and allow_null == 1 and not pv_node and depth >= 3 and static >= beta
                and abs(beta) < MATE_BOUND and _has_pieces(board, side)):
            r = 3 if depth >= 7 else 2
            NO = np.int64(0)
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
    _score_moves(p, t, ply, n, hash_move, True)
    moves = t.moves[ply]
    scores = t.scores[ply]
    best = -INF
    best_move = 0
    legal = 0
    old_alpha = alpha
    YES = np.int64(1)
    futile = (t.cfg[CFG_FUTILITY] == 1 and not pv_node and not check and depth == 1
              and static + FUTILITY_MARGIN <= alpha and abs(alpha) < MATE_BOUND)
    for i in range(n):
        m = _pick(moves, scores, i, n)
        flags = (m >> 16) & 15
        quiet = (flags & F_CAPTURE) == 0 and ((m >> 12) & 7) == 0
        if not play(p, net, t, m):
            continue
        legal += 1
        gives_check = in_check(board, st)
        if futile and quiet and legal > 1 and not gives_check:
            take_back(p)
            continue
        if legal == 1:
            score = -negamax(p, net, t, depth - 1, -beta, -alpha, ply + 1, YES)
        else:
            r = 0
            if (t.cfg[CFG_LMR] == 1 and depth >= 3 and legal > 4 and quiet and not check and not gives_check
                    and scores[i] < (1 << 34) - 1):
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
                        t.history[side, m & 63, (m >> 6) & 63] += depth * depth
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


@njit(cache=True, nogil=True)
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
