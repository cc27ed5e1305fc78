"""The evaluator interface: positions in, pawns from White's side out, batched.

Every member of the project that judges a position (a network version, a
scikit-learn learner, the democracy ensemble, material counting) is an
:class:`Evaluator`, so the engine, the arena and the ensemble treat them alike::

    ev = network_evaluator("EL/v8")
    ev.evaluate_boards([board1, board2])   # -> array([0.31, -1.2], dtype=float32)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence, runtime_checkable

import chess
import numpy as np
import torch
from torch import nn

from knights.board import material_balance, squares_from_board
from knights.inputs import InputSpec


@dataclass
class Positions:
    """Encoded positions to evaluate (the same arrays as a training batch, minus targets)."""

    squares: np.ndarray   # int8 (N, 64)
    white: np.ndarray     # int8 (N,)
    check: np.ndarray     # int8 (N,)
    capture: np.ndarray   # int8 (N,) 0 at play time: the next move is not known

    def __len__(self) -> int:
        return len(self.white)


def positions_from_boards(boards: Sequence[chess.Board]) -> Positions:
    n = len(boards)
    squares = np.zeros((n, 64), dtype=np.int8)
    white = np.zeros(n, dtype=np.int8)
    check = np.zeros(n, dtype=np.int8)
    for i, b in enumerate(boards):
        squares[i] = squares_from_board(b)
        white[i] = b.turn == chess.WHITE
        check[i] = b.is_check()
    return Positions(squares, white, check, np.zeros(n, dtype=np.int8))


@runtime_checkable
class Evaluator(Protocol):
    """Anything that scores positions in pawns from White's side."""

    name: str

    def evaluate(self, positions: Positions) -> np.ndarray: ...


class BoardsMixin:
    def evaluate_boards(self, boards: Sequence[chess.Board]) -> np.ndarray:
        return self.evaluate(positions_from_boards(boards))  # type: ignore[attr-defined]


class NetworkEvaluator(BoardsMixin):
    """A trained evaluation network behind the interface (CPU, inference mode)."""

    def __init__(self, model: nn.Module, spec: InputSpec, name: str, threads: int | None = None) -> None:
        self.model = model.eval()
        self.spec = spec
        self.name = name
        if threads is not None:
            torch.set_num_threads(threads)

    @torch.inference_mode()
    def evaluate(self, positions: Positions) -> np.ndarray:
        planes, extra = self.spec.tensors(positions)
        return self.model(planes, extra).float().numpy().reshape(-1)


class MaterialEvaluator(BoardsMixin):
    """Counting material (P=1 N=3 B=3 R=5 Q=9): the plainest baseline."""

    name = "material"

    def evaluate(self, positions: Positions) -> np.ndarray:
        return material_balance(np.asarray(positions.squares))


def network_evaluator(name: str, models_dir: str | None = None) -> NetworkEvaluator:
    """The trained EL version ``name`` (e.g. ``"EL/v8"``) as an evaluator."""
    from knights import registry

    version = registry.get(name)
    if version.family != "EL":
        raise ValueError(f"{name} is a move network, not an evaluator")
    model, _ = version.load(models_dir)
    return NetworkEvaluator(model, version.library.INPUTS, version.name)


THREATS_SUFFIX = "+threats"
"""Appended to any evaluator name: the same evaluator plus the static capture-threat term."""

DEFAULT_NETWORK = "EL/v10"
"""The best network alone by held-out MAE (models_EL/RESULTS.md): what "network alone"
benchmarks time, and the ensemble's main member."""

DEFAULT_EVALUATOR = "democracy+threats"
"""The evaluator the bot plays with unless told otherwise: the shipped democracy (the best
held-out MAE, ensemble/RESULTS.md) plus the static capture-threat term (knights.threats),
which took the bot from 0.44 to 1.00 against the greedy material counter (40 games each)."""


def available_evaluators() -> list[str]:
    """Names :func:`load_evaluator` accepts that have trained files on disk."""
    from knights import registry

    names = ["material"] + [v.name for v in registry.all_versions("EL") if v.is_trained()]
    try:
        from ensemble.democracy import is_shipped  # noqa: PLC0415
        if is_shipped():
            names.append("democracy")
    except ImportError:
        pass
    return names + [f"{n}{THREATS_SUFFIX}" for n in names]


def trained_networks(names: list[str]) -> list[str]:
    """The plain EL versions among evaluator ``names`` (no variants), oldest first."""
    return [n for n in names if n.startswith("EL/") and not n.endswith(THREATS_SUFFIX)]


def default_evaluator_name(available: list[str]) -> str:
    """What the bot plays with when not told: :data:`DEFAULT_EVALUATOR` when its files
    are among ``available``; otherwise (a fresh clone) the newest trained EL version,
    else ``"material"``."""
    if DEFAULT_EVALUATOR in available:
        return DEFAULT_EVALUATOR
    trained = trained_networks(available)
    return trained[-1] if trained else "material"


def load_evaluator(name: str | None = None) -> Evaluator:
    """An evaluator by name: ``"EL/v8"`` (any trained EL version), ``"democracy"``
    (the shipped ensemble) or ``"material"`` (counting material), each optionally with
    ``"+threats"`` (plus the static capture-threat term, :mod:`knights.threats`);
    ``None`` gives :data:`DEFAULT_EVALUATOR`."""
    name = name or DEFAULT_EVALUATOR
    if name.endswith(THREATS_SUFFIX):
        from knights.threats import ThreatAwareEvaluator  # noqa: PLC0415

        return ThreatAwareEvaluator(load_evaluator(name[: -len(THREATS_SUFFIX)]))
    if name == "material":
        return MaterialEvaluator()
    if name in ("democracy", "ensemble"):
        from ensemble.democracy import load_shipped  # noqa: PLC0415

        return load_shipped()
    return network_evaluator(name)
