"""What every classical learner reads, and what every shipped learner is made of.

The input is one row of numbers a position: :func:`features`, the six +-1 planes of
:func:`knights.features.planes.six_planes` flattened (``N_PLANE_FEATURES`` = 384) and
the ten piece counts, ``N_FEATURES`` = 394 in all. A shipped learner is a handful of
named arrays (:data:`Arrays`) that :mod:`knights.learn.store` writes without pickle.
"""

from __future__ import annotations

import numpy as np

from knights.features.planes import flat_features

Arrays = dict[str, np.ndarray]
"""A shipped model's named arrays (:mod:`knights.learn.store`)."""

N_FEATURES = 394
"""Numbers a position: 384 plane entries, then 10 piece counts."""
N_PLANE_FEATURES = 384
"""The board part of :func:`features` (6 planes x 64 squares), each entry -1, 0 or +1."""


def features(squares: np.ndarray) -> np.ndarray:
    """The learners' input: :func:`knights.features.planes.flat_features` (N, 394) float32."""
    return flat_features(np.asarray(squares))
