"""The democracy's members, one at a time: choosing K, sizing the SVR, fitting each learner, predicting.

Each step reads a :class:`~knights.lab.ensemble.plan.Data` and its
:class:`~knights.lab.ensemble.plan.Plan`: :func:`run_k_sweep` scores the KNN's
K on validation rows; :func:`svr_fit_seconds` times small kernel-SVR fits and
:func:`choose_svr_rows` extrapolates them to the subsample that fits in the time
budget; :func:`fit_learner` fits one learner and checks that its shipped form
predicts what scikit-learn predicts. :func:`predict_block` runs any member over a
whole block, and :func:`network_member` brings in an EL network.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from knights.data.chunks import Encoded
from knights.lab.ensemble.plan import Data, Plan
from knights.learn import learners as L

if TYPE_CHECKING:
    from knights.evaluate.base import Evaluator, NetworkEvaluator


def run_k_sweep(data: Data, plan: Plan) -> L.KSweep:
    """Validation MAE of distance-weighted KNN for K in ``plan.ks`` on subsets."""
    X, y, _ = data.train_xy(plan.sweep_train_rows or plan.knn_rows)
    n_val = len(data.val) if plan.sweep_val_rows is None else min(plan.sweep_val_rows, len(data.val))
    vi = np.random.default_rng(plan.seed + 1).permutation(len(data.val))[:n_val]
    return L.k_sweep(X, y, L.features(data.val.squares[vi]), data.val.target[vi], plan.ks)


def svr_fit_seconds(data: Data, sizes: tuple[int, ...], C: float = 10.0) -> dict[int, float]:
    """Kernel SVR fit time (seconds) at each training size."""
    out = {}
    for n in sizes:
        X, y, _ = data.train_xy(n)
        t0 = time.perf_counter()
        L.fit_svr(X, y, C=C)
        out[len(X)] = time.perf_counter() - t0
    return out


def choose_svr_rows(times: dict[int, float], budget_s: float, max_rows: int) -> tuple[int, float]:
    """The subsample whose fit time, extrapolated from ``times`` by a power law
    (time ~ rows^a, fitted in log-log), is ``budget_s``; and the exponent."""
    n = np.array(sorted(times), dtype=float)
    t = np.array([max(times[int(k)], 1e-3) for k in n])
    a = float(np.polyfit(np.log(n), np.log(t), 1)[0]) if len(n) > 1 else 2.0
    a = min(max(a, 1.0), 3.0)
    rows = n[-1] * (budget_s / t[-1]) ** (1.0 / a)
    return int(min(max(rows, n[-1]), max_rows)) // 100 * 100, a


def fit_learner(name: str, data: Data, plan: Plan, k: int | None = None,
                verify_rows: int = 2_000) -> tuple[Any, L.ShippedModel, L.FitRecord]:
    """Fit one learner; returns ``(sklearn estimator, shipped model, FitRecord)``.

    The shipped model's own predict is compared with scikit-learn's on validation
    rows: ``FitRecord.verify_max_abs_diff`` (must be ~0)."""
    rows = {"knn": plan.knn_rows, "random_forest": plan.rf_rows, "svr": plan.svr_rows,
            "linear_svr": plan.linear_svr_rows, "linear": plan.linear_rows}[name]
    if isinstance(rows, str):
        raise ValueError("resolve svr_rows='auto' first (choose_svr_rows)")
    X, y, sq = data.train_xy(rows)
    t0 = time.perf_counter()
    params: dict[str, Any] = {}
    model: L.ShippedModel
    if name == "knn":
        if k is None:
            raise ValueError("KNN needs K: run the sweep first")
        est = None
        model = L.KNNModel(sq, y, k)
        params = {"k": int(k), "weights": "distance"}
    elif name == "random_forest":
        est = L.fit_random_forest(X, y, max_leaf_nodes=plan.rf_max_leaf_nodes)
        params = {"n_estimators": 20, "max_features": 20, "random_state": 0, "n_jobs": -1,
                  "max_leaf_nodes": plan.rf_max_leaf_nodes}
    elif name == "svr":
        est = L.fit_svr(X, y, C=plan.svr_C)
        params = {"kernel": "rbf", "C": plan.svr_C, "epsilon": 0.1, "gamma": float(est._gamma),
                  "support_vectors": len(est.support_)}
    elif name == "linear_svr":
        est = L.fit_linear_svr(X, y)
        params = {"loss": "epsilon_insensitive", "C": 0.1, "epsilon": 0.0, "n_iter": int(est.n_iter_)}
    elif name == "linear":
        est = L.fit_linear(X, y)
    else:
        raise ValueError(f"unknown learner {name!r}; known: {', '.join(L.LEARNERS)}")
    fit_s = time.perf_counter() - t0
    if est is not None:
        model = L.shipped_model(name, est, sq)
    rec = L.FitRecord(name, len(X), fit_s, params)
    if est is not None:
        Xv = L.features(data.val.squares[:verify_rows])
        rec.verify_max_abs_diff = float(np.max(np.abs(model.predict(Xv) - est.predict(Xv)), initial=0.0))
        if rec.verify_max_abs_diff > 1e-5:
            raise AssertionError(f"{name}: shipped predict differs from scikit-learn's by {rec.verify_max_abs_diff}")
    return est, model, rec


def predict_block(evaluator: Evaluator, block: Encoded, batch: int = 20_000) -> np.ndarray:
    """An evaluator's predictions for a whole block, in batches."""
    out = [np.asarray(evaluator.evaluate(block.take(slice(s, s + batch))), dtype=np.float32).reshape(-1)
           for s in range(0, len(block), batch)]
    return np.concatenate(out) if out else np.zeros(0, np.float32)


def network_member(name: str, models_dir: str | Path | None = None) -> NetworkEvaluator:
    """An EL version as a member (:func:`knights.evaluate.base.network_evaluator`; torch is
    imported only when a network joins)."""
    from knights.evaluate.base import network_evaluator

    return network_evaluator(name, models_dir)
