"""knights.lab.seeds: the best-epoch reader on shipped metadata, the spread and tie rule,
the comparison of shipped versions, and a real one-epoch seed run on the committed sample."""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pytest

from knights.lab import seeds
from knights.learn import registry


def shipped_history(name: str) -> dict:
    return json.loads(registry.get(name).meta_path().read_text())["history"]


def test_best_epoch_of_a_shipped_history_is_not_its_last() -> None:
    history = shipped_history("EL/v1")   # SGD at a constant rate: its validation loss jumps about
    losses = history["val_loss"]
    epoch, value = seeds.best_epoch(history)
    assert value == min(losses)
    assert losses[epoch - 1] == value and all(x > value for x in losses[:epoch - 1])
    summary = seeds.history_summary(history)
    assert summary["last_val"] == losses[-1] > value
    assert summary["kept_epoch"] == len(losses) == summary["epochs"]   # V1 kept its last epoch, not its best


def test_best_epoch_agrees_with_the_epoch_training_kept() -> None:
    for name in ("EL/v10", "EL/v13"):   # these kept their best epoch (TrainConfig.keep_best)
        history = shipped_history(name)
        assert seeds.best_epoch(history)[0] == history["best_epoch"]


def test_best_epoch_skips_non_finite_losses_and_rejects_none() -> None:
    assert seeds.best_epoch({"val_loss": [float("nan"), 2.0, 1.0, 1.0, 3.0]}) == (3, 1.0)
    with pytest.raises(ValueError):
        seeds.best_epoch({"val_loss": [float("nan")]})


def test_spread_and_tie_rule() -> None:
    s = seeds.spread([2.0, 2.6, 2.3])
    assert (s["n"], s["min"], s["max"]) == (3, 2.0, 2.6)
    assert s["range"] == pytest.approx(0.6)
    assert s["std"] == pytest.approx(float(np.std([2.0, 2.6, 2.3], ddof=1)))
    assert seeds.spread([1.5])["std"] == 0.0
    assert seeds.tie_label(0.59, s["range"]) == "tie"
    assert seeds.tie_label(-0.59, s["range"]) == "tie"
    assert seeds.tie_label(-0.61, s["range"]) == "better"
    assert seeds.tie_label(0.61, s["range"]) == "worse"
    assert seeds.tie_label(0.61, None) == "not measured"


def measured(name: str, best_val_range: float, test_range: float) -> dict:
    return {"version": name, "validation_loss": "L1 (pawns)", "architecture": "ConvNet",
            "spread": {"best_val": seeds.spread([1.0, 1.0 + best_val_range]),
                       "test_mae": seeds.spread([2.0, 2.0 + test_range])}}


def test_comparison_reads_best_epochs_and_labels_ties_by_the_spread() -> None:
    wide = seeds.compare_versions({"EL/v8": measured("EL/v8", 1.0, 1.0)})
    narrow = seeds.compare_versions({"EL/v8": measured("EL/v8", 1e-9, 1e-9)})
    rows = {r["version"]: r for r in wide["versions"]}
    for name in ("EL/v8", "EL/v9"):
        assert rows[name]["best_val"] == min(shipped_history(name)["val_loss"])
        assert rows[name]["budget"]["epochs"] == len(shipped_history(name)["train_loss"])
    pair = next(p for p in wide["pairs"] if (p["from"], p["to"]) == ("EL/v8", "EL/v9"))
    # V8 and V9 validate on the same rows with the same loss: their best epochs compare
    assert pair["best_val"]["difference"] == pytest.approx(rows["EL/v9"]["best_val"] - rows["EL/v8"]["best_val"])
    assert pair["best_val"]["label"] == "tie" and pair["reference"] == "EL/v8"
    tight = next(p for p in narrow["pairs"] if (p["from"], p["to"]) == ("EL/v8", "EL/v9"))
    assert tight["best_val"]["label"] == ("better" if tight["best_val"]["difference"] < 0 else "worse")
    # V1 and V2 validate on other letters: their losses are not compared, their test MAEs are
    first = next(p for p in wide["pairs"] if (p["from"], p["to"]) == ("EL/v1", "EL/v2"))
    assert first["best_val"]["label"] == "not comparable"
    assert first["test_mae"]["difference"] == pytest.approx(rows["EL/v2"]["test_mae"] - rows["EL/v1"]["test_mae"])
    # V13 learns another loss (win probability): no version measured with it, so no label
    sparse = next(p for p in wide["pairs"] if (p["from"], p["to"]) == ("EL/v12", "EL/v13"))
    assert sparse["reference"] is None and sparse["test_mae"]["label"] == "not measured"


def test_shipped_network_is_measured_as_knights_results_measured_it() -> None:
    table = json.loads((registry.REPO_ROOT / "report" / "results" / "independent.json").read_text())
    games = next(t for t in table["sets"] if t["set"] == "games")
    row = next(r for r in games["evaluation"] if r["name"] == "EL/v5")
    version = registry.get("EL/v5")
    model, _ = version.load()
    sets = seeds.independent_sets()
    figures = seeds.measure(version, model, sets["games"], {"games": sets["games"]})
    assert figures["games"]["rows"] == row["rows"]
    assert figures["games"]["mae"] == pytest.approx(row["mae"], rel=1e-5)
    assert figures["games"]["quiet_level_mae"] == pytest.approx(row["quiet_level_mae"], rel=1e-5)


@pytest.mark.slow
def test_a_one_epoch_seed_run_on_the_sample(tmp_path) -> None:
    shipped = registry.get("EL/v5").weights()
    before = hashlib.sha256(shipped.read_bytes()).hexdigest()
    out = seeds.version_seeds("EL/v5", [3, 4], quick=True, root=tmp_path, sets={}, progress=False)
    assert [r["seed"] for r in out["seeds"]] == [3, 4]          # a quick run has no shipped seed 0
    assert out["epochs"] == 1 and all(r["epochs"] == 1 for r in out["seeds"])
    a, b = out["seeds"]
    assert a["best_val"] != b["best_val"]                        # another seed, another network
    assert all(math.isfinite(r["test_mae"]) for r in out["seeds"])
    assert out["spread"]["best_val"]["range"] == pytest.approx(abs(a["best_val"] - b["best_val"]))
    for seed in (3, 4):
        folder = seeds.seed_dir("EL/v5", seed, tmp_path)
        meta = json.loads((folder / "v5.json").read_text())
        assert meta["train_config"]["seed"] == seed and not (folder / "checkpoint.ckpt").exists()
    assert hashlib.sha256(shipped.read_bytes()).hexdigest() == before   # models_EL/ untouched
    # a rerun loads the finished runs instead of training again
    again = seeds.version_seeds("EL/v5", [3], quick=True, root=tmp_path, sets={}, progress=False)
    assert again["seeds"][0]["best_val"] == a["best_val"]
    assert again["seeds"][0]["train_seconds"] == a["train_seconds"]


def test_compare_only_keeps_the_measured_seeds(tmp_path) -> None:
    out = tmp_path / "seeds.json"
    out.write_text(json.dumps({"seeds": {"EL/v8": measured("EL/v8", 0.5, 0.5)}}))
    assert seeds.main(["--compare-only", "--out", str(out), "--no-progress"]) == 0
    written = json.loads(out.read_text())
    assert list(written["seeds"]) == ["EL/v8"]
    trained = [v.name for v in registry.all_versions("EL") if v.meta_path().is_file()]   # archived ones too
    assert [r["version"] for r in written["comparison"]["versions"]] == trained
    assert len(written["comparison"]["pairs"]) == len(trained) - 1
    assert {p["reference"] for p in written["comparison"]["pairs"] if p["reference"]} == {"EL/v8"}
