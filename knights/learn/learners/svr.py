"""The kernel SVR: an RBF-kernel SVR fitted on a subsample, shipped as its support vectors.

Its cost grows with the support vectors (about 1 ms a decision per 1,000), which is
why it is fitted on a subsample; :class:`KernelSVRModel` evaluates the kernel sum
itself, in batches, exactly enough to match scikit-learn.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from knights.learn.learners.inputs import N_PLANE_FEATURES, Arrays, features
from knights.learn.store import expect

if TYPE_CHECKING:
    from sklearn.svm import SVR


class KernelSVRModel:
    """An RBF-kernel SVR: ``f(x) = sum_i a_i exp(-gamma |x - s_i|^2) + b``.

    The support vectors are training positions, so they ship as int8 squares and
    their features are rebuilt on load. The board part of ``x . s`` is a sum of
    +-1 products, an integer: it is computed exactly in float32 (fast), the piece
    counts part in float64."""

    kind = "kernel_svr"

    def __init__(self, sv_squares: np.ndarray, dual_coef: np.ndarray, intercept: float, gamma: float) -> None:
        self.sv_squares = np.ascontiguousarray(sv_squares, dtype=np.int8)
        self.dual_coef = np.asarray(dual_coef, dtype=np.float64).reshape(-1)
        self.intercept = float(intercept)
        self.gamma = float(gamma)
        sv = features(self.sv_squares)
        self._planes_t = np.ascontiguousarray(sv[:, :N_PLANE_FEATURES].T)          # float32 (384, S)
        self._counts = sv[:, N_PLANE_FEATURES:].astype(np.float64)                  # (S, 10)
        self._sv_norm = (sv.astype(np.float64) ** 2).sum(axis=1)

    @classmethod
    def from_sklearn(cls, svr: SVR, sv_squares: np.ndarray) -> KernelSVRModel:
        if svr.kernel != "rbf":
            raise ValueError(f"only the RBF kernel is shipped, not {svr.kernel!r}")
        sv = features(sv_squares).astype(np.float64)
        if not np.array_equal(sv, svr.support_vectors_):
            raise ValueError("sv_squares do not encode the SVR's support vectors")
        return cls(sv_squares, svr.dual_coef_, float(svr.intercept_[0]), float(svr._gamma))

    def predict(self, X: np.ndarray, batch: int = 4096) -> np.ndarray:
        X = np.asarray(X, dtype=np.float32)
        out = np.empty(len(X))
        for s in range(0, len(X), batch):
            x = X[s:s + batch]
            dot = (x[:, :N_PLANE_FEATURES] @ self._planes_t).astype(np.float64)   # exact small integers
            dot += x[:, N_PLANE_FEATURES:].astype(np.float64) @ self._counts.T
            sq = (x.astype(np.float64) ** 2).sum(axis=1)[:, None] + self._sv_norm[None, :] - 2.0 * dot
            np.maximum(sq, 0.0, out=sq)
            out[s:s + batch] = np.exp(-self.gamma * sq) @ self.dual_coef + self.intercept
        return out

    def to_arrays(self) -> tuple[Arrays, dict[str, Any]]:
        return ({"sv_squares": self.sv_squares, "dual_coef": self.dual_coef,
                 "intercept": np.array([self.intercept]), "gamma": np.array([self.gamma])},
                {"support_vectors": len(self.dual_coef)})

    @classmethod
    def from_arrays(cls, arrays: Arrays, meta: dict[str, Any], path: str | Path = "") -> KernelSVRModel:
        sq, a = arrays["sv_squares"], arrays["dual_coef"]
        expect(sq.ndim == 2 and sq.shape[1] == 64 and sq.dtype == np.int8, path, "sv_squares must be int8 (S, 64)")
        expect(bool((np.abs(sq) <= 6).all()), path, "sv_squares hold codes outside -6..6")
        expect(a.shape == (len(sq),) and a.dtype == np.float64, path, "dual_coef must be float64 (S,)")
        expect(arrays["intercept"].shape == (1,) and arrays["gamma"].shape == (1,), path,
               "intercept and gamma must be single numbers")
        expect(bool(arrays["gamma"][0] > 0), path, "gamma must be positive")
        return cls(sq, a, float(arrays["intercept"][0]), float(arrays["gamma"][0]))


def fit_svr(X: np.ndarray, y: np.ndarray, *, C: float = 10.0, epsilon: float = 0.1, cache_size: int = 1000) -> SVR:
    """scikit-learn's RBF-kernel SVR, ``gamma="scale"``; ``cache_size`` (MB of kernel
    cache) only speeds the fit."""
    from sklearn.svm import SVR

    return SVR(kernel="rbf", C=C, epsilon=epsilon, gamma="scale", cache_size=cache_size).fit(X, y)
