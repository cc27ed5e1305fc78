"""The learners together: their names, their shipped forms, and the files those live in.

Every learner has a name (:data:`LEARNERS`, in the order the trainer fits them) and
ships as one of four model classes, each with a ``kind`` that its sidecar records
(:data:`MODEL_KINDS`). :func:`shipped_model` turns a fitted scikit-learn estimator
into its shipped form, :func:`save_model` / :func:`load_model` write and read it
through :mod:`knights.learn.store` (``.npz`` + ``.json``, no pickle), and a
:class:`FitRecord` says what fitting it cost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from knights.learn import store
from knights.learn.learners.forest import ForestModel
from knights.learn.learners.knn import KNNModel
from knights.learn.learners.linear import LinearModel
from knights.learn.learners.svr import KernelSVRModel
from knights.learn.store import expect

LEARNERS = ("knn", "random_forest", "svr", "linear_svr", "linear")
"""Every learner's name, in the order the trainer fits them."""
TITLES = {"knn": "K nearest neighbours", "random_forest": "Random forest", "svr": "Kernel SVR (RBF)",
          "linear_svr": "Linear SVR", "linear": "Linear regression"}
"""A learner's name as the tables and the manifest spell it."""

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
