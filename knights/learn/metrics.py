"""Error measures of evaluations in pawns against Stockfish's (the targets)."""

from __future__ import annotations

import numpy as np


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
