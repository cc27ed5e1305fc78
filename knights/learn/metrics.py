"""Error measures of evaluations in pawns against Stockfish's (the targets)."""

from __future__ import annotations

import numpy as np

from knights.learn.targets import win_probability


def regression_metrics(pred: np.ndarray, target: np.ndarray) -> dict[str, float]:
    """MAE, median absolute error (pawns), and the share of positions where the sign
    agrees with Stockfish (positions Stockfish calls exactly 0 are left out of it)."""
    pred = np.asarray(pred, dtype=np.float64)
    target = np.asarray(target, dtype=np.float64)
    err = np.abs(pred - target)
    nonzero = target != 0
    sign = float(np.mean(np.sign(pred[nonzero]) == np.sign(target[nonzero]))) if nonzero.any() else float("nan")
    return {"mae": float(err.mean()), "median_ae": float(np.median(err)), "sign_agreement": sign,
            "rows": len(target)}


def win_probability_error(pred: np.ndarray, target: np.ndarray) -> float:
    """Mean ``|p(pred) - p(target)|``, both turned into a win probability on the project's
    one scale (:func:`knights.learn.targets.win_probability`). An error of a pawn costs
    about 0.09 at level and almost nothing at +8, where no move choice depends on it.

    >>> round(win_probability_error(np.array([0.0, 9.0]), np.array([1.0, 8.0])), 4)
    0.0529
    """
    p = win_probability(np.asarray(pred, dtype=np.float64))
    q = win_probability(np.asarray(target, dtype=np.float64))
    return float(np.abs(p - q).mean()) if len(q) else float("nan")
