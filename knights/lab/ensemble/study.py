"""When does a democracy beat its best member? Measured on the selection sets, then once on the final test set.

    python -m knights.lab.ensemble.study              # choose: every figure on the selection sets, the choice
    python -m knights.lab.ensemble.study --final      # report: the same on the final set, after the choice

**Choosing** (the default stage) reads only the three selection sets (``data/independent/{games,tactics,endgames}.csv``,
15,000 positions labelled at depth 12). Every member (:mod:`knights.lab.ensemble.study_members`: the 16 shipped
networks, the bag of one design, the classical learners, each static and judged where the captures end) predicts every
row once; the grid of democracies (:func:`grid`: four sets of members, three weightings, two averaging spaces, static
and judged) is scored with the weights and meta-learners fitted by a five-fold cross-validation grouped by game (a
democracy of equal weights fits nothing and is scored as it is); beside them every member, always-level, counting
material and Stockfish at depth 1 on the same rows; and beside each democracy its members' diversity (:func:`diversity`:
the correlation of their errors and the ambiguity decomposition). Each democracy's one-ply decision is timed
(:mod:`knights.lab.results.timing`) beside the current one-ply bot's (``sparse+quiesce``). The shipped democracy is the
one of lowest cross-validated win-probability error among those no slower than that bot; its weights are fitted on all
15,000 rows and written to ``ensemble/democracy/democracy.json`` (:func:`knights.evaluate.ensemble.save_manifest`); the
figures and the choice go to ``report/results/democracy.json``. Nothing here opens the final set.

**Reporting** (``--final``) refuses to run before that choice is written. It reads the final set
(:func:`knights.evaluate.final.read_final`, checksum checked), refits nothing (the democracies' weights are those
fitted on the selection sets; the shipped one is loaded from its manifest and checked to predict what its refit
twin predicts), and adds under ``final`` the same table on those rows, the diversity, and the paired differences in
win-probability error per row (overall and on quiet positions within a pawn) between the chosen democracy and its
best member and every single network the project ships, judged the same way.

Every member's values are kept in ``runs/democracy/predictions/`` (a rerun reuses them) and its files' checksums
in the results.
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from knights.common import write_json
from knights.data.chunks import Encoded
from knights.engine.judged import install_judge
from knights.engine.spec import SPARSE_DEMOCRACY
from knights.evaluate import ensemble as E
from knights.lab.ensemble import study_members as S
from knights.lab.results.tables import (
    BUCKETS,
    HASH_KEPT,
    LEVEL_PAWNS,
    STOCKFISH_DEPTH1,
    baseline_rows,
    evaluation_row,
    level_reference,
    level_rows,
    mean_difference,
    quiet_rows,
)
from knights.learn import registry
from knights.learn.metrics import win_probability_error

install_judge()   # the members judged where the captures end: the compiled capture search
RESULTS_JSON = registry.REPO_ROOT / "report" / "results" / "democracy.json"
MANIFEST = registry.REPO_ROOT / "ensemble" / "democracy" / "democracy.json"
PREDICTIONS = S.STUDY_DIR / "predictions"
FIGURES = registry.REPO_ROOT / "report" / "figures"
SELECTION_DIR = registry.REPO_ROOT / "data" / "independent"
SELECTION_SETS = ("games", "tactics", "endgames")
MEMORY = "study"
"""The members' memory key: each member judges each row once in the whole study."""
FOLDS = 5
MODES = ("static", "judged")
FAMILIES = ("bag", "six", "designs", "all")
FAMILY_WORDS = {"bag": "the bag: two networks of EL/v24's design, differing only by seed (data order and start)",
                "six": "the shipped six: EL/v19 to EL/v24, one design on different data (sparse+quiesce's members)",
                "designs": "different designs: the best sparse network, the three CNNs and the best classical learner",
                "all": "all: every network the project ships, the bag and every classical learner",
                "pair": "the best sparse network and one classical learner (whether the learner earns a vote)",
                "bot": "the current one-ply bot, sparse+quiesce: the shipped six, equal weights in pawns, endings "
                       "judged by the members that learned from them, a mate found outvoting the mean"}
BOT_KEY = "bot|judged|equal|pawns|endings"


# ---------------------------------------------------------------------------- data
def selection_sets(folder: Path = SELECTION_DIR) -> tuple[Encoded, np.ndarray, np.ndarray]:
    """The three selection sets as one block, each row's set (index into :data:`SELECTION_SETS`) and its group for
    the cross-validation (its game: positions of one game never fall on both sides of a fold)."""
    from knights.lab.results.independent import load_set

    blocks, sets, groups = [], [], []
    for i, name in enumerate(SELECTION_SETS):
        path = folder / f"{name}.csv"
        data, report = load_set(path)
        if report.total_skipped:
            raise ValueError(f"{path}: {report.total_skipped} rows skipped; the groups would not line up")
        with path.open(newline="") as fh:
            ids = [f"{name}:{row['game_id']}" for row in csv.DictReader(fh)]
        if len(ids) != len(data):
            raise ValueError(f"{path}: {len(ids)} game ids for {len(data)} rows")
        blocks.append(data)
        sets.append(np.full(len(data), i))
        groups += ids
    _, group_index = np.unique(np.array(groups), return_inverse=True)
    return Encoded.concat(blocks), np.concatenate(sets), group_index


def _predicting(member: E.Member) -> Callable[[Any], Any]:
    return lambda positions: member.predict_pawns(E.encode(positions))


# ---------------------------------------------------------------------------- members' values
def _key(name: str, judged: bool) -> str:
    return f"{name}|{'judged' if judged else 'static'}"


def member_values(data: Encoded, tag: str, names: Sequence[str], progress: bool = True) -> tuple[dict[str, np.ndarray],
                                                                                                dict[str, float]]:
    """Every member's value (pawns) of every row, static and judged, and the seconds each took; kept in
    ``runs/democracy/predictions/<tag>.npz`` beside the rows (a rerun on the same rows reuses them)."""
    PREDICTIONS.mkdir(parents=True, exist_ok=True)
    path = PREDICTIONS / f"{tag}.npz"
    seconds_file = path.with_suffix(".json")
    X = E.encode(data)
    values: dict[str, np.ndarray] = {}
    seconds: dict[str, float] = json.loads(seconds_file.read_text()) if seconds_file.is_file() else {}
    if path.is_file():
        with np.load(path, allow_pickle=False) as f:
            if np.array_equal(f["__rows__"], X):
                values = {k: f[k] for k in f.files if k != "__rows__"}
    for name in names:
        for judged in (False, True):
            key = _key(name, judged)
            m = S.member(name, judged)
            if key not in values:
                t0 = time.perf_counter()
                m.fit()
                values[key] = m.predict_pawns(X)
                seconds[key] = round(time.perf_counter() - t0, 2)
                if progress:
                    print(f"  {key}: {seconds[key]:.1f}s", flush=True)
                arrays: dict[str, Any] = {"__rows__": X, **values}
                np.savez(path, **arrays)
                write_json(seconds_file, seconds)
            E.remember(MEMORY, m, X, values[key])
    return values, seconds


def baseline_values(data: Encoded, calm: np.ndarray, tag: str, progress: bool = True) -> dict[str, np.ndarray]:
    """Counting material and Stockfish at depth 1 (each position alone, and with the hash kept from row to row) on
    every row (:func:`knights.lab.results.tables.baseline_rows`), kept in
    ``runs/democracy/predictions/<tag>_baselines.npz``
    beside the rows."""
    PREDICTIONS.mkdir(parents=True, exist_ok=True)
    path = PREDICTIONS / f"{tag}_baselines.npz"
    X = E.encode(data)
    if path.is_file():
        with np.load(path, allow_pickle=False) as f:
            if np.array_equal(f["__rows__"], X):
                return {k: f[k] for k in f.files if k != "__rows__"}
    base: dict[str, np.ndarray] = {}
    t0 = time.perf_counter()
    baseline_rows(data, calm, with_stockfish=True, progress=progress, predictions=base)
    base["__seconds__"] = np.array([time.perf_counter() - t0])
    arrays: dict[str, Any] = {"__rows__": X, **base}
    np.savez(path, **arrays)
    return base


# ---------------------------------------------------------------------------- figures of one row
def figures(pred: np.ndarray, data: Encoded, calm: np.ndarray, sets: np.ndarray | None = None) -> dict[str, Any]:
    """Win-probability error and MAE overall, on quiet positions and by |eval| bucket, the quiet-within-a-pawn
    headline (:func:`knights.lab.results.tables.evaluation_row`), and per selection set when ``sets`` is given."""
    row = evaluation_row("", "", pred, data.target, calm)
    row.pop("name"), row.pop("kind")
    row["quiet_mae"] = float(np.abs(pred[calm] - data.target[calm]).mean()) if calm.any() else None
    level = level_rows(data.target, calm)
    row["quiet_level_win_probability_error"] = (win_probability_error(pred[level], data.target[level])
                                                if level.any() else None)
    if sets is not None:
        row["per_set"] = {}
        for i, name in enumerate(SELECTION_SETS):
            rows = sets == i
            level = level_rows(data.target[rows], calm[rows])
            row["per_set"][name] = {
                "win_probability_error": win_probability_error(pred[rows], data.target[rows]),
                "mae": float(np.abs(pred[rows] - data.target[rows]).mean()),
                "quiet_level_mae": float(np.abs(pred[rows][level] - data.target[rows][level]).mean())}
    return row


def wp_rows(pred: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Each row's win-probability error."""
    return np.abs(E.to_space(pred, "win_probability") - E.to_space(target, "win_probability"))


# ---------------------------------------------------------------------------- diversity
def diversity(P: np.ndarray, y: np.ndarray, coef: np.ndarray, space: str) -> dict[str, Any]:
    """The members' diversity in the averaging ``space`` (``P``: members x rows, already in it; ``coef``: the
    weights, summing to one): the mean pairwise correlation of the members' errors, and the ambiguity decomposition
    of the weighted mean's squared error, E = sum w_i E_i - sum w_i A_i with E_i the member's squared error and A_i
    its squared disagreement with the mean (exact for weights summing to one; :func:`ambiguity`)."""
    used = np.flatnonzero(coef > 0)
    t = E.to_space(y, space)
    err = P[used] - t[None, :]
    corr = np.corrcoef(err) if len(used) > 1 else np.ones((1, 1))
    pairs = corr[np.triu_indices(len(used), 1)]
    dec = ambiguity(P[used], t, coef[used])
    return {"space": space, "members": len(used), "mean_error_correlation": float(pairs.mean()) if len(pairs) else None,
            "min_error_correlation": float(pairs.min()) if len(pairs) else None, **dec,
            "best_member_squared_error": float((err ** 2).mean(axis=1).min())}


def ambiguity(P: np.ndarray, target: np.ndarray, w: np.ndarray) -> dict[str, float | None]:
    """Krogh and Vedelsby's decomposition: with ``w`` summing to one and p = w @ P, for every row
    (p - t)^2 = sum_i w_i (P_i - t)^2 - sum_i w_i (P_i - p)^2. Returns the three means over the rows and how far
    the identity is from holding (rounding only)."""
    w = np.asarray(w, dtype=np.float64) / np.sum(w)
    p = w @ P
    ensemble = float(((p - target) ** 2).mean())
    member = float((w[:, None] * (P - target[None, :]) ** 2).sum(axis=0).mean())
    spread = float((w[:, None] * (P - p[None, :]) ** 2).sum(axis=0).mean())
    out: dict[str, float | None] = {
        "ensemble_squared_error": ensemble, "weighted_member_squared_error": member, "ambiguity": spread,
        "identity_residual": abs(ensemble - (member - spread)),
        "ambiguity_share": spread / member if member > 0 else None}
    return out


# ---------------------------------------------------------------------------- the grid
def grid(best: dict[str, str], classical: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Every democracy measured, by key ``family|mode|weighting|space|gate``: members by base name, and how."""
    out: dict[str, dict[str, Any]] = {}
    members = {"bag": [f"bag/seed{s}" for s in S.BAG_SEEDS], "six": list(SPARSE_DEMOCRACY),
               "all": S.base_names()}
    for mode in MODES:
        members_mode = {**members, "designs": [best[mode], *S.CNNS, classical[mode]]}
        for family in FAMILIES:
            for weighting in E.WEIGHTINGS:
                for space in E.SPACES:
                    out[f"{family}|{mode}|{weighting}|{space}|-"] = {
                        "family": family, "mode": mode, "weighting": weighting, "space": space, "gate": None,
                        "members": members_mode[family]}
        out[f"all|{mode}|fitted|win_probability|quiet"] = {
            "family": "all", "mode": mode, "weighting": "fitted", "space": "win_probability", "gate": "quiet",
            "members": members["all"]}
        for learner in S.CLASSICAL:
            out[f"pair:{learner}|{mode}|fitted|win_probability|-"] = {
                "family": "pair", "mode": mode, "weighting": "fitted", "space": "win_probability", "gate": None,
                "members": [best[mode], learner]}
    out[BOT_KEY] = {"family": "bot", "mode": "judged", "weighting": "equal", "space": "pawns", "gate": "endings",
                    "members": list(SPARSE_DEMOCRACY)}
    return out


def build(spec: dict[str, Any], memory: str | None = MEMORY) -> E.Democracy:
    judged = spec["mode"] == "judged"
    return E.Democracy([S.member(n, judged, memory) for n in spec["members"]], weighting=spec["weighting"],
                       space=spec["space"], gate=spec["gate"], name=spec.get("name", "democracy"))


def cv_predict(dem: E.Democracy, X: np.ndarray, y: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """The democracy's values of every row, fitted on the other folds' rows (grouped by game); a democracy of equal
    weights learns nothing, and is fitted on all rows."""
    from sklearn.model_selection import GroupKFold, cross_val_predict

    if dem.weighting == "equal":
        return dem.fit(X, y).predict(X)
    return cross_val_predict(dem, X, y, cv=GroupKFold(n_splits=FOLDS), groups=groups)


def decomposition(dem: E.Democracy, X: np.ndarray, y: np.ndarray) -> dict[str, Any] | None:
    """:func:`diversity` of a fitted democracy on rows ``X`` (per gate group, rows summed); ``None`` for a stacking
    (its coefficients are no weighted mean)."""
    if dem.weighting == "stacked":
        return None
    groups = E.gate_groups(dem.gate, E.as_rows(X))
    coefs = dem.coefficients()
    parts = []
    P_all = dem.member_predictions(X)
    names = [m.name_ for m in dem.members_]
    for group, mask in groups.items():
        if not mask.any():
            continue
        idx = [names.index(n) for n in coefs[group]["members"]]
        d = diversity(P_all[idx][:, mask], y[mask], np.asarray(coefs[group]["coef"]), dem.space)
        parts.append((int(mask.sum()), d))
    if len(parts) == 1:
        return parts[0][1]
    n = sum(k for k, _ in parts)
    keys = ("ensemble_squared_error", "weighted_member_squared_error", "ambiguity", "identity_residual")
    out = {k: sum(k_ * d[k] for k_, d in parts) / n for k in keys}
    out["ambiguity_share"] = out["ambiguity"] / out["weighted_member_squared_error"]
    out["mean_error_correlation"] = sum(k_ * (d["mean_error_correlation"] or 0) for k_, d in parts) / n
    out["space"], out["members"], out["groups"] = dem.space, len(dem.members_), {str(i): d for i, (_, d) in
                                                                                    enumerate(parts)}
    out["best_member_squared_error"] = None
    return out


# ---------------------------------------------------------------------------- timing
def decision_ms(evaluate: Callable[[Any], Any], batches: list[Any], repeats: int = 3) -> float:
    from knights.lab.results.timing import ms_per_decision

    return round(ms_per_decision(evaluate, batches, repeats), 2)


class _NoMemory:
    """Inside the block the democracy's members remember nothing between calls (as in play)."""

    def __init__(self, dem: E.Democracy) -> None:
        self.members = dem.members_

    def __enter__(self) -> None:
        for m in self.members:
            m.memory = None

    def __exit__(self, *exc: object) -> None:
        for m in self.members:
            m.memory = MEMORY


# ---------------------------------------------------------------------------- choosing
def run_choice(progress: bool = True, timing: bool = True) -> dict[str, Any]:
    """The choosing stage (see the module docstring): writes the results and the manifest; returns the results."""
    import torch

    torch.set_num_threads(1)
    started = time.perf_counter()

    def say(text: str) -> None:
        if progress:
            print(text, flush=True)

    data, sets, groups = selection_sets()
    X, y = E.encode(data), data.target.astype(np.float64)
    calm = quiet_rows(data)
    say(f"selection sets: {len(data):,} rows, {int(calm.sum()):,} quiet, {len(np.unique(groups)):,} games")
    names = S.base_names()
    values, seconds = member_values(data, "selection", names, progress)

    # baselines on the same rows
    base = baseline_values(data, calm, "selection", progress)
    baselines = {"always level": figures(np.zeros(len(y)), data, calm, sets),
                 "material": figures(base["material"], data, calm, sets),
                 STOCKFISH_DEPTH1: figures(base[STOCKFISH_DEPTH1], data, calm, sets),
                 HASH_KEPT: figures(base[HASH_KEPT], data, calm, sets)}

    # every member alone
    members: dict[str, Any] = {}
    for name in names:
        for judged in (False, True):
            key = _key(name, judged)
            m = S.member(name, judged).fit()
            members[key] = {"name": m.name_, "base": name, "family": S.family(name), "judged": judged,
                            "predict_seconds": seconds.get(key), "validation": figures(values[key], data, calm, sets)}
    say("members measured")

    def wp(key: str) -> float:
        return float(members[key]["validation"]["win_probability_error"])

    def best_of(names: Sequence[str], mode: str) -> str:
        return min(names, key=lambda n: wp(_key(n, mode == "judged")))

    best = {mode: best_of(S.SPARSE, mode) for mode in MODES}
    classical = {mode: best_of(S.PURE_CLASSICAL, mode) for mode in MODES}
    say(f"best sparse network: {best}; best classical learner: {classical}")

    # the grid
    specs = grid(best, classical)
    ensembles: dict[str, Any] = {}
    fitted: dict[str, E.Democracy] = {}
    for key, spec in specs.items():
        t0 = time.perf_counter()
        dem = build(spec)
        pred = cv_predict(dem, X, y, groups)
        full = build(spec).fit(X, y)
        fitted[key] = full
        member_keys = [_key(n, spec["mode"] == "judged") for n in spec["members"]]
        best_member = min(member_keys, key=wp)
        row = {**{k: v for k, v in spec.items()}, "member_names": [members[k]["name"] for k in member_keys],
               "best_member": members[best_member]["name"], "best_member_key": best_member,
               "validation": figures(pred, data, calm, sets),
               "validation_is": "cross-validated (5 folds by game)" if spec["weighting"] != "equal" else "as it is",
               "coefficients": full.coefficients(),
               "diversity": decomposition(full, X, y), "fit_seconds": round(time.perf_counter() - t0, 1)}
        row["beats_best_member"] = row["validation"]["win_probability_error"] < wp(best_member)
        ensembles[key] = row
        say(f"{key}: wp {row['validation']['win_probability_error']:.4f} (best member {row['best_member']} "
            f"{wp(best_member):.4f}), quiet-level {row['validation']['quiet_level_mae']:.3f}")

    # the one-ply decision's cost
    cost: dict[str, Any] = {}
    if timing:
        from knights.data.csslab import MATE_PAWNS  # noqa: F401 - members measured as the labels read a mate
        from knights.engine.judged import JudgedDemocracy
        from knights.lab.results.timing import decision_batches

        games = data.take(np.flatnonzero(sets == 0))
        batches = decision_batches(games, count=12, seed=0)
        bot = JudgedDemocracy()
        first = decision_ms(bot.evaluate, batches)
        per_member: dict[str, float] = {}
        for key in members:
            m = S.member(members[key]["base"], members[key]["judged"]).fit()
            per_member[key] = decision_ms(_predicting(m), batches)
        per_ensemble: dict[str, float] = {}
        for key, dem in fitted.items():
            with _NoMemory(dem):
                per_ensemble[key] = decision_ms(dem.evaluate, batches)
            ensembles[key]["ms_per_decision"] = per_ensemble[key]
        last = decision_ms(bot.evaluate, batches)
        for key, ms in per_member.items():
            members[key]["ms_per_decision"] = ms
        cost = {"bot": "sparse+quiesce (knights.engine.judged.JudgedDemocracy, the one-ply bot's default)",
                "bot_ms_per_decision": [first, last], "budget_ms": max(first, last),
                "budget_rule": "the one-ply bot's decision timed before and after every candidate, the larger of the "
                               "two: a candidate may cost what the bot costs, on this machine, under its load",
                "batches": len(batches), "positions_per_batch": [len(b) for b in batches],
                "how": "knights.lab.results.timing.ms_per_decision: one core, median over the batches of the best of 3"}
        say(f"the bot's decision: {first:.1f} / {last:.1f} ms")

    # the choice
    budget = cost.get("budget_ms")
    candidates = {k: r for k, r in ensembles.items() if len(r["members"]) > 1
                  and (budget is None or r.get("ms_per_decision", np.inf) <= budget)}
    chosen_key = min(candidates, key=lambda k: candidates[k]["validation"]["win_probability_error"])
    chosen = fitted[chosen_key]
    spec = specs[chosen_key]
    chosen.name = "democracy"
    singles_better = sorted(k for k in members if wp(k) < candidates[chosen_key]["validation"]["win_probability_error"])
    choice = {"key": chosen_key, "manifest": registry.repo_relative(MANIFEST),
              "rule": "the lowest cross-validated win-probability error on the three selection sets among the "
                      "democracies (two or more members) whose one-ply decision costs at most the current one-ply "
                      "bot's (budget_ms)",
              "validation": candidates[chosen_key]["validation"], "ms_per_decision": ensembles[chosen_key].get(
                  "ms_per_decision"), "candidates": len(candidates), "measured": len(ensembles),
              "single_members_better_on_validation": singles_better,
              "written": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")}
    E.save_manifest(chosen, MANIFEST, chosen_on={
        "sets": [registry.repo_relative(SELECTION_DIR / f"{s}.csv") for s in SELECTION_SETS],
        "rule": choice["rule"], "key": chosen_key, "family": FAMILY_WORDS.get(spec["family"], spec["family"]),
        "validation_win_probability_error": choice["validation"]["win_probability_error"],
        "validation_quiet_level_mae": choice["validation"]["quiet_level_mae"],
        "ms_per_decision": choice["ms_per_decision"], "budget_ms": budget},
        command="python -m knights.lab.ensemble.study", created=choice["written"])
    say(f"chosen: {chosen_key} -> {registry.repo_relative(MANIFEST)}")

    results = {
        "generated": choice["written"], "command": "python -m knights.lab.ensemble.study",
        "selection": {"sets": list(SELECTION_SETS), "rows": len(data), "quiet_rows": int(calm.sum()),
                      "games": len(np.unique(groups)), "folds": FOLDS,
                      "quiet_level": level_reference(data.target, calm), "level_pawns": LEVEL_PAWNS,
                      "buckets": [b[0] for b in BUCKETS]},
        "families": FAMILY_WORDS, "best_sparse": best, "best_classical": classical,
        "baselines": baselines, "members": members, "ensembles": ensembles, "cost": cost, "choice": choice,
        "classical_fits": json.loads(S.FITS_JSON.read_text()) if S.FITS_JSON.is_file() else None,
        "bag_training": bag_training(), "seconds": round(time.perf_counter() - started, 1)}
    write_json(RESULTS_JSON, results)
    return results


def bag_training() -> dict[str, Any]:
    """Each bag member's training record (its metadata)."""
    from knights.lab.ensemble.bagging import member_path
    from knights.learn import modelfile

    out = {}
    for s in S.BAG_SEEDS:
        meta = modelfile.meta_of(member_path(s)) or {}
        rec = meta.get("training", {})
        out[f"bag/seed{s}"] = {k: rec.get(k) for k in ("train_rows", "val_rows", "epochs", "best_epoch", "seconds",
                                                       "rows_per_second", "val_loss", "device")}
    return out


# ---------------------------------------------------------------------------- reporting on the final set
def paired_wp(pred: np.ndarray, reference: np.ndarray, target: np.ndarray, rows: np.ndarray) -> dict[str, Any] | None:
    """The mean over ``rows`` of each row's win-probability error of ``pred`` less ``reference``'s (negative:
    ``pred`` errs less), with its standard error (the spread of the paired differences over the root of their
    number) and the rows."""
    paired = mean_difference(wp_rows(pred[rows], target[rows]) - wp_rows(reference[rows], target[rows]))
    if paired is None:
        return None
    return {**paired, "beats_by_more_than_se": bool(-paired["difference"] > paired["standard_error"])}


def run_final(progress: bool = True) -> dict[str, Any]:
    """The reporting stage (see the module docstring)."""
    import torch

    from knights.evaluate.final import read_final

    torch.set_num_threads(1)

    def say(text: str) -> None:
        if progress:
            print(text, flush=True)

    if not RESULTS_JSON.is_file() or not MANIFEST.is_file():
        raise SystemExit(f"no choice written yet ({registry.repo_relative(RESULTS_JSON)}, "
                         f"{registry.repo_relative(MANIFEST)}): run the choosing stage first")
    results = json.loads(RESULTS_JSON.read_text())
    choice = results.get("choice")
    if not choice:
        raise SystemExit(f"{registry.repo_relative(RESULTS_JSON)} records no choice: run the choosing stage first")
    sel, _, _ = selection_sets()
    Xs, ys = E.encode(sel), sel.target.astype(np.float64)
    member_values(sel, "selection", S.base_names(), progress)          # the fits' rows, remembered

    data, sidecar = read_final()
    X, y = E.encode(data), data.target.astype(np.float64)
    calm = quiet_rows(data)
    level = level_rows(y, calm)
    say(f"final set: {len(data):,} rows, {int(calm.sum()):,} quiet, {int(level.sum()):,} quiet within a pawn")
    values, seconds = member_values(data, "held_out", S.base_names(), progress)
    base = baseline_values(data, calm, "held_out", progress)
    final: dict[str, Any] = {
        "set": {"file": sidecar["path"], "sha256": sidecar["sha256"], "rows": len(data),
                "quiet_rows": int(calm.sum()), "quiet_level_rows": int(level.sum()),
                "generator": sidecar.get("generator"), "label": sidecar.get("label"),
                "quiet_level": level_reference(y, calm)},
        "baselines": {"always level": figures(np.zeros(len(y)), data, calm),
                      "material": figures(base["material"], data, calm),
                      STOCKFISH_DEPTH1: figures(base[STOCKFISH_DEPTH1], data, calm),
                      HASH_KEPT: figures(base[HASH_KEPT], data, calm)},
        "members": {k: figures(v, data, calm) for k, v in values.items()}, "ensembles": {}}

    preds: dict[str, np.ndarray] = {}
    fitted: dict[str, E.Democracy] = {}
    for key, row in results["ensembles"].items():
        spec = {k: row[k] for k in ("family", "mode", "weighting", "space", "gate", "members")}
        dem = build(spec).fit(Xs, ys)                         # fitted on the selection sets only, as chosen
        if dem.coefficients() != row["coefficients"]:
            raise AssertionError(f"{key}: refitting on the selection sets gave other coefficients than recorded")
        fitted[key] = dem
        preds[key] = dem.predict(X)
        final["ensembles"][key] = {"validation_win_probability_error": row["validation"]["win_probability_error"],
                                   "final": figures(preds[key], data, calm), "diversity": decomposition(dem, X, y)}
    say("ensembles measured on the final set")

    # the shipped democracy, loaded from its manifest as the bot would load it
    shipped = E.load_manifest(MANIFEST, memory=MEMORY)
    shipped_pred = shipped.predict(X)
    key = choice["key"]
    twin = float(np.abs(shipped_pred - preds[key]).max())
    if twin > 1e-9:
        raise AssertionError(f"the manifest's democracy predicts other values than its refit twin ({twin})")
    shipped_networks = [n for n in registry.shipped("EL") if registry.get(n).name in (*S.SPARSE, *S.CNNS)]
    everywhere = np.ones(len(y), bool)

    def against(pred: np.ndarray, ref: np.ndarray) -> dict[str, Any]:
        return {"overall": paired_wp(pred, ref, y, everywhere), "quiet_level": paired_wp(pred, ref, y, level),
                "quiet": paired_wp(pred, ref, y, calm)}

    def comparisons(dem_key: str, pred: np.ndarray) -> dict[str, Any]:
        """``pred`` (the democracy ``dem_key``'s values) against its best member (on the selection sets and on the
        final set) and against every network the project ships, each judged as the democracy's members are."""
        row = results["ensembles"][dem_key]
        judged = row["mode"] == "judged"
        member_keys = [_key(n, judged) for n in row["members"]]
        best_final = min(member_keys, key=lambda k: final["members"][k]["win_probability_error"])
        refs = ([("best member on the selection sets", row["best_member_key"]),
                 ("best member on the final set", best_final)]
                + [(f"shipped network {n}", _key(n, judged)) for n in shipped_networks])
        out = {label: {"reference": results["members"][ref_key]["name"], **against(pred, values[ref_key])}
               for label, ref_key in refs}
        wins = [label for label, c in out.items() if label.startswith("shipped network")
                and c["overall"]["beats_by_more_than_se"] and c["quiet_level"]["beats_by_more_than_se"]]
        return {"best_member_on_final": results["members"][best_final]["name"], "paired_wp": out,
                "beats_every_shipped_network_overall_and_quiet_level_by_more_than_se":
                    len(wins) == len(shipped_networks),
                "shipped_networks_not_beaten_so": sorted(set(out) - set(wins) - {
                    "best member on the selection sets", "best member on the final set"})}

    chosen_cmp = comparisons(key, shipped_pred)
    chosen_cmp["paired_wp"]["the current one-ply bot"] = {"reference": "sparse+quiesce",
                                                          **against(shipped_pred, preds[BOT_KEY])}
    final["chosen"] = {"key": key, "manifest": choice["manifest"], "figures": figures(shipped_pred, data, calm),
                       "loaded_equals_refit_max_abs_diff": twin, **chosen_cmp}
    final["bot"] = {"key": BOT_KEY, "what": "the democracy the one-ply bot plays (sparse+quiesce), as the study "
                    "builds it", "figures": figures(preds[BOT_KEY], data, calm), **comparisons(BOT_KEY, preds[BOT_KEY])}
    final["seconds"] = {k: v for k, v in seconds.items()}
    final["generated"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    results["final"] = final
    write_json(RESULTS_JSON, results)
    say(f"final: chosen {key} wp {final['chosen']['figures']['win_probability_error']:.4f}")
    return results


# ---------------------------------------------------------------------------- figures
def draw(results: dict[str, Any], folder: Path = FIGURES) -> list[Path]:
    """The decomposition and the gains as figures under ``report/figures/`` (ignored by git: the report draws its own
    from the results)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    out = []
    stages = [("selection sets", "democracy_ambiguity.png", {k: r.get("diversity") for k, r in
                                                             results["ensembles"].items()})]
    if results.get("final"):
        stages.append(("final test set", "democracy_ambiguity_final.png",
                       {k: r.get("diversity") for k, r in results["final"]["ensembles"].items()}))
    for where, name, diversities in stages:
        keys = sorted(k for k, d in diversities.items() if d and results["ensembles"][k]["family"] != "pair"
                      and results["ensembles"][k]["space"] == "win_probability"
                      and results["ensembles"][k]["gate"] is None)
        fig, ax = plt.subplots(figsize=(10, 5))
        x = np.arange(len(keys))
        member = np.array([diversities[k]["weighted_member_squared_error"] for k in keys])
        spread = np.array([diversities[k]["ambiguity"] for k in keys])
        ens = [diversities[k]["ensemble_squared_error"] for k in keys]
        best = [diversities[k]["best_member_squared_error"] for k in keys]
        ax.bar(x - 0.2, member, 0.4, label="weighted mean member squared error")
        ax.bar(x + 0.2, ens, 0.4, label="ensemble squared error (= member - ambiguity)")
        ax.plot(x + 0.2, member - spread, "k_", markersize=12, label="member - ambiguity")
        ax.plot(x, best, "rx", label="best member's squared error")
        ax.set_xticks(x, keys, rotation=60, ha="right", fontsize=7)
        ax.set_ylabel(f"squared error in win probability ({where})")
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = folder / name
        fig.savefig(path, dpi=110)
        plt.close(fig)
        out.append(path)
    return out


# ---------------------------------------------------------------------------- tables
def _f(x: Any, fmt: str = ".4f") -> str:
    return "-" if x is None else format(x, fmt)


def _row(name: str, f: dict[str, Any], extra: Sequence[str] = ()) -> str:
    quiet = {b["bucket"]: b["mae"] for b in f.get("quiet_buckets") or []}
    return "| " + " | ".join([name, _f(f["win_probability_error"]), _f(f.get("quiet_win_probability_error")),
                              _f(f["mae"], ".3f"), _f(f.get("quiet_mae"), ".3f"), _f(f.get("quiet_level_mae"), ".3f"),
                              *(_f(quiet.get(b[0]), ".3f") for b in BUCKETS), *extra]) + " |"


def markdown(results: dict[str, Any], which: str = "validation") -> str:
    """The study's table as Markdown: ``which`` is ``validation`` (the selection sets; a fitted democracy's figures
    cross-validated) or ``final`` (the final set)."""
    head = ["evaluator", "wp error", "quiet wp error", "MAE", "quiet MAE", "quiet within a pawn",
            *(f"quiet {b[0]}" for b in BUCKETS)]
    final = which == "final"
    src = results["final"] if final else results
    extra_head = ["ms/decision"] if not final else []
    lines = ["| " + " | ".join(head + extra_head) + " |", "|---" + "|---:" * (len(head) + len(extra_head) - 1) + "|"]

    def get(r: dict[str, Any]) -> dict[str, Any]:
        return r if final else r["validation"]

    for name, f in src["baselines"].items():
        lines.append(_row(f"*{name}*", f, [""] if not final else []))
    for key, r in results["members"].items():
        f = src["members"][key] if final else r["validation"]
        lines.append(_row(r["name"], f, [_f(r.get("ms_per_decision"), ".2f")] if not final else []))
    for key, r in results["ensembles"].items():
        f = src["ensembles"][key]["final"] if final else get(r)
        mark = " **(chosen)**" if key == results["choice"]["key"] else ""
        lines.append(_row(f"`{key}`{mark}", f, [_f(r.get("ms_per_decision"), ".2f")] if not final else []))
    return "\n".join(lines) + "\n"


def diversity_markdown(results: dict[str, Any], which: str = "validation") -> str:
    """Each voting democracy's diversity: error correlation and the ambiguity decomposition (squared error in the
    averaging space), beside its best member's squared error."""
    lines = ["| democracy | members | mean error correlation | weighted member sq. error | ambiguity | "
             "ensemble sq. error | best member sq. error | ambiguity share |", "|---" + "|---:" * 7 + "|"]
    for key, r in results["ensembles"].items():
        d = r["diversity"] if which == "validation" else results["final"]["ensembles"][key]["diversity"]
        if not d:
            continue
        lines.append(f"| `{key}` | {d['members']} | {_f(d['mean_error_correlation'], '.3f')} | "
                     f"{_f(d['weighted_member_squared_error'], '.5f')} | {_f(d['ambiguity'], '.5f')} | "
                     f"{_f(d['ensemble_squared_error'], '.5f')} | {_f(d.get('best_member_squared_error'), '.5f')} | "
                     f"{_f(d.get('ambiguity_share'), '.3f')} |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- command line
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m knights.lab.ensemble.study", description=__doc__.splitlines()[0])
    p.add_argument("--final", action="store_true", help="report on the final test set (after the choice is written)")
    p.add_argument("--no-timing", action="store_true", help="skip the one-ply decision timings (no choice budget)")
    p.add_argument("--figures", action="store_true",
                   help="only draw the figures from the results (and record what the bot plays)")
    p.add_argument("--table", choices=("validation", "final"), help="only print a table of the results (Markdown)")
    a = p.parse_args(argv)
    if a.table:
        results = json.loads(RESULTS_JSON.read_text())
        print(markdown(results, a.table) + "\n" + diversity_markdown(results, a.table))
        return 0
    if a.final:
        run_final()
    elif not a.figures:
        run_choice(timing=not a.no_timing)
    results = json.loads(RESULTS_JSON.read_text())
    results["choice"]["the_bot_plays"] = bot_decision(results)
    write_json(RESULTS_JSON, results)
    for path in draw(results):
        print(path)
    return 0


def bot_decision(results: dict[str, Any]) -> dict[str, Any]:
    """What the one-ply bot plays beside the democracy chosen on the selection sets, and why."""
    from knights.engine.spec import ONE_PLY_EVALUATOR

    chosen = results["choice"]["key"]
    plays_chosen = chosen == BOT_KEY
    return {"evaluator": ONE_PLY_EVALUATOR, "chosen": chosen, "plays_the_chosen": plays_chosen,
            "why": ("the chosen democracy is sparse+quiesce itself" if plays_chosen else
                    f"chosen {chosen}; the bot still plays {ONE_PLY_EVALUATOR} because its moves are pinned by "
                    "tests/data/golden_bot.json, which this study may not change, and the chosen weights have not "
                    "been measured in one-ply play; switching is a change of the shipped bot, with its own golden "
                    "and strength measurements")}


if __name__ == "__main__":
    sys.exit(main())
