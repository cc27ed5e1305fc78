"""The classical learners: fit with scikit-learn, ship as plain arrays, predict without it.

Every learner sees :func:`knights.features.planes.flat_features` (six +-1 planes flattened
and the ten piece counts: 394 numbers) and predicts pawns from White's side.

=================  =============================================  ===============================
learner            fitted with                                    shipped as (own predict)
=================  =============================================  ===============================
``knn``            KNeighborsRegressor(K, weights="distance")      int8 squares + float32 targets;
                   K from :func:`k_sweep`                          refitted (brute force) on load
``random_forest``  RandomForestRegressor(20 trees,                 node arrays of all trees,
                   max_features=20, random_state=0, n_jobs=-1)     :meth:`ForestModel.predict`
``svr``            SVR(kernel="rbf") on a subsample                support vectors as int8 squares,
                                                                   dual coefs, gamma, intercept
``linear_svr``     LinearSVR on more rows                          coef + intercept
``linear``         LinearRegression                                coef + intercept
=================  =============================================  ===============================

Each shipped model has ``predict(X)`` on features and ``to_arrays()`` /
``from_arrays()`` for :mod:`knights.learn.store`; :class:`knights.evaluate.learner.LearnerEvaluator`
puts any of them behind the project's evaluator interface.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from knights.features.planes import flat_features
from knights.learn import store
from knights.learn.store import expect

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.linear_model import LinearRegression
    from sklearn.svm import SVR, LinearSVR

Arrays = dict[str, np.ndarray]
"""A shipped model's named arrays (:mod:`knights.learn.store`)."""

N_FEATURES = 394
N_PLANE_FEATURES = 384
LEARNERS = ("knn", "random_forest", "svr", "linear_svr", "linear")
TITLES = {"knn": "K nearest neighbours", "random_forest": "Random forest", "svr": "Kernel SVR (RBF)",
          "linear_svr": "Linear SVR", "linear": "Linear regression"}


def features(squares: np.ndarray) -> np.ndarray:
    """The learners' input: :func:`knights.features.planes.flat_features` (N, 394) float32."""
    return flat_features(np.asarray(squares))


# ---------------------------------------------------------------------------- KNN
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
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(sweep.ks, sweep.mae, marker="o")
    best = sweep.best_k
    ax.axvline(best, color="tab:red", ls="--", lw=1, label=f"best K = {best}")
    ax.set_xlabel("K (neighbours, distance-weighted)")
    ax.set_ylabel("validation MAE (pawns)")
    ax.set_title(f"KNN sweep: {sweep.train_rows:,} training rows, {sweep.val_rows:,} validation rows")
    ax.set_xticks(sweep.ks)
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


# ---------------------------------------------------------------------------- forest
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


# ---------------------------------------------------------------------------- kernel SVR
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
    from sklearn.svm import SVR

    return SVR(kernel="rbf", C=C, epsilon=epsilon, gamma="scale", cache_size=cache_size).fit(X, y)


# ---------------------------------------------------------------------------- linear
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


# ---------------------------------------------------------------------------- files
ShippedModel = KNNModel | ForestModel | KernelSVRModel | LinearModel
"""A learner in its shipped form: ``predict(X)``, ``to_arrays()`` and ``from_arrays()``."""

MODEL_KINDS: dict[str, type[ShippedModel]] = {"knn": KNNModel, "forest": ForestModel, "kernel_svr": KernelSVRModel,
                                              "linear": LinearModel}


def save_model(model: ShippedModel, path: str | Path, meta: dict[str, Any] | None = None) -> Path:
    """Write a shipped model (``.npz`` + ``.json``); returns the sidecar path."""
    arrays, own = model.to_arrays()
    return store.save_arrays(path, model.kind, arrays, {**own, **(meta or {})})


def load_model(path: str | Path) -> ShippedModel:
    """A shipped model back from its files (every check of :func:`store.load_arrays`,
    then the kind's own consistency checks)."""
    doc = store.read_sidecar(path)
    cls = MODEL_KINDS.get(doc["kind"])
    if cls is None:
        raise store.ModelFileError(f"{store.sidecar_path(path)}: unknown model kind {doc['kind']!r}")
    arrays, doc = store.load_arrays(path, doc["kind"])
    meta = doc.get("meta") or {}
    expect(isinstance(meta, dict), store.sidecar_path(path), "'meta' must be an object")
    return cls.from_arrays(arrays, meta, store.sidecar_path(path).with_suffix(".npz"))


def shipped_model(name: str, est: Any, train_squares: np.ndarray | None = None) -> ShippedModel:
    """The shipped (own-predict) form of a fitted scikit-learn learner; the SVR keeps
    its support vectors as ``train_squares`` rows. (KNN has no scikit-learn estimator:
    its shipped form is built directly, :class:`KNNModel`.)"""
    if name == "random_forest":
        return ForestModel.from_sklearn(est)
    if name == "svr":
        if train_squares is None:
            raise ValueError("the SVR's shipped form needs its training squares (train_squares)")
        return KernelSVRModel.from_sklearn(est, train_squares[est.support_])
    return LinearModel.from_sklearn(est)


@dataclass
class FitRecord:
    """What fitting one learner cost and what it produced."""

    name: str
    train_rows: int
    fit_seconds: float
    params: dict[str, Any] = field(default_factory=dict)
    verify_max_abs_diff: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"train_rows": self.train_rows, "fit_seconds": round(self.fit_seconds, 2), "params": self.params,
                "verify_max_abs_diff": self.verify_max_abs_diff}
