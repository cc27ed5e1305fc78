"""What a network sees: an :class:`InputSpec` turns encoded positions into tensors.

A version declares its inputs once, e.g. ``InputSpec(planes="six", counts=True)``,
and the same spec encodes training batches and the positions the engine asks about,
so training and play can never disagree. :class:`Inputs` is what every spec offers (the
dense :class:`InputSpec` and the sparse :class:`knights.features.sparse.SparseSpec`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np
import torch

from knights.board.positions import Positions
from knights.features import attacks
from knights.features import planes as P

SCALARS = ("turn", "check", "capture")


class Inputs(Protocol):
    """A version's ``INPUTS``: positions in, the network's input tensors out."""

    def tensors(self, pos: Positions, device: torch.device | str = "cpu") -> tuple[torch.Tensor, ...]: ...

    def describe(self) -> dict[str, object]: ...


@dataclass(frozen=True)
class InputSpec:
    """Board planes plus an optional vector of extras.

    ``planes``: ``"signed"`` (one plane of signed piece codes, V1-V3), ``"six"``
    (one plane per piece type), ``"twelve"`` (one 0/1 plane per colour and piece type),
    ``"three"`` (White codes, Black codes, empty squares),
    or ``"none"`` (the 64 signed codes go in the extras vector, flattened).
    ``plane_values`` (for ``"six"``): ``"ones"`` (+-1, the paper) or ``"codes"`` (+-1..6,
    the shipped code). ``scalars``: any of ``turn`` (1 White to move, 0 Black),
    ``check`` and ``capture``. ``counts``: append the ten piece counts.
    ``attacks``: four more planes from :func:`knights.features.attacks.attack_maps`: how many
    White and Black pieces attack each square (halved), and the pressure of the
    cheapest attacker of each colour, 1 / its value (pawn 1, queen 1/9, none 0).
    ``gains``: append each side's best one-capture gain in pawns
    (:func:`knights.features.attacks.capture_gains`), White's positive, Black's negative.
    """

    planes: Literal["signed", "six", "twelve", "three", "none"] = "six"
    plane_values: Literal["ones", "codes"] = "ones"
    scalars: tuple[str, ...] = ()
    counts: bool = False
    attacks: bool = False
    gains: bool = False

    def __post_init__(self) -> None:
        unknown = set(self.scalars) - set(SCALARS)
        if unknown:
            raise ValueError(f"unknown scalar inputs {sorted(unknown)}; choose from {SCALARS}")

    @property
    def n_planes(self) -> int:
        return {"signed": 1, "six": 6, "twelve": 12, "three": 3, "none": 0}[self.planes] + (4 if self.attacks else 0)

    @property
    def n_extra(self) -> int:
        return (len(self.scalars) + (10 if self.counts else 0) + (64 if self.planes == "none" else 0)
                + (2 if self.gains else 0))

    def encode(self, pos: Positions) -> tuple[np.ndarray, np.ndarray]:
        """``(planes float32 (N, P, 8, 8), extra float32 (N, E))``."""
        sq = np.asarray(pos.squares)
        n = sq.shape[0]
        if self.planes == "signed":
            planes = P.signed_plane(sq)
        elif self.planes == "six":
            planes = P.six_planes(sq, self.plane_values)
        elif self.planes == "twelve":
            planes = P.twelve_planes(sq)
        elif self.planes == "three":
            s = sq.reshape(n, 1, 8, 8).astype(np.float32)
            planes = np.concatenate([np.maximum(s, 0), np.maximum(-s, 0), (s == 0).astype(np.float32)], axis=1)
        else:
            planes = np.zeros((n, 0, 8, 8), np.float32)
        maps = attacks.attack_maps(sq) if (self.attacks or self.gains) else None
        if self.attacks and maps is not None:
            counts, cheapest = maps
            pressure = np.where(cheapest > 0, 1.0 / np.maximum(cheapest, 1), 0.0).astype(np.float32)
            extra_planes = np.concatenate([counts.astype(np.float32) * 0.5, pressure], axis=1)
            planes = np.concatenate([planes, extra_planes.reshape(n, 4, 8, 8)], axis=1)
        extras = []
        if self.planes == "none":
            extras.append(sq.astype(np.float32))
        columns = {"turn": pos.white, "check": pos.check, "capture": pos.capture}
        for name in self.scalars:
            extras.append(np.asarray(columns[name], dtype=np.float32).reshape(n, 1))
        if self.counts:
            extras.append(P.piece_counts(sq))
        if self.gains:
            extras.append(attacks.capture_gains(sq, maps) * np.array([1.0, -1.0], np.float32))
        extra = np.concatenate(extras, axis=1) if extras else np.zeros((n, 0), np.float32)
        return planes, extra

    def tensors(self, pos: Positions, device: torch.device | str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
        planes, extra = self.encode(pos)
        return (torch.from_numpy(planes).to(device, non_blocking=True),
                torch.from_numpy(extra).to(device, non_blocking=True))

    def describe(self) -> dict[str, object]:
        return {"planes": self.planes, "plane_values": self.plane_values,
                "scalars": list(self.scalars), "counts": self.counts,
                **({"attacks": True} if self.attacks else {}), **({"gains": True} if self.gains else {})}
