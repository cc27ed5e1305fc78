"""Train every classical learner, fit the democracy's weights, ship the best blend.

    knights ensemble                    # full data: learners on a subset of a-h, weights fitted
                                        # on i, compared on j; ships ensemble/models/,
                                        # ensemble/RESULTS.md, report/results/ensemble.json
    knights ensemble --quick            # committed sample; everything to a temp folder
    knights ensemble --quick --quick-network EL/v8   # ... with a 1-epoch network member

``python -m knights.evaluate.train_democracy`` takes the same arguments.

Steps (each a function the notebooks call too): load the chunks (:func:`load_data`);
sweep K for the KNN (:func:`run_k_sweep`); size the kernel SVR's subsample by timing
small fits (:func:`choose_svr_rows`); fit the learners and check that each shipped
form predicts what scikit-learn predicts (:func:`fit_learner`); predict validation
and test with every member; weigh the members three ways; time every blend on one
core; ship the blend with the lowest held-out MAE that keeps to the budgets
(25 ms a decision, 30 MB of files).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from knights.data.cache import ChunkCache, load_encoded
from knights.data.chunks import Encoded, select_chunks
from knights.evaluate.democracy import (
    MANIFEST,
    MODELS_DIR,
    Democracy,
    equal_weights,
    fit_weights,
    load_shipped,
    original_weights,
    write_manifest,
)
from knights.evaluate.learner import LearnerEvaluator
from knights.evaluate.timing import decision_batches, ms_per_decision, timed
from knights.learn import learners as L
from knights.learn import registry, store
from knights.learn.experiment import FULL_DATA, SAMPLE_DATA, TEST_LETTERS
from knights.learn.metrics import regression_metrics

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from knights.evaluate.base import Evaluator, NetworkEvaluator

ENSEMBLE_DIR = registry.REPO_ROOT / "ensemble"
RESULTS_MD = ENSEMBLE_DIR / "RESULTS.md"
RESULTS_JSON = registry.REPO_ROOT / "report" / "results" / "ensemble.json"
K_SWEEP_PNG = ENSEMBLE_DIR / "k_sweep.png"
MIN_WEIGHT = 0.01
"""Fitted weights below this are dropped (and the rest refitted): not worth a member's time."""


@dataclass
class Plan:
    """What to train on and how big each learner gets (``None`` rows: all of them)."""

    data_dir: str = FULL_DATA
    train: str = "a-h"
    val: str = "i"
    test: str = TEST_LETTERS
    quick: bool = False
    ks: tuple[int, ...] = tuple(range(1, 41))
    sweep_train_rows: int | None = None      # None: knn_rows (K is chosen for the KNN that is fitted)
    sweep_val_rows: int | None = 5_000
    knn_rows: int | None = 20_000
    rf_rows: int | None = 400_000
    rf_max_leaf_nodes: int | None = 50_000    # ~6 bytes a node compressed: ~12 MB for 20 trees
    svr_rows: int | str | None = "auto"
    svr_budget_s: float = 120.0
    svr_probe_rows: tuple[int, ...] = (1_000, 2_000, 4_000)
    svr_max_rows: int = 10_000               # support vectors cost ~1 ms a decision per 1,000
    svr_C: float = 10.0
    linear_svr_rows: int | None = 400_000
    linear_rows: int | None = 400_000
    seed: int = 0
    decision_budget_ms: float = 25.0
    size_budget_mb: float = 30.0
    timing_batches: int = 12
    timing_repeats: int = 5

    def replace(self, **kw: Any) -> Plan:
        return dataclasses.replace(self, **{k: v for k, v in kw.items() if v is not None})


def quick_plan(**overrides: Any) -> Plan:
    """The committed sample (chunks a-m of ~2,500 rows): train a-h, validate i,j,
    test k-m (the letters the quick networks use), small subsets."""
    base = Plan(data_dir=SAMPLE_DATA, train="a-h", val="i,j", test="k-m", quick=True,
                sweep_train_rows=None, sweep_val_rows=2_500, knn_rows=5_000, rf_rows=None,
                rf_max_leaf_nodes=None, svr_rows=3_000, svr_probe_rows=(500, 1_000, 2_000),
                linear_svr_rows=None, linear_rows=None,
                timing_batches=6, timing_repeats=3)
    return base.replace(**overrides)


def make_plan(quick: bool = False, **overrides: Any) -> Plan:
    return quick_plan(**overrides) if quick else Plan().replace(**overrides)


def _say(progress: bool, *args: object) -> None:
    if progress:
        print(*args, flush=True)


# ---------------------------------------------------------------------------- data
@dataclass
class Data:
    """Training, validation and test blocks, and a fixed shuffle of the training rows
    (every learner's subset is a prefix of it, so smaller subsets nest in larger)."""

    folder: Path
    files: dict[str, list[Path]]
    train: Encoded
    val: Encoded
    test: Encoded
    order: np.ndarray
    excluded_val: list[str] = field(default_factory=list)
    _X: np.ndarray | None = None

    def train_xy(self, rows: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Features, targets and squares of the first ``rows`` shuffled training rows
        (the features of the largest request are kept and sliced)."""
        n = len(self.order) if rows is None else min(int(rows), len(self.order))
        if self._X is None or len(self._X) < n:
            self._X = L.features(self.train.squares[self.order[:n]])
        idx = self.order[:n]
        return self._X[:n], self.train.target[idx], self.train.squares[idx]

    def describe(self) -> dict[str, Any]:
        return {"folder": registry.repo_relative(self.folder),
                **{k: {"chunks": len(v), "rows": len(getattr(self, k)), "first": v[0].name, "last": v[-1].name}
                   for k, v in self.files.items()},
                "val_chunks_left_out_as_network_training": self.excluded_val}


def network_training_chunks(name: str, models_dir: str | Path | None) -> tuple[Path | None, set[str]]:
    """The folder and chunk names a trained network learned from (its metadata)."""
    version = registry.get(name)
    meta_file = version.meta_path(models_dir)
    if not meta_file.exists():
        return None, set()
    meta = json.loads(meta_file.read_text())
    recipe = (meta.get("data") or {}).get("train") or {}
    folder, letters = recipe.get("folder"), recipe.get("letters")
    if not folder or not letters:
        return None, set()
    folder = registry.repo_path(folder)
    try:
        return folder.resolve(), {p.name for p in select_chunks(folder, letters)}
    except (FileNotFoundError, ValueError):
        return folder.resolve(), set()


def load_data(plan: Plan, networks: Sequence[str] = (), models_dir: str | Path | None = None,
              progress: bool = False) -> Data:
    """The plan's chunks, encoded (through the chunk cache). Validation chunks that a
    network member trained on are left out, so the blend's weights are fitted on
    positions no member has seen; the test letters must be in neither."""
    folder = registry.repo_path(plan.data_dir)
    files = {k: select_chunks(folder, getattr(plan, k)) for k in ("train", "val", "test")}
    overlap = set(files["test"]) & (set(files["train"]) | set(files["val"]))
    if overlap:
        raise ValueError(f"test chunks {sorted(p.name for p in overlap)} are also in training or validation")
    shared = set(files["train"]) & set(files["val"])
    if shared:
        raise ValueError(f"validation chunks {sorted(p.name for p in shared)[:5]} (of {len(shared)}) are also "
                         "training chunks of the learners: the blend would favour them")
    excluded: set[str] = set()
    for net in networks:
        net_folder, names = network_training_chunks(net, models_dir)
        if net_folder == folder.resolve():
            excluded |= {p.name for p in files["val"]} & names
            seen = {p.name for p in files["test"]} & names
            if seen:
                raise ValueError(f"{net} trained on test chunks {sorted(seen)}")
    if excluded:
        files["val"] = [p for p in files["val"] if p.name not in excluded]
        if not files["val"]:
            raise ValueError(f"every validation chunk of {plan.val!r} was used to train a network member; "
                             "choose other validation letters (--val)")
    cache = ChunkCache(folder.parent / "cache") if not plan.quick else ChunkCache()
    blocks = {k: load_encoded(v, cache, progress=progress) for k, v in files.items()}
    order = np.random.default_rng(plan.seed).permutation(len(blocks["train"]))
    return Data(folder, files, blocks["train"], blocks["val"], blocks["test"], order, sorted(excluded))


# ---------------------------------------------------------------------------- learners
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


def plot_predictions(pred: np.ndarray, target: np.ndarray, title: str = "",
                     path: str | Path | None = None) -> Figure:
    """Predicted against Stockfish's evaluation (pawns), and the error histogram."""
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.6))
    a.hexbin(target, pred, gridsize=40, bins="log", cmap="viridis", extent=(-10, 10, -10, 10))
    a.plot([-10, 10], [-10, 10], color="tab:red", lw=1)
    a.set_xlabel("Stockfish (pawns)")
    a.set_ylabel("predicted (pawns)")
    b.hist(np.clip(pred - target, -10, 10), bins=60, color="tab:blue")
    b.set_xlabel("error (pawns)")
    b.set_ylabel("positions")
    fig.suptitle(title)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=110)
    return fig


def plot_weights(blends: dict[str, Any], path: str | Path | None = None) -> Figure:
    """One bar group per blend: each member's weight."""
    import matplotlib.pyplot as plt

    names = list(next(iter(blends.values()))["weights"])
    fig, ax = plt.subplots(figsize=(8, 3.6))
    width = 0.8 / max(1, len(blends))
    for i, (bname, b) in enumerate(blends.items()):
        ax.bar(np.arange(len(names)) + i * width, [b["weights"].get(n, 0.0) for n in names], width,
               label=f"{bname} (test MAE {b['test']['mae']:.3f})")
    ax.set_xticks(np.arange(len(names)) + width * (len(blends) - 1) / 2, names, rotation=20)
    ax.set_ylabel("weight")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=110)
    return fig


# ---------------------------------------------------------------------------- everything
@dataclass
class TrainResult:
    report: dict[str, Any]
    out_dir: Path
    results_md: Path
    results_json: Path
    sweep: L.KSweep
    ensemble: Democracy | None = None

    def table(self) -> pd.DataFrame:
        import pandas as pd

        rows = {}
        for group in ("members", "blends"):
            for name, r in self.report[group].items():
                rows[name] = {"kind": group[:-1], "val MAE": r["val"]["mae"], "test MAE": r["test"]["mae"],
                              "test median AE": r["test"]["median_ae"],
                              "sign agreement": r["test"]["sign_agreement"], "ms/decision": r.get("ms_per_decision"),
                              "MB": r.get("mb")}
        return pd.DataFrame(rows).T


def _files_mb(paths: Iterable[str | Path]) -> float:
    return sum(Path(p).stat().st_size for p in paths) / 1e6


def train_all(plan: Plan | None = None, *, networks: list[str] | None = None, models_dir: str | Path | None = None,
              quick_network: str | None = None, out_dir: str | Path | None = None,
              results_md: str | Path | None = None, results_json: str | Path | None = None,
              figure: str | Path | None = None, progress: bool = True) -> TrainResult:
    """Everything: learners, member predictions, three (four) weightings, timing,
    shipping, the results table. See the module docstring."""
    plan = plan or Plan()
    t_start = time.perf_counter()
    if plan.quick:
        tmp_root = Path(tempfile.mkdtemp(prefix="knights-ensemble-"))
        out_dir = Path(out_dir) if out_dir else tmp_root / "models"
        results_md = Path(results_md) if results_md else tmp_root / "RESULTS.md"
        results_json = Path(results_json) if results_json else tmp_root / "ensemble.json"
    else:
        out_dir = Path(out_dir) if out_dir else MODELS_DIR
        results_md = Path(results_md) if results_md else RESULTS_MD
        results_json = Path(results_json) if results_json else RESULTS_JSON
    figure = Path(figure) if figure else Path(results_md).with_name(K_SWEEP_PNG.name)   # beside the table
    if quick_network:
        from knights.learn.experiment import run_version

        models_dir = Path(tempfile.mkdtemp(prefix="knights-quicknet-"))
        _say(progress, f"training {quick_network} quickly (sample, 1 epoch) into {models_dir}")
        run_version(quick_network, quick=True, out_dir=models_dir, progress=False)
        networks = [*(networks or []), quick_network]
    if networks is None:
        from knights.evaluate.names import DEFAULT_NETWORK

        networks = [DEFAULT_NETWORK] if registry.get(DEFAULT_NETWORK).is_trained(models_dir) else []
        if not networks:
            _say(progress, f"note: {DEFAULT_NETWORK} is not trained: the democracy has no network member")
    networks = list(dict.fromkeys(networks))

    data = load_data(plan, networks, models_dir, progress=progress)
    _say(progress, f"data: train {len(data.train):,} rows, validation {len(data.val):,}, test {len(data.test):,}"
         + (f" (validation chunks left out as network training: {len(data.excluded_val)})"
            if data.excluded_val else ""))

    # -- KNN sweep
    sweep = run_k_sweep(data, plan)
    _say(progress, f"K sweep ({sweep.train_rows:,} / {sweep.val_rows:,} rows, {sweep.seconds:.1f}s): best K = "
         f"{sweep.best_k} (MAE {min(sweep.mae):.3f})")
    figure.parent.mkdir(parents=True, exist_ok=True)
    import matplotlib.pyplot as plt

    plt.close(L.plot_k_sweep(sweep, figure))

    # -- SVR size
    svr_sizing = None
    if plan.svr_rows == "auto":
        times = svr_fit_seconds(data, plan.svr_probe_rows, plan.svr_C)
        rows, exponent = choose_svr_rows(times, plan.svr_budget_s, plan.svr_max_rows)
        uncapped, _ = choose_svr_rows(times, plan.svr_budget_s, 10 ** 9)
        svr_sizing = {"probe_fit_seconds": {str(k): round(v, 2) for k, v in times.items()},
                      "exponent": round(exponent, 2), "budget_s": plan.svr_budget_s, "rows_for_budget": uncapped,
                      "max_rows": plan.svr_max_rows, "rows": rows}
        plan = plan.replace(svr_rows=rows)
        _say(progress, f"SVR probe fits {svr_sizing['probe_fit_seconds']} s: time ~ rows^{exponent:.2f}; "
             f"{uncapped:,} rows would fit in ~{plan.svr_budget_s:.0f}s; using {rows:,} "
             f"(cap {plan.svr_max_rows:,}: support vectors cost decision time)")

    # -- learners
    # name -> (shipped model, record); the scikit-learn estimators are let go
    fitted: dict[str, tuple[L.ShippedModel, L.FitRecord]] = {}
    for name in L.LEARNERS:
        _, model, rec = fit_learner(name, data, plan, k=sweep.best_k)
        fitted[name] = (model, rec)
        _say(progress, f"{name}: {rec.train_rows:,} rows, fit {rec.fit_seconds:.1f}s"
             + (f", shipped predict within {rec.verify_max_abs_diff:.1e} of scikit-learn"
                if rec.verify_max_abs_diff is not None else ""))

    # -- write every learner, load it back (the shipped form), check the round trip
    stage = Path(tempfile.mkdtemp(prefix="knights-ensemble-stage-"))
    members: dict[str, Evaluator] = {}
    sizes: dict[str, float] = {}
    files: dict[str, list[Path]] = {}
    probe = L.features(data.val.squares[:500])
    for name, (model, rec) in fitted.items():
        side = L.save_model(model, stage / name, {"learner": name, **rec.as_dict()})
        loaded = L.load_model(side)
        if not np.array_equal(loaded.predict(probe), model.predict(probe)):
            raise AssertionError(f"{name}: the model loaded from its files predicts differently")
        members[name] = LearnerEvaluator(name, loaded)
        files[name] = [side, side.with_suffix(".npz")]
        sizes[name] = _files_mb(files[name])
    for net in networks:
        members[net] = network_member(net, models_dir)
        sizes[net] = _files_mb([registry.get(net).weights(models_dir)])
    names = list(networks) + list(L.LEARNERS)

    # -- predictions and metrics
    pred: dict[str, dict[str, np.ndarray]] = {"val": {}, "test": {}}
    for split in ("val", "test"):
        block = getattr(data, split)
        for name in names:
            pred[split][name] = predict_block(members[name], block)
    batches = decision_batches(data.test, count=plan.timing_batches, seed=plan.seed)
    member_report: dict[str, dict[str, Any]] = {}
    for name in names:
        member_report[name] = {
            "kind": "network" if name in networks else "learner",
            "val": regression_metrics(pred["val"][name], data.val.target),
            "test": regression_metrics(pred["test"][name], data.test.target),
            "ms_per_decision": round(ms_per_decision(members[name].evaluate, batches, plan.timing_repeats), 3),
            "mb": round(sizes[name], 3),
            **({"fit": fitted[name][1].as_dict()} if name in fitted else {}),
        }
        _say(progress, f"  {name:<14} val MAE {member_report[name]['val']['mae']:.3f}  "
             f"test MAE {member_report[name]['test']['mae']:.3f}  {member_report[name]['ms_per_decision']:.2f} ms")

    # -- weights
    P_val = np.stack([pred["val"][n] for n in names])
    P_test = np.stack([pred["test"][n] for n in names])
    weightings = {"equal": (equal_weights(names), "1/members")}
    weightings["original"] = (original_weights(names, networks),
                              "0.9 network + 0.1 x (0.5 RF + 0.25 SVR + 0.25 LR); the SVR is the LinearSVR, "
                              "as the original shipped" + ("" if networks else "; no network: classical part only"))
    t0 = time.perf_counter()
    w_mae = fit_weights(P_val, data.val.target, "mae", MIN_WEIGHT)
    lp_s = time.perf_counter() - t0
    weightings["fitted"] = (dict(zip(names, w_mae.tolist(), strict=True)),
                            f"non-negative weights summing to one that minimise the validation MAE (exact linear "
                            f"programme, HiGHS, {lp_s:.1f}s; members under {MIN_WEIGHT} dropped and the rest refitted)")
    w_mse = fit_weights(P_val, data.val.target, "mse", MIN_WEIGHT)
    weightings["fitted_mse"] = (dict(zip(names, w_mse.tolist(), strict=True)),
                                "the same, minimising the validation MSE instead (SLSQP), for comparison")

    def blend_report(weights: dict[str, Any], how: str) -> dict[str, Any]:
        w = np.array([weights[n] for n in names])
        used = [n for n in names if weights[n] > 0]
        dem = Democracy([members[n] for n in names], w)
        return {"weights": {n: round(float(weights[n]), 6) for n in names}, "how": how,
                "val": regression_metrics(combine_rows(P_val, w), data.val.target),
                "test": regression_metrics(combine_rows(P_test, w), data.test.target),
                "ms_per_decision": round(ms_per_decision(dem.evaluate, batches, plan.timing_repeats), 3),
                "mb": round(sum(sizes[n] for n in used if n not in networks), 3), "members": used}

    blends = {b: blend_report(w, how) for b, (w, how) in weightings.items()}

    def within(b: dict[str, Any]) -> bool:
        return within_budgets(b, plan.decision_budget_ms, plan.size_budget_mb)

    if not within(blends["fitted"]):
        # drop the costliest weighted member until the refitted blend keeps to the budgets
        pool, cand = list(names), blends["fitted"]
        while not within(cand):
            used = [n for n in pool if cand["weights"][n] > 0]
            if len(used) <= 1:
                break
            pool.remove(max([n for n in used if n not in networks] or used,
                            key=lambda n: member_report[n]["ms_per_decision"] + member_report[n]["mb"]))
            idx = [names.index(n) for n in pool]
            w = fit_weights(P_val[idx], data.val.target, "mae", MIN_WEIGHT)
            weights = {n: 0.0 for n in names} | dict(zip(pool, w.tolist(), strict=True))
            cand = blend_report(weights, f"as fitted, over {', '.join(pool)} only: the costliest members "
                                         "dropped until the blend keeps to the budgets")
        if within(cand):
            blends["fitted_within_budget"] = cand
    best = select_shipped(blends, plan.decision_budget_ms, plan.size_budget_mb)
    _say(progress, "blends: " + "; ".join(f"{b} test MAE {r['test']['mae']:.3f} ({r['ms_per_decision']:.1f} ms)"
                                         for b, r in blends.items()) + f" -> shipping {best}")

    # -- ship
    chosen = blends[best]
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in [out_dir / MANIFEST] + [out_dir / f"{n}{s}" for n in L.LEARNERS for s in (".json", ".npz")]:
        old.unlink(missing_ok=True)
    manifest_members = []
    for n in chosen["members"]:
        entry = {"name": n, "weight": chosen["weights"][n]}
        if n in networks:
            wfile = registry.get(n).weights(models_dir)
            entry |= {"kind": "network", "version": registry.get(n).name, "weights_sha256": store.sha256_file(wfile),
                      "models_dir": str(Path(models_dir).resolve()) if models_dir else None}
        else:
            for f in files[n]:
                shutil.copy2(f, out_dir / f.name)
            entry |= {"kind": "learner", "file": f"{n}.json", "learner": L.TITLES[n]}
        manifest_members.append(entry)
    write_manifest(out_dir, manifest_members, {
        "blend": best, "how": chosen["how"], "test": chosen["test"], "val": chosen["val"],
        "data": data.describe(), "quick": plan.quick,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")})
    shutil.rmtree(stage, ignore_errors=True)
    load_s, ens = timed(lambda: load_shipped(out_dir), repeats=3)
    shipped_ms = ms_per_decision(ens.evaluate, batches)
    shipped_mb = _files_mb(p for p in out_dir.iterdir() if p.is_file())

    report = {
        "generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "quick": plan.quick, "plan": {k: (list(v) if isinstance(v, tuple) else v)
                                      for k, v in dataclasses.asdict(plan).items()},
        "data": data.describe(), "networks": networks, "k_sweep": sweep.as_dict(), "svr_sizing": svr_sizing,
        "members": member_report, "blends": blends, "shipped": {
            "blend": best, "folder": registry.repo_relative(out_dir.resolve()), "load_seconds": round(load_s, 3),
            "ms_per_decision": round(shipped_ms, 3), "mb": round(shipped_mb, 3),
            "budgets": {"ms_per_decision": plan.decision_budget_ms, "mb": plan.size_budget_mb, "load_seconds": 3.0}},
        "total_seconds": round(time.perf_counter() - t_start, 1),
    }
    results_json = Path(results_json)
    results_json.parent.mkdir(parents=True, exist_ok=True)
    results_json.write_text(json.dumps(report, indent=1) + "\n")
    Path(results_md).parent.mkdir(parents=True, exist_ok=True)
    Path(results_md).write_text(results_markdown(report, figure, Path(results_md)))
    _say(progress, f"shipped {best} to {out_dir} ({shipped_mb:.2f} MB, loads in {load_s:.2f}s, "
         f"{shipped_ms:.2f} ms/decision); results: {results_md}, {results_json}")
    return TrainResult(report, out_dir, Path(results_md), results_json, sweep, ens)


def within_budgets(blend: dict[str, Any], ms: float, mb: float) -> bool:
    return bool(blend["ms_per_decision"] <= ms and blend["mb"] <= mb)


def select_shipped(blends: dict[str, Any], ms: float = 25.0, mb: float = 30.0) -> str:
    """The blend to ship: the lowest held-out (test) MAE among those within the budgets
    (``ms`` per decision on one core, ``mb`` of learner files)."""
    ok = [b for b in blends if within_budgets(blends[b], ms, mb)]
    if not ok:
        raise RuntimeError(f"no blend keeps to the budgets ({ms} ms a decision, {mb} MB): shrink the learners")
    return min(ok, key=lambda b: blends[b]["test"]["mae"])


def combine_rows(P: np.ndarray, w: np.ndarray) -> np.ndarray:
    w = np.asarray(w, dtype=np.float64)
    combined: np.ndarray = (w / w.sum()) @ P
    return combined


# ---------------------------------------------------------------------------- the table
def _fmt(x: float | None, digits: int = 3) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and not np.isfinite(x):
        return "-"
    return f"{x:.{digits}f}"


def results_markdown(r: dict[str, Any], figure: Path | None = None, md_path: Path | None = None) -> str:
    d = r["data"]
    lines = ["# Classical learners and the democracy: held-out results", "",
             f"Generated by `knights ensemble{' --quick' if r['quick'] else ''}` "
             f"on {r['generated']} ({r['total_seconds']:.0f} s in all). Do not edit by hand.", "",
             f"Data: `{d['folder']}`; learners trained on subsets of letters `{r['plan']['train']}` "
             f"({d['train']['rows']:,} rows), weights fitted on `{r['plan']['val']}` ({d['val']['rows']:,} rows"
             + (f"; {len(d['val_chunks_left_out_as_network_training'])} chunks a network trained on left out"
                if d["val_chunks_left_out_as_network_training"] else "")
             + f"), everything compared on the held-out test letters `{r['plan']['test']}` "
               f"({d['test']['rows']:,} rows).",
             "MAE and median absolute error in pawns against Stockfish (mates = +-10, clipped to +-9); sign agreement: "
             "share of positions where the sign of the evaluation agrees (Stockfish 0 left out). "
             "ms/decision: one core, the ~35 positions after every legal move of one position.", "",
             "| | kind | weights | val MAE | test MAE | test median AE | sign agreement | ms/decision | MB |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, m in r["members"].items():
        lines.append(f"| {name} | {m['kind']} | | {_fmt(m['val']['mae'])} | {_fmt(m['test']['mae'])} | "
                     f"{_fmt(m['test']['median_ae'])} | {_fmt(m['test']['sign_agreement'])} | "
                     f"{_fmt(m['ms_per_decision'], 2)} | {_fmt(m['mb'], 2)} |")
    for name, b in r["blends"].items():
        w = ", ".join(f"{k} {v:.3f}" for k, v in b["weights"].items() if v > 0)
        star = " **(shipped)**" if name == r["shipped"]["blend"] else ""
        lines.append(f"| **{name}**{star} | blend | {w} | {_fmt(b['val']['mae'])} | {_fmt(b['test']['mae'])} | "
                     f"{_fmt(b['test']['median_ae'])} | {_fmt(b['test']['sign_agreement'])} | "
                     f"{_fmt(b['ms_per_decision'], 2)} | {_fmt(b['mb'], 2)} |")
    lines += ["", "Blends:", ""] + [f"- **{n}**: {b['how']}." for n, b in r["blends"].items()]
    s = r["shipped"]
    lines += ["", f"Shipped: **{s['blend']}**, the lowest test MAE among the blends within the budgets "
                  f"({s['budgets']['ms_per_decision']:g} ms a decision, {s['budgets']['mb']:g} MB): "
                  f"{s['mb']:.2f} MB of files, loads in {s['load_seconds']:.2f} s, "
                  f"{s['ms_per_decision']:.2f} ms per decision on one core.", "", "## Learners", ""]
    ks = r["k_sweep"]
    fig = ""
    if figure is not None and md_path is not None:
        try:
            fig = f" ![K sweep]({os.path.relpath(figure, md_path.parent)})"
        except ValueError:
            fig = ""
    lines.append(f"- KNN: distance-weighted; K swept over {ks['ks'][0]}..{ks['ks'][-1]} on {ks['train_rows']:,} "
                 f"training / {ks['val_rows']:,} validation rows: **K = {ks['best_k']}** "
                 f"(validation MAE {min(ks['mae']):.3f}).{fig}")
    for name, m in r["members"].items():
        if "fit" in m:
            f = m["fit"]
            extra = ", ".join(f"{k} {v}" for k, v in f["params"].items())
            lines.append(f"- {name}: {f['train_rows']:,} rows, fit {f['fit_seconds']:.1f} s"
                         + (f"; {extra}" if extra else "")
                         + (f"; shipped predict vs scikit-learn max |diff| {f['verify_max_abs_diff']:.1e}"
                            if f["verify_max_abs_diff"] is not None else ""))
    if r.get("svr_sizing"):
        sz = r["svr_sizing"]
        lines.append(f"- Kernel SVR subsample: probe fits {sz['probe_fit_seconds']} (rows: seconds), time ~ "
                     f"rows^{sz['exponent']}: {sz['rows_for_budget']:,} rows would fit in ~{sz['budget_s']:.0f} s "
                     f"on this machine; used {sz['rows']:,} (at most {sz['max_rows']:,}: every support vector "
                     f"costs decision time).")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- CLI
DESCRIPTION = "Train every classical learner, fit the democracy's weights, ship the best blend."
"""One line for ``--help`` (``knights ensemble`` and ``python -m knights.evaluate.train_democracy``)."""

_PLAN_OPTIONS = ("data_dir", "train", "val", "test", "knn_rows", "rf_rows", "rf_max_leaf_nodes", "svr_rows",
                 "svr_budget_s", "linear_svr_rows", "linear_rows", "sweep_train_rows", "sweep_val_rows")


def _rows_or_auto(text: str) -> int | str:
    return text if text == "auto" else int(text)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``knights ensemble`` (the same as the module's own command line)."""
    p.add_argument("--quick", action="store_true", help="committed sample, small subsets, output to a temp folder")
    p.add_argument("--data-dir")
    p.add_argument("--train", help='training letters (default "a-h")')
    p.add_argument("--val", help='validation letters (default "i"; quick "i,j")')
    p.add_argument("--test", help='test letters (default "j"; quick "k-m")')
    p.add_argument("--networks", help="comma-separated EL versions to include (default: the best network, "
                                      "knights.evaluate.names.DEFAULT_NETWORK, if trained; "
                                      "'' for none)")
    p.add_argument("--models-dir", help="where the network weights are (default models_EL/)")
    p.add_argument("--quick-network", metavar="VERSION", help="train VERSION for one epoch on the sample first "
                                                              "(to try the pipeline before networks exist)")
    p.add_argument("--out", help="folder for the shipped models (default ensemble/models; quick: temp)")
    p.add_argument("--results-md")
    p.add_argument("--results-json")
    typed: tuple[tuple[str, Callable[[str], object]], ...] = (
        ("knn-rows", int), ("rf-rows", int), ("rf-max-leaf-nodes", int), ("svr-rows", _rows_or_auto),
        ("svr-budget-s", float), ("linear-svr-rows", int), ("linear-rows", int),
        ("sweep-train-rows", int), ("sweep-val-rows", int))
    for name, typ in typed:
        p.add_argument(f"--{name}", type=typ)


def run(a: argparse.Namespace) -> int:
    """Train and ship as the parsed options of :func:`add_arguments` say."""
    plan = make_plan(a.quick, **{k: getattr(a, k) for k in _PLAN_OPTIONS})
    networks = None if a.networks is None else [n.strip() for n in a.networks.split(",") if n.strip()]
    train_all(plan, networks=networks, models_dir=a.models_dir, quick_network=a.quick_network, out_dir=a.out,
              results_md=a.results_md, results_json=a.results_json)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m knights.evaluate.train_democracy", description=DESCRIPTION)
    add_arguments(p)
    a = p.parse_args(argv)
    try:
        return run(a)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
