"""A classical learner (:mod:`knights.learn.learners`) behind the evaluator interface."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from knights.board.positions import Positions
from knights.evaluate.base import BoardsMixin
from knights.learn.learners import features


class Predictor(Protocol):
    """A fitted learner: features (N, 394) in, pawns (N,) out."""

    def predict(self, X: np.ndarray) -> np.ndarray: ...


class LearnerEvaluator(BoardsMixin):
    """Scores positions with a shipped learner's own ``predict`` on :func:`features`."""

    def __init__(self, name: str, model: Predictor) -> None:
        self.name = name
        self.model = model

    def predict_features(self, X: np.ndarray) -> np.ndarray:
        return np.asarray(self.model.predict(X), dtype=np.float32)

    def evaluate(self, positions: Positions) -> np.ndarray:
        return self.predict_features(features(positions.squares))
