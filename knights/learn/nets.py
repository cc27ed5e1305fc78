"""The networks. One small family covers the original's versions (EL V1-V10, SL):
convolutions, then a fully connected head that also takes a vector of extra inputs.

    planes (N, P, 8, 8) -> [Conv2d(k, padding) -> LeakyReLU] x C -> flatten
                        -> concat extras (N, E) -> [Linear -> LeakyReLU] x H -> Linear -> out

No pooling, no dropout, as in the original. An evaluation network has ``out=1``
(pawns from White's side); a move network ``out=4096`` (a 64 x 64 from/to grid).

Two deeper families follow, built on one :func:`residual_tower`: :class:`PooledResNet`
(EL V11: residual blocks and global pooling) and :class:`SquareTransformer` (EL V12:
residual blocks feeding self-attention over the 64 squares). Every evaluation network
answers ``model(planes, extra)`` in eval mode with pawns, shape ``(N,)``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import torch
from torch import nn


def conv_side(side: int, kernel: int, padding: int) -> int:
    return side + 2 * padding - kernel + 1


class ConvNet(nn.Module):
    """``convs``: (out_channels, kernel) pairs; ``hidden``: widths of hidden layers."""

    def __init__(self, in_planes: int, convs: Sequence[tuple[int, int]], hidden: Sequence[int],
                 n_extra: int = 0, out: int = 1, padding: int = 1, tanh_layer: int | None = None) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        channels, side = in_planes, 8
        for out_channels, kernel in convs:
            layers += [nn.Conv2d(channels, out_channels, kernel, padding=padding), nn.LeakyReLU()]
            channels, side = out_channels, conv_side(side, kernel, padding)
            if side < 1:
                raise ValueError(f"convolutions {list(convs)} shrink the board below 1x1")
        self.convs = nn.Sequential(*layers)
        self.n_flat = channels * side * side if convs else in_planes * 64
        width = self.n_flat + n_extra
        head: list[nn.Module] = []
        for i, h in enumerate(hidden):
            head += [nn.Linear(width, h), nn.Tanh() if i == tanh_layer else nn.LeakyReLU()]
            width = h
        head.append(nn.Linear(width, out))
        self.head = nn.Sequential(*head)
        self.n_extra = n_extra

    def forward(self, planes: torch.Tensor, extra: torch.Tensor) -> torch.Tensor:
        x = self.convs(planes).flatten(1)
        if self.n_extra:
            x = torch.cat([x, extra], dim=1)
        y: torch.Tensor = self.head(x)
        return y.squeeze(1) if y.shape[1] == 1 else y


def parameter_count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


# -- deeper families (EL V11, V12) ---------------------------------------------------------
class ResidualBlock(nn.Module):
    """Two 3x3 convolutions with batch norm, added back to their input (He et al. 2016)."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(channels, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels), nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + self.body(x))


def residual_tower(in_planes: int, channels: int, blocks: int) -> nn.Sequential:
    """A 3x3 stem to ``channels``, then ``blocks`` residual blocks; the board stays 8x8."""
    return nn.Sequential(nn.Conv2d(in_planes, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels),
                         nn.ReLU(), *(ResidualBlock(channels) for _ in range(blocks)))


def mlp(width: int, hidden: Sequence[int], out: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ReLU()]
        width = h
    layers.append(nn.Linear(width, out))
    return nn.Sequential(*layers)


class PooledResNet(nn.Module):
    """EL V11: a residual tower, then global average and max pooling over the 64 squares.

    planes (N, P, 8, 8) -> tower (N, C, 8, 8) -> [mean, max over squares] (N, 2C)
                        -> concat extras -> MLP -> pawns (N,)

    Pooling makes the head's size independent of the board (2C numbers instead of
    64C): what a square holds must be carried to the features by the convolutions.
    """

    def __init__(self, in_planes: int, channels: int, blocks: int, hidden: Sequence[int], n_extra: int = 0) -> None:
        super().__init__()
        self.tower = residual_tower(in_planes, channels, blocks)
        self.head = mlp(2 * channels + n_extra, hidden, 1)
        self.n_extra = n_extra

    def forward(self, planes: torch.Tensor, extra: torch.Tensor) -> torch.Tensor:
        x = self.tower(planes).flatten(2)                      # (N, C, 64)
        feats = [x.mean(dim=2), x.amax(dim=2)] + ([extra] if self.n_extra else [])
        y: torch.Tensor = self.head(torch.cat(feats, dim=1))
        return y.squeeze(1)


class SquareTransformer(nn.Module):
    """EL V12: a short residual tower, then transformer blocks over the 64 squares.

    planes -> tower (N, C, 8, 8) -> 64 tokens of C -> Linear to d + a learned
    embedding per square -> pre-norm transformer encoder (self-attention lets any
    square read any other at once, where a 3x3 convolution needs a path of
    neighbours) -> mean over tokens, concat extras -> MLP -> ``head``.

    ``head`` maps the last features to the output: a :class:`knights.learn.buckets.BucketHead`
    (win-probability buckets, pawns in eval mode) for V12.
    """

    def __init__(self, in_planes: int, channels: int, blocks: int, d_model: int, layers: int, heads: int,
                 ff: int, hidden: Sequence[int], head: nn.Module, n_extra: int = 0) -> None:
        super().__init__()
        self.tower = residual_tower(in_planes, channels, blocks)
        self.embed = nn.Linear(channels, d_model)
        self.square = nn.Parameter(torch.zeros(1, 64, d_model))
        nn.init.normal_(self.square, std=0.02)
        layer = nn.TransformerEncoderLayer(d_model, heads, ff, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        widths = [d_model + n_extra, *hidden]
        body: list[nn.Module] = []
        for a, b in itertools.pairwise(widths):
            body += [nn.Linear(a, b), nn.ReLU()]
        self.body = nn.Sequential(*body)
        self.head = head
        self.n_extra = n_extra

    def forward(self, planes: torch.Tensor, extra: torch.Tensor) -> torch.Tensor:
        x = self.tower(planes).flatten(2).transpose(1, 2)     # (N, 64, C)
        x = self.norm(self.encoder(self.embed(x) + self.square)).mean(dim=1)
        if self.n_extra:
            x = torch.cat([x, extra], dim=1)
        y: torch.Tensor = self.head(self.body(x))
        return y.squeeze(1) if y.ndim == 2 and y.shape[1] == 1 else y
