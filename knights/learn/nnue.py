"""EL V13's family: an efficiently updatable network over sparse piece-square features.

The idea of Stockfish's NNUE (Nasu 2018), at the size of this project::

    features of the mover (32 indices)  -> sum of their columns + bias = accumulator (H)
    features of the other side          -> the same columns            = accumulator (H)
    [mover's, other's] clipped to [0, 1] (2H) -> Linear 32 -> clip -> Linear 32 -> clip -> Linear 1
    -> z, the mover's win-probability logit -> pawns from White's side = +-z / PAWN_LOGIT

The first layer is a lookup: its output is the sum of one learned column per piece on
the board (:mod:`knights.features.sparse`). A move changes only the columns of the
pieces it moves, so a search keeps both accumulators and adds and subtracts a few
columns per move instead of recomputing 32 (:mod:`knights.play.incremental`); only the
small head runs at every node. Training sums the columns as one sparse-matrix product
for the whole batch (both sides at once): the rows are positions, the columns features,
a 1 wherever a piece stands; on 2 CPU cores that is about 1.6x faster than
``nn.EmbeddingBag``, whose backward pass sorts every index.

The output in eval mode is clipped to the targets' +-10 pawns; in train mode it is
not, so the win-probability loss (:class:`knights.learn.training.WinProbTask`) sees
the raw logit.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import torch
from torch import nn

from knights.features.sparse import MAX_PIECES, N_FEATURES, PAD
from knights.learn.targets import MAX_PAWNS, PAWN_LOGIT


class SparseNet(nn.Module):
    """``hidden``: the accumulator's width per side; ``head``: the hidden widths after it."""

    def __init__(self, hidden: int = 128, head: Sequence[int] = (32, 32)) -> None:
        super().__init__()
        self.hidden = hidden
        bound = 0.5 / MAX_PIECES ** 0.5   # 32 pieces' columns sum to about +-0.3
        self.columns = nn.Parameter(torch.empty(N_FEATURES, hidden).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.full((hidden,), 0.5))   # start inside the clipped ReLU's slope
        layers: list[nn.Module] = []
        width = 2 * hidden
        for h in head:
            layers += [nn.Linear(width, h), ClippedReLU()]
            width = h
        layers.append(nn.Linear(width, 1))
        self.head = nn.Sequential(*layers)

    def accumulator(self, features: torch.Tensor) -> torch.Tensor:
        """The first layer's sums for padded feature lists (N, 32) -> (N, hidden)."""
        sums: torch.Tensor = _SparseSum.apply(one_hot_rows(features, N_FEATURES), self.columns)  # type: ignore[no-untyped-call]
        return sums + self.bias

    def logit(self, mover: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
        """The mover's win-probability logit, shape (N,)."""
        both = self.accumulator(torch.cat([mover, other]))     # one product for both sides
        n = mover.shape[0]
        x = torch.cat([both[:n], both[n:]], dim=1).clamp(0.0, 1.0)
        z: torch.Tensor = self.head(x).squeeze(1)
        return z

    def forward(self, mover: torch.Tensor, other: torch.Tensor, white: torch.Tensor) -> torch.Tensor:
        """Pawns from White's side (eval mode: clipped to +-10)."""
        sign = white.to(torch.float32) * 2.0 - 1.0
        pawns = sign * self.logit(mover, other) / PAWN_LOGIT
        return pawns if self.training else pawns.clamp(-MAX_PAWNS, MAX_PAWNS)


def one_hot_rows(features: torch.Tensor, width: int) -> torch.Tensor:
    """Padded feature lists (N, 32) as a sparse CSR matrix (N, width) of ones (pads dropped)."""
    kept = features != PAD
    counts = kept.sum(dim=1)
    crow = torch.zeros(features.shape[0] + 1, dtype=torch.int64, device=features.device)
    torch.cumsum(counts, 0, out=crow[1:])
    cols = features[kept]
    values = torch.ones(cols.shape[0], dtype=torch.float32, device=features.device)
    with warnings.catch_warnings():   # "sparse CSR support is in beta": the two products used here are tested
        warnings.simplefilter("ignore", UserWarning)
        return torch.sparse_csr_tensor(crow, cols, values, size=(features.shape[0], width), check_invariants=False)


class _SparseSum(torch.autograd.Function):
    """``rows @ columns`` for a sparse 0/1 ``rows``; the backward pass gives the columns'
    gradient only (``rows.T @ grad``), as the features are data."""

    @staticmethod
    def forward(ctx: torch.autograd.function.FunctionCtx, rows: torch.Tensor,
                columns: torch.Tensor) -> torch.Tensor:
        ctx.rows = rows  # type: ignore[attr-defined]
        return rows @ columns

    @staticmethod
    def backward(ctx: torch.autograd.function.FunctionCtx, grad: torch.Tensor) -> tuple[None, torch.Tensor]:
        rows: torch.Tensor = ctx.rows  # type: ignore[attr-defined]
        return None, rows.t() @ grad


class ClippedReLU(nn.Module):
    """``min(max(x, 0), 1)``: NNUE's activation (bounded, so integer versions stay in range)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.clamp(0.0, 1.0)
