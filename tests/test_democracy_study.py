"""The democracy study's pieces: the ensemble (knights.evaluate.ensemble), its safe files, the boosted trees' export,
the ambiguity decomposition, and the final test set's one reader."""

from __future__ import annotations

import json
import re
from pathlib import Path

import chess
import numpy as np
import pytest

from knights.board.positions import positions_from_boards
from knights.data.chunks import read_chunk
from knights.evaluate import ensemble as E
from knights.evaluate.final import FinalSetChanged, read_final
from knights.learn.learners.boosted import BoostedTreesModel, fit_boosted, load_boosted, save_boosted
from knights.learn.store import ModelFileError

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "sample" / "Sample_a"
FINAL_NAMES = re.compile(r"data/final|data\W{1,6}final\b|final\.csv|FINAL_DIR|FINAL_FOLDER|FINAL_CSV")
"""What a module that opens the final test set would write."""


@pytest.fixture(scope="module")
def rows() -> tuple[np.ndarray, np.ndarray]:
    """300 labelled positions of the committed sample, as position rows and targets."""
    data, _ = read_chunk(SAMPLE)
    data = data.take(np.arange(300))
    return E.encode(data), data.target.astype(np.float64)


# ------------------------------------------------------------------ the ambiguity decomposition
def test_ambiguity_decomposition_is_exact_for_weights_summing_to_one():
    from knights.lab.ensemble.study import ambiguity

    rng = np.random.default_rng(3)
    P = rng.normal(size=(5, 2_000))
    t = rng.normal(size=2_000)
    w = rng.random(5)
    w /= w.sum()
    d = ambiguity(P, t, w)
    direct = float(((w @ P - t) ** 2).mean())                  # the ensemble's own squared error
    assert d["ensemble_squared_error"] == pytest.approx(direct, rel=1e-12)
    assert d["weighted_member_squared_error"] - d["ambiguity"] == pytest.approx(direct, rel=1e-12)
    assert d["identity_residual"] < 1e-12
    assert d["ambiguity"] > 0                                  # members that disagree: a gain over their mean error
    same = ambiguity(np.repeat(P[:1], 5, axis=0), t, w)        # identical members: no ambiguity, no gain
    assert same["ambiguity"] == pytest.approx(0.0, abs=1e-15)


def test_diversity_reports_the_error_correlation():
    from knights.lab.ensemble.study import diversity

    rng = np.random.default_rng(4)
    y = rng.normal(size=3_000)
    shared = rng.normal(size=3_000)
    P = np.stack([y + shared + 0.1 * rng.normal(size=3_000) for _ in range(3)])   # errors almost the same
    d = diversity(P, y, np.full(3, 1 / 3), "pawns")
    assert d["mean_error_correlation"] > 0.95
    Q = np.stack([y + rng.normal(size=3_000) for _ in range(3)])                  # independent errors
    e = diversity(Q, y, np.full(3, 1 / 3), "pawns")
    assert abs(e["mean_error_correlation"]) < 0.1
    assert e["ensemble_squared_error"] < e["best_member_squared_error"] * 0.5     # independent errors average out


# ------------------------------------------------------------------ the voting democracy is the weighted mean
@pytest.mark.parametrize("space", E.SPACES)
@pytest.mark.parametrize("weighting", ["equal", "fitted"])
def test_voting_democracy_predicts_the_members_weighted_mean(rows, space, weighting):
    X, y = rows
    members = [E.Member("material"), E.Member("EL/v13"), E.Member("EL/v15")]
    dem = E.Democracy(members, weighting=weighting, space=space).fit(X, y)
    coef = np.asarray(dem.coefficients()["all"]["coef"])
    assert coef.sum() == pytest.approx(1.0) and (coef >= 0).all()
    if weighting == "equal":
        assert np.allclose(coef, 1 / 3)
    # each member asked on its own, outside the ensemble
    own = np.stack([np.asarray(E.build_evaluator(m.source, False).evaluate(E.decode(X)), dtype=np.float64)
                    for m in members])
    used = [m.name_ for m in dem.members_]
    order = [used.index(n) for n in dem.coefficients()["all"]["members"]]
    expected = E.from_space(coef @ E.to_space(own[order], space), space)
    assert np.allclose(dem.predict(X), expected, atol=1e-9)


def test_fitted_weights_beat_equal_weights_where_they_were_fitted(rows):
    X, y = rows
    members = [E.Member("material"), E.Member("EL/v13"), E.Member("EL/v15")]
    err = {}
    for weighting in ("equal", "fitted"):
        pred = E.Democracy(members, weighting=weighting).fit(X, y).predict(X)
        err[weighting] = np.abs(E.to_space(pred, "win_probability") - E.to_space(y, "win_probability")).mean()
    assert err["fitted"] <= err["equal"] + 1e-12


def test_simplex_weights_find_the_one_good_member():
    rng = np.random.default_rng(5)
    y = rng.normal(size=500)
    P = np.stack([y + 3 * rng.normal(size=500), y, y - 2]).T          # the second column is the target itself
    w = E.SimplexWeights().fit(P, y).coef_
    assert w == pytest.approx([0.0, 1.0, 0.0], abs=1e-7)


# ------------------------------------------------------------------ safe files
def _tiny_boosted(tmp_path: Path, X: np.ndarray, y: np.ndarray) -> Path:
    from knights.features.positional import positional_features

    data = E.decode(X)
    F = positional_features(data.squares, data.white, data.check, data.castling)
    est = fit_boosted(F, E.to_space(y, "win_probability"), max_iter=20, early_stopping=False)
    return save_boosted(BoostedTreesModel.from_sklearn(est), tmp_path / "learners" / "hgb",
                        {"target": "win_probability", "features": "positional"})


def test_manifest_round_trip_loads_the_same_democracy(rows, tmp_path, monkeypatch):
    X, y = rows
    side = _tiny_boosted(tmp_path, X, y)
    monkeypatch.setattr(E.registry, "REPO_ROOT", tmp_path)          # the learner's file named from a "repository"
    members = [E.Member("material"), E.Member(str(side.relative_to(tmp_path)), name="hgb")]
    for weighting in ("fitted", "stacked"):
        dem = E.Democracy(members, weighting=weighting, space="win_probability", name="tiny").fit(X, y)
        path = E.save_manifest(dem, tmp_path / f"{weighting}.json")
        doc = json.loads(path.read_text())                               # plain JSON: nothing to unpickle
        assert doc["format_version"] == E.MANIFEST_VERSION and len(doc["members"]) == 2
        back = E.load_manifest(path)
        assert back.coefficients() == dem.coefficients()
        assert np.array_equal(back.predict(X), dem.predict(X))
        assert back.name == "tiny" and back.evaluate(E.decode(X[:5])).dtype == np.float32


def test_manifest_refuses_a_member_file_that_changed(rows, tmp_path, monkeypatch):
    X, y = rows
    side = _tiny_boosted(tmp_path, X, y)
    monkeypatch.setattr(E.registry, "REPO_ROOT", tmp_path)
    dem = E.Democracy([E.Member("material"), E.Member(str(side.relative_to(tmp_path)))], weighting="fitted").fit(X, y)
    path = E.save_manifest(dem, tmp_path / "d.json")
    model, meta = load_boosted(side)
    model.value = model.value + 0.01                                  # other trees: a valid file of its own
    save_boosted(model, side.with_suffix(""), meta)
    with pytest.raises(E.ManifestError, match="changed since the democracy was fitted"):
        E.load_manifest(path)
    path.write_text(path.read_text().replace('"format_version": 2', '"format_version": 9'))
    with pytest.raises(E.ManifestError, match="format_version"):
        E.load_manifest(path)
    path.write_text("{not json")
    with pytest.raises(E.ManifestError, match="not valid JSON"):
        E.load_manifest(path)


def test_positions_as_rows_round_trip():
    boards = [chess.Board(), chess.Board("r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1")]
    X = E.encode(positions_from_boards(boards))
    back = E.decode(X)
    assert X.shape == (2, E.POSITION_COLUMNS)
    assert np.array_equal(E.encode(back), X)
    with pytest.raises(ValueError, match="no position"):
        E.as_rows(np.full((1, E.POSITION_COLUMNS), 9))


# ------------------------------------------------------------------ the judged democracy is sparse+quiesce
def test_the_shipped_six_judged_equal_in_pawns_with_the_endings_rule_is_sparse_quiesce(rows):
    from knights.data.csslab import MATE_PAWNS
    from knights.engine.judged import ENDING_MEN, JudgedDemocracy, install_judge
    from knights.engine.spec import SPARSE_DEMOCRACY

    install_judge()

    assert E.ENDING_MEN == ENDING_MEN
    X, _y = rows
    endings = E.encode(positions_from_boards([chess.Board("8/5k2/8/3K4/8/8/5P2/8 b - - 0 50"),
                                              chess.Board("6k1/5ppp/8/8/8/8/8/R3K3 w - - 0 1")]))
    X = np.concatenate([X[:60], endings])
    dem = E.Democracy([E.Member(m, judged=True) for m in SPARSE_DEMOCRACY], weighting="equal", space="pawns",
                      gate="endings").fit(X, np.zeros(len(X)))
    ours = dem.predict(X)
    theirs = JudgedDemocracy(mate_pawns=MATE_PAWNS).evaluate(E.decode(X))
    assert np.allclose(ours, theirs, atol=1e-5)
    assert ours[-1] == MATE_PAWNS                                     # Ra8 is mate: the mate rule, not a mean


# ------------------------------------------------------------------ boosted trees
def test_boosted_trees_predict_what_scikit_learn_predicts(tmp_path):
    from knights.features.positional import N_POSITIONAL, positional_features

    data, _ = read_chunk(SAMPLE)
    F = positional_features(data.squares, data.white, data.check, data.castling)
    assert F.shape == (len(data), N_POSITIONAL) and np.isfinite(F).all()
    F = F.astype(np.float64)
    F[::7, 3] = np.nan                                                  # missing values take their learned side
    est = fit_boosted(F[:2_000], E.to_space(data.target[:2_000], "win_probability"), max_iter=40,
                      early_stopping=False)
    model = BoostedTreesModel.from_sklearn(est)
    assert np.array_equal(model.predict(F[2_000:]), est.predict(F[2_000:]))
    side = save_boosted(model, tmp_path / "hgb", {"target": "win_probability"})
    back, meta = load_boosted(side)
    assert np.array_equal(back.predict(F[2_000:]), est.predict(F[2_000:])) and meta["target"] == "win_probability"
    npz = side.with_suffix(".npz")
    npz.write_bytes(npz.read_bytes()[:-10] + b"0123456789")
    with pytest.raises(ValueError, match="checksum"):
        load_boosted(side)


def test_boosted_trees_files_of_a_broken_structure_are_refused(tmp_path):
    """A forger who fixes the checksum still cannot make the walk loop, leave its tree or read a feature there is
    not: knights.learn.learners.trees.check_nodes names the file."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(400, 5)), rng.normal(size=400)
    model = BoostedTreesModel.from_sklearn(fit_boosted(X, y, max_iter=3, early_stopping=False))
    inner = int(np.flatnonzero(model.left >= 0)[1])
    for change, message in ((lambda a: a["left"].__setitem__(inner, inner), "point forward"),
                            (lambda a: a["right"].__setitem__(inner, -1), "exactly one child"),
                            (lambda a: a["feature"].__setitem__(inner, 5), "feature indices outside 0..4"),
                            (lambda a: a["roots"].__setitem__(1, 0), "tree roots must increase")):
        arrays, own = model.to_arrays()
        arrays = {k: v.copy() for k, v in arrays.items()}
        change(arrays)
        with pytest.raises(ModelFileError, match=message) as err:
            BoostedTreesModel.from_arrays(arrays, own, tmp_path / "hgb.npz")
        assert "hgb.npz" in str(err.value)


# ------------------------------------------------------------------ the final set
def _frozen_copy(folder: Path) -> Path:
    """A small final set of our own in ``folder`` (the committed sample's first rows), frozen like the real one."""
    from knights.learn.store import sha256_file

    folder.mkdir()
    lines = SAMPLE.read_text().splitlines(keepends=True)[:41]
    csv = folder / "final.csv"
    csv.write_text("".join(lines))
    rows = len(read_chunk(csv)[0])
    (folder / "final.json").write_text(json.dumps({"file": "final.csv", "rows": rows, "sha256": sha256_file(csv)}))
    return csv


def test_read_final_reads_a_frozen_set_and_refuses_a_changed_one(tmp_path):
    csv = _frozen_copy(tmp_path / "final")
    data, doc = read_final(tmp_path / "final")
    assert len(data) == doc["rows"] > 0
    text = csv.read_text()
    csv.write_text(text.replace("0.", "1.", 1))                          # one label changed
    with pytest.raises(FinalSetChanged, match=re.escape(str(csv))):
        read_final(tmp_path / "final")
    csv.write_text(text)
    read_final(tmp_path / "final")
    (tmp_path / "final" / "final.json").unlink()
    with pytest.raises(FinalSetChanged, match="sidecar is missing"):
        read_final(tmp_path / "final")


def test_nothing_but_final_py_names_the_final_set():
    """Only knights/evaluate/final.py reads data/final; the builder (``knights data final``:
    knights/lab/arena/testsets.py and knights/cli.py) wrote it once. Every other module goes through read_final, which
    checks the checksum. (Code that could read it only: the report, the docs and the tests of the report's layout
    may say where the set lives.)"""
    allowed = {"knights/evaluate/final.py", "knights/lab/arena/testsets.py", "knights/cli.py",
               "tests/test_democracy_study.py"}
    pattern = FINAL_NAMES
    offenders = []
    for folder in ("knights", "notebooks", "source_EL", "source_SL"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in (".py", ".ipynb", ".sh") or "build" in path.parts:
                continue
            rel = path.relative_to(ROOT).as_posix()
            hits = sorted({m.group(0) for m in pattern.finditer(path.read_text(errors="replace"))})
            if hits and rel not in allowed:
                offenders.append(f"{rel}: {hits}")
    assert not offenders, ("modules naming the final test set besides knights/evaluate/final.py:\n"
                           + "\n".join(offenders))


def test_the_grep_would_catch_a_module_naming_the_final_set():
    pattern = FINAL_NAMES
    assert pattern.search('read_chunk("data/final/final.csv")')
    assert pattern.search('Path("data") / "final"')
    assert not pattern.search("the final set is read by knights.evaluate.final.read_final")


def test_the_bot_interface_gives_what_predict_gives(rows):
    from knights.engine.judged import install_judge
    from knights.engine.spec import SPARSE_DEMOCRACY

    install_judge()

    X, y = rows
    X = X[:80]
    for weighting, space, gate in (("equal", "pawns", "endings"), ("fitted", "win_probability", None),
                                   ("stacked", "win_probability", "quiet")):
        members = [E.Member(m, judged=True) for m in SPARSE_DEMOCRACY[-3:]] + [E.Member("material")]
        dem = E.Democracy(members, weighting=weighting, space=space, gate=gate).fit(X, y[:80])
        assert np.allclose(dem.evaluate(E.decode(X)), dem.predict(X), atol=1e-5)   # float32 against float64


# ------------------------------------------------------------------ one-ply play: the paired summary
def _write_games(folder: Path, evaluator: str, scores: dict[int, float], games: int) -> None:
    from dataclasses import asdict

    from knights.lab.ensemble import play

    out = play.arm_folder(evaluator, folder)
    out.mkdir(parents=True)
    by_index = {t.index: t for t in play.tasks_for(evaluator, games)}
    with (out / "games.jsonl").open("w") as fh:
        for index, score in scores.items():
            t = by_index[index]
            fh.write(json.dumps({"a": t.a, "b": t.b, "index": index, "score_a": score,
                                 "settings": asdict(t.settings)}) + "\n")


def test_play_summary_pairs_the_games_both_arms_finished(tmp_path):
    from knights.lab.ensemble import play

    _write_games(tmp_path, "sparse+quiesce", {0: 1.0, 1: 0.5, 2: 1.0, 3: 0.0, 4: 1.0}, 6)
    _write_games(tmp_path, "EL/v23+quiesce", {0: 0.0, 1: 0.5, 2: 1.0, 3: 0.0}, 6)   # game 4 not yet played
    got = play.summary("sparse+quiesce", "EL/v23+quiesce", 6, folder=tmp_path)
    assert got["games_paired"] == 4
    assert got["arms"]["sparse+quiesce"]["score"] == pytest.approx(2.5 / 4)
    assert got["arms"]["EL/v23+quiesce"]["score"] == pytest.approx(1.5 / 4)
    assert got["arms_all_games"]["sparse+quiesce"]["games"] == 5
    d = np.array([1.0, 0.0, 0.0, 0.0])
    assert got["difference"]["score"] == pytest.approx(d.mean())
    assert got["difference"]["se_paired"] == pytest.approx(d.std(ddof=1) / 2, abs=1e-4)


def test_play_pairs_game_g_of_both_arms_on_one_opening_and_colour():
    from knights.lab.ensemble import play

    a, b = play.tasks_for("sparse+quiesce", 40), play.tasks_for("EL/v23+quiesce", 40)
    assert [(t.opening, t.a_white) for t in a] == [(t.opening, t.a_white) for t in b]
    assert {t.b for t in a} == {play.ANCHOR}
    with pytest.raises(ValueError, match="--games"):
        play.play_arm("sparse+quiesce", 0)


# ------------------------------------------------------------------ the notebook
def test_the_democracy_notebook_is_small_executed_and_draws_the_decomposition():
    import nbformat

    path = ROOT / "notebooks" / "democracy.ipynb"
    assert path.stat().st_size < 1_000_000
    nb = nbformat.read(path, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert all(c.execution_count for c in nb.cells if c.cell_type == "code"), "every cell executed"
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert not [o for o in outputs if o.get("output_type") == "stream" and o.get("name") == "stderr"]
    assert any("image/png" in o.get("data", {}) for o in outputs)
    text = "\n".join(str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", "")) for o in outputs)
    assert "/work/" not in text and "/home/" not in text and str(ROOT) not in text
    assert "ambiguity" in "\n".join(c.source for c in nb.cells)


def test_the_results_say_what_the_bot_plays_beside_the_choice():
    from knights.engine.spec import ONE_PLY_EVALUATOR
    from knights.lab.ensemble.study import BOT_KEY, bot_decision

    same = bot_decision({"choice": {"key": BOT_KEY}})
    assert same["plays_the_chosen"] and same["evaluator"] == ONE_PLY_EVALUATOR
    other = bot_decision({"choice": {"key": "six|judged|fitted|pawns|-"}})
    assert not other["plays_the_chosen"] and "six|judged|fitted|pawns|-" in other["why"]


def test_the_committed_choice_loads_and_is_what_the_results_record():
    """ensemble/democracy/democracy.json (written by the choosing stage) loads with every member's files checked,
    and is the democracy report/results/democracy.json names as chosen."""
    from knights.engine.judged import load_democracy

    manifest = ROOT / "ensemble" / "democracy" / "democracy.json"
    results = json.loads((ROOT / "report" / "results" / "democracy.json").read_text())
    doc = json.loads(manifest.read_text())
    assert doc["chosen_on"]["key"] == results["choice"]["key"]
    assert all("final" not in s for s in doc["chosen_on"]["sets"])
    dem = load_democracy(manifest)
    assert dem.coefficients() == doc["groups"]
    values = dem.evaluate_boards([chess.Board(), chess.Board("6k1/5ppp/8/8/8/8/8/R3K3 w - - 0 1")])
    assert np.isfinite(values).all() and values[1] > 3      # a rook up
