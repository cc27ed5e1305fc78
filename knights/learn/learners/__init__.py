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

The package holds one module a job: :mod:`~knights.learn.learners.inputs` (the
features), :mod:`~knights.learn.learners.knn` (the K sweep and the KNN),
:mod:`~knights.learn.learners.forest` (the forest and its vectorised predict),
:mod:`~knights.learn.learners.svr`, :mod:`~knights.learn.learners.linear` and
:mod:`~knights.learn.learners.shipped` (the learners' names, files and fit records).
Import the names from here: ``from knights.learn import learners as L``.
"""

from __future__ import annotations

from knights.learn.learners.forest import ForestModel, fit_random_forest
from knights.learn.learners.inputs import N_FEATURES, N_PLANE_FEATURES, Arrays, features
from knights.learn.learners.knn import KNNModel, KSweep, distance_weighted, k_sweep, plot_k_sweep
from knights.learn.learners.linear import LinearModel, fit_linear, fit_linear_svr
from knights.learn.learners.shipped import (
    LEARNERS,
    MODEL_KINDS,
    TITLES,
    FitRecord,
    ShippedModel,
    load_model,
    save_model,
    shipped_model,
)
from knights.learn.learners.svr import KernelSVRModel, fit_svr

__all__ = [
    "LEARNERS",
    "MODEL_KINDS",
    "N_FEATURES",
    "N_PLANE_FEATURES",
    "TITLES",
    "Arrays",
    "FitRecord",
    "ForestModel",
    "KNNModel",
    "KSweep",
    "KernelSVRModel",
    "LinearModel",
    "ShippedModel",
    "distance_weighted",
    "features",
    "fit_linear",
    "fit_linear_svr",
    "fit_random_forest",
    "fit_svr",
    "k_sweep",
    "load_model",
    "plot_k_sweep",
    "save_model",
    "shipped_model",
]
