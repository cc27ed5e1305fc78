"""EL/v13's network shape (every sparse network the search plays) in the search: accumulators updated move by move.

:class:`knights.learn.nnue.SparseNet` sums one learned column per piece (seen from White
and from Black, :mod:`knights.features.sparse`) into two accumulators, then runs a small
head on both. A move changes two to four pieces' squares, so the compiled search
(:mod:`knights.engine.compiled`) keeps a stack of accumulator pairs, one per ply: making a
move copies the parent's pair and adds and subtracts the columns of the pieces that moved,
were captured, promoted or castled (``acc_update``); unmaking a move just pops the stack.
Only the root is summed from scratch (:func:`acc_refresh`), and, for a network with the king's
zones, a view whose king moves into another zone. A static evaluation is then
the head alone (:func:`head_pawns`: 256 -> 32 -> 32 -> 1, about 9,000 multiply-adds).
Those compiled functions live in :mod:`knights.engine.compiled` with the rest of the
compiled search (one file, so that numba's disk cache never mixes versions); this module
packs the weights for them and offers the network through the Evaluator interface.

Without trained weights the search uses ``pst_eval``, a material + piece-square count
written there (centipawns), never the network's random initialisation.

The weights are checked when loaded (:func:`pack`): a network with a NaN or an infinite
weight is refused, so the search never plays on a NaN evaluation.
"""

from __future__ import annotations

from collections import namedtuple
from pathlib import Path
from typing import Any

import numpy as np

from knights.engine.compiled import MAX_PAWNS, PAWN_LOGIT, PST, acc_refresh, evaluate_squares, head_pawns
from knights.features.sparse import KING_ZONE, N_FEATURES, N_KING_ZONES

__all__ = ["MAX_PAWNS", "PAWN_LOGIT", "PST", "Net", "NetEvaluator", "acc_refresh", "feature_table", "files_mirrored",
           "head_pawns", "load_net", "pack"]


Net = namedtuple("Net", "use cols bias w0 b0 w2 b2 w4 b4 feat zone")
"""The packed network: ``use`` (int64[1]: 1 network, 0 the piece-square fallback), the
accumulator's columns (768 per zone and one empty row, H) and bias (H,), the head's layers stacked one row per head
(float32, C-contiguous: ``w0`` (B, 32, 2H), ``b0`` (B, 32), ..., ``b4`` (B,); B = 1 but for a
network with heads by men on the board, :func:`knights.engine.compiled.head_bucket`), and
``feat[view, code + 6, square]``, each piece's feature from White's (0) and Black's (1) view,
and ``zone`` (int64[64]), the zone of a king's square seen from its side (all 0 without zones).
A network trained with the king's zones (a plain column and a zone's column per piece,
:mod:`knights.features.sparse`) is packed with the two added up: one block of 768 columns per
zone, so the search sums one column per piece either way."""


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
    """A :class:`Net` from a SparseNet (or BucketedSparseNet) state dict (tensors or arrays);
    ``None``: the material + piece-square fallback. The head's layers are stacked, one row per
    head (one for a SparseNet). Refuses non-finite weights."""
    feat = feature_table()
    flat = np.zeros(64, np.int64)
    if state is None:
        z = np.zeros((1, 1, 1), np.float32)
        one = np.zeros((1, 1), np.float32)
        return Net(np.zeros(1, np.int64), np.zeros((N_FEATURES + 1, 1), np.float32), np.zeros(1, np.float32),
                   z, one, z, one, one, np.zeros(1, np.float32), feat, flat)

    def arr(key: str) -> np.ndarray:
        value = state[key]
        value = value.detach().cpu().numpy() if hasattr(value, "detach") else np.asarray(value)
        out = np.ascontiguousarray(value, dtype=np.float32)
        if not np.isfinite(out).all():
            raise ValueError(f"the network's {key} holds NaN or infinite weights: refusing to search with it")
        return out

    cols = arr("columns")
    hidden = cols.shape[1]
    if cols.shape[0] == N_FEATURES:
        blocks, zone = cols, flat
    elif cols.shape[0] == N_FEATURES * (1 + N_KING_ZONES):     # plain + each zone's: one block per zone
        plain = cols[:N_FEATURES]
        blocks = np.concatenate([plain + cols[N_FEATURES * (1 + z):N_FEATURES * (2 + z)] for z in range(N_KING_ZONES)])
        zone = KING_ZONE.astype(np.int64)
    else:
        raise ValueError(f"expected {N_FEATURES} or {N_FEATURES * (1 + N_KING_ZONES)} feature columns, "
                         f"got {cols.shape[0]}")
    padded = np.zeros((len(blocks) + 1, hidden), np.float32)    # the last row: the empty square, zero
    padded[:len(blocks)] = blocks
    heads = sorted({int(k.split(".")[1]) for k in state if k.startswith("heads.")})
    prefixes = [f"heads.{b}." for b in heads] if heads else ["head."]
    if heads != list(range(len(heads))):
        raise ValueError(f"the network's heads are numbered {heads}, not 0 to {len(heads) - 1}")

    def stacked(layer: str, shape: tuple[int, ...]) -> np.ndarray:
        return np.ascontiguousarray(np.stack([arr(p + layer).reshape(shape) for p in prefixes]))

    first = arr(prefixes[0] + "0.weight")
    if first.shape[1] != 2 * hidden:
        raise ValueError(f"the head's first layer takes {first.shape[1]} inputs, not 2 x {hidden}")
    w0 = stacked("0.weight", first.shape)
    return Net(np.ones(1, np.int64), padded, arr("bias"), w0, stacked("0.bias", (-1,)),
               stacked("2.weight", arr(prefixes[0] + "2.weight").shape), stacked("2.bias", (-1,)),
               stacked("4.weight", (-1,)), np.concatenate([arr(p + "4.bias").reshape(-1) for p in prefixes]), feat,
               zone)


def files_mirrored(net: Net) -> Net:
    """``net`` seen in a mirror held beside the board: the column of a piece on a square is the column ``net`` has
    for it on the same rank's other side (files a-h reversed, square XOR 7, from both views), so the mirrored
    network's value of a position is ``net``'s value of that position with its files reversed. Without castling
    rights a position and its mirror are the same chess (the networks trained on both,
    :meth:`~knights.data.chunks.Encoded.file_flipped`), so the mean of the two is a second opinion of the same
    weights, for nothing but the search. Refuses a network with the king's zones (its zones tell the king's sides
    apart) and the piece-square fallback.

    >>> net = pack({"columns": np.eye(N_FEATURES, 2, dtype=np.float32), "bias": np.zeros(2, np.float32),
    ...             **{f"head.{i}.{p}": np.zeros(s, np.float32) for i, p, s in
    ...                [(0, "weight", (32, 4)), (0, "bias", 32), (2, "weight", (32, 32)), (2, "bias", 32),
    ...                 (4, "weight", (1, 32)), (4, "bias", 1)]}})
    >>> files_mirrored(net).cols[7].tolist(), files_mirrored(files_mirrored(net)).cols[7].tolist()
    ([1.0, 0.0], [0.0, 0.0])
    """
    if not net.use[0]:
        raise ValueError("the piece-square fallback has no columns to mirror")
    if len(net.cols) != N_FEATURES + 1:
        raise ValueError(f"only a network of {N_FEATURES} columns a view is mirrored (this one has "
                         f"{len(net.cols) - 1}: the king's zones tell the king's sides apart)")
    mirror = (np.arange(N_FEATURES) ^ 7)              # the same owner, type and rank, the other file
    cols = net.cols.copy()
    cols[:N_FEATURES] = net.cols[mirror]
    return net._replace(cols=np.ascontiguousarray(cols))


def load_net(source: str | Path | None) -> Net:
    """The packed network of a version name (``"EL/v13"``), a weights file (a SparseNet's or a
    BucketedSparseNet's, checked and loaded without executing code), or ``None`` (the
    piece-square fallback)."""
    if source is None:
        return pack(None)
    from knights.learn import registry
    from knights.learn.modelfile import ModelFileError, expand_state, load_state

    text = str(source)
    path = Path(text)
    if text.startswith("EL/") or text.startswith("SL/"):      # its weights file, read as arrays: no module built
        version = registry.get(text)
        path = version.weights()
        if not path.is_file():
            raise registry.MissingWeights(registry.missing_weights(version.name, path))
    state = expand_state(load_state(path))     # any width, one head or heads by men
    try:
        return pack(state)
    except KeyError as exc:
        raise ModelFileError(f"{text}: not a sparse network's weights (no {exc.args[0]!r})") from None


def accumulator_width(net: Net) -> int:
    return int(net.cols.shape[1])


class NetEvaluator:
    """A packed network (or the piece-square fallback) behind the batched
    :class:`~knights.evaluate.base.Evaluator` interface: pawns from White's side, no torch.
    A one-ply bot of a compiled network named at depth 1
    (:func:`~knights.engine.build.build`) uses it."""

    def __init__(self, net: Net, name: str) -> None:
        self.net = net
        self.name = name

    def evaluate(self, positions: Any) -> np.ndarray:
        squares = np.ascontiguousarray(positions.squares, dtype=np.int8)
        white = np.ascontiguousarray(positions.white, dtype=np.int8)
        return np.asarray(evaluate_squares(squares, white, self.net))
