"""Train every classical learner, fit the democracy's weights, ship the best blend.

    knights ensemble                    # full data: learners on a subset of a-h, weights fitted
                                        # on i, compared on j; ships ensemble/models/,
                                        # ensemble/RESULTS.md, report/results/ensemble.json
    knights ensemble --quick            # committed sample; everything to a temp folder
    knights ensemble --quick --quick-network EL/v8   # ... with a 1-epoch network member

``python -m knights.lab.ensemble.train`` takes the same arguments.

Steps (each a function the notebooks call too): load the chunks (:func:`load_data`);
sweep K for the KNN (:func:`run_k_sweep`); size the kernel SVR's subsample by timing
small fits (:func:`choose_svr_rows`); fit the learners and check that each shipped
form predicts what scikit-learn predicts (:func:`fit_learner`); predict validation
and test with every member; weigh the members three ways; time every blend on one
core; ship the blend with the lowest validation MAE that keeps to the budgets
(25 ms a decision, 30 MB of files).

Where each step lives: :mod:`knights.lab.ensemble.plan` (the plan and the data),
:mod:`knights.lab.ensemble.members` (fitting and predicting with each member),
:mod:`knights.lab.ensemble.results` (choosing the shipped blend, the table, the
plots); this module runs them all (:func:`train_all`) and is the command line. The
notebooks' names are all importable from here (``from knights.evaluate import
train_democracy as T``: see ``__all__``).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from knights.common import module_main, write_json
from knights.data.chunks import chunk_files
from knights.evaluate.democracy import (
    MANIFEST,
    MODELS_DIR,
    Democracy,
    equal_weights,
    fit_weights,
    load_shipped,
    original_weights,
    to_space,
    write_manifest,
)
from knights.evaluate.learner import LearnerEvaluator
from knights.features.attacks import quiet
from knights.lab.ensemble.members import (
    choose_svr_rows,
    fit_learner,
    network_member,
    predict_block,
    run_k_sweep,
    svr_fit_seconds,
)
from knights.lab.ensemble.plan import Data, Plan, load_data, make_plan, quick_plan
from knights.lab.ensemble.results import (
    combine_rows,
    plot_predictions,
    plot_weights,
    results_markdown,
    select_shipped,
    within_budgets,
)
from knights.lab.results.timing import decision_batches, ms_per_decision, timed
from knights.learn import learners as L
from knights.learn import registry, store
from knights.learn.metrics import regression_metrics, win_probability_error
from knights.learn.training import check_at_least, check_folder, check_output

if TYPE_CHECKING:
    import pandas as pd

    from knights.evaluate.base import Evaluator

# The notebooks' names (``T.make_plan``, ``T.fit_learner``, ...), the command line and the
# trainer, wherever each is defined.
__all__ = [
    "DESCRIPTION", "Data", "Plan", "TrainResult", "add_arguments", "choose_svr_rows", "fit_learner", "load_data",
    "main", "make_plan", "network_member", "plot_predictions", "plot_weights", "quick_plan", "regression_metrics",
    "run", "run_k_sweep", "select_shipped", "svr_fit_seconds", "train_all",
]

ENSEMBLE_DIR = registry.REPO_ROOT / "ensemble"
RESULTS_MD = ENSEMBLE_DIR / "RESULTS.md"
RESULTS_JSON = registry.REPO_ROOT / "report" / "results" / "ensemble.json"
K_SWEEP_PNG = ENSEMBLE_DIR / "k_sweep.png"
QUICK_ROOT = registry.REPO_ROOT / "runs" / "quick" / "ensemble"
"""Where a quick run (``--quick``) writes everything it makes, unless told otherwise."""
MIN_WEIGHT = 0.01
VOTE_SPACE = "win_probability"
"""What the shipped democracy averages: its members' win probabilities
(:func:`knights.evaluate.democracy.predict_cp_democracy`), fitted in that space too."""
"""Fitted weights below this are dropped (and the rest refitted): not worth a member's time."""


def _say(progress: bool, *args: object) -> None:
    if progress:
        print(*args, flush=True)


# ---------------------------------------------------------------------------- everything
@dataclass
class TrainResult:
    """What :func:`train_all` returns: its report (``ensemble.json``'s contents), where it
    wrote the models and the results, the K sweep, and the shipped democracy loaded back."""

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
    if plan.quick:   # runs/quick/ensemble/ (git ignores runs/), emptied first: a quick run leaves one folder
        tmp_root = QUICK_ROOT
        if not (out_dir and results_md and results_json):   # only when this run writes there
            shutil.rmtree(tmp_root, ignore_errors=True)
        tmp_root.mkdir(parents=True, exist_ok=True)
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

        if not plan.quick:
            raise ValueError("quick_network trains a one-epoch network on the sample: use it with a quick plan "
                             "(--quick), never for the shipped democracy")
        models_dir = Path(out_dir).parent / "network"   # beside this run's models, e.g. runs/quick/ensemble/network
        shutil.rmtree(models_dir, ignore_errors=True)
        _say(progress, f"training {quick_network} quickly (sample, 1 epoch) into {models_dir}")
        run_version(quick_network, quick=True, out_dir=models_dir, progress=False)
        networks = [*(networks or []), quick_network]
    if networks is None:
        from knights.evaluate.names import DEMOCRACY_NETWORKS

        networks = [n for n in DEMOCRACY_NETWORKS if registry.get(n).is_trained(models_dir)]
        if not networks:
            _say(progress, f"note: none of {', '.join(DEMOCRACY_NETWORKS)} is trained: "
                           "the democracy has no network member")
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
    # the votes are win probabilities (VOTE_SPACE): the weights are fitted, and blends chosen, in that space
    V_val, y_val = to_space(P_val, VOTE_SPACE), to_space(data.val.target.astype(np.float64), VOTE_SPACE)
    t0 = time.perf_counter()
    w_mae = fit_weights(V_val, y_val, "mae", MIN_WEIGHT)
    lp_s = time.perf_counter() - t0
    weightings["fitted"] = (dict(zip(names, w_mae.tolist(), strict=True)),
                            f"non-negative weights summing to one that minimise the validation win-probability "
                            f"error (exact linear programme, HiGHS, {lp_s:.1f}s; members under {MIN_WEIGHT} dropped "
                            "and the rest refitted)")
    w_mse = fit_weights(V_val, y_val, "mse", MIN_WEIGHT)
    weightings["fitted_mse"] = (dict(zip(names, w_mse.tolist(), strict=True)),
                                "the same, minimising the squared win-probability error (SLSQP), for comparison")
    # gated: one set of weights for the quiet validation rows, another for the rest
    calm = {split: quiet(getattr(data, split).squares, getattr(data, split).white, getattr(data, split).check)
            for split in ("val", "test")}
    quiet_weighting: dict[str, dict[str, float]] = {}
    if calm["val"].any() and (~calm["val"]).any():
        w_quiet = fit_weights(V_val[:, calm["val"]], y_val[calm["val"]], "mae", MIN_WEIGHT)
        w_other = fit_weights(V_val[:, ~calm["val"]], y_val[~calm["val"]], "mae", MIN_WEIGHT)
        weightings["gated"] = (dict(zip(names, w_other.tolist(), strict=True)),
                               f"fitted as `fitted` twice: on the quiet validation rows ({int(calm['val'].sum()):,}; "
                               "not in check, no capture that wins material) for the quiet positions, on the other "
                               f"rows ({int((~calm['val']).sum()):,}) for the rest (`quiet:` and `others:` "
                               "in the table)")
        quiet_weighting["gated"] = dict(zip(names, w_quiet.tolist(), strict=True))

    def blend_report(weights: dict[str, Any], how: str, quiet: dict[str, Any] | None = None) -> dict[str, Any]:
        w = np.array([weights[n] for n in names])
        wq = None if quiet is None else np.array([quiet[n] for n in names])
        used = [n for n in names if weights[n] > 0 or (quiet is not None and quiet[n] > 0)]
        dem = Democracy([members[n] for n in names], w, space=VOTE_SPACE, quiet_weights=wq)

        val = combine_rows(P_val, w, VOTE_SPACE, wq, calm["val"])
        test = combine_rows(P_test, w, VOTE_SPACE, wq, calm["test"])
        return {"weights": {n: round(float(weights[n]), 6) for n in names}, "how": how,
                **({} if quiet is None else {"quiet_weights": {n: round(float(quiet[n]), 6) for n in names}}),
                "val": regression_metrics(val, data.val.target),
                "test": regression_metrics(test, data.test.target),
                "val_wp": win_probability_error(val, data.val.target),
                "test_wp": win_probability_error(test, data.test.target),
                "ms_per_decision": round(ms_per_decision(dem.evaluate, batches, plan.timing_repeats), 3),
                "mb": round(sum(sizes[n] for n in used if n not in networks), 3), "members": used}

    blends = {b: blend_report(w, how, quiet_weighting.get(b)) for b, (w, how) in weightings.items()}

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
            w = fit_weights(V_val[idx], y_val, "mae", MIN_WEIGHT)
            weights = {n: 0.0 for n in names} | dict(zip(pool, w.tolist(), strict=True))
            cand = blend_report(weights, f"as fitted, over {', '.join(pool)} only: the costliest members "
                                         "dropped until the blend keeps to the budgets")
        if within(cand):
            blends["fitted_within_budget"] = cand
    best = select_shipped(blends, plan.decision_budget_ms, plan.size_budget_mb)
    _say(progress, "blends: " + "; ".join(f"{b} validation MAE {r['val']['mae']:.3f}, test {r['test']['mae']:.3f} "
                                         f"({r['ms_per_decision']:.1f} ms)" for b, r in blends.items())
         + f" -> shipping {best} (lowest validation win-probability error within the budgets)")

    # -- ship
    chosen = blends[best]
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in [out_dir / MANIFEST] + [out_dir / f"{n}{s}" for n in L.LEARNERS for s in (".json", ".npz")]:
        old.unlink(missing_ok=True)
    manifest_members = []
    for n in chosen["members"]:
        entry = {"name": n, "weight": chosen["weights"][n],
                 **({"quiet_weight": chosen["quiet_weights"][n]} if "quiet_weights" in chosen else {})}
        if n in networks:
            wfile = registry.get(n).weights(models_dir)
            entry |= {"kind": "network", "version": registry.get(n).name, "weights_sha256": store.sha256_file(wfile),
                      # relative to the repository when inside it (a clone elsewhere still finds it); None: models_EL/
                      "models_dir": registry.repo_relative(Path(models_dir).resolve()) if models_dir else None}
        else:
            for f in files[n]:
                shutil.copy2(f, out_dir / f.name)
            entry |= {"kind": "learner", "file": f"{n}.json", "learner": L.TITLES[n]}
        manifest_members.append(entry)
    write_manifest(out_dir, manifest_members, {
        "blend": best, "how": chosen["how"], "test": chosen["test"], "val": chosen["val"], "space": VOTE_SPACE,
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
    write_json(results_json, report)
    Path(results_md).parent.mkdir(parents=True, exist_ok=True)
    Path(results_md).write_text(results_markdown(report, figure, Path(results_md)))
    _say(progress, f"shipped {best} to {out_dir} ({shipped_mb:.2f} MB, loads in {load_s:.2f}s, "
         f"{shipped_ms:.2f} ms/decision); results: {results_md}, {results_json}")
    return TrainResult(report, out_dir, Path(results_md), results_json, sweep, ens)


# ---------------------------------------------------------------------------- CLI
DESCRIPTION = "Train every classical learner, fit the democracy's weights, ship the best blend."
"""One line for ``--help`` (``knights ensemble`` and ``python -m knights.lab.ensemble.train``)."""

_PLAN_OPTIONS = ("data_dir", "train", "val", "test", "knn_rows", "rf_rows", "rf_max_leaf_nodes", "svr_rows",
                 "svr_budget_s", "linear_svr_rows", "linear_rows", "sweep_train_rows", "sweep_val_rows")


def _rows_or_auto(text: str) -> int | str:
    return text if text == "auto" else int(text)


_TYPED: tuple[tuple[str, Callable[[str], object]], ...] = (
    ("knn-rows", int), ("rf-rows", int), ("rf-max-leaf-nodes", int), ("svr-rows", _rows_or_auto),
    ("svr-budget-s", float), ("linear-svr-rows", int), ("linear-rows", int),
    ("sweep-train-rows", int), ("sweep-val-rows", int))
"""The plan's numbers the command line sets (``None``: the plan's own)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``knights ensemble`` (the same as the module's own command line)."""
    p.add_argument("--quick", action="store_true", help="committed sample, small subsets, output to a temp folder")
    p.add_argument("--data-dir")
    p.add_argument("--train", help='training letters (default "a-h")')
    p.add_argument("--val", help='validation letters (default "i"; quick "i,j")')
    p.add_argument("--test", help='test letters (default "j"; quick "k-m")')
    p.add_argument("--networks", help="comma-separated EL versions to include (default: those of "
                                      "knights.evaluate.names.DEMOCRACY_NETWORKS that are trained; "
                                      "'' for none)")
    p.add_argument("--models-dir", help="where the network weights are (default models_EL/)")
    p.add_argument("--quick-network", metavar="VERSION", help="train VERSION for one epoch on the sample first "
                                                              "(to try the pipeline before networks exist)")
    p.add_argument("--out", help="folder for the shipped models (default ensemble/models; quick: temp)")
    p.add_argument("--results-md")
    p.add_argument("--results-json")
    for name, typ in _TYPED:
        p.add_argument(f"--{name}", type=typ)


def check_arguments(a: argparse.Namespace) -> None:
    """Refuse, before any work, options no run could use: a row count below 1 (a forest's leaves below
    2, an SVR budget below a second), a network name that is none, a ``--models-dir`` that is not a
    folder, a ``--data-dir`` with no chunks, outputs that could not be written (they were written last,
    after the training)."""
    numbers = [(f"--{name}", getattr(a, name.replace("-", "_"))) for name, _ in _TYPED]
    check_at_least(1, *((option, v) for option, v in numbers if isinstance(v, int | float)))   # not None, "auto"
    check_at_least(2, ("--rf-max-leaf-nodes", a.rf_max_leaf_nodes))
    for name in [*(a.networks or "").split(","), a.quick_network or ""]:
        if name.strip():
            registry.get(name.strip())
    if a.models_dir is not None:
        check_folder(a.models_dir, "--models-dir")
    if a.data_dir is not None:   # before a quick run empties the last one's folder
        try:
            chunk_files(registry.repo_path(a.data_dir))
        except FileNotFoundError as exc:
            raise ValueError(f"--data-dir: {exc}") from None
    check_output(a.out, "--out", folder=True)
    check_output(a.results_md, "--results-md")
    check_output(a.results_json, "--results-json")


def run(a: argparse.Namespace) -> int:
    """Train and ship as the parsed options of :func:`add_arguments` say, once :func:`check_arguments` passes."""
    check_arguments(a)
    plan = make_plan(a.quick, **{k: getattr(a, k) for k in _PLAN_OPTIONS})
    networks = None if a.networks is None else [n.strip() for n in a.networks.split(",") if n.strip()]
    train_all(plan, networks=networks, models_dir=a.models_dir, quick_network=a.quick_network, out_dir=a.out,
              results_md=a.results_md, results_json=a.results_json)
    return 0


def main(argv: list[str] | None = None) -> int:
    return module_main("knights.lab.ensemble.train", DESCRIPTION, add_arguments, run, argv)


if __name__ == "__main__":
    sys.exit(main())
