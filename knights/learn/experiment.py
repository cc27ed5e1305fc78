"""Run one version end to end: the few calls a version's notebook makes.

    result = run_version("EL/v8", quick=True)      # committed sample, 1 epoch, runs/quick/EL_v8/
    teach.plot_history(result)                     # loss curves (knights.lab.notebooks.teach)

A version's ``library.py`` declares ``INPUTS``, ``TRAIN`` (a TrainConfig), ``DATA``
(train and validation letters of the full dataset), ``PARENT`` (a version whose
weights it continues from, or None) and ``build_model()``; move networks also give
their illegal-move ``PENALTY``. Everything else happens here, the same way for every version.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from knights.data.cache import ChunkCache, iter_batches, load_encoded
from knights.data.chunks import Encoded, select_chunks
from knights.features.attacks import quiet
from knights.features.inputs import Inputs
from knights.learn import modelfile, registry
from knights.learn.metrics import regression_metrics
from knights.learn.nets import parameter_count
from knights.learn.nnue import SparseNet, widened
from knights.learn.training import (
    BucketTask,
    EvalTask,
    History,
    Task,
    TrainConfig,
    WinProbTask,
    choose_device,
    environment,
    fit,
    seed_everything,
)

FULL_DATA = "data/full"
"""Chunks of the full generated dataset (``make data``): letters a-j."""
TEST_LETTERS = "j"
"""Held out from every training and validation run: the test set."""
SAMPLE_DATA = "data/sample"
QUICK = {"train": "a-h", "val": "i,j", "test": "k-m", "epochs": 1, "batch_size": 2048}
"""Quick runs use the committed sample (chunks a-m of 2,500 rows)."""
QUICK_DIR = registry.REPO_ROOT / "runs" / "quick"
"""Where a quick run writes when given no ``out_dir``: one folder a version, emptied at
the start of each such run and left without its checkpoint (git ignores ``runs/``)."""


@dataclass
class Result:
    name: str
    model: nn.Module
    history: History
    meta: dict[str, Any]
    weights: Path


def data_recipe(folder: Path, checksums: list[str], n_rows: int, letters: str,
                more: Sequence[Path] = ()) -> dict[str, Any]:
    """What data a run used: folder, letters, rows, and a checksum over the chunk files'
    own checksums (``checksums``, in file order); ``more``: the further folders whose
    chunks of these letters were read too."""
    digest = hashlib.sha1("".join(checksums).encode()).hexdigest()
    recipe: dict[str, Any] = {"folder": registry.repo_relative(folder), "letters": letters,
                              "chunks": len(checksums), "rows": n_rows, "sha1": digest}
    if more:
        recipe["more"] = [registry.repo_relative(m) for m in more]
    source = folder.parent / "generated" / "games.csv.parts" / "recipe.json"
    if source.exists():
        recipe["generator"] = json.loads(source.read_text())
    return recipe


@dataclass
class RunData:
    """Which chunk files a training run reads, settled from the version's defaults and
    the caller's choices (:func:`run_data`)."""

    folder: Path                # the main chunk folder; its test letters are the test set
    more: list[Path]            # further folders whose training and validation letters are added
    letters: dict[str, str]     # "train", "val", "test" -> letters, e.g. "a-h"
    files: dict[str, list[Path]]
    epochs: int
    batch_size: int             # the version's (or the quick runs') batch unless one was given

    def recipes(self, checksums: dict[str, list[str]], rows: dict[str, int]) -> dict[str, Any]:
        """The ``data`` entry of a version's metadata: one :func:`data_recipe` a split."""
        return {k: data_recipe(self.folder, checksums[k], rows[k], self.letters[k],
                               self.more if k != "test" else ())
                for k in ("train", "val", "test")}


def run_data(version: registry.Version, *, data_dir: str | None = None, more: Sequence[str] = (),
             train: str | None = None, val: str | None = None, test: str | None = None,
             epochs: int | None = None, batch_size: int | None = None, quick: bool = False) -> RunData:
    """The chunk files of a run: training and validation letters from ``data_dir`` and from
    every folder in ``more`` (e.g. ``data/more``, the grown styles), test letters from
    ``data_dir`` alone, so a run on more data is measured on the same test rows as the others.
    Defaults: the full dataset with the version's letters and the folders its library names
    in ``MORE`` (when neither ``data_dir`` nor ``more`` is given), or the committed sample when
    ``quick``. A library with ``TRAIN_MAIN = False`` trains on the further folders alone (``data_dir``'s
    validation and test letters stay): a version that continues from a parent which learned them."""
    lib = version.library
    defaults: dict[str, Any]
    if quick:
        defaults = {"data_dir": SAMPLE_DATA, **QUICK}
    else:
        defaults = {"data_dir": FULL_DATA, "test": TEST_LETTERS, "epochs": lib.TRAIN.epochs,
                    "batch_size": lib.TRAIN.batch_size, **lib.DATA}
    folder = registry.repo_path(data_dir or defaults["data_dir"])
    if not more and not quick and data_dir is None:
        more = getattr(lib, "MORE", ())     # the version's own further folders (EL V15: data/more)
        for m in more:
            if not registry.repo_path(m).is_dir():
                from knights.data.grow import grow_command

                raise FileNotFoundError(f"{version.name} also trains on {m}, which is not here: `{grow_command(m)}` "
                                        "grows it (hours on 2 cores: the Makefile says how long), or pass "
                                        "more=[...] / data_dir to choose")
    extra = [registry.repo_path(m) for m in more]
    letters = {"train": train or defaults["train"], "val": val or defaults["val"], "test": test or defaults["test"]}
    files = {k: select_chunks(folder, spec) for k, spec in letters.items()}
    overlap = set(files["test"]) & (set(files["train"]) | set(files["val"]))
    if overlap:
        raise ValueError(f"test chunks {sorted(p.name for p in overlap)} are also in training or validation")
    if not quick and not getattr(lib, "TRAIN_MAIN", True):     # a continued version (EL V25): its parent learned them
        if not extra:
            raise ValueError(f"{version.name} leaves out {registry.repo_relative(folder)}'s training letters "
                             "(TRAIN_MAIN = False) and names no other folder to train on")
        files["train"] = []
    seen = {folder.resolve()}
    for m in extra:
        if m.resolve() in seen:
            raise ValueError(f"{registry.repo_relative(m)} is the main data folder or given twice; give it once")
        seen.add(m.resolve())
        for k in ("train", "val"):
            files[k] += select_chunks(m, letters[k])
    return RunData(folder, extra, letters, files, epochs or defaults["epochs"], batch_size or defaults["batch_size"])


def trained_rows(version: registry.Version, data: dict[str, Encoded]) -> dict[str, Encoded]:
    """The rows a version trains and validates on: all of them, or, when its library says
    ``TRAIN_ON = "quiet"`` (EL V13), the quiet positions only
    (:func:`knights.features.attacks.quiet`), as Stockfish's NNUE trainer skips positions
    whose evaluation hangs on a capture. The test rows are always all of them, so every
    version is measured on the same rows."""
    rows = getattr(version.library, "TRAIN_ON", "all")
    if rows == "all":
        return data
    if rows != "quiet":
        raise ValueError(f"{version.name}: unknown TRAIN_ON {rows!r}: use 'all' or 'quiet'")
    kept = {k: (v if k == "test" else v.take(np.flatnonzero(quiet(v.squares, v.white, v.check))))
            for k, v in data.items()}
    return kept


def warm_start(model: nn.Module, parent: str, models_dir: Path) -> list[str]:
    """Copy every parameter of the parent version whose name and shape match.

    Returns the names copied (all of them when the architecture is the same;
    only the shared layers when the child adds layers, as V6 did over V5). A sparse network
    with a wider accumulator than its parent's takes all of the parent as its first units
    (:func:`knights.learn.nnue.widened`: it starts as the parent's function).
    """
    version = registry.get(parent)
    path = version.weights(models_dir)
    if not path.is_file():
        path = version.weights()
    if not path.is_file():
        return []
    state = modelfile.expand_state(modelfile.load_state(path))   # a 4-bit stored parent too
    own = model.state_dict()
    if type(model) is SparseNet and "columns" in state and state["columns"].shape[1] < model.hidden:   # one head
        state = widened(state, model)
    copied = [k for k, v in state.items() if k in own and own[k].shape == v.shape]
    own.update({k: state[k] for k in copied})
    model.load_state_dict(own)
    return copied


def predict(model: nn.Module, spec: Inputs, data: Encoded, batch: int = 50_000) -> np.ndarray:
    """The model's evaluations of ``data`` in pawns (CPU)."""
    out = []
    model.eval()
    with torch.inference_mode():
        for block in iter_batches(data, batch, shuffle=False):
            out.append(model(*spec.tensors(block)).float().cpu().numpy().reshape(-1))
    return np.concatenate(out) if out else np.zeros(0, np.float32)


def version_task(version: registry.Version) -> Task:
    """What a batch means for this version: L1 in pawns for evaluation networks; for
    move networks the 64x64 move grid with the version's illegal-move ``PENALTY``."""
    lib = version.library
    if version.family == "SL":
        from knights.learn.moves import MoveTask

        return MoveTask(lib.INPUTS, lib.PENALTY)
    buckets = getattr(lib, "BUCKETS", None)   # a win-probability head (EL V12)
    if buckets is not None:
        return BucketTask(lib.INPUTS, buckets)
    if getattr(lib, "TARGET", "pawns") == "win_probability":   # the loss in win-probability space (EL V13)
        return WinProbTask(lib.INPUTS)
    return EvalTask(lib.INPUTS)


def loss_names(version: registry.Version) -> dict[str, str]:
    """What the history's train and validation losses measure, in words (they differ
    for a bucket network: cross-entropy in training, L1 in pawns on validation)."""
    if version.family == "SL":
        both = "squared error against the move played + illegal-move penalty"
        return {"train": both, "validation": both}
    task = version_task(version)
    if isinstance(task, BucketTask):
        return {"train": "HL-Gauss cross-entropy over win-probability buckets", "validation": "L1 (pawns)"}
    if isinstance(task, WinProbTask):
        both = "squared error of the win probability"
        if getattr(version.library, "RANKING", None) is not None:
            return {"train": f"{both} + {version.library.RANKING.weight} x the sibling cross-entropy "
                             "(knights.learn.siblings)", "validation": both}
        return {"train": both, "validation": both}
    return {"train": "L1 (pawns)", "validation": "L1 (pawns)"}


def held_out_metrics(version: registry.Version, model: nn.Module, data: Encoded) -> dict[str, Any]:
    """Test-set figures: MAE, median error and sign agreement for evaluation networks;
    the share of legal top moves and of top moves equal to the move played for move networks."""
    if version.family == "SL":
        from knights.learn.moves import move_metrics

        return move_metrics(model, version.library.INPUTS, data)
    return regression_metrics(predict(model, version.library.INPUTS, data), data.target)


def run_version(name: str, *, data_dir: str | None = None, more: Sequence[str] = (), train: str | None = None,
                val: str | None = None, test: str | None = None, epochs: int | None = None,
                batch_size: int | None = None, quick: bool = False, out_dir: str | Path | None = None,
                device: str | None = None, progress: bool = True) -> Result:
    """Train version ``name`` and write ``vN.pt`` + ``vN.json`` into ``out_dir``.

    Defaults: the version's own settings on the full dataset, written to its
    models folder. ``more``: further chunk folders whose training and validation
    letters are added (see :func:`run_data`). ``quick=True``: the committed sample, one
    epoch, small batches, written to ``runs/quick/<family>_v<N>/`` (:data:`QUICK_DIR`)
    unless ``out_dir`` is given.
    """
    version = registry.get(name)
    lib = version.library
    plan = run_data(version, data_dir=data_dir, more=more, train=train, val=val, test=test, epochs=epochs,
                    batch_size=batch_size, quick=quick)
    if quick:
        out = Path(out_dir) if out_dir else QUICK_DIR / f"{version.family}_v{version.number}"
        if not out_dir:
            shutil.rmtree(out, ignore_errors=True)   # a fresh run, never a resumed one
    else:
        out = Path(out_dir) if out_dir else version.weights().parent
    cfg: TrainConfig = lib.TRAIN.replace(epochs=plan.epochs, batch_size=plan.batch_size)

    cache = ChunkCache(plan.folder.parent / "cache") if not quick else ChunkCache()
    data = {k: load_encoded(v, cache, progress=progress, report=print) for k, v in plan.files.items()}
    data = trained_rows(version, data)

    seed_everything(cfg.seed)   # before the model is built: its initial weights come from the seed too
    model = lib.build_model()
    copied = warm_start(model, lib.PARENT, out) if getattr(lib, "PARENT", None) else []
    task = version_task(version)
    trained: nn.Module = model
    extra: dict[str, Any] = {}
    if getattr(lib, "RANKING", None) is not None:    # the sibling ranking loss beside the value loss (EL V26)
        task, trained, extra = ranking_task(lib.RANKING, lib.INPUTS, plan.files["train"], len(data["train"]), cfg,
                                            model, quick=quick, progress=progress)
    dev = choose_device(device)
    # full runs keep their checkpoint in runs/ (resumable across sessions); quick runs beside their output
    checkpoint = (out if quick else registry.REPO_ROOT / "runs") / f"{version.family}_v{version.number}.ckpt"
    t0 = time.perf_counter()
    history = fit(trained, task, data["train"], data["val"], cfg, checkpoint=checkpoint, device=dev, progress=progress)
    if trained is not model:
        extra["ranking"]["learned_scale"] = round(float(trained.get_parameter("log_scale").detach().exp()), 3)
    if quick and not out_dir:
        checkpoint.unlink(missing_ok=True)   # only a resumed run would read it
    model.cpu()
    recipes = plan.recipes({k: [cache.checksums[str(f)] for f in v] for k, v in plan.files.items()},
                           {k: len(v) for k, v in data.items()})
    meta = version_meta(version, model, copied, cfg, quick, recipes, history, time.perf_counter() - t0, **extra)
    return save_version(version, model, history, meta, data["test"], out, progress=progress)


def ranking_task(ranking: Any, spec: Any, train_files: list[Path], train_rows: int, cfg: TrainConfig,
                 model: nn.Module, *, quick: bool, progress: bool) -> tuple[Task, nn.Module, dict[str, Any]]:
    """The task and the wrapped network of a run with a :class:`knights.learn.siblings.Ranking` (a version's
    ``RANKING``, an ablation variant's ``ranking``): parents from the training files in the ranking's folders (all
    of them in a quick run on the committed sample, to show the mechanics), as many a batch as make one pass over
    them an epoch of ``train_rows``."""
    from knights.learn import siblings

    if not isinstance(model, SparseNet):
        raise TypeError(f"RANKING needs a sparse network (knights.learn.nnue.SparseNet), not {type(model).__name__}")
    if quick:
        files = train_files
    else:
        wanted = {registry.repo_path(f).resolve() for f in ranking.folders}
        files = [f for f in train_files if f.parent.resolve() in wanted]
        if not files:
            raise ValueError(f"the ranking's folders {list(ranking.folders)} are not among the run's training folders")
    family = siblings.gather(files, ranking.parents, progress=progress)
    steps = max(1, -(-train_rows // cfg.batch_size))
    per_batch = max(1, -(-len(family) // steps))
    task = siblings.SiblingTask(spec, siblings=family, weight=ranking.weight, per_batch=per_batch,
                                seed=cfg.seed)
    folders = sorted({registry.repo_relative(f.parent) for f in files})
    info = {"weight": ranking.weight, "folders": folders, "parents": len(family),
            "children": int(family.first[-1]), "parents_per_batch": per_batch}
    scale = siblings.fitted_scale(model, family, seed=cfg.seed)
    info["starting_scale"] = round(scale, 3)
    return task, siblings.RankedNet(model, scale=scale), {"ranking": info}


def version_meta(version: registry.Version, model: nn.Module, copied: list[str], cfg: TrainConfig, quick: bool,
                 recipes: dict[str, Any], history: History, seconds: float, **extra: Any) -> dict[str, Any]:
    """What a trained version's ``vN.json`` records (``extra``: more keys, e.g. the processes)."""
    lib = version.library
    return {
        "version": version.name,
        "description": (lib.__doc__ or "").strip().splitlines()[0],
        "architecture": repr(model),
        "inputs": lib.INPUTS.describe(),
        "parameters": parameter_count(model),
        "parent": getattr(lib, "PARENT", None),
        "warm_started_layers": copied,
        "train_config": cfg.__dict__,
        "train_on": getattr(lib, "TRAIN_ON", "all"),
        "loss": loss_names(version),
        "quick": quick,
        **extra,
        "data": recipes,
        "history": history.as_dict(),
        "train_seconds": seconds,
        "environment": environment(),
    }


def save_version(version: registry.Version, model: nn.Module, history: History, meta: dict[str, Any],
                 test_rows: Encoded, out: Path, *, progress: bool = True) -> Result:
    """Measure the model on the test rows, then write ``vN.pt`` and ``vN.json`` (with its checksum)."""
    meta["test"] = held_out_metrics(version, model, test_rows)
    weights = version.weights(out)
    # move networks are large (10-15M parameters): they ship with 4-bit matrices
    quantize = version.family == "SL"
    meta["stored"] = "4-bit matrices (knights.learn.modelfile.compact_state)" if quantize else "float32"
    meta["sha256"] = modelfile.save_model(model, weights, meta, quantize=quantize)   # what loading checks
    if quantize:  # measure what is shipped, and keep the full-precision figures beside it
        shipped = modelfile.load_into(version.library.build_model(), weights)
        meta["test_full_precision"], meta["test"] = meta["test"], held_out_metrics(version, shipped, test_rows)
        modelfile.write_meta(weights.with_suffix(".json"), meta)
    if progress:
        print(f"{version.name}: wrote {weights} ({meta['parameters']:,} parameters); test {meta['test']}")
    return Result(version.name, model, history, meta, weights)
