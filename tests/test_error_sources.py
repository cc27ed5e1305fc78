"""``knights error-sources``: the games set's level quiet rows split by players, material and men."""

from __future__ import annotations

import json

import numpy as np
import pytest

from knights.lab.results import error_sources
from knights.lab.results.independent import INDEPENDENT_DIR

pytestmark = pytest.mark.stockfish


def test_the_split_covers_every_level_row_once_and_material_reads_zero_where_equal(tmp_path, stockfish):
    lines = (INDEPENDENT_DIR / "games.csv").read_text().splitlines(keepends=True)
    (tmp_path / "games.csv").write_text("".join(lines[:801]))        # header and 800 rows
    out = tmp_path / "error_sources.json"
    doc = error_sources.run(independent_dir=tmp_path, data_dir=tmp_path / "no_full", out=out, progress=False)
    assert json.loads(out.read_text()) == doc
    assert set(doc["sets"]) == {"games"}                               # no data/full there: no j
    games = doc["sets"]["games"]
    assert games["rows"] == 800 and 0 < games["level_rows"] < 800
    assert doc["evaluators"][:2] == ["material", "stockfish depth 1"] and len(doc["evaluators"]) >= 3
    for kind in ("all", "players", "material", "men"):
        assert sum(g["rows"] for g in games["groups"][kind].values()) == games["level_rows"], kind
    equal = games["groups"]["material"]["equal"]
    assert equal["by_evaluator"]["material"]["mean_abs_value"] == 0.0
    assert equal["by_evaluator"]["material"]["mae"] == pytest.approx(equal["mean_abs_label"])
    for group in games["groups"]["all"]["all"]["by_evaluator"].values():
        assert group["mae"] >= 0 and group["mean_abs_value"] >= 0
    cal = doc["calibration"]                                            # the newest network, on the whole set
    assert cal["network"] == doc["evaluators"][2] and set(cal["sets"]) == {"games"}
    c = cal["sets"]["games"]
    assert 0 < c["rows"] <= c["quiet_rows"] < 800 and c["slope"] > 0
    assert list(c["by_scale"]) == ["1.0", "0.8", "0.6"]
    net = games["groups"]["all"]["all"]["by_evaluator"][cal["network"]]
    assert c["by_scale"]["1.0"]["level_mae"] == pytest.approx(net["mae"], abs=1e-5)   # the same level rows


def test_calibration_reads_a_network_that_understates_and_a_timid_guess_that_flatters_the_headline():
    labels = np.array([0.5, -0.8, 3.0, -4.0, 2.0, 0.2])
    calm = np.array([True, True, True, True, True, False])
    c = error_sources.calibration(labels / 2, labels, calm)            # says half of every label
    assert c["rows"] == 5 and c["quiet_rows"] == 5 and c["slope"] == pytest.approx(2.0)
    assert c["by_scale"]["0.6"]["level_mae"] > c["by_scale"]["1.0"]["level_mae"]   # already too timid: worse
    exact = error_sources.calibration(labels, labels, calm)
    assert exact["slope"] == pytest.approx(1.0) and exact["by_scale"]["1.0"]["quiet_mae"] == 0.0
    noisy = error_sources.calibration(labels + np.array([0.9, -0.9, 0.0, 0.0, 0.0, 0.0]), labels, calm)
    shrunk, plain = noisy["by_scale"]["0.6"], noisy["by_scale"]["1.0"]
    assert shrunk["level_mae"] < plain["level_mae"] and shrunk["quiet_mae"] > plain["quiet_mae"]


def test_a_set_whose_rows_do_not_all_read_is_refused_by_name(tmp_path):
    lines = (INDEPENDENT_DIR / "games.csv").read_text().splitlines(keepends=True)
    broken = lines[1].split(",")
    broken[lines[0].split(",").index("board")] = "not a position"
    (tmp_path / "games.csv").write_text("".join([lines[0], ",".join(broken), *lines[2:50]]))
    with pytest.raises(SystemExit, match=r"games\.csv has 49 rows but 48 read as positions"):
        error_sources.run(independent_dir=tmp_path, data_dir=tmp_path / "no_full", out=tmp_path / "x.json",
                          progress=False)


def test_the_test_letters_are_split_by_material_and_men_when_their_folder_is_here(tmp_path, stockfish):
    lines = (INDEPENDENT_DIR / "games.csv").read_text().splitlines(keepends=True)
    (tmp_path / "games.csv").write_text("".join(lines[:301]))
    doc = error_sources.run(independent_dir=tmp_path, data_dir="data/sample", out=tmp_path / "x.json", progress=False)
    letters = doc["sets"]["j"]
    assert "data/sample letters j" in letters["file"] and letters["level_rows"] > 50
    assert set(letters["groups"]) == {"all", "material", "men"}              # no players in the training games
    assert set(doc["calibration"]["sets"]) == {"games", "j"}
    for kind in ("material", "men"):
        assert sum(g["rows"] for g in letters["groups"][kind].values()) == letters["level_rows"]
