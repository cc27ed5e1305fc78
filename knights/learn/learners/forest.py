"""The random forest: fitted with scikit-learn, shipped as flat node arrays with its own predict.

:class:`ForestModel` concatenates every tree's nodes into a few arrays (children
stored as forward offsets in the files, which compress well) and walks all
(row, tree) pairs down together in NumPy (:mod:`knights.learn.learners.trees`); its
predictions equal scikit-learn's.
:func:`fit_random_forest` is the original's forest, optionally capped in size.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from knights.learn.learners.inputs import N_FEATURES, Arrays
from knights.learn.learners.trees import FlatTrees, check_nodes
from knights.learn.store import expect

if TYPE_CHECKING:
    from sklearn.ensemble import RandomForestRegressor


class ForestModel(FlatTrees):
    """A regression forest as flat node arrays (:class:`~knights.learn.learners.trees.FlatTrees`): its
    prediction is the mean of the trees' leaves, summed tree by tree as scikit-learn sums them."""

    kind = "forest"
    input_dtype = np.float32
    feature_dtype = np.int16

    def __init__(self, left: npt.ArrayLike, right: npt.ArrayLike, feature: npt.ArrayLike, threshold: npt.ArrayLike,
                 value: npt.ArrayLike, roots: npt.ArrayLike, n_features: int = N_FEATURES) -> None:
        super().__init__(left, right, feature, threshold, value, roots, n_features)

    @classmethod
    def from_sklearn(cls, forest: RandomForestRegressor) -> ForestModel:
        lefts, rights, feats, thrs, vals, roots = [], [], [], [], [], []
        offset = 0
        for est in forest.estimators_:
            t = est.tree_
            n = t.node_count
            leaf = t.children_left < 0
            lefts.append(np.where(leaf, -1, t.children_left + offset))
            rights.append(np.where(leaf, -1, t.children_right + offset))
            feats.append(np.where(leaf, 0, t.feature))
            thrs.append(np.where(leaf, 0.0, t.threshold))
            vals.append(np.where(leaf, t.value.reshape(n, -1)[:, 0], 0.0))
            roots.append(offset)
            offset += n
        threshold = np.concatenate(thrs)
        as32 = threshold.astype(np.float32)
        if np.array_equal(as32.astype(np.float64), threshold):
            # lossless: half the bytes, and the rows compared in float32 (input_dtype) decide as scikit-learn's do
            threshold = as32
        return cls(np.concatenate(lefts), np.concatenate(rights), np.concatenate(feats), threshold,
                   np.concatenate(vals), roots, forest.n_features_in_)

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.leaf_sum(X) / self.n_trees

    def to_arrays(self) -> tuple[Arrays, dict[str, Any]]:
        # children as offsets from their parent: small numbers that compress well
        idx = np.arange(self.n_nodes, dtype=np.int64)
        leaf = self.left < 0
        left_off = np.where(leaf, 0, self.left - idx).astype(np.int32)
        right_off = np.where(leaf, 0, self.right - idx).astype(np.int32)
        value = np.where(leaf, self.value, 0.0)
        arrays: Arrays = {"left_offset": left_off, "right_offset": right_off, "feature": self.feature,
                  "threshold": self.threshold, "value": value, "roots": self.roots}
        return arrays, {"n_features": self.n_features, "n_trees": self.n_trees, "n_nodes": self.n_nodes}

    @classmethod
    def from_arrays(cls, arrays: Arrays, meta: dict[str, Any], path: str | Path = "") -> ForestModel:
        lo, ro = arrays["left_offset"], arrays["right_offset"]
        n = len(lo)
        for name in ("right_offset", "feature", "threshold", "value"):
            expect(arrays[name].shape == (n,), path, f"{name} must have one entry per node ({n})")
        expect(lo.dtype == np.int32 and ro.dtype == np.int32, path, "child offsets must be int32")
        expect(arrays["threshold"].dtype in (np.float32, np.float64), path, "threshold must be float")
        leaf = lo == 0
        expect(bool((leaf == (ro == 0)).all()), path, "a node has exactly one child")
        expect(bool((lo[~leaf] > 0).all() and (ro[~leaf] > 0).all()), path,
               "children must point forward inside their tree")
        idx = np.arange(n, dtype=np.int64)
        left, right = np.where(leaf, -1, idx + lo), np.where(leaf, -1, idx + ro)
        nf = meta.get("n_features", N_FEATURES)
        check_nodes(left, right, arrays["feature"], arrays["roots"], nf, path)
        expect(bool(np.isfinite(arrays["value"]).all() and np.isfinite(arrays["threshold"]).all()), path,
               "non-finite values")
        return cls(left, right, arrays["feature"], arrays["threshold"], arrays["value"], arrays["roots"], nf)


def fit_random_forest(X: np.ndarray, y: np.ndarray, *, n_estimators: int = 20, max_features: int = 20,
                      max_leaf_nodes: int | None = None, random_state: int = 0,
                      n_jobs: int = -1) -> RandomForestRegressor:
    """scikit-learn's forest with the original's settings; ``max_leaf_nodes`` caps each
    tree so that the shipped forest keeps to its size budget (None: fully grown)."""
    from sklearn.ensemble import RandomForestRegressor

    return RandomForestRegressor(n_estimators=n_estimators, max_features=max_features, random_state=random_state,
                                 n_jobs=n_jobs, max_leaf_nodes=max_leaf_nodes).fit(X, y)
