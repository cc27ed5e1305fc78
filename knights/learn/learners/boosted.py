"""Gradient boosting: scikit-learn's HistGradientBoostingRegressor, shipped as plain node arrays with its own predict.

scikit-learn fits it (:func:`fit_boosted`); :class:`BoostedTreesModel` keeps what its prediction reads, every tree's
nodes (scikit-learn's ``TreePredictor.nodes``, a structured array, split into one plain array a field: the leaf value,
the feature, the threshold, which way a missing value goes, the children), and predicts with NumPy as scikit-learn
does (:mod:`knights.learn.learners.trees`): the baseline, plus each tree's leaf value in the trees' order. The result
equals ``estimator.predict`` (a test checks it), and the files are written by :mod:`knights.learn.store` (``.npz`` of
plain numeric arrays, opened with ``allow_pickle=False``, and a JSON sidecar with its SHA-256): loading them runs no
code.

Numeric features only (no categorical splits) and the squared or absolute error (an identity link): the models this
project fits.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from knights.learn import store
from knights.learn.learners.trees import FlatTrees, check_nodes
from knights.learn.store import expect

if TYPE_CHECKING:
    from sklearn.ensemble import HistGradientBoostingRegressor

KIND = "boosted_trees"


class BoostedTreesModel(FlatTrees):
    """Boosted regression trees as flat node arrays (:class:`~knights.learn.learners.trees.FlatTrees`), a missing
    value going the way scikit-learn learned for its node; the prediction is the baseline plus every tree's leaf,
    added tree by tree."""

    kind = KIND

    def __init__(self, left: np.ndarray, right: np.ndarray, feature: np.ndarray, threshold: np.ndarray,
                 missing_left: np.ndarray, value: np.ndarray, roots: np.ndarray, baseline: float,
                 n_features: int) -> None:
        super().__init__(left, right, feature, np.asarray(threshold, dtype=np.float64), value, roots, n_features)
        self.missing_left = np.asarray(missing_left, dtype=bool)
        self.baseline = float(baseline)

    @classmethod
    def from_sklearn(cls, est: HistGradientBoostingRegressor) -> BoostedTreesModel:
        if getattr(est, "is_categorical_", None) is not None and np.any(est.is_categorical_):
            raise ValueError("categorical splits are not shipped")
        if est.n_trees_per_iteration_ != 1:
            raise ValueError("one tree an iteration (a regressor) only")
        if est._loss.link.__class__.__name__ != "IdentityLink":
            raise ValueError(f"only an identity link is shipped, not {est._loss.link.__class__.__name__}")
        lefts, rights, feats, thrs, miss, vals, roots = [], [], [], [], [], [], []
        offset = 0
        for (tree,) in est._predictors:
            nodes = tree.nodes
            leaf = nodes["is_leaf"].astype(bool)
            lefts.append(np.where(leaf, -1, nodes["left"].astype(np.int64) + offset))
            rights.append(np.where(leaf, -1, nodes["right"].astype(np.int64) + offset))
            feats.append(np.where(leaf, 0, nodes["feature_idx"]))
            thrs.append(np.where(leaf, 0.0, nodes["num_threshold"]))
            miss.append(nodes["missing_go_to_left"].astype(bool) & ~leaf)
            vals.append(np.where(leaf, nodes["value"], 0.0))
            roots.append(offset)
            offset += len(nodes)
        return cls(np.concatenate(lefts), np.concatenate(rights), np.concatenate(feats), np.concatenate(thrs),
                   np.concatenate(miss), np.concatenate(vals), np.array(roots), float(est._baseline_prediction.item()),
                   est.n_features_in_)

    def goes_left(self, x: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        return np.asarray(np.where(np.isnan(x), self.missing_left[nodes], x <= self.threshold[nodes]))

    def predict(self, X: np.ndarray, block: int = 50_000) -> np.ndarray:
        """The baseline plus every tree's leaf value, added tree by tree as scikit-learn adds them."""
        return self.leaf_sum(X, start=self.baseline, block=block)

    def to_arrays(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        arrays: dict[str, np.ndarray] = {
            "left": self.left, "right": self.right, "feature": self.feature, "threshold": self.threshold,
            "missing_left": self.missing_left, "value": self.value, "roots": self.roots,
            "baseline": np.array([self.baseline])}
        return arrays, {"n_features": self.n_features, "n_trees": self.n_trees, "n_nodes": self.n_nodes}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], meta: dict[str, Any],
                    path: str | Path = "") -> BoostedTreesModel:
        left, right = arrays["left"], arrays["right"]
        n = len(left)
        for name in ("right", "feature", "threshold", "missing_left", "value"):
            expect(arrays[name].shape == (n,), path, f"{name} must have one entry per node ({n})")
        expect(left.dtype == np.int32 and right.dtype == np.int32, path, "children must be int32")
        nf = meta.get("n_features")
        inner = check_nodes(left, right, arrays["feature"], arrays["roots"], nf, path)
        assert isinstance(nf, int)
        expect(arrays["baseline"].shape == (1,), path, "baseline must be one number")
        expect(bool(np.isfinite(arrays["value"]).all() and np.isfinite(arrays["baseline"]).all()
                    and np.isfinite(arrays["threshold"][inner]).all()), path, "non-finite values")
        return cls(left, right, arrays["feature"], arrays["threshold"], arrays["missing_left"], arrays["value"],
                   arrays["roots"], float(arrays["baseline"][0]), nf)


def fit_boosted(X: np.ndarray, y: np.ndarray, **params: Any) -> HistGradientBoostingRegressor:
    """scikit-learn's HistGradientBoostingRegressor (squared error unless ``params`` say otherwise), early stopping on
    a tenth of the rows held out inside the fit."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    settings = {"max_iter": 500, "learning_rate": 0.1, "max_leaf_nodes": 63, "min_samples_leaf": 40,
                "l2_regularization": 1.0, "early_stopping": True, "validation_fraction": 0.1,
                "n_iter_no_change": 20, "random_state": 0, **params}
    return HistGradientBoostingRegressor(**settings).fit(X, y)


def save_boosted(model: BoostedTreesModel, path: str | Path, meta: dict[str, Any] | None = None) -> Path:
    """``<path>.npz`` (plain arrays) and ``<path>.json`` (sidecar with the SHA-256); returns the sidecar."""
    arrays, own = model.to_arrays()
    return store.save_arrays(path, KIND, arrays, {**own, **(meta or {})})


def load_boosted(path: str | Path) -> tuple[BoostedTreesModel, dict[str, Any]]:
    """The model back from its files, every check of :func:`knights.learn.store.load_arrays` passed, and the meta
    the sidecar records."""
    arrays, doc = store.load_arrays(path, KIND)
    meta = doc.get("meta") or {}
    expect(isinstance(meta, dict), store.sidecar_path(path), "'meta' must be an object")
    return BoostedTreesModel.from_arrays(arrays, meta, store.sidecar_path(path).with_suffix(".npz")), meta
