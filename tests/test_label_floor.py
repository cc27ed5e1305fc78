"""knights label-floor: Stockfish at a depth against the independent sets' labels, with real Stockfish."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from knights.cli import main as knights
from knights.lab.results import label_floor

SETS = Path(__file__).resolve().parents[1] / "data" / "independent"


def test_the_sets_own_depth_gives_their_labels_back_and_depth_one_does_not(stockfish: str, tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "floor.json"
    assert knights(["label-floor", "--depth", "12", "--depth", "1", "--max-rows", "6", "--out", str(out),
                    "--quiet"]) == 0
    doc = json.loads(out.read_text())
    assert set(doc["sets"]) == {"games", "tactics", "endgames"} and doc["training_label_depth"] == 8
    for name, st in doc["sets"].items():
        assert st["label_depth"] == 12 and st["rows"] == 6, name
        own = st["depths"]["12"]
        assert own["mae"] < 1e-6 and own["win_probability_error"] < 1e-6, name   # labelled exactly so
        assert own["slope"] is None or abs(own["slope"] - 1) < 1e-6, name          # its own labels: calibrated
        assert own["slope_rows"] <= st["rows"], name
    assert sum(st["depths"]["12"]["slope_rows"] for st in doc["sets"].values()) > 0     # some row was fitted
    assert max(st["depths"]["1"]["mae"] for st in doc["sets"].values()) > 0.05    # a shallower search differs
    assert "games     depth 1 against depth 12" in capsys.readouterr().out


def test_a_set_with_an_unreadable_row_is_named_not_measured(stockfish: str, tmp_path: Path) -> None:
    with (SETS / "games.csv").open(newline="") as f:
        rows = list(csv.reader(f))[:5]
    for column in ("cp", "cp_rel"):
        rows[3][rows[0].index(column)] = "not-a-number"          # one row's evaluation cannot be read
    with (tmp_path / "games.csv").open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    shutil.copy(SETS / "games.json", tmp_path / "games.json")
    with pytest.raises(SystemExit, match=r"games\.csv has 4 rows but 3 read"):
        label_floor.run([1], independent_dir=tmp_path, out=tmp_path / "floor.json", progress=False)
    assert not (tmp_path / "floor.json").exists()


def test_without_the_dataset_report_the_depth_must_be_named(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"label depth from .*dataset\.json.*--depth"):
        label_floor.training_label_depth(tmp_path / "dataset.json")
