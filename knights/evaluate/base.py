"""The evaluator interface: positions in, pawns from White's side out, batched.

Every member of the project that judges a position (a network version, a
scikit-learn learner, the democracy ensemble, material counting) is an
:class:`Evaluator`, so the engine, the arena and the ensemble treat them alike::

    ev = network_evaluator("EL/v8")
    ev.evaluate_boards([board1, board2])   # -> array([0.31, -1.2], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import chess
import numpy as np
import torch
from torch import nn

from knights.board.arrays import material_balance
from knights.board.positions import Positions, positions_from_boards
from knights.features.inputs import Inputs
from knights.learn import registry


class NonFiniteEvaluation(ValueError):
    """An evaluator answered NaN or infinity: its weights are broken; nothing may be played on it."""


@runtime_checkable
class Evaluator(Protocol):
    """Anything that scores positions in pawns from White's side."""

    name: str

    def evaluate(self, positions: Positions) -> np.ndarray: ...


class BoardsMixin:
    """``evaluate_boards`` for an :class:`Evaluator`: python-chess boards in."""

    def evaluate_boards(self: Evaluator, boards: Sequence[chess.Board]) -> np.ndarray:
        return self.evaluate(positions_from_boards(boards))


class NetworkEvaluator(BoardsMixin):
    """A trained evaluation network behind the interface (CPU, inference mode)."""

    def __init__(self, model: nn.Module, spec: Inputs, name: str, threads: int | None = None) -> None:
        self.model = model.eval()
        self.spec = spec
        self.name = name
        if threads is not None:
            torch.set_num_threads(threads)

    @torch.inference_mode()
    def evaluate(self, positions: Positions) -> np.ndarray:
        # dense planes give (planes, extra); sparse features (EL/v13) three tensors
        out: torch.Tensor = self.model(*self.spec.tensors(positions))
        return out.float().numpy().reshape(-1)


def finite_evaluations(values: np.ndarray, name: str, when: str = "while playing") -> np.ndarray:
    """``values`` when every one is finite; else :class:`NonFiniteEvaluation` naming the
    evaluator: a NaN must never be read as an equal position (it used to become 0.00)."""
    bad = ~np.isfinite(values)
    if bad.any():
        raise NonFiniteEvaluation(f"evaluator {name} gave non-finite values (NaN or infinity) for {int(bad.sum())} "
                                  f"of {len(values)} positions {when}: its weights are broken; nothing is played "
                                  "on it (retrain or restore its files, or choose another evaluator)")
    return values


PROBE_FENS = ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
              "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP2BPPP/R2QKB1R w KQ - 0 9",
              "8/5k2/8/3K4/8/8/5P2/8 b - - 0 50")
"""The positions every evaluator is tried on when it loads (:func:`probe`)."""


def probe(evaluator: Evaluator) -> Evaluator:
    """``evaluator``, once it has given finite values for :data:`PROBE_FENS` (an opening, a
    middlegame, an endgame); else :class:`NonFiniteEvaluation`, at load rather than mid-game."""
    values = np.asarray(evaluator.evaluate(positions_from_boards([chess.Board(f) for f in PROBE_FENS])),
                        dtype=np.float64).reshape(-1)
    finite_evaluations(values, evaluator.name, "when loaded (probe positions)")
    return evaluator


class MaterialEvaluator(BoardsMixin):
    """Counting material (P=1 N=3 B=3 R=5 Q=9): the plainest baseline."""

    name = "material"

    def evaluate(self, positions: Positions) -> np.ndarray:
        return material_balance(np.asarray(positions.squares))


def network_evaluator(name: str, models_dir: str | Path | None = None) -> NetworkEvaluator:
    """The trained EL version ``name`` (e.g. ``"EL/v8"``) as an evaluator."""
    version = registry.get(name)
    if version.family != "EL":
        raise ValueError(f"{name} is a move network, not an evaluator")
    model, _ = version.load(models_dir)
    return NetworkEvaluator(model, version.library.INPUTS, version.name)
