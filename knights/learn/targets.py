"""What the evaluation networks learn: pawns, or the win probability they stand for.

Stockfish's evaluations are in pawns, and the original networks learned them with an
L1 loss. But a pawn is worth a lot at 0 and almost nothing at +8: an L1 loss spends a
network's capacity on the decided positions (and the mates, clipped to +-10), where no
move choice depends on the exact number. In **win-probability space** every position
weighs what its result is worth::

    p = sigmoid(PAWN_LOGIT * pawns)      # 0 = lost, 0.5 = level, 1 = won

with Lichess's slope (0.00368208 a centipawn: one pawn up is a 59% chance). EL V12's
bucket head and EL V13's win-probability loss (:class:`knights.learn.training.WinProbTask`)
use this one scale, and so does the results table's win-probability error.

>>> round(float(win_probability(np.array([0.0, 1.0, 9.0]))[1]), 3)
0.591
>>> round(float(pawns_from_probability(win_probability(np.array([2.5])))[0]), 6)
2.5

A position's label can also carry the result of the game it was played in (:func:`with_result`),
as Stockfish's NNUE trainer blends them (its ``lambda`` is the evaluation's share).
"""

from __future__ import annotations

import numpy as np

PAWN_LOGIT = 0.368208
"""Win-probability slope per pawn: Lichess's 0.00368208 per centipawn."""
MAX_PAWNS = 10.0
"""The targets' range: evaluations are clipped to +-9 pawns and mates are +-10."""


def win_probability(pawns: np.ndarray) -> np.ndarray:
    """The win probability of evaluations in pawns (from the same side)."""
    return 1.0 / (1.0 + np.exp(-PAWN_LOGIT * np.asarray(pawns, dtype=np.float64)))


def pawns_from_probability(p: np.ndarray) -> np.ndarray:
    """The inverse of :func:`win_probability`, in pawns."""
    q = np.clip(np.asarray(p, dtype=np.float64), 1e-12, 1 - 1e-12)
    return np.log(q / (1 - q)) / PAWN_LOGIT


def with_result(pawns: np.ndarray, white_score: np.ndarray, share: float) -> np.ndarray:
    """Pawn targets (White's side, float32) whose win probability is ``1 - share`` of the evaluation's and
    ``share`` of the game's result (White's score, 1, 0.5 or 0): with ``share`` 0 the evaluation alone.

    >>> [round(float(x), 3) for x in with_result(np.array([0.0, 0.0]), np.array([1.0, 0.5]), 0.5)]
    [2.984, 0.0]
    """
    if not 0.0 <= share < 1.0:
        raise ValueError(f"the result's share of a target is in [0, 1), not {share}")
    p = (1.0 - share) * win_probability(pawns) + share * np.asarray(white_score, dtype=np.float64)
    return pawns_from_probability(p).astype(np.float32)
