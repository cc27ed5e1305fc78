"""Tests for knights.lab.bench.core (the registry, the result structure and the JSON file)
and the data benchmarks of knights.lab.bench.data.

Speed targets are *not* asserted here (they depend on the machine and its load);
only that every benchmark runs, measures finite positive rates, computes its ratio
from them, compares like with like, and writes its results where it is told to.
"""

from __future__ import annotations

import argparse
import json
import math

import pytest

from knights.cli import main as cli_main
from knights.lab.bench import core as bench
from knights.lab.bench import data as data_bench

DATA_BENCHES = ("encode", "cache")


def check_result(r: dict, name: str) -> None:
    assert r["name"] == name
    assert r["status"] in ("PASS", "MISS")
    assert r["metric"] in ("ratio", "rate")
    for key in ("rate", "baseline_rate", "ratio", "target"):
        assert isinstance(r[key], float) and math.isfinite(r[key]) and r[key] > 0, (key, r[key])
    assert r["ratio"] == pytest.approx(r["rate"] / r["baseline_rate"], rel=1e-9)
    value = r["ratio"] if r["metric"] == "ratio" else r["rate"]
    assert r["passed"] is (value >= r["target"])
    assert r["status"] == ("PASS" if r["passed"] else "MISS")
    assert r["baseline"]
    row = bench.format_row(r)
    assert row.startswith(name) and row.endswith(r["status"])
    json.dumps(r)  # serialisable as is


@pytest.fixture(scope="module")
def data_run(tmp_path_factory):
    """``knights bench encode cache --quick`` once, through the command line,
    with the results sent to a temporary folder by $KNIGHTS_RESULTS_DIR."""
    out = tmp_path_factory.mktemp("results")
    # an entry another module wrote earlier must survive the merge
    (out / "bench.json").write_text(json.dumps({"benchmarks": {"other": {"name": "other", "rate": 1.0}}}))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(bench.RESULTS_ENV, str(out))
        rc = cli_main(["bench", *DATA_BENCHES, "--quick"])
    return rc, out / "bench.json"


def test_data_benchmarks_quick(data_run):
    rc, path = data_run
    assert rc == 0
    doc = json.loads(path.read_text())
    assert set(DATA_BENCHES) | {"other"} <= set(doc["benchmarks"])
    assert doc["benchmarks"]["other"] == {"name": "other", "rate": 1.0}
    machine = doc["machine"]
    assert machine["cpu_count"] >= 1
    for key in ("platform", "python", "date", "torch"):
        assert key in machine
    for name in DATA_BENCHES:
        entry = doc["benchmarks"][name]
        check_result(entry, name)
        assert entry["quick"] is True
        assert entry["machine"] == machine
    encode = doc["benchmarks"]["encode"]
    assert encode["metric"] == "ratio" and encode["target"] == 30.0
    assert encode["details"]["outputs_match"] is True
    assert encode["details"]["rows"] > encode["details"]["baseline_rows"] > 0
    cache = doc["benchmarks"]["cache"]
    assert cache["metric"] == "rate" and cache["target"] == 1_000_000.0
    # cache's ratio is against the same row-by-row measurement as encode's
    assert cache["baseline_rate"] == pytest.approx(encode["baseline_rate"])
    assert cache["details"]["rows_per_epoch"] == encode["details"]["rows"]


def test_baseline_and_ours_encode_the_same(tmp_path):
    rows = data_bench.playout_rows(400, seed=3)
    path = data_bench.write_chunk(tmp_path / "Chunk_aa", rows)
    squares, counts, targets = data_bench.encode_ours(path)
    b_squares, b_counts, b_targets = data_bench.encode_baseline(path)
    assert len(squares) == len(rows) == len(b_targets)
    assert (squares == b_squares).all() and (squares != 0).any()
    assert counts == pytest.approx(b_counts, rel=1e-6, abs=1e-6)
    assert (targets == b_targets).all()
    # the synthetic cp column exercises mates and clipping
    assert (abs(targets) == 10).any() and (abs(targets) <= 10).all()


@pytest.mark.stockfish
def test_generate_quick(stockfish, tmp_path, monkeypatch):
    monkeypatch.setenv("KNIGHTS_STOCKFISH", stockfish)
    results = bench.run_benchmarks(["generate"], quick=True, results_directory=tmp_path, out=lambda s: None)
    assert len(results) == 1
    r = results[0]
    check_result(r, "generate")
    assert r["unit"] == "positions/s" and r["target"] == 0.90
    assert r["details"]["positions"] > 0 and r["details"]["games"] > 0
    # deterministic searches: the bare engine finds the labels the generator wrote
    assert r["details"]["labels_match"] == 1.0
    assert "generate" in json.loads((tmp_path / "bench.json").read_text())["benchmarks"]


def test_generate_skips_without_stockfish(tmp_path, monkeypatch):
    import knights.data.stockfish as sf

    def missing() -> str:
        raise sf.StockfishMissing("Stockfish not found")

    monkeypatch.setattr(sf, "find_stockfish", missing)
    (r,) = data_bench.bench_generate(True)
    assert r["status"] == "SKIP" and r["rate"] is None
    assert sf.INSTALL_HINT in r["details"]["reason"]
    assert "SKIP" in bench.format_row(r)


# ---------------------------------------------------------------- registry
@pytest.fixture
def registry(monkeypatch):
    """A private copy of the registry, restored afterwards."""
    monkeypatch.setattr(bench, "BENCHMARKS", dict(bench.BENCHMARKS))
    return bench.BENCHMARKS


def test_data_benchmarks_are_registered():
    for name in ("encode", "cache", "generate"):
        assert name in bench.BENCHMARKS


def test_unknown_name_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(ValueError) as err:
        bench.run_benchmarks(["encode", "nope"], quick=True, results_directory=tmp_path)
    message = str(err.value)
    assert "'nope'" in message and "encode" in message and "cache" in message
    assert not (tmp_path / "bench.json").exists()
    # and through the command line: one line, exit code 2, no traceback
    assert cli_main(["bench", "nope", "--quick"]) == 2
    assert "unknown benchmark 'nope'" in capsys.readouterr().err


def test_register_and_run_a_new_benchmark(registry, tmp_path):
    calls = []

    @bench.benchmark("toy")
    def toy(quick: bool) -> list[dict]:
        calls.append(quick)
        return [bench.make_result("toy", 200.0, 50.0, target=3.0, unit="things/s", baseline="slow toy")]

    assert registry["toy"] is toy
    lines: list[str] = []
    ns = argparse.Namespace(which=["toy"], quick=True, results_dir=str(tmp_path))
    assert bench.main(ns) == 0
    assert calls == [True]
    doc = json.loads((tmp_path / "bench.json").read_text())
    r = doc["benchmarks"]["toy"]
    check_result(r, "toy")
    assert r["ratio"] == 4.0 and r["status"] == "PASS"

    # a second run merges: the entry is replaced, others stay
    doc["benchmarks"]["keep"] = {"name": "keep"}
    (tmp_path / "bench.json").write_text(json.dumps(doc))
    bench.run_benchmarks(["toy"], quick=False, results_directory=tmp_path, out=lines.append)
    doc = json.loads((tmp_path / "bench.json").read_text())
    assert doc["benchmarks"]["keep"] == {"name": "keep"} and doc["benchmarks"]["toy"]["quick"] is False
    assert lines[1] == bench.HEADER
    assert lines[2].startswith("toy") and lines[2].endswith("PASS") and "4.00x" in lines[2]
    assert lines[3].startswith("results: ")


def test_duplicate_name_is_refused(registry):
    with pytest.raises(ValueError, match="already registered"):
        @bench.benchmark("encode")
        def other(quick: bool) -> list[dict]:
            return []
    with pytest.raises(ValueError):
        bench.benchmark("two words")


def test_miss_and_rate_targets(registry):
    r = bench.make_result("x", 900_000.0, 10_000.0, target=1_000_000.0, metric="rate")
    assert r["status"] == "MISS" and r["ratio"] == 90.0
    r = bench.make_result("x", 10.0, 2.0, target=5.0)
    assert r["status"] == "PASS"
    with pytest.raises(ValueError):
        bench.make_result("x", 1.0, 1.0, target=1.0, metric="speed")


def test_broken_results_file_is_not_overwritten(tmp_path):
    (tmp_path / "bench.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        bench.write_results([], tmp_path)
    assert (tmp_path / "bench.json").read_text() == "{not json"


def test_a_skip_keeps_the_figures_measured_elsewhere(tmp_path):
    measured = bench.make_result("gpu", 900.0, 300.0, target=1.0)
    bench.write_results([measured], tmp_path, machine={"date": "then", "where": "a GPU machine"})
    bench.write_results([bench.make_skip("gpu", "no GPU here"), bench.make_skip("other", "absent")], tmp_path,
                        machine={"date": "now", "where": "a laptop"})
    doc = json.loads((tmp_path / "bench.json").read_text())
    assert doc["benchmarks"]["gpu"]["ratio"] == 3.0 and doc["benchmarks"]["gpu"]["machine"]["where"] == "a GPU machine"
    assert doc["benchmarks"]["other"]["status"] == "SKIP"     # nothing measured: the skip is written
    bench.write_results([bench.make_result("gpu", 100.0, 300.0, target=1.0)], tmp_path, machine={"date": "later"})
    assert json.loads((tmp_path / "bench.json").read_text())["benchmarks"]["gpu"]["status"] == "MISS"


def test_plugin_modules_from_environment(registry, monkeypatch, tmp_path):
    monkeypatch.setenv(bench.PLUGIN_ENV, "knights_no_such_module")
    monkeypatch.setattr(bench, "_PLUGIN_ERRORS", {})
    errors = bench.load_plugins()
    assert "knights_no_such_module" in errors
    with pytest.raises(ValueError, match="failed to load"):
        bench.select(["nope"])
