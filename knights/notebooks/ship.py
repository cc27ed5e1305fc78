"""The recipe that produced the shipped models: ``knights ship-models``.

Each version's notebook runs (papermill) on the full dataset with the settings
below. The notebooks' own defaults keep the original's epoch counts; the runs that
produced the shipped weights use fewer where the original's do not fit a few hours
on a 2-core CPU. Every run is logged, with the epochs it trained and how long it
took, in ``report/results/training_runs.json``: the report reads the shipped epochs
there (never from this file).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from knights.common import write_json
from knights.learn import registry

RUNS: dict[str, dict[str, int | str]] = {
    # EL: fewer epochs than the original's (each library's TRAIN); these fit ~30 minutes on 2 CPU cores
    "EL/v1": {"epochs": 20},
    "EL/v2": {"epochs": 20},
    "EL/v3": {"epochs": 8},
    "EL/v4": {"epochs": 8},
    "EL/v5": {"epochs": 8},
    "EL/v6": {"epochs": 6},
    "EL/v7": {"epochs": 5},
    "EL/v8": {"epochs": 10},
    "EL/v9": {"epochs": 8},   # ours: V8 + side to move and check, 3x3 convolutions
    "EL/v10": {"epochs": 20},  # ours: V9 + attack maps and capture gains, cosine schedule, mirrored batches
    "EL/v11": {"epochs": 9},   # ours: residual CNN with global pooling (~95 min on one core)
    "EL/v12": {"epochs": 3},   # ours: convolution + transformer, win-probability buckets (~50 min on one core)
    "EL/v13": {"epochs": 30},  # ours: NNUE-style sparse network, quiet positions, win probability (~8 min on 2 cores)
    "EL/v14": {"epochs": 8},   # ours: V10's network in win-probability space (~40 min on one core)
    "EL/v15": {"epochs": 30},  # ours: EL/v13 on data/full and data/more (needs make more-data; ~26 min, 2 cores)
    "EL/v16": {"epochs": 30},  # ours: EL/v15 on data/more grown to 2M (make more-data MORE_POSITIONS=2000000)
    "EL/v17": {"epochs": 30},  # ours: EL/v16 with the files mirrored on rows that cannot castle (~4 min, 2 cores)
    "EL/v18": {"epochs": 30},  # ours: EL/v17, 256 wide, on data/more grown to 3M (~10 min, 2 cores)
    "EL/v19": {"epochs": 30},  # ours: EL/v18 on data/more grown to 4.5M (~15 min, 2 cores)
    "EL/v20": {"epochs": 30},  # ours: EL/v19 with data/endings (make endings-data; ~18 min, 2 cores)
    "EL/v21": {"epochs": 30},  # ours: EL/v20 with data/shallow (make shallow-data; ~20 min, 2 cores)
    "EL/v22": {"epochs": 30},  # ours: EL/v21 with the style sets and a batch of 4,096 (~25 min, 2 cores)
    "EL/v23": {"epochs": 30},  # ours: EL/v22 with data/sound (make style-data SET=sound STYLE_POSITIONS=300000)
    "EL/v24": {"epochs": 30},  # ours: EL/v23 with data/sound grown to 700,000 played (~25 min, 2 cores)
    "EL/v25": {"epochs": 4},   # ours: EL/v24's weights on data/sound2 (make style-data SET=sound2; ~5 min, 2 cores)
    "EL/v26": {"epochs": 2},   # ours: EL/v25 + the sibling ranking loss on data/sound2's games (~5 min, 2 cores)
    # SL: 4096-wide outputs are slow on a CPU: one epoch over nine chunks (~35k positions,
    # the last chunk of each letter a-i), validated on nine others, tested on all of j
    **{f"SL/v{n}": {"epochs": 1, "batch_size": 64, "train_letters": "every 26th except j",
                    "val_letters": "every 25th except j"} for n in (1, 2, 3, 4)},
}
LOG = registry.REPO_ROOT / "report" / "results" / "training_runs.json"


def ship(names: list[str] | None = None, *, log: Path = LOG) -> list[dict[str, object]]:
    """Run the notebooks of ``names`` (default: all of :data:`RUNS`, in order)."""
    from knights.notebooks.build import run_notebook

    entries = json.loads(log.read_text()) if log.exists() else {}
    done = []
    for name in names or list(RUNS):
        params = RUNS[name]
        version = registry.get(name)
        t0 = time.perf_counter()
        run_notebook(version.notebook, registry.REPO_ROOT / "runs" / "notebooks" / f"{name.replace('/', '_')}.ipynb",
                     params)
        meta = json.loads(version.meta_path().read_text())
        entry: dict[str, object] = {
            "version": name, "parameters": params, "seconds": round(time.perf_counter() - t0, 1),
            "epochs": len(meta["history"]["train_loss"]), "train_rows": meta["data"]["train"]["rows"],
            "rows_per_second": meta["history"]["rows_per_second"], "device": meta["history"]["device"],
            "test": meta["test"]}
        entries[name] = entry
        write_json(log, entries)
        print(f"{name}: {entry['seconds']:.0f} s, test {entry['test']}")
        done.append(entry)
    return done
