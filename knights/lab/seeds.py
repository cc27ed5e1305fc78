"""Fair version comparisons: each version at its best validation epoch, and the seed-to-seed spread.

A version's shipped network is one training run with one seed (``TrainConfig.seed``, 0 for
every shipped version). Whether version N+1 is better than version N means something only
when the difference is larger than what a different seed alone changes. This module

* retrains chosen versions with other seeds by the shipped recipe (:func:`train_seed`): the
  version's ``library.py``, the letters, epochs and batch size its shipped metadata records,
  the one training loop (:func:`knights.learn.training.fit`), only the seed changed; the
  outputs go to ``runs/seeds/<family>_v<N>/seed<S>/`` (ignored by git), never over
  ``models_EL/``. A version that continues from a parent (``PARENT``) starts from the
  shipped parent, as the shipped run did;
* measures every seed, the shipped network as seed 0 included, the way ``knights results``
  does (:func:`measure`: :func:`knights.learn.experiment.predict` and
  :func:`knights.lab.results.tables.evaluation_row` on the test letters ``j`` and on each
  independent set), and the spread over seeds of each figure (:func:`spread`: min, max,
  max - min, standard deviation);
* compares every shipped EL version at its **best** validation epoch, read from the
  history in its metadata (:func:`best_epoch`), not its last, with its budget beside
  (epochs, training rows, seconds), and labels each difference between adjacent versions
  (:func:`compare_versions`) a **tie** when it is smaller than the seed spread (max - min)
  of a comparable measured version (:func:`reference_for`: the same validation loss,
  preferably the same network class, the nearest in number).

``python -m knights.lab.seeds`` (``make seeds``) writes ``report/results/seeds.json``: the
key ``seeds`` (per version, per seed) and the key ``comparison`` (every shipped version).
A rerun reuses finished seed runs (and resumes an unfinished one from its checkpoint), and
keeps the versions it was not asked to run from the file it replaces.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from knights.common import module_main, write_json
from knights.data.chunks import Encoded, read_chunk
from knights.learn import registry
from knights.learn.training import check_at_least, check_device, check_output

SEEDS_DIR = registry.REPO_ROOT / "runs" / "seeds"
"""Where the seed runs write (``runs/`` is ignored by git)."""
SEEDS_JSON = registry.REPO_ROOT / "report" / "results" / "seeds.json"
TRAINING_RUNS_JSON = registry.REPO_ROOT / "report" / "results" / "training_runs.json"
INDEPENDENT_DIR = registry.REPO_ROOT / "data" / "independent"
"""The independent test sets (``games``, ``tactics``, ``endgames``), as ``knights results`` reads them."""
SET_ORDER = ("games", "tactics", "endgames")
DEFAULT_VERSIONS = ("EL/v1", "EL/v3", "EL/v5")
"""Three versions cheap enough to train three times on a shared 2-core CPU: the original's first
(one convolution, SGD at a constant rate) and two convolutions with Adam on other inputs and
letters (V3, V5). The versions in win-probability space (EL/v13, 437 s a run on an idle CPU;
EL/v14, trained on a GPU) take ten times as long on a loaded CPU; name them with ``--versions``."""
DEFAULT_SEEDS = (1, 2)
"""The extra seeds; the shipped network is seed 0."""
SHIPPED_SEED = 0
FIGURES = ("best_val", "last_val", "test_mae", "test_quiet_level_mae", "test_win_probability_error",
           *(f"{s}_mae" for s in SET_ORDER))
"""The per-seed figures whose spread is measured."""


# -- reading a history ----------------------------------------------------------------
def best_epoch(history: dict[str, Any]) -> tuple[int, float]:
    """The 1-based epoch with the lowest validation loss of a metadata ``history`` and that loss
    (the first such epoch on a tie); a history without a finite validation loss is an error."""
    losses = [float(x) for x in history.get("val_loss", [])]
    finite = [(loss, i) for i, loss in enumerate(losses) if math.isfinite(loss)]
    if not finite:
        raise ValueError("the history has no finite validation loss")
    loss, index = min(finite)
    return index + 1, loss


def history_summary(history: dict[str, Any]) -> dict[str, Any]:
    """Best and last validation epoch of a history, and which epoch's weights the run kept
    (its ``best_epoch`` when it kept the best, else the last)."""
    epoch, value = best_epoch(history)
    n = len(history["val_loss"])
    kept = history.get("best_epoch") or n
    return {"epochs": n, "best_epoch": epoch, "best_val": value, "last_val": float(history["val_loss"][-1]),
            "kept_epoch": kept}


def validation_loss_name(version: registry.Version, meta: dict[str, Any]) -> str:
    """What the validation loss measures: the metadata's word, else the version's task's."""
    from knights.learn.experiment import loss_names

    return (meta.get("loss") or {}).get("validation") or loss_names(version)["validation"]


# -- the spread and the tie rule -----------------------------------------------------
def spread(values: Sequence[float]) -> dict[str, float | int]:
    """Min, max, their difference (``range``, the spread the tie rule uses) and the sample
    standard deviation (n - 1; 0 for one value) of ``values``.

    >>> spread([1.0, 1.5, 1.25])
    {'n': 3, 'min': 1.0, 'max': 1.5, 'range': 0.5, 'mean': 1.25, 'std': 0.25}
    """
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        raise ValueError("no values to spread")
    return {"n": int(x.size), "min": float(x.min()), "max": float(x.max()), "range": float(x.max() - x.min()),
            "mean": float(x.mean()), "std": float(x.std(ddof=1)) if x.size > 1 else 0.0}


def tie_label(difference: float | None, seed_range: float | None) -> str:
    """``"tie"`` when ``|difference|`` is smaller than the seed spread ``seed_range`` (max - min
    over seeds of a comparable version), ``"better"``/``"worse"`` (a lower loss or error is
    better, ``difference`` = later - earlier) when not, ``"not measured"`` without a spread.

    >>> tie_label(-0.05, 0.1), tie_label(-0.2, 0.1), tie_label(0.2, 0.1), tie_label(0.2, None)
    ('tie', 'better', 'worse', 'not measured')
    """
    if difference is None or seed_range is None or not math.isfinite(difference):
        return "not measured"
    if abs(difference) < seed_range:
        return "tie"
    return "better" if difference < 0 else "worse"


# -- training one seed ----------------------------------------------------------------
def seed_dir(name: str, seed: int, root: Path = SEEDS_DIR) -> Path:
    version = registry.get(name)
    return root / f"{version.family}_v{version.number}" / f"seed{seed}"


def shipped_meta(name: str) -> dict[str, Any]:
    meta: dict[str, Any] = json.loads(registry.get(name).meta_path().read_text())
    return meta


class Prepared:
    """A version's rows, read once for all its seeds: the plan (:func:`~knights.learn.experiment.run_data`),
    the training, validation and test rows (the trained ones as :func:`~knights.learn.experiment.trained_rows`
    keeps them) and the chunk checksums."""

    def __init__(self, name: str, *, data_dir: str | None = None, epochs: int | None = None,
                 quick: bool = False, progress: bool = True) -> None:
        from knights.data.cache import ChunkCache, load_encoded
        from knights.learn.experiment import run_data, trained_rows

        self.version = registry.get(name)
        shipped = shipped_meta(name) if self.version.is_trained() else {}
        recipe = shipped.get("train_config", {})
        # the shipped recipe: the epochs and batch size the shipped run trained with (knights ship-models)
        shipped_epochs = len(shipped.get("history", {}).get("train_loss", [])) or None
        self.plan = run_data(self.version, data_dir=data_dir, quick=quick,
                             epochs=epochs or (None if quick else shipped_epochs),
                             batch_size=None if quick else recipe.get("batch_size"))
        self.quick = quick
        self.cache = ChunkCache(self.plan.folder.parent / "cache") if not quick else ChunkCache()
        data = {k: load_encoded(v, self.cache, progress=progress) for k, v in self.plan.files.items()}
        self.data: dict[str, Encoded] = trained_rows(self.version, data)


def train_seed(prepared: Prepared, seed: int, *, root: Path = SEEDS_DIR, device: str | None = None,
               progress: bool = True) -> tuple[Any, dict[str, Any]]:
    """Train ``prepared``'s version with ``seed`` by its recipe (only the seed changed) into
    :func:`seed_dir`; a finished run there of the same seed and epochs is loaded instead, an
    unfinished one resumes from its checkpoint. Returns the model and its metadata."""
    from knights.learn.experiment import (
        save_version,
        version_meta,
        version_task,
        warm_start,
    )
    from knights.learn.training import choose_device, fit, seed_everything

    version, plan, data = prepared.version, prepared.plan, prepared.data
    lib = version.library
    out = seed_dir(version.name, seed, root)
    if version.is_trained(out):
        model, meta = version.load(out)
        if (meta.get("train_config", {}).get("seed") == seed
                and len(meta["history"]["train_loss"]) == plan.epochs and meta.get("quick") == prepared.quick):
            return model, meta
    out.mkdir(parents=True, exist_ok=True)
    cfg = lib.TRAIN.replace(epochs=plan.epochs, batch_size=plan.batch_size, seed=seed)
    seed_everything(cfg.seed)   # before the model is built, as run_version does: the initial weights follow the seed
    model = lib.build_model()
    # a child of a parent starts from the shipped parent (runs/seeds holds no parent), as the shipped run did
    copied = warm_start(model, lib.PARENT, out) if getattr(lib, "PARENT", None) else []
    t0 = time.perf_counter()
    history = fit(model, version_task(version), data["train"], data["val"], cfg, checkpoint=out / "checkpoint.ckpt",
                  device=choose_device(device), progress=progress)
    model.cpu()
    recipes = plan.recipes({k: [prepared.cache.checksums[str(f)] for f in v] for k, v in plan.files.items()},
                           {k: len(v) for k, v in data.items()})
    meta = version_meta(version, model, copied, cfg, prepared.quick, recipes, history, time.perf_counter() - t0,
                        seed_run={"seed": seed, "shipped_recipe": "models_EL metadata: letters, epochs, batch size"})
    result = save_version(version, model, history, meta, data["test"], out, progress=progress)
    (out / "checkpoint.ckpt").unlink(missing_ok=True)
    return result.model, result.meta


# -- measuring one network ------------------------------------------------------------
def independent_sets(folder: Path = INDEPENDENT_DIR) -> dict[str, Encoded]:
    """The independent sets' rows by name (``games``, ``tactics``, ``endgames`` first), read as
    ``knights results`` reads them (:func:`knights.data.chunks.read_chunk`); none when absent."""
    if not folder.is_dir():
        return {}
    rank = {name: i for i, name in enumerate(SET_ORDER)}
    files = sorted(folder.glob("*.csv"), key=lambda p: (rank.get(p.stem, len(rank)), p.stem))
    return {p.stem: read_chunk(p)[0] for p in files}


def measure(version: registry.Version, model: Any, test: Encoded, sets: dict[str, Encoded]) -> dict[str, Any]:
    """The figures ``knights results`` gives a network (:func:`knights.lab.results.tables.evaluation_row`):
    MAE, MAE on quiet positions within a pawn of level and win-probability error, on the test
    rows and on each independent set."""
    from knights.lab.results.tables import evaluation_row, quiet_rows
    from knights.learn.experiment import predict

    keys = ("mae", "quiet_level_mae", "win_probability_error", "rows")
    out: dict[str, Any] = {}
    for where, data in {"test": test, **sets}.items():
        row = evaluation_row(version.name, "network", predict(model, version.library.INPUTS, data), data.target,
                             quiet_rows(data))
        out[where] = {k: row[k] for k in keys}
    return out


def seed_entry(seed: int, meta: dict[str, Any], figures: dict[str, Any], *, shipped: bool) -> dict[str, Any]:
    """One seed's row: its history's best and last validation epochs, its measured figures, its time."""
    head = history_summary(meta["history"])
    flat = {"test_mae": figures["test"]["mae"], "test_quiet_level_mae": figures["test"]["quiet_level_mae"],
            "test_win_probability_error": figures["test"]["win_probability_error"],
            **{f"{s}_mae": figures[s]["mae"] for s in figures if s != "test"}}
    return {"seed": seed, "shipped": shipped, **head, **flat, "measured": figures,
            "train_seconds": round(float(meta.get("train_seconds", float("nan"))), 1),
            "train_rows": meta.get("data", {}).get("train", {}).get("rows")}


def version_seeds(name: str, seeds: Sequence[int], *, data_dir: str | None = None, epochs: int | None = None,
                  quick: bool = False, root: Path = SEEDS_DIR, device: str | None = None,
                  sets: dict[str, Encoded] | None = None, progress: bool = True,
                  bar: Any = None) -> dict[str, Any]:
    """Every seed of ``name``: the shipped network as seed 0 (not in a quick run, whose recipe
    is not the shipped one), then ``seeds`` trained by :func:`train_seed`; each measured by
    :func:`measure`, and the spread of every figure over them."""
    started = time.perf_counter()
    prepared = Prepared(name, data_dir=data_dir, epochs=epochs, quick=quick, progress=progress)
    version = prepared.version
    sets = independent_sets() if sets is None else sets
    rows = []
    if not quick and version.is_trained():
        model, meta = version.load()
        rows.append(seed_entry(SHIPPED_SEED, meta, measure(version, model, prepared.data["test"], sets), shipped=True))
    for seed in seeds:
        model, meta = train_seed(prepared, seed, root=root, device=device, progress=progress)
        rows.append(seed_entry(seed, meta, measure(version, model, prepared.data["test"], sets), shipped=False))
        if bar is not None:
            bar.update(1)
    figures = [f for f in FIGURES if all(r.get(f) is not None for r in rows)]
    return {"version": name, "epochs": prepared.plan.epochs, "batch_size": prepared.plan.batch_size,
            "letters": prepared.plan.letters, "train_rows": len(prepared.data["train"]),
            "val_rows": len(prepared.data["val"]), "test_rows": len(prepared.data["test"]),
            "validation_loss": validation_loss_name(version, shipped_meta(name) if version.is_trained() else {}),
            "seeds": rows, "spread": {f: spread([r[f] for r in rows]) for f in figures},
            "seconds": round(time.perf_counter() - started, 1)}


# -- every shipped version at its best epoch -----------------------------------------------
def reference_for(a: registry.Version, b: registry.Version, loss: str, arch: str,
                  measured: dict[str, dict[str, Any]]) -> str | None:
    """The measured version whose seed spread judges the difference between ``a`` and ``b``:
    among those whose validation loss is ``loss``, those of the network class ``arch`` first,
    then the one nearest the pair in version number; ``None`` when none has that loss."""
    middle = (a.number + b.number) / 2
    candidates = [(m["architecture"] != arch, abs(registry.get(n).number - middle),
                   -m["spread"]["test_mae"]["range"], n)   # a tie in distance: the wider spread
                  for n, m in measured.items() if m["validation_loss"] == loss]
    return min(candidates)[3] if candidates else None


def version_row(version: registry.Version, seconds: dict[str, Any]) -> dict[str, Any]:
    """A shipped version at its best validation epoch, with its budget and the recipe that makes
    its validation loss comparable (or not) with another's."""
    meta = shipped_meta(version.name)
    val = meta["data"]["val"]
    return {"version": version.name, **history_summary(meta["history"]),
            "validation_loss": validation_loss_name(version, meta),
            "validation_rows": {"folder": val["folder"], "letters": val["letters"], "rows": val["rows"],
                                "sha1": val["sha1"], "train_on": meta.get("train_on", "all")},
            "architecture": meta["architecture"].split("(")[0],
            "test_mae": meta["test"]["mae"], "test_rows": meta["test"].get("rows"),
            "budget": {"epochs": len(meta["history"]["train_loss"]), "train_rows": meta["data"]["train"]["rows"],
                       "train_seconds": round(float(meta.get("train_seconds", float("nan"))), 1),
                       "notebook_seconds": (seconds.get(version.name) or {}).get("seconds"),
                       "batch_size": meta["train_config"].get("batch_size"),
                       "device": meta["history"].get("device"),
                       "parameters": meta.get("parameters")}}


def compare_versions(measured: dict[str, dict[str, Any]], *, runs_log: Path = TRAINING_RUNS_JSON) -> dict[str, Any]:
    """Every shipped EL version at its best validation epoch (from its metadata history), its
    budget beside, and each adjacent pair's differences labelled by :func:`tie_label` against
    the seed spread of :func:`reference_for`'s version: the best validation loss (only where
    both validated on the same rows with the same loss; else ``"not comparable"``) and the
    test MAE on ``j`` (the same rows for every version; the shipped weights: the last epoch
    unless the version keeps its best)."""
    seconds = json.loads(runs_log.read_text()) if runs_log.is_file() else {}
    versions = [v for v in registry.all_versions("EL") if v.meta_path().is_file()]   # archived ones too: metadata
    rows = [version_row(v, seconds) for v in versions]
    for m in measured.values():
        if "architecture" not in m:
            m["architecture"] = shipped_meta(m["version"])["architecture"].split("(")[0]
    pairs = []
    for (va, a), (vb, b) in zip(zip(versions, rows, strict=True), list(zip(versions, rows, strict=True))[1:],
                                strict=False):
        ref = reference_for(va, vb, b["validation_loss"], b["architecture"], measured)
        spread_of = measured[ref]["spread"] if ref else {}
        same_val = a["validation_rows"] == b["validation_rows"] and a["validation_loss"] == b["validation_loss"]
        val_diff = b["best_val"] - a["best_val"] if same_val else None
        val_range = spread_of["best_val"]["range"] if ref and same_val and "best_val" in spread_of else None
        test_diff = b["test_mae"] - a["test_mae"] if a["test_rows"] == b["test_rows"] else None
        test_range = spread_of["test_mae"]["range"] if ref else None
        pairs.append({
            "from": a["version"], "to": b["version"], "reference": ref,
            "best_val": {"difference": val_diff, "seed_range": val_range,
                         "label": tie_label(val_diff, val_range) if same_val else "not comparable"},
            "test_mae": {"difference": test_diff, "seed_range": test_range, "label": tie_label(test_diff, test_range)},
            "budget_ratio": {k: (b["budget"][k] / a["budget"][k] if a["budget"][k] and b["budget"][k] else None)
                             for k in ("epochs", "train_rows", "train_seconds")}})
    return {"rule": "a difference is a tie when |difference| < the seed spread (max - min over seeds) of the "
                    "reference version: a measured version with the same validation loss, the same network class "
                    "first, then the nearest in number; best_val is compared only on the same validation rows "
                    "and loss, the test MAE on the same test rows",
            "versions": rows, "pairs": pairs}


# -- the command --------------------------------------------------------------------------
def run(versions: Sequence[str] = DEFAULT_VERSIONS, seeds: Sequence[int] = DEFAULT_SEEDS, *,
        out: Path = SEEDS_JSON, root: Path = SEEDS_DIR, data_dir: str | None = None, epochs: int | None = None,
        quick: bool = False, device: str | None = None, progress: bool = True) -> dict[str, Any]:
    """Measure ``versions`` over ``seeds`` (:func:`version_seeds`), keep the versions measured
    earlier in ``out`` that were not asked for, compare every shipped version
    (:func:`compare_versions`) and write ``out`` after every version."""
    from tqdm.auto import tqdm

    started = time.perf_counter()
    earlier = json.loads(out.read_text()) if out.is_file() else {}
    measured: dict[str, dict[str, Any]] = dict(earlier.get("seeds", {}))
    sets = independent_sets()
    result: dict[str, Any] = {}
    def written() -> dict[str, Any]:
        result = {"what": "seed-to-seed spread of chosen versions (the shipped network is seed 0) and every "
                          "shipped EL version at its best validation epoch; python -m knights.lab.seeds",
                  "quick": quick, "seeds": measured,
                  "comparison": compare_versions({} if quick else measured),
                  "seconds": round(time.perf_counter() - started, 1),
                  "seconds_by_version": {k: v.get("seconds") for k, v in measured.items()}}
        write_json(out, result)
        return result

    result = written()   # with no versions: the comparison anew from the seeds measured earlier
    with tqdm(total=len(versions) * len(seeds), desc="seed runs", unit="run", disable=not progress) as bar:
        for name in versions:
            measured[name] = version_seeds(name, seeds, data_dir=data_dir, epochs=epochs, quick=quick, root=root,
                                           device=device, sets=sets, progress=progress, bar=bar)
            result = written()
    return result


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--versions", default=",".join(DEFAULT_VERSIONS), help="comma-separated, e.g. EL/v1,EL/v5")
    p.add_argument("--seeds", default=",".join(map(str, DEFAULT_SEEDS)), help="extra seeds (the shipped one is 0)")
    p.add_argument("--out", default=str(SEEDS_JSON))
    p.add_argument("--runs-dir", default=str(SEEDS_DIR), help="where the seed runs write (resumable)")
    p.add_argument("--data-dir", default=None)
    p.add_argument("--epochs", type=int, default=None, help="default: the shipped run's epochs")
    p.add_argument("--quick", action="store_true", help="the committed sample, one epoch (a check, not a result)")
    p.add_argument("--device", default=None)
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--compare-only", action="store_true",
                   help="train nothing: rewrite the comparison from the seeds already in --out")


def main_args(a: argparse.Namespace) -> int:
    versions = [] if a.compare_only else [v.strip() for v in a.versions.split(",") if v.strip()]
    try:
        seeds = [int(s) for s in a.seeds.split(",") if s.strip()]
    except ValueError:
        raise ValueError(f"--seeds {a.seeds[:40]!r} is not whole numbers separated by commas") from None
    if SHIPPED_SEED in seeds and not a.quick:
        raise ValueError(f"seed {SHIPPED_SEED} is the shipped network's: choose other seeds")
    for name in versions:   # before --out is rewritten: an unknown name was refused after that
        registry.get(name)
    check_at_least(0, *(("--seeds", seed) for seed in seeds))
    check_at_least(1, ("--epochs", a.epochs))
    check_device(a.device)
    out = registry.repo_path(a.out)
    check_output(out, "--out")
    check_output(registry.repo_path(a.runs_dir), "--runs-dir", folder=True)
    result = run(versions, seeds, out=out, root=registry.repo_path(a.runs_dir), data_dir=a.data_dir,
                 epochs=a.epochs, quick=a.quick, device=a.device, progress=not a.no_progress)
    for name, m in result["seeds"].items():
        s = m["spread"]
        if "best_val" not in s:
            continue
        print(f"{name}: best val {s['best_val']['min']:.4f}-{s['best_val']['max']:.4f}, "
              f"test MAE {s['test_mae']['min']:.3f}-{s['test_mae']['max']:.3f} over {s['test_mae']['n']} seeds")
    print(registry.repo_relative(out))
    return 0


def main(argv: list[str] | None = None) -> int:
    return module_main("knights.lab.seeds", __doc__.splitlines()[0], add_arguments, main_args, argv)


if __name__ == "__main__":
    raise SystemExit(main())
