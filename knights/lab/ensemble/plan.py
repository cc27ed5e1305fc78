"""What the democracy trains on: the plan (data letters, subset sizes, budgets) and the data it names.

A :class:`Plan` says which chunks train the learners, which fit the blend's weights
(validation) and which compare everything (test), how many rows each learner gets
and what the shipped blend may cost; :func:`make_plan` gives the full-data plan or,
``quick``, the committed sample's. :func:`load_data` reads and encodes the chunks
into a :class:`Data`, refusing any overlap between the three, and leaves out the
validation chunks that a network member trained on
(:func:`network_training_chunks`), so the weights are fitted on positions no member
has seen.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from knights.data.cache import ChunkCache, load_encoded
from knights.data.chunks import Encoded, select_chunks
from knights.learn import learners as L
from knights.learn import registry
from knights.learn.experiment import FULL_DATA, SAMPLE_DATA, TEST_LETTERS


# ---------------------------------------------------------------------------- the plan
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
    """The full-data :class:`Plan` or, ``quick``, :func:`quick_plan`; ``overrides`` that
    are not ``None`` replace its fields (``make_plan(True, knn_rows=1_000)``)."""
    return quick_plan(**overrides) if quick else Plan().replace(**overrides)


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
