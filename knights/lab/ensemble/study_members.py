"""The democracy study's members: every network the project ships, the bag of one design, the classical learners.

* the compiled sparse networks (:data:`~knights.learn.registry.FAST_NETWORKS`: EL/v13, EL/v15 to EL/v26) and the
  CNNs (:data:`CNNS`: EL/v10, EL/v11, EL/v14), every EL network whose weights are shipped;
* the bag (:mod:`knights.lab.ensemble.bagging`): EL/v24's design trained from scratch on data/full alone, one per seed;
* the classical learners, fitted here on data/full's training letters (``a-i except every 10th``, the networks'
  own) by :func:`fit_classical`: the original's three with the settings the shipped democracy's trainer used
  (:mod:`knights.evaluate.train_democracy`: a distance-weighted KNN with K = 7 on 20,000 rows, a random forest of
  20 trees of at most 50,000 leaves on 400,000 rows, an RBF-kernel SVR with C = 10 on 10,000 rows, all on the 394
  plane features), gradient boosting (:class:`~sklearn.ensemble.HistGradientBoostingRegressor`) on the positional
  features (:mod:`knights.features.positional`) learning the win probability, and gradient boosting on EL/v25's
  residual: the same features and EL/v25's own win probability, learning what EL/v25 gets wrong (its win
  probability's error), on data/full's validation letters (``every 10th except j``), which EL/v25 never trained on,
  so the residuals are the ones it makes on positions it has not seen.

Each member is static or judged where the captures end (:class:`~knights.evaluate.ensemble.Member`'s ``judged``).
The learners' files go to ``runs/democracy/learners/`` (plain arrays, :mod:`knights.learn.store`), with what fitting
each cost in ``fits.json``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from knights.common import write_json
from knights.evaluate.ensemble import Member
from knights.lab.ensemble.bagging import BAG_DIR, member_path
from knights.learn import registry

STUDY_DIR = registry.REPO_ROOT / "runs" / "democracy"
LEARNER_DIR = STUDY_DIR / "learners"
FITS_JSON = LEARNER_DIR / "fits.json"
SPARSE = registry.FAST_NETWORKS
CNNS = ("EL/v10", "EL/v11", "EL/v14")
BAG_SEEDS = (0, 1)
"""The bag's seeds: the two trained in the time the study had (10 and 33 minutes of training on this shared machine)."""
CLASSICAL = ("knn", "random_forest", "svr", "hgb", "hgb_residual")
"""The classical learners' names (files ``<name>.json`` + ``.npz`` in :data:`LEARNER_DIR`)."""
PURE_CLASSICAL = ("knn", "random_forest", "svr", "hgb")
"""The classical learners that read no network's value."""
RESIDUAL_OF = "EL/v25"
TRAIN_LETTERS = "a-i except every 10th"
VALIDATION_LETTERS = "every 10th except j"
SETTINGS: dict[str, dict[str, Any]] = {
    "knn": {"rows": 20_000, "k": 7},
    "random_forest": {"rows": 400_000, "n_estimators": 20, "max_features": 20, "max_leaf_nodes": 50_000},
    "svr": {"rows": 10_000, "C": 10.0},
    "hgb": {"rows": None, "max_iter": 500},
    "hgb_residual": {"rows": None, "max_iter": 500},
}
"""What each classical learner is fitted with (``rows``: the first that many of the shuffled training rows; None:
all of them)."""


def learner_file(name: str, folder: Path = LEARNER_DIR) -> Path:
    return folder / f"{name}.json"


def source_of(name: str) -> tuple[str, str | None]:
    """The :class:`Member` source and label of a member's base name (``EL/v24``, ``bag/seed0``, ``hgb``)."""
    if name.startswith("EL/"):
        return name, None
    if name.startswith("bag/seed"):
        return registry.repo_relative(member_path(int(name[len("bag/seed"):]), BAG_DIR)), name
    if name in CLASSICAL:
        return registry.repo_relative(learner_file(name)), name
    raise ValueError(f"unknown study member {name!r}")


def base_names() -> list[str]:
    """Every member's base name: sparse networks, CNNs, the bag, the classical learners."""
    return [*SPARSE, *CNNS, *(f"bag/seed{s}" for s in BAG_SEEDS), *CLASSICAL]


def member(name: str, judged: bool, memory: str | None = None, space: str = "pawns") -> Member:
    source, label = source_of(name)
    return Member(source, judged, space=space, memory=memory, name=label)


def family(name: str) -> str:
    """``sparse``, ``cnn``, ``bag`` or ``classical``."""
    if name in SPARSE:
        return "sparse"
    if name in CNNS:
        return "cnn"
    return "bag" if name.startswith("bag/") else "classical"


# ---------------------------------------------------------------------------- fitting the classical learners
def _training_rows(letters: str, progress: bool) -> Any:
    from knights.data.cache import ChunkCache, load_encoded
    from knights.data.chunks import select_chunks
    from knights.learn.experiment import FULL_DATA

    folder = registry.repo_path(FULL_DATA)
    return load_encoded(select_chunks(folder, letters), ChunkCache(folder.parent / "cache"), progress=progress)


def fit_classical(folder: Path = LEARNER_DIR, only: tuple[str, ...] = CLASSICAL, progress: bool = True,
                  seed: int = 0) -> dict[str, Any]:
    """Fit every classical learner of :data:`CLASSICAL` (``only``) not yet in ``folder``; write its files and
    its fit record (``fits.json``); returns the records."""
    from knights.evaluate.ensemble import to_space
    from knights.features.positional import FEATURE_NAMES, positional_features
    from knights.learn import learners as L
    from knights.learn.learners.boosted import BoostedTreesModel, fit_boosted, save_boosted

    folder.mkdir(parents=True, exist_ok=True)
    records: dict[str, Any] = json.loads(FITS_JSON.read_text()) if FITS_JSON.is_file() else {}
    todo = [n for n in only if not learner_file(n, folder).is_file()]
    if not todo:
        return records
    train = _training_rows(TRAIN_LETTERS, progress)
    order = np.random.default_rng(seed).permutation(len(train))
    check = _training_rows(VALIDATION_LETTERS, progress)
    check_rows = check.take(np.arange(min(2_000, len(check))))

    def say(text: str) -> None:
        if progress:
            print(text, flush=True)

    for name in todo:
        cfg = SETTINGS[name]
        n = len(order) if cfg["rows"] is None else min(cfg["rows"], len(order))
        idx = order[:n]
        t0 = time.perf_counter()
        diff: float | None = None
        extra: dict[str, Any] = {}
        if name in ("knn", "random_forest", "svr"):
            sq, y = train.squares[idx], train.target[idx]
            if name == "knn":
                model: Any = L.KNNModel(sq, y, cfg["k"])
                fit_s = time.perf_counter() - t0
            else:
                X = L.features(sq)
                est = (L.fit_random_forest(X, y, n_estimators=cfg["n_estimators"], max_features=cfg["max_features"],
                                           max_leaf_nodes=cfg["max_leaf_nodes"], n_jobs=1) if name == "random_forest"
                       else L.fit_svr(X, y, C=cfg["C"]))
                fit_s = time.perf_counter() - t0
                model = L.shipped_model(name, est, sq)
                Xc = L.features(check_rows.squares)
                diff = float(np.max(np.abs(model.predict(Xc) - est.predict(Xc))))
            side = L.save_model(model, folder / name, {"learner": name, "train_rows": int(n), **cfg})
        else:
            if name == "hgb":
                rows = train.take(idx)
                X = positional_features(rows.squares, rows.white, rows.check, rows.castling)
                y = to_space(rows.target, "win_probability")
                meta: dict[str, Any] = {"target": "win_probability", "features": "positional",
                                        "letters": TRAIN_LETTERS}
            else:
                from knights.evaluate.ensemble import build_evaluator

                rows = check                          # every validation-letter row: EL/v25 never trained on them
                base = np.asarray(build_evaluator(RESIDUAL_OF, False).evaluate(rows), dtype=np.float64)
                base_wp = to_space(base, "win_probability")
                X = np.concatenate([positional_features(rows.squares, rows.white, rows.check, rows.castling),
                                    base_wp[:, None].astype(np.float32)], axis=1)
                y = to_space(rows.target, "win_probability") - base_wp
                meta = {"target": "win_probability", "features": "positional + the base's win probability",
                        "residual_of": RESIDUAL_OF, "letters": VALIDATION_LETTERS}
                n = len(rows)
            est = fit_boosted(X, y, max_iter=cfg["max_iter"])
            fit_s = time.perf_counter() - t0
            boosted = BoostedTreesModel.from_sklearn(est)
            probe = X[:2_000]
            diff = float(np.max(np.abs(boosted.predict(probe) - est.predict(probe))))
            extra = {"iterations": int(est.n_iter_), "trees": boosted.n_trees, "nodes": boosted.n_nodes,
                     "features": len(FEATURE_NAMES) + (1 if name == "hgb_residual" else 0)}
            side = save_boosted(boosted, folder / name, {**meta, "train_rows": int(n), **extra})
        records[name] = {"train_rows": int(n), "fit_seconds": round(fit_s, 1), "settings": cfg,
                         "shipped_predict_vs_sklearn_max_abs_diff": diff, "file": registry.repo_relative(side),
                         "bytes": int(side.with_suffix(".npz").stat().st_size), **extra}
        say(f"{name}: {n:,} rows, fit {fit_s:.1f}s, shipped predict within {diff} of scikit-learn's")
        write_json(FITS_JSON, records)
    return records


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m knights.lab.ensemble.study_members",
                                description="fit the democracy study's classical learners")
    p.add_argument("--only", help=f"comma-separated, of {', '.join(CLASSICAL)}")
    a = p.parse_args(argv)
    only = tuple(x.strip() for x in a.only.split(",")) if a.only else CLASSICAL
    unknown = sorted(set(only) - set(CLASSICAL))
    if unknown:
        p.error(f"unknown learners {unknown}")
    fit_classical(only=only)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
