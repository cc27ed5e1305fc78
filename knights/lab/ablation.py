"""What each change of EL/v13's recipe bought: ``knights ablation``.

EL/v13 changed three things at once against the dense networks: what it learns (the
win probability, not pawns), which rows it learns from (quiet positions only) and, as
the grown data arrives, how much. Each variant below changes one of them against the
shipped recipe and is trained by the one loop (:func:`knights.learn.training.fit`) with
V13's network and settings, on the data the recipe names; every variant is then measured
on the test letters ``j`` and on each independent set (``data/independent/``) with the
headline figures of ``knights results`` (:func:`knights.lab.results.tables.headline_metrics`):
the MAE on quiet positions within a pawn of level, the win-probability error, and the MAE.

    knights ablation                       # every variant; resumes: a finished variant is reused
    knights ablation --only quiet_wp       # one of them

A variant that is exactly a shipped version's recipe names it (``quiet_wp_more`` is
EL/v15): its shipped weights are measured instead of training the same thing twice.
Each other variant's weights go to ``runs/ablation/<name>.pt`` (git ignores ``runs/``); the table
goes to ``report/results/ablation.json``, which the report reads. On 2 CPU cores a variant
takes about 3-8 minutes; on one GPU well under one.
"""

from __future__ import annotations

import datetime as _dt
import json
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from knights.common import write_json
from knights.data.cache import ChunkCache, load_encoded
from knights.data.chunks import Encoded, game_results, read_chunk, select_chunks
from knights.data.grow import grow_command
from knights.features.attacks import quiet
from knights.features.sparse import SparseSpec
from knights.lab.results.tables import RESULTS_DIR, headline_metrics
from knights.learn import modelfile, registry
from knights.learn.experiment import FULL_DATA, TEST_LETTERS, predict, ranking_task, warm_start
from knights.learn.metrics import regression_metrics
from knights.learn.nnue import BucketedSparseNet, SparseNet
from knights.learn.siblings import Ranking
from knights.learn.targets import with_result
from knights.learn.training import EvalTask, Task, WinProbTask, choose_device, fit

BASE = "EL/v13"
OUT_DIR = registry.REPO_ROOT / "runs" / "ablation"
ABLATION_JSON = RESULTS_DIR / "ablation.json"
INDEPENDENT_DIR = registry.REPO_ROOT / "data" / "independent"
MORE_DATA = "data/more"
ENDINGS_DATA = "data/endings"
SHALLOW_DATA = "data/shallow"
LETTERS: dict[str, str] | None = None
"""Train and validation letters; None: EL/v13's own (``DATA``)."""


@dataclass(frozen=True)
class Variant:
    """One recipe: the loss's space, the rows, and the share of the training files."""

    name: str
    target: str = "win_probability"   # or "pawns" (L1)
    rows: str = "quiet"               # or "all"
    share: int = 1                    # every share-th training file (1: all of them)
    more: bool = False                # also data/more's training and validation letters
    endings: bool = False             # also data/endings' training and validation letters
    shallow: bool = False             # also data/shallow's training and validation letters
    also: tuple[str, ...] = ()        # further grown folders (knights.data.grow.GROWN), e.g. ("data/cold",)
    flip_files: bool = False          # files reversed on a random half of the rows without castling rights
    settings: tuple[tuple[str, Any], ...] = ()   # other TrainConfig changes, (name, value) pairs
    hidden: int = 0                   # the accumulator's width (0: EL/v13's, 128)
    buckets: int = 0                  # heads by men on the board (knights.learn.nnue.BucketedSparseNet; 0: one)
    king_zones: bool = False          # also each piece's feature in the zone of the viewing side's king (sparse.py)
    says: str = ""
    shipped: str = ""                 # the shipped version trained by exactly this recipe: measured, not retrained
    parent: str = ""                  # a shipped version (warm_start) or an earlier row whose weights it starts from
    full_train: bool = True           # data/full's training letters too (False: the parent learned them)
    ranking: float = 0.0              # the sibling ranking loss's weight (knights.learn.siblings; 0: none)
    result_share: float = 0.0         # the game's result's share of each target (knights.learn.targets.with_result)

    def folders(self) -> tuple[str, ...]:
        """The grown data folders this variant trains on beside data/full, in that order."""
        return tuple(f for f, on in ((MORE_DATA, self.more), (ENDINGS_DATA, self.endings),
                                     (SHALLOW_DATA, self.shallow)) if on) + self.also


VARIANTS = (
    Variant("quiet_wp", says="the shipped recipe: quiet rows, win-probability loss, all of data/full"),
    Variant("all_wp", rows="all", says="every row, not only the quiet ones"),
    Variant("all_l1", rows="all", target="pawns", says="every row and L1 in pawns: the dense networks' recipe"),
    Variant("quiet_l1", target="pawns", says="quiet rows, L1 in pawns"),
    Variant("quiet_wp_half", share=2, says="half the training files"),
    Variant("quiet_wp_quarter", share=4, says="a quarter of the training files"),
    Variant("quiet_wp_more", more=True, shipped="EL/v15", says="data/full and data/more grown to 1M positions: EL/v15"),
    Variant("quiet_wp_more_2m", more=True, shipped="EL/v16",
            says="data/full and data/more grown to 2M positions: EL/v16"),
    Variant("quiet_wp_more_2m_flip", more=True, flip_files=True, shipped="EL/v17",
            says="EL/v16's data, files mirrored on half the rows that cannot castle: EL/v17"),
    Variant("quiet_wp_more_2m_flip_wd", more=True, flip_files=True,
            settings=(("optimizer", "adamw"), ("weight_decay", 0.05)),
            says="EL/v17 with decoupled weight decay (AdamW, 0.05)"),
    Variant("quiet_wp_more_2m_flip_256", more=True, flip_files=True, hidden=256,
            says="EL/v17 with an accumulator twice as wide (256)"),
    Variant("quiet_wp_more_3m_flip", more=True, flip_files=True,
            says="EL/v17's recipe on data/more grown to 3M positions"),
    Variant("quiet_wp_more_3m_flip_256", more=True, flip_files=True, hidden=256, shipped="EL/v18",
            says="both: the 256-wide accumulator on data/more grown to 3M positions: EL/v18"),
    Variant("quiet_wp_more_4500k_flip_256", more=True, flip_files=True, hidden=256, shipped="EL/v19",
            says="EL/v18's recipe on data/more grown to 4.5M positions (over 5M with data/full): EL/v19"),
    Variant("quiet_wp_more_4500k_endings_flip_256", more=True, endings=True, flip_files=True, hidden=256,
            shipped="EL/v20", says="EL/v19's recipe with data/endings added (endings from a thinned start): EL/v20"),
    Variant("quiet_wp_more_4500k_endings_shallow_flip_256", more=True, endings=True, shallow=True, flip_files=True,
            hidden=256, shipped="EL/v21",
            says="EL/v20's recipe with data/shallow added (Stockfish playing an early iteration's move): EL/v21"),
    # What kind of game do the networks lack? data/full alone and with 300,000 played positions of one style
    # each (make style-data), so the styles are compared with each other and with more of data/full's own.
    # ("300,000 positions": played; those already in the training data are not kept, and the variant trains
    # on the training letters' quiet rows, as every variant does: the table gives its training rows.)
    Variant("quiet_wp_flip_256", flip_files=True, hidden=256,
            says="EL/v21's network and flips on data/full alone: the base of the style experiment"),
    Variant("quiet_wp_again_flip_256", flip_files=True, hidden=256, also=("data/again",),
            says="with 300,000 more positions of data/full's own style (the control)"),
    Variant("quiet_wp_chaos_flip_256", flip_files=True, hidden=256, also=("data/chaos",),
            says="with 300,000 positions of games where both sides often play a random move"),
    Variant("quiet_wp_sound_flip_256", flip_files=True, hidden=256, also=("data/sound300k",),
            says="with the positions of 300,000 played from sound openings (no random plies; 203,160 new; "
                 "make style-data SET=sound300k)"),
    Variant("quiet_wp_cold_flip_256", flip_files=True, hidden=256, also=("data/cold",),
            says="with 300,000 positions of games where a fresh depth 1-4 search plays"),
    Variant("quiet_wp_flip_256_buckets", flip_files=True, hidden=256, buckets=8,
            says="the experiment's base with eight heads by men on the board (Stockfish's layer stacks)"),
    Variant("quiet_wp_flip_256_seed1", flip_files=True, hidden=256, settings=(("seed", 1),),
            says="the experiment's base from another seed: how far a seed alone moves these figures"),
    Variant("quiet_wp_flip_256_buckets_seed1", flip_files=True, hidden=256, buckets=8, settings=(("seed", 1),),
            says="the eight heads from another seed"),
    # Capacity and features: a wider accumulator, and features that know where the viewing side's king stands.
    Variant("quiet_wp_flip_512", flip_files=True, hidden=512,
            says="the experiment's base with an accumulator twice as wide (512)"),
    Variant("quiet_wp_flip_256_zones", flip_files=True, hidden=256, king_zones=True,
            says="the experiment's base with each piece also seen in the zone of the viewing side's king (8 zones)"),
    Variant("quiet_wp_flip_256_zones_seed1", flip_files=True, hidden=256, king_zones=True, settings=(("seed", 1),),
            says="the king's zones from another seed"),
    Variant("quiet_wp_flip_512_seed1", flip_files=True, hidden=512, settings=(("seed", 1),),
            says="the 512-wide accumulator from another seed"),
    Variant("quiet_wp_styles_flip_256", flip_files=True, hidden=256, also=("data/again", "data/chaos", "data/cold"),
            says="the experiment's base with all three style sets: does a gain grow with the data?"),
    Variant("quiet_wp_styles_flip_256_zones", flip_files=True, hidden=256, king_zones=True,
            also=("data/again", "data/chaos", "data/cold"), says="the king's zones with all three style sets"),
    Variant("quiet_wp_styles_flip_256_seed1", flip_files=True, hidden=256,
            also=("data/again", "data/chaos", "data/cold"), settings=(("seed", 1),),
            says="the base with all three style sets from another seed"),
    Variant("quiet_wp_styles_flip_256_zones_seed1", flip_files=True, hidden=256, king_zones=True,
            also=("data/again", "data/chaos", "data/cold"), settings=(("seed", 1),),
            says="the king's zones with all three style sets from another seed"),
    # Optimisation: at a batch of 16,384 an epoch of data/full is 33 steps and a run 1,000; is the
    # network short of steps rather than of data?
    Variant("quiet_wp_flip_256_b4096", flip_files=True, hidden=256, settings=(("batch_size", 4096),),
            says="the experiment's base with a batch of 4,096: four times the optimiser's steps"),
    Variant("quiet_wp_flip_256_e60", flip_files=True, hidden=256, settings=(("epochs", 60),),
            says="the experiment's base trained for 60 epochs, not 30 (the cosine schedule stretched)"),
    Variant("quiet_wp_flip_256_b4096_seed1", flip_files=True, hidden=256, settings=(("batch_size", 4096), ("seed", 1)),
            says="the batch of 4,096 from another seed"),
    Variant("quiet_wp_flip_256_b1024", flip_files=True, hidden=256, settings=(("batch_size", 1024),),
            says="the experiment's base with a batch of 1,024: sixteen times the steps"),
    Variant("quiet_wp_styles_flip_256_b4096", flip_files=True, hidden=256,
            also=("data/again", "data/chaos", "data/cold"), settings=(("batch_size", 4096),),
            says="the batch of 4,096 with all three style sets"),
    Variant("quiet_wp_styles_flip_256_b4096_seed1", flip_files=True, hidden=256,
            also=("data/again", "data/chaos", "data/cold"), settings=(("batch_size", 4096), ("seed", 1)),
            says="the batch of 4,096 with all three style sets from another seed"),
    Variant("quiet_wp_more_4500k_endings_shallow_styles_flip_256_b4096", more=True, endings=True, shallow=True,
            flip_files=True, hidden=256, also=("data/again", "data/chaos", "data/cold"),
            settings=(("batch_size", 4096),), shipped="EL/v22",
            says="EL/v21's recipe with the three style sets and a batch of 4,096: EL/v22"),
    Variant("quiet_wp_more_4500k_endings_shallow_styles_sound_flip_256_b4096", more=True, endings=True,
            shallow=True, flip_files=True, hidden=256, also=("data/again", "data/chaos", "data/cold", "data/sound300k"),
            settings=(("batch_size", 4096),), shipped="EL/v23",
            says="EL/v22's recipe with the sound games: EL/v23"),
    Variant("quiet_wp_more_4500k_endings_shallow_styles_sound700k_flip_256_b4096", more=True, endings=True,
            shallow=True, flip_files=True, hidden=256, also=("data/again", "data/chaos", "data/cold", "data/sound"),
            settings=(("batch_size", 4096),), shipped="EL/v24",
            says="EL/v23's recipe with the sound games grown to 700,000 played: EL/v24"),
    Variant("v24_then_sound2", flip_files=True, hidden=256, also=("data/sound2",), parent="EL/v24", full_train=False,
            settings=(("batch_size", 4096), ("lr", 0.0002), ("epochs", 4)), shipped="EL/v25",
            says="EL/v24's weights trained on: 4 epochs of data/sound2 alone at a tenth of the rate: EL/v25"),
    Variant("v25_then_sound2_again", flip_files=True, hidden=256, also=("data/sound2",), parent="EL/v25",
            full_train=False, settings=(("batch_size", 4096), ("lr", 0.0002), ("epochs", 2), ("keep_best", False)),
            says="the control for the next row: EL/v25's weights, 2 more epochs of data/sound2, no ranking loss"),
    Variant("v25_then_sound2_ranked", flip_files=True, hidden=256, also=("data/sound2",), parent="EL/v25",
            full_train=False, settings=(("batch_size", 4096), ("lr", 0.0002), ("epochs", 2), ("keep_best", False)),
            ranking=0.01, shipped="EL/v26",
            says="the same with the sibling ranking loss at 0.01 (knights.learn.siblings): EL/v26"),
    Variant("v25_then_sound3", flip_files=True, hidden=256, also=("data/sound3",), parent="EL/v25", full_train=False,
            settings=(("batch_size", 4096), ("lr", 0.0002), ("epochs", 4)),
            says="EL/v25's recipe once more: its weights trained on 4 epochs of data/sound3 alone (a third seed of the "
                 "sound games, none of data/sound2's positions)"),
    Variant("v24_then_sound2_sound3", flip_files=True, hidden=256, also=("data/sound2", "data/sound3"),
            parent="EL/v24", full_train=False, settings=(("batch_size", 4096), ("lr", 0.0002), ("epochs", 4)),
            says="the data curve: EL/v25's recipe from EL/v24 on data/sound2 and data/sound3 together (more rows)"),
    Variant("v24_wide512_sound2_sound3", flip_files=True, hidden=512, also=("data/sound2", "data/sound3"),
            parent="EL/v24", full_train=False, settings=(("batch_size", 4096), ("lr", 0.0002), ("epochs", 4)),
            says="the same rows and recipe, the accumulator widened to 512 (EL/v24's units first, the new ones "
                 "starting at no weight, knights.learn.nnue.widened): whether the flattened curve is the width's"),
    Variant("scratch_more_sound2_sound3", more=True, flip_files=True, hidden=256,
            also=("data/sound2", "data/sound3"), settings=(("batch_size", 4096),),
            says="from no weights, EL/v24's settings on the grown sets one machine restores from the store (data/more, "
                 "data/sound2, data/sound3; not EL/v24's endings, shallow, style and first sound games): whether the "
                 "sound games from the start do what EL/v25 got by continuing"),
    Variant("v25_then_every_set", more=True, endings=True, shallow=True, flip_files=True, hidden=256,
            also=("data/chaos", "data/sound", "data/sound2", "data/sound3"), parent="EL/v25",
            settings=(("batch_size", 4096), ("lr", 0.0002), ("epochs", 2)),
            says="EL/v25's weights, 2 epochs at its rate over data/full and every grown set the store restores (all "
                 "but data/again and data/cold): whether all the store teaches what data/sound2 alone did not"),
    Variant("v25_then_store", more=True, endings=True, shallow=True, flip_files=True, hidden=256,
            also=("data/again", "data/chaos", "data/cold", "data/sound", "data/sound2", "data/sound3"), parent="EL/v25",
            settings=(("batch_size", 4096), ("lr", 0.0002), ("epochs", 2)),
            says="the same over the whole store (data/again and data/cold too, now that it holds them)"),
    Variant("v25_then_store_then_sound", flip_files=True, hidden=256, also=("data/sound2", "data/sound3"),
            parent="v25_then_store", full_train=False, settings=(("batch_size", 4096), ("lr", 0.0002), ("epochs", 2)),
            says="that row's weights, 2 more epochs of the sound games alone (data/sound2 and data/sound3): the "
                 "store's breadth, then the games EL/v25 gained from"),
    # The games' results: the sound games are Stockfish against itself at depth 8, so who won says something the
    # depth-8 evaluation may not; Stockfish's trainer blends the two. EL/v25's own recipe, with the blend.
    Variant("v24_then_sound2_result", flip_files=True, hidden=256, also=("data/sound2",), parent="EL/v24",
            full_train=False, settings=(("batch_size", 4096), ("lr", 0.0002), ("epochs", 4)), result_share=0.3,
            says="EL/v25's recipe (EL/v24's weights, 4 epochs of data/sound2 at a tenth of the rate) with each "
                 "target's win probability 0.3 the game's result and 0.7 the evaluation"),
)


def _recipe(variant: Variant) -> dict[str, Any]:
    """The variant as its JSON record holds it (tuples read back as lists)."""
    recipe: dict[str, Any] = json.loads(json.dumps(asdict(variant)))
    return recipe


def _rows(data: Encoded, variant: Variant) -> Encoded:
    return data if variant.rows == "all" else data.take(np.flatnonzero(quiet(data.squares, data.white, data.check)))


def _spec(variant: Variant) -> SparseSpec:
    """EL/v13's inputs, with the king's zones if the variant asks for them."""
    spec: SparseSpec = registry.get(BASE).library.INPUTS
    return replace(spec, king_zones=True) if variant.king_zones else spec


def _task(variant: Variant) -> Task:
    spec = _spec(variant)
    return WinProbTask(spec) if variant.target == "win_probability" else EvalTask(spec)


def _network(variant: Variant) -> torch.nn.Module:
    """EL/v13's network, or the same with the variant's accumulator width, heads by men or the
    king's zones (EL/v13's head widths)."""
    base = registry.get(BASE).build()
    if variant.hidden or variant.buckets or variant.king_zones:
        assert isinstance(base, SparseNet), f"{BASE} builds {type(base).__name__}, not a SparseNet"
        hidden = variant.hidden or base.hidden
        n_features = _spec(variant).n_features
        if variant.buckets:
            return BucketedSparseNet(hidden=hidden, head=base.head_widths, buckets=variant.buckets,
                                     n_features=n_features)
        return SparseNet(hidden=hidden, head=base.head_widths, n_features=n_features)
    return base


def train_variant(variant: Variant, cache: ChunkCache, device: str | None = None, progress: bool = True,
                  epochs: int | None = None) -> tuple[torch.nn.Module, dict[str, Any]]:
    """Train one variant with V13's network and settings (``epochs``: another count, for a
    quick look); returns the model and its record."""
    lib = registry.get(BASE).library
    letters = LETTERS or lib.DATA
    train_files = select_chunks(FULL_DATA, letters["train"])[::variant.share] if variant.full_train else []
    val_files = select_chunks(FULL_DATA, letters["val"])
    for folder in variant.folders():
        train_files += select_chunks(folder, letters["train"])
        val_files += select_chunks(folder, letters["val"])
    train = _rows(_targets(load_encoded(train_files, cache, progress=progress), train_files, variant), variant)
    val = _rows(_targets(load_encoded(val_files, cache, progress=progress), val_files, variant), variant)
    cfg = lib.TRAIN.replace(epochs=epochs) if epochs else lib.TRAIN
    if variant.flip_files:
        cfg = cfg.replace(flip_files=True)
    if variant.settings:
        cfg = cfg.replace(**dict(variant.settings))
    torch.manual_seed(cfg.seed)                      # the network's start and the batches' order
    model = _network(variant)
    _start_from_parent(model, variant)
    task, trained = _task(variant), model
    if variant.ranking:
        if variant.target != "win_probability":
            raise ValueError(f"{variant.name}: the ranking loss is added to the win-probability loss, not to "
                             f"{variant.target!r}")
        task, trained, _ = ranking_task(Ranking(weight=variant.ranking), _spec(variant), train_files, len(train), cfg,
                                        model, quick=False, progress=progress)
    dev = choose_device(device)
    t0 = time.perf_counter()
    history = fit(trained, task, train, val, cfg, device=dev, progress=progress)
    record = {**asdict(variant), "train_rows": len(train), "val_rows": len(val), "epochs": history.epochs,
              "best_epoch": history.best_epoch, "seconds": round(time.perf_counter() - t0, 1), "device": str(dev),
              "rows_per_second": round(float(np.median(history.rows_per_second))),
              **_kept_losses(history.as_dict())}
    return model.cpu().eval(), record


def _targets(data: Encoded, files: list[Path], variant: Variant) -> Encoded:
    """``data`` (the rows of ``files``, in order) with each target blended with its game's result by the variant's
    share (:func:`~knights.learn.targets.with_result`); as they are when the share is 0."""
    if not variant.result_share:
        return data
    results = np.concatenate([game_results(f) for f in files]) if files else np.zeros(0, np.float32)
    if len(results) != len(data):
        raise ValueError(f"{variant.name}: {len(results)} game results for {len(data)} rows read from "
                         f"{sorted({str(f.parent) for f in files})}: a chunk with malformed rows, which the results "
                         f"cannot be lined up with")
    return replace(data, target=with_result(data.target, results, variant.result_share))


def _start_from_parent(model: torch.nn.Module, variant: Variant) -> None:
    """Load the weights ``variant`` continues from: an earlier row's (``runs/ablation/<row>.pt``, trained first by
    ``knights ablation --only <row>``) or a shipped version's (:func:`warm_start`)."""
    if not variant.parent:
        return
    if variant.parent in {v.name for v in VARIANTS}:
        weights = OUT_DIR / f"{variant.parent}.pt"
        if not weights.is_file():
            raise FileNotFoundError(f"{variant.name} continues the row {variant.parent}, whose weights {weights} are "
                                    f"not here: knights ablation --only {variant.parent}")
        modelfile.load_into(model, weights)
    elif len(warm_start(model, variant.parent, registry.REPO_ROOT / "models_EL")) == 0:
        raise FileNotFoundError(f"{variant.name} starts from {variant.parent}, whose weights are not here "
                                f"or do not fit its network")


def shipped_record(variant: Variant) -> tuple[torch.nn.Module, dict[str, Any]] | None:
    """The shipped version that ``variant`` names, and a training record from its metadata
    (the rows are the run's own count); None when it names none or is not trained here."""
    if not variant.shipped:
        return None
    version = registry.get(variant.shipped)
    if not version.is_trained():
        return None
    model, meta = version.load()
    history = meta.get("history", {})
    data = meta.get("data", {})
    record = {**asdict(variant), "train_rows": data.get("train", {}).get("rows"),
              "val_rows": data.get("val", {}).get("rows"), "epochs": len(history.get("train_loss", [])),
              "best_epoch": history.get("best_epoch"), "seconds": round(float(meta.get("train_seconds", 0.0)), 1),
              "device": history.get("device"),
              "rows_per_second": round(float(np.median(history["rows_per_second"])))
              if history.get("rows_per_second") else None,
              **_kept_losses(history),
              "from": f"{registry.repo_relative(version.meta_path())} (the shipped {version.name})"}
    return model.eval(), record


def _kept_losses(history: dict[str, Any]) -> dict[str, float]:
    """The training and validation loss of a run's kept epoch, from its history (a :class:`History`'s
    ``as_dict``, or a shipped version's metadata)."""
    kept = (history.get("best_epoch") or len(history.get("train_loss", []))) - 1
    if kept < 0 or kept >= len(history.get("val_loss", [])):
        return {}
    return {"train_loss": history["train_loss"][kept], "val_loss": history["val_loss"][kept]}


def test_sets(cache: ChunkCache) -> dict[str, Encoded]:
    """The test letters and every independent set, by name."""
    sets = {"j": load_encoded(select_chunks(FULL_DATA, TEST_LETTERS), cache, progress=False)}
    for path in sorted(INDEPENDENT_DIR.glob("*.csv")):
        sets[path.stem] = read_chunk(path)[0]
    return sets


def measure(model: torch.nn.Module, sets: dict[str, Encoded],
            spec: SparseSpec | None = None) -> dict[str, dict[str, Any]]:
    """The headline figures and the MAE of ``model`` (whose inputs are ``spec``, EL/v13's if None) on every set."""
    spec = spec or _spec(Variant("base"))
    out = {}
    for name, data in sets.items():
        pred = predict(model, spec, data)
        calm = quiet(data.squares, data.white, data.check)
        out[name] = {**headline_metrics(pred, data.target, calm), "mae": regression_metrics(pred, data.target)["mae"]}
    return out


def run(only: list[str] | None = None, *, device: str | None = None, out: Path = ABLATION_JSON,
        progress: bool = True, epochs: int | None = None) -> dict[str, Any]:
    """Train (or reuse) and measure every variant (``only``: these names), then write ``out``."""
    known = {v.name: v for v in VARIANTS}
    unknown = sorted(set(only or ()) - set(known))
    if unknown:
        raise ValueError(f"unknown variants {unknown}: choose from {sorted(known)}")
    cache = ChunkCache(registry.repo_path(FULL_DATA).parent / "cache")
    sets = test_sets(cache)
    doc: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {}
    table: dict[str, Any] = doc.get("variants", {})
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    for variant in VARIANTS:
        if only and variant.name not in only:
            continue
        missing = [f for f in variant.folders() if not registry.repo_path(f).is_dir()]
        if missing:
            print(f"{variant.name}: skipped, {missing[0]} is not here ({grow_command(missing[0])})")
            continue
        weights = OUT_DIR / f"{variant.name}.pt"
        lib = registry.get(BASE)
        done = table.get(variant.name, {})
        shipped = None if epochs else shipped_record(variant)
        if shipped is not None:
            model, record = shipped
            record["epochs_asked"] = lib.library.TRAIN.epochs
        elif (weights.exists() and {**_recipe(Variant(variant.name)), **done.get("recipe", {})} == _recipe(variant)
                and done.get("training", {}).get("epochs_asked") == (epochs or lib.library.TRAIN.epochs)):
            model = modelfile.load_into(_network(variant), weights).eval()
            record = table[variant.name]["training"]
        else:
            model, record = train_variant(variant, cache, device, progress, epochs)
            record["epochs_asked"] = epochs or lib.library.TRAIN.epochs
            modelfile.save_model(model, weights, {"variant": variant.name})
        table[variant.name] = {"recipe": _recipe(variant), "training": record,
                               "sets": measure(model, sets, _spec(variant))}
        if progress:
            figures = table[variant.name]["sets"]
            print(f"{variant.name}: " + "; ".join(
                f"{s} quiet-level {f['quiet_level_mae']:.3f}, wp {f['win_probability_error']:.4f}"
                for s, f in figures.items()))
        write_json(out, {"base": BASE, "variants": table, "sets": list(sets),
                         "generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                         "command": "knights ablation"})
    return table
