"""Regression trees as flat node arrays, walked in NumPy: what the shipped forest and boosted trees share.

Every tree's nodes are concatenated: node ``i`` has ``left[i]``/``right[i]`` (global node indices, -1 at a leaf),
``feature[i]`` and ``threshold[i]`` (go left when ``x[feature] <= threshold``) and ``value[i]`` (a leaf's value);
``roots`` holds each tree's first node. :meth:`FlatTrees.apply` walks every (row, tree) pair down at once, and
:meth:`FlatTrees.leaf_sum` adds the leaves tree by tree, in scikit-learn's order, so that the subclasses'
predictions equal scikit-learn's (to the last bit where scikit-learn too adds the trees in order: the boosted trees
always, a forest predicting on one thread). :func:`check_nodes` is the one check of a loaded file's structure:
a walk always ends, inside its own tree.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from knights.learn.store import expect


class FlatTrees:
    """Trees as flat node arrays (see the module); subclasses say how a row goes left (:meth:`goes_left`), what
    the rows' dtype is (:attr:`input_dtype`), and how the leaves make a prediction."""

    input_dtype: type[np.floating] = np.float64
    feature_dtype: type[np.integer] = np.int32

    def __init__(self, left: npt.ArrayLike, right: npt.ArrayLike, feature: npt.ArrayLike, threshold: npt.ArrayLike,
                 value: npt.ArrayLike, roots: npt.ArrayLike, n_features: int) -> None:
        self.left = np.asarray(left, dtype=np.int32)
        self.right = np.asarray(right, dtype=np.int32)
        self.feature: np.ndarray = np.asarray(feature, dtype=self.feature_dtype)
        self.threshold = np.asarray(threshold)
        self.value = np.asarray(value, dtype=np.float64)
        self.roots = np.asarray(roots, dtype=np.int32)
        self.n_features = int(n_features)

    @property
    def n_nodes(self) -> int:
        return len(self.left)

    @property
    def n_trees(self) -> int:
        return len(self.roots)

    def goes_left(self, x: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """Whether the values ``x`` go left at ``nodes`` (one value a node)."""
        return np.asarray(x <= self.threshold[nodes])

    def apply(self, X: npt.ArrayLike) -> np.ndarray:
        """The leaf (global node index) of every row in every tree: (N, trees)."""
        X = np.ascontiguousarray(X, dtype=self.input_dtype)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(f"expected (N, {self.n_features}) features, got {X.shape}")
        n, t = len(X), self.n_trees
        node = np.tile(self.roots.astype(np.int64), n)          # pair p = row p // t, tree p % t
        row = np.repeat(np.arange(n, dtype=np.int64), t)
        active = np.flatnonzero(self.left[node] >= 0)
        flat = X.reshape(-1)
        while active.size:
            cur = node[active]
            x = flat[row[active] * self.n_features + self.feature[cur]]
            nxt = np.where(self.goes_left(x, cur), self.left[cur], self.right[cur])
            node[active] = nxt
            active = active[self.left[nxt] >= 0]
        return node.reshape(n, t)

    def leaf_sum(self, X: npt.ArrayLike, start: float = 0.0, block: int = 50_000) -> np.ndarray:
        """``start`` plus every tree's leaf for each row, added tree by tree (as scikit-learn adds them), ``block``
        rows at a time."""
        X = np.asarray(X)
        out = np.empty(len(X))
        for s in range(0, len(X), block):
            leaves = self.value[self.apply(X[s:s + block])]
            total = np.full(len(leaves), start)
            for j in range(self.n_trees):
                total += leaves[:, j]
            out[s:s + block] = total
        return out


def check_nodes(left: np.ndarray, right: np.ndarray, feature: np.ndarray, roots: np.ndarray, n_features: object,
                path: str | Path) -> np.ndarray:
    """Check a file's tree structure (children as global indices, -1 at a leaf): the roots increase from 0, a node
    has both children or none, every child lies after its parent inside its own tree (so a walk ends), and every
    split reads a feature there is. A :class:`~knights.learn.store.ModelFileError` naming ``path`` otherwise;
    returns the mask of inner nodes."""
    n = len(left)
    expect(isinstance(n_features, int) and n_features > 0, path, f"bad n_features {n_features!r}")
    assert isinstance(n_features, int)
    expect(roots.ndim == 1 and len(roots) >= 1 and roots[0] == 0 and bool((np.diff(roots) > 0).all())
           and int(roots[-1]) < n, path, "tree roots must increase from 0 within the node arrays")
    leaf = left < 0
    expect(bool((leaf == (right < 0)).all()), path, "a node has exactly one child")
    idx = np.arange(n, dtype=np.int64)
    tree_end = np.append(roots[1:], n)[np.searchsorted(roots, idx, side="right") - 1]
    inner = ~leaf
    expect(bool((left[inner] > idx[inner]).all() and (right[inner] > idx[inner]).all()
                and (left[inner] < tree_end[inner]).all() and (right[inner] < tree_end[inner]).all()),
           path, "children must point forward inside their tree")
    expect(bool(((feature[inner] >= 0) & (feature[inner] < n_features)).all()), path,
           f"feature indices outside 0..{n_features - 1}")
    return inner
