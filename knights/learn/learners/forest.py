"""The random forest: fitted with scikit-learn, shipped as flat node arrays with its own predict.

:class:`ForestModel` concatenates every tree's nodes into a few arrays (children
stored as forward offsets in the files, which compress well) and walks all
(row, tree) pairs down together in NumPy; its predictions equal scikit-learn's.
:func:`fit_random_forest` is the original's forest, optionally capped in size.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from knights.learn.learners.inputs import N_FEATURES, Arrays
from knights.learn.store import expect

if TYPE_CHECKING:
    from sklearn.ensemble import RandomForestRegressor


class ForestModel:
    """A regression forest as flat node arrays (all trees concatenated).

    Node ``i`` of the concatenation: ``left[i]``/``right[i]`` (global node indices,
    -1 at a leaf), ``feature[i]``, ``threshold[i]`` (go left when
    ``x[feature] <= threshold``), ``value[i]`` (the leaf's prediction); ``roots``
    holds each tree's first node. :meth:`predict` walks every (row, tree) pair
    down at once, vectorised, and averages the trees as scikit-learn does.
    """

    kind = "forest"

    def __init__(self, left: npt.ArrayLike, right: npt.ArrayLike, feature: npt.ArrayLike, threshold: npt.ArrayLike,
                 value: npt.ArrayLike, roots: npt.ArrayLike, n_features: int = N_FEATURES) -> None:
        self.left = np.asarray(left, dtype=np.int32)
        self.right = np.asarray(right, dtype=np.int32)
        self.feature = np.asarray(feature, dtype=np.int16)
        self.threshold = np.asarray(threshold)
        self.value = np.asarray(value, dtype=np.float64)
        self.roots = np.asarray(roots, dtype=np.int32)
        self.n_features = n_features

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
            threshold = as32   # lossless: half the bytes
        return cls(np.concatenate(lefts), np.concatenate(rights), np.concatenate(feats), threshold,
                   np.concatenate(vals), roots, forest.n_features_in_)

    @property
    def n_nodes(self) -> int:
        return len(self.left)

    @property
    def n_trees(self) -> int:
        return len(self.roots)

    def apply(self, X: np.ndarray) -> np.ndarray:
        """The leaf (global node index) of every row in every tree: (N, trees)."""
        X = np.asarray(X, dtype=np.float32)
        n, t = len(X), self.n_trees
        node = np.tile(self.roots.astype(np.int64), n)          # pair p = row p // t, tree p % t
        row = np.repeat(np.arange(n, dtype=np.int64), t)
        active = np.flatnonzero(self.left[node] >= 0)
        flat = X.reshape(-1)
        width = X.shape[1]
        while active.size:
            cur = node[active]
            x = flat[row[active] * width + self.feature[cur]]
            # float32 thresholds are the float64 ones exactly (from_sklearn), so comparing
            # in float32 decides as scikit-learn does; no per-call float64 copy of them
            nxt = np.where(x <= self.threshold[cur], self.left[cur], self.right[cur])
            node[active] = nxt
            active = active[self.left[nxt] >= 0]
        return node.reshape(n, t)

    def predict(self, X: np.ndarray) -> np.ndarray:
        leaves = self.value[self.apply(X)]
        out = np.zeros(len(leaves))
        for j in range(self.n_trees):      # the trees in order, then the mean, as scikit-learn sums them
            out += leaves[:, j]
        return out / self.n_trees

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
        roots = arrays["roots"]
        nf = meta.get("n_features", N_FEATURES)
        expect(isinstance(nf, int) and nf > 0, path, f"bad n_features {nf!r}")
        expect(roots.ndim == 1 and len(roots) >= 1 and roots[0] == 0 and bool((np.diff(roots) > 0).all())
               and int(roots[-1]) < n, path, "tree roots must increase from 0 within the node arrays")
        leaf = lo == 0
        expect(bool((leaf == (ro == 0)).all()), path, "a node has exactly one child")
        idx = np.arange(n, dtype=np.int64)
        left, right = idx + lo, idx + ro
        # every child lies after its parent and inside its own tree: walks always end
        tree_end = np.append(roots[1:], n)[np.searchsorted(roots, idx, side="right") - 1]
        inner = ~leaf
        expect(bool((lo[inner] > 0).all() and (ro[inner] > 0).all()
                    and (left[inner] < tree_end[inner]).all() and (right[inner] < tree_end[inner]).all()),
               path, "child indices must point forward inside their tree")
        feat = arrays["feature"]
        expect(bool(((feat[inner] >= 0) & (feat[inner] < nf)).all()), path, f"feature indices outside 0..{nf - 1}")
        expect(bool(np.isfinite(arrays["value"]).all() and np.isfinite(arrays["threshold"]).all()), path,
               "non-finite values")
        return cls(np.where(leaf, -1, left), np.where(leaf, -1, right), feat, arrays["threshold"],
                   arrays["value"], roots, nf)


def fit_random_forest(X: np.ndarray, y: np.ndarray, *, n_estimators: int = 20, max_features: int = 20,
                      max_leaf_nodes: int | None = None, random_state: int = 0,
                      n_jobs: int = -1) -> RandomForestRegressor:
    """scikit-learn's forest with the original's settings; ``max_leaf_nodes`` caps each
    tree so that the shipped forest keeps to its size budget (None: fully grown)."""
    from sklearn.ensemble import RandomForestRegressor

    return RandomForestRegressor(n_estimators=n_estimators, max_features=max_features, random_state=random_state,
                                 n_jobs=n_jobs, max_leaf_nodes=max_leaf_nodes).fit(X, y)
