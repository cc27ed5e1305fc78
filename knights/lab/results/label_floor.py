"""How far the training labels are from the test labels: ``knights label-floor``.

Every network learns from Stockfish at the training data's depth (``data/full`` and
``data/more``: depth 8), and is scored against the independent sets' labels, Stockfish at a
deeper search (depth 12). So even a network that learned its labels perfectly would err on
the independent sets by as much as depth 8 errs against depth 12 on the same rows. This
module measures that floor: Stockfish at the labels' depth (and any other depth asked for)
on every independent set, scored by the same headline figures as every evaluator
(:func:`knights.lab.results.tables.headline_metrics`: MAE on quiet positions within a pawn of
level, the error in win probability) beside the overall MAE, and how large the labels are for a
value the shallower search gives (:func:`knights.lab.results.tables.calibration_slope`: above 1, the
deeper labels read larger advantages). Stockfish runs as the sets
were labelled (one thread, hash cleared before every position:
:func:`knights.lab.results.tables.stockfish_values`) on each row's own FEN, move counters
included (Stockfish's evaluation shrinks as the fifty-move counter grows), so at the sets'
own depth it gives back their labels.

The results file (default ``report/results/label_floor.json``)::

    {
      "generated": "YYYY-MM-DDTHH:MM:SS+00:00",
      "seconds": float,                  # wall seconds of the whole run
      "training_label_depth": int,       # the depth data/full was labelled at (its dataset report)
      "max_rows": int | null,            # only each set's first rows (--max-rows), null: all of them
      "sets": {
        "games": {
          "label_depth": int,            # the set's own labels (its JSON sidecar)
          "rows": int,
          "depths": {"8": {"quiet_level_mae", "quiet_level_rows", "win_probability_error",
                           "quiet_win_probability_error", "slope", "slope_rows", "mae", "seconds"}}
        }, ...
      }
    }
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import chess
import numpy as np

from knights.common import module_main, write_json
from knights.data.chunks import Encoded
from knights.lab.results.independent import INDEPENDENT_DIR, load_set, set_files
from knights.lab.results.tables import RESULTS_DIR, calibration_slope, headline_metrics, quiet_rows, stockfish_values
from knights.learn import registry
from knights.learn.training import check_at_least, check_folder, check_output

LABEL_FLOOR_JSON = RESULTS_DIR / "label_floor.json"
DATASET_JSON = RESULTS_DIR / "dataset.json"


def training_label_depth(dataset_json: Path = DATASET_JSON) -> int:
    """The depth ``make data`` labelled ``data/full`` at, from its report."""
    try:
        return int(json.loads(dataset_json.read_text())["recipe"]["depth"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SystemExit(f"knights label-floor: cannot read the training data's label depth from "
                         f"{registry.repo_relative(dataset_json)} ({exc}); name it with --depth") from exc


def set_fens(path: Path) -> list[str]:
    """Every row's FEN (the CSV's ``board`` column), in file order."""
    with path.open(newline="") as f:
        return [row["board"] for row in csv.DictReader(f)]


def measure_set(path: Path, depths: Sequence[int], max_rows: int | None = None,
                progress: bool = True, data: Encoded | None = None) -> dict[str, Any]:
    """Stockfish at each of ``depths`` on one independent set (or ``data``, read from ``path``
    already) against its labels."""
    data, report = (data, "read by its owner") if data is not None else load_set(path)
    fens = set_fens(path)
    if len(fens) != len(data):
        raise SystemExit(f"knights label-floor: {registry.repo_relative(path)} has {len(fens)} rows but "
                         f"{len(data)} read as positions ({report}); rebuild it with make independent")
    if max_rows is not None:
        data = data.take(np.arange(min(max_rows, len(data))))
        fens = fens[:len(data)]
    sidecar = path.with_suffix(".json")
    label = (json.loads(sidecar.read_text()).get("label") or {}) if sidecar.exists() else {}
    calm = quiet_rows(data)
    out: dict[str, Any] = {"label_depth": label.get("depth"), "rows": len(data), "depths": {}}
    for depth in depths:
        t0 = time.perf_counter()
        pred = stockfish_values((chess.Board(f) for f in fens), depth, clear_hash=True, total=len(fens),
                                progress=progress)
        row = headline_metrics(pred, data.target, calm)
        row["slope"], row["slope_rows"] = calibration_slope(pred, data.target, calm)
        row["mae"] = float(np.abs(pred - np.asarray(data.target, dtype=np.float64)).mean())
        row["seconds"] = round(time.perf_counter() - t0, 1)
        out["depths"][str(depth)] = row
    return out


def run(depths: Sequence[int] | None = None, *, independent_dir: Path = INDEPENDENT_DIR,
        out: Path = LABEL_FLOOR_JSON, max_rows: int | None = None, progress: bool = True,
        final: bool = False) -> dict[str, Any]:
    """Measure every independent set at ``depths`` (default: the training labels' depth) and write ``out``;
    ``final``: the final test set too (a label depth is chosen on the selection sets, never on it)."""
    started = time.perf_counter()
    train_depth = training_label_depth()
    depths = list(depths or [train_depth])
    files = set_files(independent_dir)
    if not files:
        raise SystemExit(f"knights label-floor: no independent set in {registry.repo_relative(independent_dir)} "
                         "(make independent builds them)")
    sets = {p.stem: measure_set(p, depths, max_rows=max_rows, progress=progress) for p in files}
    if final:
        from knights.evaluate.final import read_final

        rows, sidecar = read_final()
        sets["final"] = measure_set(registry.repo_path(sidecar["path"]), depths, max_rows=max_rows, progress=progress,
                                    data=rows)
        sets["final"]["label_depth"] = sidecar.get("depth") or (sidecar.get("label") or {}).get("depth")
    doc = {"generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
           "seconds": round(time.perf_counter() - started, 1), "training_label_depth": train_depth,
           "max_rows": max_rows, "sets": sets}
    write_json(out, doc)
    return doc


DESCRIPTION = ("How far the training labels (Stockfish at the data's depth) are from the independent sets' "
               "deeper labels on the same rows: the error a network that learned its labels perfectly would keep.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--depth", type=int, action="append", help="a Stockfish depth to score (repeatable; "
                   "default: the training data's label depth)")
    p.add_argument("--independent-dir", default=str(INDEPENDENT_DIR), help="folder of the independent sets")
    p.add_argument("--max-rows", type=int, default=None, help="only the first rows of each set (a quick look)")
    p.add_argument("--final", action="store_true", help="the final test set too (reported, never chosen on)")
    p.add_argument("--out", default=str(LABEL_FLOOR_JSON))
    p.add_argument("--quiet", action="store_true")


def main_args(a: argparse.Namespace) -> int:
    out = registry.repo_path(a.out)
    check_at_least(1, *(("--depth", d) for d in a.depth or ()), ("--max-rows", a.max_rows))
    check_folder(registry.repo_path(a.independent_dir), "--independent-dir")
    check_output(out, "--out")
    doc = run(a.depth, independent_dir=registry.repo_path(a.independent_dir), out=out, max_rows=a.max_rows,
              progress=not a.quiet, final=a.final)
    for name, st in doc["sets"].items():
        for depth, row in st["depths"].items():
            q = row["quiet_level_mae"]
            print(f"{name:<9} depth {depth} against depth {st['label_depth']}: quiet level MAE "
                  f"{'-' if q is None else f'{q:.3f}'} over {row['quiet_level_rows']} rows, "
                  f"win-probability error {row['win_probability_error']:.4f}, MAE {row['mae']:.3f}")
    print(f"wrote {registry.repo_relative(out)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return module_main("knights.lab.results.label_floor", DESCRIPTION, add_arguments, main_args, argv)


if __name__ == "__main__":
    sys.exit(main())
