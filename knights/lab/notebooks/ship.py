"""The recipe that produced the shipped models: ``knights ship-models``.

Each version's notebook runs (papermill) on the full dataset with its recipe, which the
versions table holds once (``source_EL/versions.toml``: the epochs, and for the move
networks the batch size and letters; :func:`knights.learn.registry.recipe`). The notebook
reads the same recipe when run in full, so ``make notebook V=EL/v1`` trains what
ship-models trains. The recipes use fewer epochs than the original's (the library's
``TRAIN``) where those do not fit a few hours on a 2-core CPU. Every run is logged, with
the epochs it trained and how long it took, in ``report/results/training_runs.json``:
the report reads the shipped epochs there (never from this file).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from knights.common import write_json
from knights.learn import registry

RUNS: dict[str, dict[str, int | str]] = {row: registry.recipe(row) for row in registry.table()}
"""Each version's recipe, as its versions table records it (source_EL/versions.toml, ``recipe``: epochs, and batch
size and letters where they are not the library's): the one place it is written, read here, by the notebook's full
run and by ``make version``."""
LOG = registry.REPO_ROOT / "report" / "results" / "training_runs.json"


def ship(names: list[str] | None = None, *, log: Path = LOG) -> list[dict[str, object]]:
    """Run the notebooks of ``names`` (default: all of :data:`RUNS`, in order)."""
    from knights.lab.notebooks.build import run_notebook

    entries = json.loads(log.read_text()) if log.exists() else {}
    done = []
    for name in names or list(RUNS):
        params = RUNS[name]
        version = registry.get(name)
        t0 = time.perf_counter()
        # the notebook's full run reads the recipe itself (registry.recipe): nothing to pass
        run_notebook(version.notebook, registry.REPO_ROOT / "runs" / "notebooks" / f"{name.replace('/', '_')}.ipynb",
                     {})
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
