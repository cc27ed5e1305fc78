"""The linear learners: linear regression and the linear SVR, both shipped as ``coef`` + ``intercept``.

The two differ only in the fit (:func:`fit_linear`: least squares;
:func:`fit_linear_svr`: the epsilon-insensitive loss, close to least absolute
error); :class:`LinearModel` predicts for either.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from knights.learn.learners.inputs import N_FEATURES, Arrays
from knights.learn.store import expect

if TYPE_CHECKING:
    from sklearn.linear_model import LinearRegression
    from sklearn.svm import LinearSVR


class LinearModel:
    """``X @ coef + intercept``: linear regression and the linear SVR."""

    kind = "linear"

    def __init__(self, coef: np.ndarray, intercept: float | np.ndarray, estimator: str = "") -> None:
        self.coef = np.ascontiguousarray(coef).reshape(-1)
        self.intercept = np.asarray(intercept, dtype=self.coef.dtype).reshape(-1)[:1]
        self.estimator = estimator

    @classmethod
    def from_sklearn(cls, est: LinearRegression | LinearSVR) -> LinearModel:
        return cls(est.coef_, np.asarray(est.intercept_).reshape(-1)[:1], type(est).__name__)

    def predict(self, X: np.ndarray) -> np.ndarray:
        pred: np.ndarray = X @ self.coef + self.intercept[0]
        return pred

    def to_arrays(self) -> tuple[Arrays, dict[str, Any]]:
        return {"coef": self.coef, "intercept": self.intercept}, {"estimator": self.estimator}

    @classmethod
    def from_arrays(cls, arrays: Arrays, meta: dict[str, Any], path: str | Path = "") -> LinearModel:
        c, b = arrays["coef"], arrays["intercept"]
        expect(c.ndim == 1 and c.shape[0] == meta.get("n_features", N_FEATURES), path,
               f"coef must have {N_FEATURES} entries")
        expect(c.dtype in (np.float32, np.float64) and b.dtype == c.dtype and b.shape == (1,), path,
               "coef and intercept must be floats of one dtype")
        expect(bool(np.isfinite(c).all() and np.isfinite(b).all()), path, "non-finite coefficients")
        return cls(c, b, str(meta.get("estimator", "")))


def fit_linear(X: np.ndarray, y: np.ndarray) -> LinearRegression:
    from sklearn.linear_model import LinearRegression

    return LinearRegression().fit(X, y)


def fit_linear_svr(X: np.ndarray, y: np.ndarray, *, C: float = 0.1, epsilon: float = 0.0,
                   max_iter: int = 2000) -> LinearSVR:
    """LinearSVR with the epsilon-insensitive (L1-like) loss, solved in the dual."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVR

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return LinearSVR(C=C, epsilon=epsilon, loss="epsilon_insensitive", dual=True, max_iter=max_iter,
                         random_state=0).fit(X, y)
