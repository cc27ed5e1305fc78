"""EL/v13 inside the search: accumulators updated move by move, the small head per node.

:class:`knights.learn.nnue.SparseNet` sums one learned column per piece (seen from White
and from Black, :mod:`knights.features.sparse`) into two accumulators, then runs a small
head on both. A move changes two to four pieces' squares, so the compiled search
(:mod:`knights.play.fast.search`) keeps a stack of accumulator pairs, one per ply: making a
move copies the parent's pair and adds and subtracts the columns of the pieces that moved,
were captured, promoted or castled (:func:`acc_update`); unmaking a move just pops the
stack. Only the root is summed from scratch (:func:`acc_refresh`). A static evaluation is
then the head alone (:func:`head_pawns`: 256 -> 32 -> 32 -> 1, about 9,000 multiply-adds).

Without trained weights the search uses :func:`pst_eval`, a material + piece-square count
written here (centipawns), never the network's random initialisation.

The weights are checked when loaded (:func:`pack`): a network with a NaN or an infinite
weight is refused, so the search never plays on a NaN evaluation.
"""

from __future__ import annotations

from collections import namedtuple
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

PAWN_LOGIT = 0.368208
"""Win-probability slope per pawn (knights.learn.targets.PAWN_LOGIT; a test keeps them equal)."""
MAX_PAWNS = 10.0
N_FEATURES = 768

Net = namedtuple("Net", "use cols bias w0 b0 w2 b2 w4 b4 feat")
"""The packed network: ``use`` (int64[1]: 1 network, 0 the piece-square fallback), the
accumulator's columns (768, H) and bias (H,), the head's layers (float32, C-contiguous),
and ``feat[view, code + 6, square]``, each piece's feature from White's (0) and Black's
(1) view."""


def feature_table() -> np.ndarray:
    """``feat[view, code + 6, square]``: knights.features.sparse.feature_index for every
    piece and square (768 for an empty square), from White's (0) and Black's (1) view."""
    table = np.full((2, 13, 64), N_FEATURES, dtype=np.int64)
    for view in (0, 1):
        for code in range(-6, 7):
            if code == 0:
                continue
            own = (code > 0) == (view == 0)
            for sq in range(64):
                s = sq if view == 0 else sq ^ 56
                table[view, code + 6, sq] = (0 if own else 384) + 64 * (abs(code) - 1) + s
    return table


def pack(state: dict[str, Any] | None) -> Net:
    """A :class:`Net` from a SparseNet state dict (tensors or arrays); ``None``: the
    material + piece-square fallback. Refuses non-finite weights."""
    feat = feature_table()
    if state is None:
        z = np.zeros((1, 1), np.float32)
        return Net(np.zeros(1, np.int64), np.zeros((N_FEATURES + 1, 1), np.float32), np.zeros(1, np.float32),
                   z, np.zeros(1, np.float32), z, np.zeros(1, np.float32), np.zeros(1, np.float32),
                   np.zeros(1, np.float32), feat)

    def arr(key: str) -> np.ndarray:
        value = state[key]
        value = value.detach().cpu().numpy() if hasattr(value, "detach") else np.asarray(value)
        out = np.ascontiguousarray(value, dtype=np.float32)
        if not np.isfinite(out).all():
            raise ValueError(f"the network's {key} holds NaN or infinite weights: refusing to search with it")
        return out

    cols = arr("columns")
    hidden = cols.shape[1]
    if cols.shape[0] != N_FEATURES:
        raise ValueError(f"expected {N_FEATURES} feature columns, got {cols.shape[0]}")
    padded = np.zeros((N_FEATURES + 1, hidden), np.float32)    # row 768: the empty square, zero
    padded[:N_FEATURES] = cols
    w0 = arr("head.0.weight")
    if w0.shape[1] != 2 * hidden:
        raise ValueError(f"the head's first layer takes {w0.shape[1]} inputs, not 2 x {hidden}")
    return Net(np.ones(1, np.int64), padded, arr("bias"), w0, arr("head.0.bias"), arr("head.2.weight"),
               arr("head.2.bias"), arr("head.4.weight").reshape(-1), arr("head.4.bias").reshape(-1), feat)


def load_net(source: str | Path | None) -> Net:
    """The packed network of a version name (``"EL/v13"``), a weights file, or ``None``
    (the piece-square fallback)."""
    if source is None:
        return pack(None)
    import torch

    from knights.learn import registry
    from knights.learn.modelfile import load_into
    from knights.learn.nnue import SparseNet

    text = str(source)
    if text.startswith("EL/") or text.startswith("SL/"):
        model, _ = registry.get(text).load()
    else:
        model = load_into(SparseNet(), Path(text))
    with torch.no_grad():
        return pack(dict(model.state_dict()))


def accumulator_width(net: Net) -> int:
    return int(net.cols.shape[1])


# -- the compiled parts --------------------------------------------------------------------------
@njit(cache=True)
def acc_refresh(acc, ply, board, net):
    """Both accumulators of ``board`` from scratch into ``acc[ply]`` (``acc``: float32
    (stack, 2, H))."""
    hidden = net.cols.shape[1]
    for v in range(2):
        a = acc[ply, v]
        for i in range(hidden):
            a[i] = net.bias[i]
        for sq in range(64):
            p = board[sq]
            if p != 0:
                f = net.feat[v, p + 6, sq]
                for i in range(hidden):
                    a[i] += net.cols[f, i]


@njit(cache=True)
def acc_update(acc, ply, changes, n, net):
    """``acc[ply + 1]`` = ``acc[ply]`` with the columns of ``changes[:n]`` (code, square,
    +1 joined / -1 left) added or subtracted, in both views."""
    hidden = net.cols.shape[1]
    for v in range(2):
        src = acc[ply, v]
        dst = acc[ply + 1, v]
        for i in range(hidden):
            dst[i] = src[i]
        for k in range(n):
            f = net.feat[v, changes[k, 0] + 6, changes[k, 1]]
            if changes[k, 2] > 0:
                for i in range(hidden):
                    dst[i] += net.cols[f, i]
            else:
                for i in range(hidden):
                    dst[i] -= net.cols[f, i]


@njit(cache=True)
def acc_copy(acc, ply):
    """``acc[ply + 1]`` = ``acc[ply]`` (a null move)."""
    acc[ply + 1, :, :] = acc[ply, :, :]


@njit(cache=True)
def head_logit(acc, ply, side, net):
    """The mover's win-probability logit from the accumulators at ``acc[ply]``, ``side`` to
    move (0 White): the head on [mover's sums, other's sums] clipped to [0, 1]."""
    hidden = net.cols.shape[1]
    w0 = net.w0
    n0 = w0.shape[0]
    x = np.empty(2 * hidden, np.float32)
    mover = acc[ply, side]
    other = acc[ply, 1 - side]
    for i in range(hidden):
        a = mover[i]
        x[i] = 0.0 if a < 0.0 else (1.0 if a > 1.0 else a)
        b = other[i]
        x[hidden + i] = 0.0 if b < 0.0 else (1.0 if b > 1.0 else b)
    h1 = np.empty(n0, np.float32)
    for j in range(n0):
        s = np.float32(0.0)
        row = w0[j]
        for i in range(2 * hidden):
            s += row[i] * x[i]
        s += net.b0[j]
        h1[j] = 0.0 if s < 0.0 else (1.0 if s > 1.0 else s)
    w2 = net.w2
    n2 = w2.shape[0]
    z = np.float32(net.b4[0])
    for j in range(n2):
        s = np.float32(0.0)
        row = w2[j]
        for i in range(n0):
            s += row[i] * h1[i]
        s += net.b2[j]
        s = 0.0 if s < 0.0 else (1.0 if s > 1.0 else s)
        z += net.w4[j] * s
    return z


@njit(cache=True)
def head_pawns(acc, ply, side, net):
    """The network's value for the side to move, pawns, clipped to +-10 (SparseNet in eval mode)."""
    p = head_logit(acc, ply, side, net) / PAWN_LOGIT
    if p > MAX_PAWNS:
        return MAX_PAWNS
    if p < -MAX_PAWNS:
        return -MAX_PAWNS
    return p


# -- the fallback: material and piece-square (centipawns, White's side of the board) ---------------------
def _pst() -> np.ndarray:
    """``pst[code + 6, square]`` in centipawns for White (positive) and Black (negative):
    material plus a few positional terms, written out as formulas rather than tables."""
    values = {1: 100, 2: 310, 3: 325, 4: 490, 5: 920, 6: 0}
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


@njit(cache=True)
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
    for k in range(n):
        side = 0 if white[k] else 1
        if net.use[0] == 1:
            acc_refresh(acc, 0, squares[k], net)
            value = np.float64(head_pawns(acc, 0, side, net))
        else:
            value = pst_eval(squares[k], side) / 100.0
        out[k] = value if side == 0 else -value
    return out


class NetEvaluator:
    """A packed network (or the piece-square fallback) behind the batched
    :class:`~knights.evaluate.base.Evaluator` interface: pawns from White's side, no torch.
    The one-ply stage of :class:`~knights.play.fast.engine.FastSearchEngine` uses it."""

    def __init__(self, net: Net, name: str) -> None:
        self.net = net
        self.name = name

    def evaluate(self, positions: Any) -> np.ndarray:
        squares = np.ascontiguousarray(positions.squares, dtype=np.int8)
        white = np.ascontiguousarray(positions.white, dtype=np.int8)
        return np.asarray(evaluate_squares(squares, white, self.net))
