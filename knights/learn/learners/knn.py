"""K nearest neighbours: choosing K by a validation sweep, and the shipped KNN.

:func:`k_sweep` finds the neighbours once, for the largest K, and scores every
smaller K from the same search (:func:`distance_weighted` averages the first K
exactly as scikit-learn would); :class:`KNNModel` is the learner shipped: its
training rows, refitted on load.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from knights.learn import store
from knights.learn.learners.inputs import Arrays, features
from knights.learn.store import expect

if TYPE_CHECKING:
    from matplotlib.figure import Figure


@dataclass
class KSweep:
    """Validation MAE of distance-weighted KNN for each K."""

    ks: list[int]
    mae: list[float]
    train_rows: int
    val_rows: int
    seconds: float

    @property
    def best_k(self) -> int:
        """The K of the lowest validation MAE (the smallest such K on a tie)."""
        return int(self.ks[int(np.argmin(self.mae))])

    def as_dict(self) -> dict[str, Any]:
        return {"ks": self.ks, "mae": self.mae, "best_k": self.best_k, "train_rows": self.train_rows,
                "val_rows": self.val_rows, "seconds": round(self.seconds, 2)}


def distance_weighted(dist: np.ndarray, neigh_y: np.ndarray) -> np.ndarray:
    """scikit-learn's ``weights="distance"`` average of neighbour targets: weights
    1/d; a row with any neighbour at distance 0 averages those neighbours only."""
    with np.errstate(divide="ignore"):
        w = 1.0 / dist
    inf = np.isinf(w)
    rows = inf.any(axis=1)
    w[rows] = inf[rows]
    average: np.ndarray = (neigh_y * w).sum(axis=1) / w.sum(axis=1)
    return average


def k_sweep(X: np.ndarray, y: np.ndarray, X_val: np.ndarray, y_val: np.ndarray,
            ks: Sequence[int] = range(1, 21)) -> KSweep:
    """Validation MAE of distance-weighted KNN for every K in ``ks``.

    One neighbour search for the largest K; each K then averages its first K
    neighbours exactly as ``KNeighborsRegressor(K, weights="distance")`` would."""
    from sklearn.neighbors import KNeighborsRegressor

    ks = sorted({int(k) for k in ks})
    if not ks or ks[0] < 1 or ks[-1] > len(X):
        raise ValueError(f"K must lie in 1..{len(X)} (the training rows), got {ks}")
    t0 = time.perf_counter()
    nn = KNeighborsRegressor(n_neighbors=ks[-1], weights="distance", algorithm="brute").fit(X, y)
    dist, ind = nn.kneighbors(X_val)
    y = np.asarray(y, dtype=np.float64)
    neigh_y = y[ind]
    mae = [float(np.abs(distance_weighted(dist[:, :k].copy(), neigh_y[:, :k]) - y_val).mean()) for k in ks]
    return KSweep(ks, mae, len(X), len(X_val), time.perf_counter() - t0)


def plot_k_sweep(sweep: KSweep, path: str | Path | None = None) -> Figure:
    """Validation MAE against K, the best K marked (saved to ``path`` when given)."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(sweep.ks, sweep.mae, marker="o")
    best = sweep.best_k
    ax.axvline(best, color="tab:red", ls="--", lw=1, label=f"best K = {best}")
    ax.set_xlabel("K (neighbours, distance-weighted)")
    ax.set_ylabel("validation MAE (pawns)")
    ax.set_title(f"KNN sweep: {sweep.train_rows:,} training rows, {sweep.val_rows:,} validation rows")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=10))   # 40 Ks: a tick every few, not 40 labels
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=110)
    return fig


class KNNModel:
    """Distance-weighted KNN: the training rows as int8 squares + float32 targets,
    refitted (brute force, nothing to build) with scikit-learn on load."""

    kind = "knn"

    def __init__(self, squares: np.ndarray, target: np.ndarray, k: int) -> None:
        from sklearn.neighbors import KNeighborsRegressor

        self.squares = np.ascontiguousarray(squares, dtype=np.int8)
        self.target = np.ascontiguousarray(target, dtype=np.float32)
        self.k = int(k)
        self.estimator = KNeighborsRegressor(n_neighbors=self.k, weights="distance", algorithm="brute")
        self.estimator.fit(features(self.squares), self.target)

    def predict(self, X: np.ndarray) -> np.ndarray:
        return np.asarray(self.estimator.predict(X))

    def to_arrays(self) -> tuple[Arrays, dict[str, Any]]:
        return {"squares": self.squares, "target": self.target}, {"k": self.k, "rows": len(self.target)}

    @classmethod
    def from_arrays(cls, arrays: Arrays, meta: dict[str, Any], path: str | Path = "") -> KNNModel:
        sq, t = arrays["squares"], arrays["target"]
        k = meta.get("k")
        expect(sq.ndim == 2 and sq.shape[1] == 64 and sq.dtype == np.int8, path, "squares must be int8 (N, 64)")
        expect(t.shape == (len(sq),) and t.dtype == np.float32, path, "target must be float32 (N,)")
        expect(bool((np.abs(sq) <= 6).all()), path, "squares hold codes outside -6..6")
        if not isinstance(k, int) or not 1 <= k <= len(sq):
            raise store.ModelFileError(f"{path}: bad K {k!r}")
        return cls(sq, t, k)
