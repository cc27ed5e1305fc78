"""One small network family covers every version: convolutions, then a fully
connected head that also takes a vector of extra inputs.

    planes (N, P, 8, 8) -> [Conv2d(k, padding) -> LeakyReLU] x C -> flatten
                        -> concat extras (N, E) -> [Linear -> LeakyReLU] x H -> Linear -> out

No pooling, no dropout, as in the original. An evaluation network has ``out=1``
(pawns from White's side); a move network ``out=4096`` (a 64 x 64 from/to grid).
"""

from __future__ import annotations

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
