"""knights ablation: variants of EL/v13's recipe trained by the one loop and measured on every set."""

import json

import numpy as np
import pytest

from knights.lab import ablation


@pytest.mark.slow
def test_ablation_trains_measures_and_resumes(tmp_path, monkeypatch):
    monkeypatch.setattr(ablation, "FULL_DATA", "data/sample")
    monkeypatch.setattr(ablation, "OUT_DIR", tmp_path / "runs")
    monkeypatch.setattr(ablation, "LETTERS", {"train": "a-h", "val": "i"})
    variants = (ablation.Variant("quiet_wp", says="shipped"),
                ablation.Variant("all_l1", rows="all", target="pawns", hidden=16, king_zones=True))
    monkeypatch.setattr(ablation, "VARIANTS", variants)
    out = tmp_path / "ablation.json"
    table = ablation.run(device="cpu", out=out, progress=False, epochs=2)
    doc = json.loads(out.read_text())
    assert set(doc["variants"]) == {"quiet_wp", "all_l1"} == set(table)
    assert doc["sets"][0] == "j" and {"games", "tactics", "endgames"} <= set(doc["sets"])
    quiet, every = doc["variants"]["quiet_wp"]["training"], doc["variants"]["all_l1"]["training"]
    assert quiet["train_rows"] < every["train_rows"]          # the quiet rows are a subset
    for record in (quiet, every):                             # the kept epoch's losses, for the overfitting
        assert np.isfinite(record["train_loss"]) and np.isfinite(record["val_loss"])
    recipe = doc["variants"]["all_l1"]["recipe"]
    assert recipe["target"] == "pawns" and recipe["hidden"] == 16 and recipe["king_zones"]
    assert ablation._network(variants[1]).columns.shape == (768 * 9, 16)  # reloaded below at that width, zoned
    for v in doc["variants"].values():
        for figures in v["sets"].values():
            assert np.isfinite(figures["mae"]) and 0 < figures["win_probability_error"] < 1
    # a second run reuses the trained variants instead of training them again
    monkeypatch.setattr(ablation, "train_variant", lambda *a, **k: pytest.fail("trained again"))
    again = ablation.run(device="cpu", out=out, progress=False, epochs=2)
    assert again["quiet_wp"]["sets"] == table["quiet_wp"]["sets"]
    with pytest.raises(ValueError, match="unknown variants"):
        ablation.run(["nope"], out=out, progress=False)


def test_a_variant_naming_a_shipped_version_reads_its_weights_and_record():
    variant = ablation.Variant("quiet_wp_shipped", shipped="EL/v13")
    model, record = ablation.shipped_record(variant)
    meta = json.loads((ablation.registry.get("EL/v13").meta_path()).read_text())
    assert record["train_rows"] == meta["data"]["train"]["rows"]
    assert record["best_epoch"] == meta["history"]["best_epoch"]
    assert record["val_loss"] == meta["history"]["val_loss"][record["best_epoch"] - 1]
    assert record["epochs"] == len(meta["history"]["train_loss"]) and record["shipped"] == "EL/v13"
    shipped, _ = ablation.registry.get("EL/v13").load()
    assert all((a == b).all() for a, b in zip(model.state_dict().values(), shipped.state_dict().values(), strict=True))
    assert ablation.shipped_record(ablation.Variant("plain")) is None
    # the table's variant for the grown data is EL/v15's recipe: V13's settings, data/more added
    more = next(v for v in ablation.VARIANTS if v.more)
    lib15, lib13 = ablation.registry.get(more.shipped).library, ablation.registry.get(ablation.BASE).library
    assert lib15.TRAIN == lib13.TRAIN and lib15.TRAIN_ON == lib13.TRAIN_ON == more.rows
    assert lib15.TARGET == lib13.TARGET == more.target and lib15.MORE == (ablation.MORE_DATA,)


def test_every_variant_naming_a_shipped_version_is_that_versions_recipe():
    """A shipped variant is measured from the version's weights instead of being trained, so
    its recipe must be the version's: width, mirrored files and data folders."""
    for variant in ablation.VARIANTS:
        if not variant.shipped:
            continue
        lib = ablation.registry.get(variant.shipped).library
        width = variant.hidden or ablation.registry.get(ablation.BASE).build().hidden
        assert lib.build_model().hidden == width, variant.name
        assert lib.TRAIN.flip_files == variant.flip_files, variant.name
        assert tuple(getattr(lib, "MORE", ())) == variant.folders(), variant.name
        assert (variant.target, variant.rows) == (lib.TARGET, lib.TRAIN_ON), variant.name
        assert lib.INPUTS.king_zones == variant.king_zones, variant.name
        assert (getattr(lib, "PARENT", None) or "") == variant.parent, variant.name
        assert getattr(lib, "TRAIN_MAIN", True) == variant.full_train, variant.name
        base = ablation.registry.get(ablation.BASE).library.TRAIN
        expected = base.replace(flip_files=variant.flip_files, **dict(variant.settings))
        assert expected == lib.TRAIN, variant.name


def test_a_variant_with_a_parent_starts_from_its_weights(monkeypatch):
    """``parent``: the network starts from a shipped version's weights (what EL/v25 does from EL/v24's), and a
    parent whose weights do not fit is refused rather than trained from scratch under its name."""
    from knights.learn.training import History

    monkeypatch.setattr(ablation, "FULL_DATA", "data/sample")
    monkeypatch.setattr(ablation, "LETTERS", {"train": "a", "val": "i"})
    monkeypatch.setattr(ablation, "fit", lambda model, *a, **k: History(train_loss=[0.0], val_loss=[0.0],
                                                                             rows_per_second=[1.0]))
    cache = ablation.ChunkCache()
    model, record = ablation.train_variant(ablation.Variant("continued", parent="EL/v13"), cache, progress=False)
    parent, _ = ablation.registry.get("EL/v13").load()
    assert all(np.array_equal(a, b) for a, b in zip(model.state_dict().values(), parent.state_dict().values(),
                                                    strict=True))
    assert record["parent"] == "EL/v13"
    fresh, _ = ablation.train_variant(ablation.Variant("fresh"), cache, progress=False)
    assert not np.array_equal(fresh.state_dict()["columns"], parent.state_dict()["columns"])
    with pytest.raises(FileNotFoundError, match="EL/v10"):   # a CNN: no layer of it fits the sparse network
        ablation.train_variant(ablation.Variant("misfit", parent="EL/v10"), cache, progress=False)


def test_a_variant_continues_an_earlier_rows_weights(tmp_path, monkeypatch):
    """``parent`` naming an earlier row: the network starts from that row's saved weights, and a row whose weights
    are not saved yet is refused, naming the command that trains it."""
    import torch

    from knights.learn import modelfile
    from knights.learn.training import History

    monkeypatch.setattr(ablation, "FULL_DATA", "data/sample")
    monkeypatch.setattr(ablation, "OUT_DIR", tmp_path)
    monkeypatch.setattr(ablation, "LETTERS", {"train": "a", "val": "i"})
    monkeypatch.setattr(ablation, "fit", lambda model, *a, **k: History(train_loss=[0.0], val_loss=[0.0],
                                                                             rows_per_second=[1.0]))
    first, second = ablation.Variant("first"), ablation.Variant("second", parent="first")
    monkeypatch.setattr(ablation, "VARIANTS", (first, second))
    cache = ablation.ChunkCache()
    with pytest.raises(FileNotFoundError, match="knights ablation --only first"):
        ablation.train_variant(second, cache, progress=False)
    earlier, _ = ablation.train_variant(first, cache, progress=False)
    with torch.no_grad():               # unlike any fresh start (both rows draw theirs from the same seed)
        earlier.columns.add_(0.5)
    modelfile.save_model(earlier, tmp_path / "first.pt", {"variant": "first"})
    model, record = ablation.train_variant(second, cache, progress=False)
    assert all(np.array_equal(a, b) for a, b in zip(model.state_dict().values(), earlier.state_dict().values(),
                                                    strict=True))
    assert record["parent"] == "first"


def test_a_variant_blends_each_target_with_its_games_result(tmp_path, monkeypatch):
    """``result_share``: the rows a variant trains and validates on carry, in win probability, that share of their
    game's result (White's score in the chunk's ``result`` column) and the rest of the evaluation; the rows are the
    same ones. A result that is not a game's end, or a chunk whose rows the results cannot be lined up with, is an
    error naming the file."""
    from knights.data.chunks import game_results, read_chunk
    from knights.learn.targets import win_probability
    from knights.learn.training import History

    seen = {}

    def fit(model, task, train, val, cfg, **kwargs):
        seen.setdefault("train", []).append(train)
        return History(train_loss=[0.0], val_loss=[0.0], rows_per_second=[1.0])

    folder = tmp_path / "data"
    folder.mkdir()
    source = ablation.select_chunks("data/sample", "a")[0]
    (folder / "Sample_a").write_bytes(source.read_bytes())
    (folder / "Sample_i").write_bytes(ablation.select_chunks("data/sample", "i")[0].read_bytes())
    monkeypatch.setattr(ablation, "FULL_DATA", str(folder))
    monkeypatch.setattr(ablation, "LETTERS", {"train": "a", "val": "i"})
    monkeypatch.setattr(ablation, "fit", fit)
    cache = ablation.ChunkCache(tmp_path / "cache")
    for share in (0.0, 0.4):
        ablation.train_variant(ablation.Variant("blend", rows="all", result_share=share), cache, progress=False)
    plain, blended = seen["train"]
    data, _ = read_chunk(source)
    white_score = game_results(source)
    assert len(white_score) == len(data) == len(blended) and np.array_equal(plain.target, data.target)
    assert set(np.unique(white_score)) == {0.0, 0.5, 1.0}
    expected = 0.6 * win_probability(data.target) + 0.4 * white_score
    assert np.allclose(win_probability(blended.target), expected, atol=1e-5)
    assert np.array_equal(blended.squares, plain.squares)
    won = white_score == 1.0                                   # a won game pulls its level positions up
    assert (blended.target[won] > plain.target[won]).all()

    lines = source.read_text().splitlines()
    columns = lines[0].split(",")
    row = lines[1].split(",")
    row[columns.index("result")] = "*"
    (folder / "Sample_a").write_text("\n".join([lines[0], ",".join(row), *lines[2:]]) + "\n")
    with pytest.raises(ValueError, match=r"Sample_a: data row 1 has result '\*'"):
        ablation.train_variant(ablation.Variant("blend", result_share=0.4), cache, progress=False)
    row = lines[1].split(",")
    row[columns.index("cp")] = "nonsense"                     # read_chunk skips the row; the results cannot line up
    (folder / "Sample_a").write_text("\n".join([lines[0], ",".join(row), *lines[2:]]) + "\n")
    with pytest.raises(ValueError, match="malformed rows"):
        ablation.train_variant(ablation.Variant("blend", result_share=0.4), cache, progress=False)
    with pytest.raises(ValueError, match="in \\[0, 1\\)"):
        ablation.with_result(np.zeros(1), np.ones(1), 1.0)
