"""EL V13's family: an efficiently updatable network over sparse piece-square features.

The idea of Stockfish's NNUE (Nasu 2018), at the size of this project::

    features of the mover (32 indices, 64 with the king's zones) -> sum of their columns + bias = accumulator (H)
    features of the other side          -> the same columns            = accumulator (H)
    [mover's, other's] clipped to [0, 1] (2H) -> Linear 32 -> clip -> Linear 32 -> clip -> Linear 1
    -> z, the mover's win-probability logit -> pawns from White's side = +-z / PAWN_LOGIT

The first layer is a lookup: its output is the sum of one learned column per piece on
the board (:mod:`knights.features.sparse`). A move changes only the columns of the
pieces it moves, so a search keeps both accumulators and adds and subtracts a few
columns per move instead of recomputing 32 (:mod:`knights.engine.incremental`); only the
small head runs at every node. Training sums the columns as one sparse-matrix product
for the whole batch (both sides at once): the rows are positions, the columns features,
a 1 wherever a piece stands; its backward pass multiplies by the transposed matrix,
built by one radix sort of the batch's indices (:class:`_SparseSum`). On 2 CPU cores
that is faster than ``nn.EmbeddingBag`` (``knights bench train_sparse`` measures by how much).

The output in eval mode is clipped to the targets' +-10 pawns; in train mode it is
not, so the win-probability loss (:class:`knights.learn.training.WinProbTask`) sees
the raw logit.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import torch
from torch import nn

from knights.features.sparse import MAX_PIECES, N_FEATURES
from knights.learn.targets import MAX_PAWNS, PAWN_LOGIT


class SparseNet(nn.Module):
    """``hidden``: the accumulator's width per side; ``head``: the hidden widths after it;
    ``n_features``: the features per side (768, or more with the king's zones,
    :attr:`knights.features.sparse.SparseSpec.n_features`; also the padding index)."""

    def __init__(self, hidden: int = 128, head: Sequence[int] = (32, 32), n_features: int = N_FEATURES) -> None:
        super().__init__()
        self.hidden = hidden
        self.n_features = n_features
        self.head_widths: tuple[int, ...] = tuple(head)
        self.list_length = MAX_PIECES * (1 if n_features == N_FEATURES else 2)   # two features a piece with zones
        bound = 0.5 / self.list_length ** 0.5   # a full list's columns sum to about +-0.3
        self.columns = nn.Parameter(torch.empty(n_features, hidden).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.full((hidden,), 0.5))   # start inside the clipped ReLU's slope
        self.head = head_layers(2 * hidden, self.head_widths)

    def accumulator(self, features: torch.Tensor) -> torch.Tensor:
        """The first layer's sums for padded feature lists (N, 32; N, 64 with the king's zones) -> (N, hidden)."""
        if features.shape[1] != self.list_length:        # another spec's lists: a wrong value, or worse
            raise ValueError(f"this network sums lists of {self.list_length} features ({self.n_features} a side), "
                             f"not {features.shape[1]}: the inputs come from another SparseSpec")
        sums: torch.Tensor = _SparseSum.apply(features, self.columns)  # type: ignore[no-untyped-call]
        return sums + self.bias

    def head_input(self, mover: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
        """[mover's accumulator, other's] clipped to [0, 1], shape (N, 2 hidden): what a head reads."""
        both = self.accumulator(torch.cat([mover, other]))     # one product for both sides
        n = mover.shape[0]
        return clipped_relu(torch.cat([both[:n], both[n:]], dim=1))

    def logit(self, mover: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
        """The mover's win-probability logit, shape (N,)."""
        z: torch.Tensor = self.head(self.head_input(mover, other)).squeeze(1)
        return z

    def forward(self, mover: torch.Tensor, other: torch.Tensor, white: torch.Tensor) -> torch.Tensor:
        """Pawns from White's side (eval mode: clipped to +-10)."""
        sign = white.to(torch.float32) * 2.0 - 1.0
        pawns = sign * self.logit(mover, other) / PAWN_LOGIT
        return pawns if self.training else pawns.clamp(-MAX_PAWNS, MAX_PAWNS)


class BucketedSparseNet(SparseNet):
    """:class:`SparseNet` with one head per bucket of men on the board, as Stockfish's layer
    stacks: the accumulators are shared, and positions with few men (endings) and many
    (openings) each get a head of their own. A position with ``m`` men (2-32) uses head
    ``(m - 1) * buckets // 32``: with 8 buckets, 2-4 men head 0, 5-8 head 1, ..., 29-32 head 7."""

    def __init__(self, hidden: int = 128, head: Sequence[int] = (32, 32), buckets: int = 8,
                 n_features: int = N_FEATURES) -> None:
        super().__init__(hidden, head, n_features)
        self.buckets = buckets
        del self.head
        self.heads = nn.ModuleList(head_layers(2 * hidden, self.head_widths) for _ in range(buckets))

    def bucket(self, mover: torch.Tensor) -> torch.Tensor:
        """Each position's head, from its men (the mover's plain features, the first 32, that are not padding)."""
        men = (mover[:, :MAX_PIECES] != self.n_features).sum(dim=1)
        return ((men - 1) * self.buckets // MAX_PIECES).clamp(0, self.buckets - 1)

    def logit(self, mover: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
        x = self.head_input(mover, other)
        bucket = self.bucket(mover)
        # rows sorted by head, each head on its contiguous slice: one gather and one scatter in all
        # (a gather per head would make the backward pass add up a batch-sized gradient per head)
        order = torch.argsort(bucket)
        sizes = torch.bincount(bucket, minlength=self.buckets).tolist()
        parts = [head(rows) for head, rows in zip(self.heads, torch.split(x[order], sizes), strict=True) if len(rows)]
        if not parts:                                   # an empty batch
            return x.new_zeros(0)
        by_head = torch.cat(parts).squeeze(1)           # (a mixed-precision head's dtype, not the sums')
        return by_head[torch.argsort(order)]


def widened(parent: dict[str, torch.Tensor], model: SparseNet) -> dict[str, torch.Tensor]:
    """A narrower network's weights (``parent``, a :class:`SparseNet` state) laid into ``model``'s wider accumulator,
    so that ``model`` starts as the same function: the parent's units come first, the new ones keep ``model``'s own
    start for their columns and bias and weigh nothing in the head's first layer, which reads
    ``[mover's units, other's units]``; the head's other layers are the parent's. Training then gives the new units
    weight where they help (Net2Net's idea, in its simplest form).

    >>> small, wide = SparseNet(hidden=4, head=(3,)), SparseNet(hidden=6, head=(3,))
    >>> _ = wide.load_state_dict(widened(small.state_dict(), wide))
    >>> x = torch.randint(0, 768, (2, 32))
    >>> bool(torch.allclose(small.logit(x, x.flip(1)), wide.logit(x, x.flip(1))))
    True
    """
    own = {k: v.clone() for k, v in model.state_dict().items()}
    h, wide = parent["columns"].shape[1], model.hidden
    if parent["columns"].shape[0] != own["columns"].shape[0] or h > wide or set(parent) != set(own):
        raise ValueError(f"a network of {tuple(parent['columns'].shape)} columns cannot be widened into "
                         f"{tuple(own['columns'].shape)}: the same features, layers and head, a wider accumulator")
    for name, value in parent.items():
        mine = own[name].shape if name != "head.0.weight" else (own[name].shape[0], 2 * h)
        if name not in ("columns", "bias") and tuple(mine) != tuple(value.shape):
            raise ValueError(f"{name}: {tuple(value.shape)} in the narrower network, {tuple(own[name].shape)} "
                             f"here: only the accumulator may be wider")
        if name not in ("columns", "bias", "head.0.weight"):
            own[name] = value
    own["columns"][:, :h] = parent["columns"]
    own["bias"][:h] = parent["bias"]
    first = torch.zeros_like(own["head.0.weight"])
    first[:, :h], first[:, wide:wide + h] = parent["head.0.weight"][:, :h], parent["head.0.weight"][:, h:]
    own["head.0.weight"] = first
    return own


def head_layers(width: int, head: Sequence[int]) -> nn.Sequential:
    """The layers after the accumulators: Linear and clip for each width in ``head``, then Linear to one."""
    layers: list[nn.Module] = []
    for h in head:
        layers += [nn.Linear(width, h), ClippedReLU()]
        width = h
    layers.append(nn.Linear(width, 1))
    return nn.Sequential(*layers)


def _ones_csr(crow: torch.Tensor, cols: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
    """A sparse CSR matrix of ones with these row pointers and column indices."""
    values = torch.ones(cols.shape[0], dtype=torch.float32, device=cols.device)
    with warnings.catch_warnings():   # "sparse CSR support is in beta": the two products used here are tested
        warnings.simplefilter("ignore", UserWarning)
        return torch.sparse_csr_tensor(crow, cols, values, size=size, check_invariants=False)


class _SparseSum(torch.autograd.Function):
    """``rows @ columns`` where row ``i`` of the 0/1 matrix ``rows`` has a 1 at each index
    of ``features[i]``, the padding included: every list has the same ``k`` entries,
    so the matrix is built without looking at the data (row ``i`` starts at ``k i``) and
    the pads read a zero column appended to ``columns``. The backward pass gives the
    columns' gradient only (``rows.T @ grad``, the features are data), as a product by
    the transposed matrix, built by sorting the batch's feature indices (a radix sort of
    small integers): that is about twice as fast on CPU as multiplying by ``rows.t()``."""

    @staticmethod
    def forward(ctx: torch.autograd.function.FunctionCtx, features: torch.Tensor,
                columns: torch.Tensor) -> torch.Tensor:
        n, k = features.shape
        if columns.shape[0] >= 2 ** 15:
            raise ValueError(f"{columns.shape[0]} features: the backward pass sorts them as int16")
        flat = features.reshape(-1).long()      # the sparse matrices' indices are int64
        crow = torch.arange(0, n * k + 1, k, dtype=flat.dtype, device=flat.device)
        rows = _ones_csr(crow, flat, (n, columns.shape[0] + 1))
        ctx.save_for_backward(flat)
        ctx.shape = (n, k, columns.shape[0])  # type: ignore[attr-defined]
        return rows @ torch.cat([columns, columns.new_zeros(1, columns.shape[1])])

    @staticmethod
    def backward(ctx: torch.autograd.function.FunctionCtx, grad: torch.Tensor) -> tuple[None, torch.Tensor]:
        (flat,) = ctx.saved_tensors  # type: ignore[attr-defined]
        n, k, n_features = ctx.shape  # type: ignore[attr-defined]
        _, order = torch.sort(flat.to(torch.int16), stable=True)      # entries grouped by feature
        # (a scatter, not bincount, which would make the CPU wait for a GPU to size its output)
        per_feature = flat.new_zeros(n_features + 1).scatter_add_(0, flat, torch.ones_like(flat))
        crow = torch.zeros(n_features + 2, dtype=flat.dtype, device=flat.device)
        torch.cumsum(per_feature, 0, out=crow[1:])
        by_feature = _ones_csr(crow, torch.div(order, k, rounding_mode="floor").to(flat.dtype), (n_features + 1, n))
        return None, (by_feature @ grad)[:n_features]


def clipped_relu(x: torch.Tensor) -> torch.Tensor:
    """``min(max(x, 0), 1)``: NNUE's activation (bounded, so integer versions stay in range).
    ``hardtanh`` computes it with one fused backward pass, where ``clamp`` takes four."""
    return torch.nn.functional.hardtanh(x, 0.0, 1.0)


class ClippedReLU(nn.Module):
    """:func:`clipped_relu` as a layer."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return clipped_relu(x)
