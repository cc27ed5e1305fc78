"""The classical learners, their safe files, the democracy's weights, the trainer and notebooks.

Everything writes to temporary folders: the shipped files under ensemble/models/,
ensemble/RESULTS.md and report/results/ensemble.json are never touched."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from knights.evaluate import democracy as D
from knights.evaluate.learner import LearnerEvaluator
from knights.learn import learners as L
from knights.learn import store
from knights.learn.store import ModelFileError


def random_squares(n: int, seed: int) -> np.ndarray:
    """Random boards (not legal chess: the learners only see the features)."""
    rng = np.random.default_rng(seed)
    sq = rng.integers(-6, 7, size=(n, 64)).astype(np.int8)
    sq[rng.random((n, 64)) < 0.55] = 0
    return sq


@pytest.fixture(scope="module")
def toy():
    sq = random_squares(700, 0)
    X = L.features(sq)
    rng = np.random.default_rng(1)
    y = (X[:, 384:] @ rng.normal(size=10) + rng.normal(scale=0.5, size=len(X))).astype(np.float32)
    return {"sq": sq[:500], "X": X[:500], "y": y[:500], "sq_test": sq[500:], "X_test": X[500:], "y_test": y[500:]}


# ---------------------------------------------------------------------------- KNN sweep
def test_k_sweep_picks_the_argmin_and_matches_sklearn():
    from sklearn.neighbors import KNeighborsRegressor

    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 6))
    y = X[:, 0] ** 2 + rng.normal(scale=0.3, size=300)
    Xv = rng.normal(size=(80, 6))
    yv = Xv[:, 0] ** 2
    sweep = L.k_sweep(X, y, Xv, yv, range(1, 21))
    assert sweep.ks == list(range(1, 21)) and len(sweep.mae) == 20
    assert sweep.best_k == sweep.ks[int(np.argmin(sweep.mae))]
    for k in (1, 2, 7, 20):   # each K's MAE is exactly what scikit-learn's KNN of that K gives
        ref = KNeighborsRegressor(k, weights="distance").fit(X, y).predict(Xv)
        assert sweep.mae[k - 1] == pytest.approx(np.abs(ref - yv).mean(), rel=1e-12)
    # ties go to the smaller K; the argmin is taken, not a fixed K
    assert L.KSweep([1, 2, 3, 4], [3.0, 1.0, 1.0, 2.0], 1, 1, 0.0).best_k == 2
    assert L.KSweep([1, 2, 3], [1.0, 2.0, 3.0], 1, 1, 0.0).best_k == 1


def test_distance_weighting_with_exact_matches():
    from sklearn.neighbors import KNeighborsRegressor

    X = np.array([[0.0], [0.0], [1.0], [3.0]])
    y = np.array([1.0, 3.0, 10.0, 20.0])
    Xq = np.array([[0.0], [2.0]])
    ref = KNeighborsRegressor(3, weights="distance").fit(X, y).predict(Xq)
    dist, ind = KNeighborsRegressor(3).fit(X, y).kneighbors(Xq)
    assert L.distance_weighted(dist.copy(), y[ind]) == pytest.approx(ref)
    assert ref[0] == pytest.approx(2.0)   # the two exact matches only


# ---------------------------------------------------------------------------- own predicts
def test_forest_predict_equals_sklearn(toy):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 394)).astype(np.float32)
    y = X[:, :5].sum(axis=1) + rng.normal(size=400)
    Xt = rng.normal(size=(200, 394)).astype(np.float32)
    for X_, y_, Xt_, leaves in ((X, y, Xt, None), (toy["X"], toy["y"], toy["X_test"], 40)):
        est = L.fit_random_forest(X_, y_, max_leaf_nodes=leaves, n_jobs=1)
        model = L.ForestModel.from_sklearn(est)
        assert model.n_trees == 20
        np.testing.assert_allclose(model.predict(Xt_), est.predict(Xt_), rtol=1e-12, atol=1e-12)
        # the leaves reached are scikit-learn's, tree by tree
        offsets = model.roots[None, :]
        np.testing.assert_array_equal(model.apply(Xt_) - offsets, est.apply(Xt_))


def test_kernel_svr_predict_equals_sklearn(toy):
    est = L.fit_svr(toy["X"], toy["y"], C=3.0)
    model = L.KernelSVRModel.from_sklearn(est, toy["sq"][est.support_])
    np.testing.assert_allclose(model.predict(toy["X_test"]), est.predict(toy["X_test"]), rtol=1e-9, atol=1e-9)
    with pytest.raises(ValueError, match="support vectors"):
        L.KernelSVRModel.from_sklearn(est, toy["sq"][: len(est.support_)][::-1])


def test_linear_predicts_equal_sklearn(toy):
    for est in (L.fit_linear(toy["X"], toy["y"]), L.fit_linear_svr(toy["X"], toy["y"])):
        model = L.LinearModel.from_sklearn(est)
        np.testing.assert_array_equal(model.predict(toy["X_test"]), est.predict(toy["X_test"]))


# ---------------------------------------------------------------------------- files
def all_models(toy) -> dict:
    rf = L.fit_random_forest(toy["X"], toy["y"], max_leaf_nodes=60, n_jobs=1)
    svr = L.fit_svr(toy["X"], toy["y"])
    return {"random_forest": L.ForestModel.from_sklearn(rf),
            "svr": L.KernelSVRModel.from_sklearn(svr, toy["sq"][svr.support_]),
            "linear": L.LinearModel.from_sklearn(L.fit_linear(toy["X"], toy["y"])),
            "linear_svr": L.LinearModel.from_sklearn(L.fit_linear_svr(toy["X"], toy["y"])),
            "knn": L.KNNModel(toy["sq"], toy["y"], 3)}


@pytest.fixture(scope="module")
def models(toy):
    return all_models(toy)


def test_save_load_round_trip_is_exact(models, toy, tmp_path):
    for name, model in models.items():
        side = L.save_model(model, tmp_path / name, {"learner": name})
        assert side == tmp_path / f"{name}.json" and (tmp_path / f"{name}.npz").is_file()
        doc = json.loads(side.read_text())
        assert doc["kind"] == model.kind and doc["meta"]["learner"] == name
        back = L.load_model(side)
        assert type(back) is type(model)
        np.testing.assert_array_equal(back.predict(toy["X_test"]), model.predict(toy["X_test"]))
        for key, arr in model.to_arrays()[0].items():
            np.testing.assert_array_equal(back.to_arrays()[0][key], arr)
        # nothing in the file needs pickle
        with np.load(tmp_path / f"{name}.npz", allow_pickle=False) as z:
            assert all(z[k].dtype != object for k in z.files)


def _rewrite(npz, side, arrays: dict, allow_pickle=False, fix_spec=False) -> None:
    """Replace the arrays of ``npz`` and make the sidecar's checksum agree (a careful forger)."""
    with open(npz, "wb") as fh:
        np.savez(fh, allow_pickle=allow_pickle, **arrays) if allow_pickle else np.savez(fh, **arrays)
    doc = json.loads(side.read_text())
    doc["sha256"] = store.sha256_file(npz)
    if fix_spec:
        doc["arrays"] = {k: {"dtype": np.asarray(v).dtype.name, "shape": list(np.shape(v))} for k, v in arrays.items()}
    side.write_text(json.dumps(doc))


def test_tampered_files_are_refused(models, tmp_path):
    model = models["linear"]

    def fresh(tag):
        side = L.save_model(model, tmp_path / tag / "linear")
        return side, side.with_suffix(".npz")

    # 1. one byte changed: the checksum in the sidecar no longer matches
    side, npz = fresh("flip")
    data = bytearray(npz.read_bytes())
    data[len(data) // 2] ^= 0xFF
    npz.write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match="checksum mismatch") as err:
        L.load_model(side)
    assert str(npz) in str(err.value)

    # 2. an object array (would need pickle), checksum forged to match
    side, npz = fresh("object")
    arrays = dict(np.load(npz))
    arrays["coef"] = np.array([{"evil": 1}] + [None] * (len(arrays["coef"]) - 1), dtype=object)
    _rewrite(npz, side, arrays, allow_pickle=True)
    with pytest.raises(ModelFileError) as err:
        L.load_model(side)
    assert str(npz) in str(err.value) and "plain arrays" in str(err.value)

    # 3. a wrong shape, checksum forged
    side, npz = fresh("shape")
    arrays = dict(np.load(npz))
    arrays["coef"] = arrays["coef"][:100]
    _rewrite(npz, side, arrays)
    with pytest.raises(ModelFileError, match="shape") as err:
        L.load_model(side)
    assert str(npz) in str(err.value)

    # ... and with the sidecar forged too, the kind's own checks still refuse it
    _rewrite(npz, side, arrays, fix_spec=True)
    with pytest.raises(ModelFileError, match="394") as err:
        L.load_model(side)
    assert "linear.npz" in str(err.value)

    # 4. an extra member that is not an array
    side, npz = fresh("extra")
    with zipfile.ZipFile(npz, "a") as z:
        z.writestr("payload.pkl", b"\x80\x04K\x01.")
    _rewrite_sha = json.loads(side.read_text())
    _rewrite_sha["sha256"] = store.sha256_file(npz)
    side.write_text(json.dumps(_rewrite_sha))
    with pytest.raises(ModelFileError, match="holds arrays"):
        L.load_model(side)

    # 5. the sidecar points outside its folder / is missing
    side, npz = fresh("escape")
    doc = json.loads(side.read_text())
    doc["file"] = "../flip/linear.npz"
    side.write_text(json.dumps(doc))
    with pytest.raises(ModelFileError, match=r"bare \.npz name"):
        L.load_model(side)
    side.unlink()
    with pytest.raises(ModelFileError, match="sidecar not found") as err:
        L.load_model(side)
    assert str(side) in str(err.value)


def test_tampered_forest_structure_is_refused(models, tmp_path):
    side = L.save_model(models["random_forest"], tmp_path / "rf")
    npz = side.with_suffix(".npz")
    arrays = dict(np.load(npz))
    inner = np.flatnonzero(arrays["left_offset"] > 0)[3]
    arrays["left_offset"][inner] = -inner       # a child pointing back to the root: an endless walk
    _rewrite(npz, side, arrays)
    with pytest.raises(ModelFileError, match="point forward") as err:
        L.load_model(side)
    assert str(npz) in str(err.value)

    # both children one before the tree's first node: as global indices -1, which would read as a leaf worth 0
    arrays = dict(np.load(npz))
    arrays["left_offset"][inner] = arrays["right_offset"][inner] = -(inner + 1)
    _rewrite(npz, side, arrays)
    with pytest.raises(ModelFileError, match="point forward"):
        L.load_model(side)


# ---------------------------------------------------------------------------- democracy
class Const:
    def __init__(self, name, value):
        self.name, self.value = name, value

    def evaluate(self, positions):
        return np.full(len(positions.squares), self.value, dtype=np.float32)


class Exploding:
    name = "never"

    def evaluate(self, positions):
        raise AssertionError("a member of weight 0 was evaluated")


def test_predict_cp_democracy_is_the_weighted_average(models, toy):
    from knights.board.positions import Positions

    n = 12
    pos = Positions(toy["sq_test"][:n], np.ones(n, np.int8), np.zeros(n, np.int8), np.zeros(n, np.int8))
    a, b = Const("a", 1.0), Const("b", 3.0)
    assert D.predict_cp_democracy(pos, [a, b], [0.5, 0.5]) == pytest.approx(np.full(n, 2.0))
    assert D.predict_cp_democracy(pos, [a, b], [0.75, 0.25]) == pytest.approx(np.full(n, 1.5))
    assert D.predict_cp_democracy(pos, [a, b], [3, 1]) == pytest.approx(np.full(n, 1.5))   # normalised
    assert D.predict_cp_democracy(pos, [a, b, Exploding()], {"a": 0.2, "b": 0.8}) == pytest.approx(np.full(n, 2.6))
    # a learner member: the same features go to every learner
    rf = LearnerEvaluator("random_forest", models["random_forest"])
    lin = LearnerEvaluator("linear", models["linear"])
    got = D.predict_cp_democracy(pos, [rf, lin, a], [0.5, 0.25, 0.25])
    want = 0.5 * models["random_forest"].predict(toy["X_test"][:n]) + 0.25 * models["linear"].predict(
        toy["X_test"][:n]) + 0.25
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert got.dtype == np.float32
    dem = D.Democracy([rf, lin, a], [0.5, 0.25, 0.25])
    np.testing.assert_array_equal(dem.evaluate(pos), got)
    for bad in ([1.0], [-0.1, 1.1], [0.0, 0.0], [np.nan, 1.0]):
        with pytest.raises(ValueError):
            D.predict_cp_democracy(pos, [a, b], bad)
    with pytest.raises(ValueError, match="unknown members"):
        D.predict_cp_democracy(pos, [a, b], {"c": 1.0})


def test_a_gated_democracy_weighs_the_quiet_positions_with_their_own_weights():
    import chess

    from knights.board.positions import positions_from_boards
    from knights.features.attacks import quiet

    boards = [chess.Board(),                                                   # quiet
              chess.Board("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"),  # a pawn to take: quiet
              chess.Board("4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1"),                # the rook takes a free queen
              chess.Board("4k3/8/8/8/8/8/4r3/4K3 w - - 0 1")]                  # in check
    pos = positions_from_boards(boards)
    calm = quiet(pos.squares, pos.white, pos.check)
    assert calm.tolist() == [True, True, False, False]
    a, b = Const("a", 1.0), Const("b", 3.0)
    got = D.predict_cp_democracy(pos, [a, b, Exploding()], [1.0, 0.0, 0.0], quiet_weights=[0.0, 1.0, 0.0])
    np.testing.assert_allclose(got, np.where(calm, 3.0, 1.0))
    got = D.predict_cp_democracy(pos, [a, b], {"a": 0.5, "b": 0.5}, quiet_weights={"a": 0.75, "b": 0.25})
    np.testing.assert_allclose(got, np.where(calm, 1.5, 2.0))
    # a member that counts only on quiet positions is kept; one that counts nowhere is dropped
    dem = D.Democracy([a, b, Exploding()], [1.0, 0.0, 0.0], quiet_weights=[0.0, 1.0, 0.0], space="win_probability")
    assert [m.name for m in dem.members] == ["a", "b"] and dem.quiet_weights is not None
    np.testing.assert_allclose(dem.evaluate(pos), np.where(calm, 3.0, 1.0), rtol=1e-5)
    assert "quiet: a=0.000, b=1.000" in repr(dem)
    with pytest.raises(ValueError):
        D.Democracy([a, b], [1.0, 0.0], quiet_weights=[0.0, 0.0])


def test_a_gated_manifest_round_trips_and_bad_quiet_weights_are_refused(trained, tmp_path):
    import shutil

    folder = tmp_path / "gated"
    shutil.copytree(trained.out_dir, folder)
    doc = D.read_manifest(folder)
    first = doc["members"][0]["name"]
    gated = [{**m, "weight": 1.0 if i == 0 else 0.0, "quiet_weight": 0.0 if i == 0 else 1.0}
             for i, m in enumerate(doc["members"])]
    (folder / D.MANIFEST).write_text(json.dumps({**doc, "members": gated}))
    dem = D.load_shipped(folder)
    assert dem.quiet_weights is not None and len(dem.members) == len(gated)
    assert dem.weights[[m.name for m in dem.members].index(first)] == pytest.approx(1.0)
    for bad in (-1.0, "0.5", True, float("nan")):
        broken = [{**m, "quiet_weight": bad} if i == 0 else m for i, m in enumerate(gated)]
        (folder / D.MANIFEST).write_text(json.dumps({**doc, "members": broken}))
        with pytest.raises(ModelFileError, match="bad quiet weight"):
            D.load_shipped(folder)
    partial = [m if i == 0 else {k: v for k, v in m.items() if k != "quiet_weight"} for i, m in enumerate(gated)]
    (folder / D.MANIFEST).write_text(json.dumps({**doc, "members": partial}))
    with pytest.raises(ModelFileError, match="some members have a quiet weight"):
        D.load_shipped(folder)


def test_a_win_probability_democracy_averages_the_members_chances(toy):
    from knights.board.positions import Positions
    from knights.lab.ensemble.results import combine_rows
    from knights.learn.targets import pawns_from_probability, win_probability

    n = 4
    pos = Positions(toy["sq_test"][:n], np.ones(n, np.int8), np.zeros(n, np.int8), np.zeros(n, np.int8))
    level, won, wild = Const("level", 0.0), Const("won", 6.0), Const("wild", 9.9)
    got = D.predict_cp_democracy(pos, [level, won], [0.5, 0.5], space="win_probability")
    want = pawns_from_probability(0.5 * win_probability(np.array([0.0])) + 0.5 * win_probability(np.array([6.0])))
    np.testing.assert_allclose(got, np.full(n, want[0]), rtol=1e-5)
    assert 0.0 < got[0] < 3.0            # in pawns the average would be 3.0: the chances say less
    # two members that both call the game won agree more than their pawns do
    both = D.predict_cp_democracy(pos, [won, wild], [0.5, 0.5], space="win_probability")
    assert 6.0 < both[0] < 9.9
    dem = D.Democracy([level, won], [0.5, 0.5], space="win_probability")
    np.testing.assert_allclose(dem.evaluate(pos), got)
    P = np.array([[0.0, 1.0], [6.0, -2.0]])
    np.testing.assert_allclose(combine_rows(P, np.array([0.5, 0.5]), "win_probability")[0], want[0], rtol=1e-6)
    with pytest.raises(ValueError, match="unknown democracy space"):
        D.Democracy([level], [1.0], space="logits")


def test_equal_and_original_weights():
    names = ["EL/v8", "knn", "random_forest", "svr", "linear_svr", "linear"]
    assert D.equal_weights(names) == {n: pytest.approx(1 / 6) for n in names}
    w = D.original_weights(names, ["EL/v8"])
    assert w == {"EL/v8": pytest.approx(0.9), "knn": 0.0, "random_forest": pytest.approx(0.05), "svr": 0.0,
                 "linear_svr": pytest.approx(0.025), "linear": pytest.approx(0.025)}
    assert sum(w.values()) == pytest.approx(1.0)
    two = D.original_weights(["EL/v7", "EL/v8", *names[1:]], ["EL/v7", "EL/v8"])
    assert two["EL/v7"] == two["EL/v8"] == pytest.approx(0.45)
    alone = D.original_weights(names[1:], [])          # no network: the classical part, renormalised
    assert alone["random_forest"] == pytest.approx(0.5) and alone["linear"] == pytest.approx(0.25)
    assert sum(alone.values()) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="needs members"):
        D.original_weights(["EL/v8", "knn"], ["EL/v8"])


@pytest.mark.parametrize("loss", ["mae", "mse"])
def test_fitted_weights_are_a_convex_combination_that_beats_equal(loss):
    rng = np.random.default_rng(4)
    y = rng.normal(scale=3, size=3000)
    noise = ((0.5, 0.0), (1.5, 0.3), (3.0, -1.0), (6.0, 2.0))   # (scale, bias) of each member's error
    P = np.stack([y + rng.normal(scale=s, size=len(y)) + b for s, b in noise])
    w = D.fit_weights(P, y, loss)
    assert w.shape == (4,) and (w >= 0).all() and w.sum() == pytest.approx(1.0, abs=1e-12)

    def err(weights):
        e = np.asarray(weights) @ P - y
        return np.abs(e).mean() if loss == "mae" else (e ** 2).mean()

    assert err(w) <= err(np.full(4, 0.25)) + 1e-9
    for i in range(4):                            # and every single member (a corner of the simplex)
        assert err(w) <= err(np.eye(4)[i]) + 1e-9
    assert w[0] > w[3]                            # the best member weighs most
    # small weights dropped and the rest refitted: still a convex combination
    w2 = D.fit_weights(P, y, loss, min_weight=0.3)
    assert ((w2 == 0) | (w2 >= 0.3)).all() and w2.sum() == pytest.approx(1.0)
    # a target that is an exact blend gives that blend back
    exact = np.array([0.6, 0.0, 0.4, 0.0]) @ P
    np.testing.assert_allclose(D.fit_weights(P, exact, loss), [0.6, 0.0, 0.4, 0.0], atol=1e-5)


# ---------------------------------------------------------------------------- the whole pipeline
TINY = dict(knn_rows=2_000, sweep_val_rows=800, rf_rows=4_000, svr_rows=800, linear_rows=4_000,
            linear_svr_rows=4_000, ks=tuple(range(1, 21)), timing_batches=3, timing_repeats=2)


@pytest.fixture(scope="module")
def quick_net(tmp_path_factory):
    """EL/v8 trained for one epoch on the sample, in a temporary folder."""
    from knights.learn.experiment import run_version

    out = tmp_path_factory.mktemp("quicknet")
    run_version("EL/v8", quick=True, out_dir=out, progress=False)
    return out


@pytest.fixture(scope="module")
def trained(quick_net, tmp_path_factory):
    from knights.lab.ensemble.train import quick_plan, train_all

    out = tmp_path_factory.mktemp("ensemble")
    result = train_all(quick_plan(**TINY), networks=["EL/v8"], models_dir=quick_net, out_dir=out / "models",
                       results_md=out / "RESULTS.md", results_json=out / "ensemble.json", progress=False)
    return result


def test_default_network_members_are_the_trained_democracy_networks(quick_net, tmp_path, monkeypatch):
    """Without --networks the democracy takes those of knights.evaluate.names.DEMOCRACY_NETWORKS
    that are trained (here only EL/v8 is, in quick_net: the untrained one is left out)."""
    import knights.evaluate.names
    from knights.lab.ensemble.train import quick_plan, train_all

    monkeypatch.setattr(knights.evaluate.names, "DEMOCRACY_NETWORKS", ("EL/v8", "EL/v1"))
    result = train_all(quick_plan(**TINY), models_dir=quick_net, out_dir=tmp_path / "models",
                       results_md=tmp_path / "RESULTS.md", results_json=tmp_path / "ensemble.json", progress=False)
    networks = [m for m in result.report["members"] if m.startswith("EL/")]
    assert networks == ["EL/v8"]


def test_train_all_quick_with_a_network(trained, quick_net):
    r = trained.report
    names = ["EL/v8", *L.LEARNERS]
    assert list(r["members"]) == names
    assert set(r["blends"]) >= {"equal", "original", "fitted"}
    for b in r["blends"].values():
        w = np.array(list(b["weights"].values()))
        assert (w >= 0).all() and w.sum() == pytest.approx(1.0, abs=1e-5)
        for split in ("val", "test"):
            assert set(b[split]) == {"mae", "median_ae", "sign_agreement", "rows"}
    assert r["blends"]["original"]["weights"]["EL/v8"] == pytest.approx(0.9)
    # fitted on validation: at least as good there as equal weights and as any single member
    fitted_val = r["blends"]["fitted"]["val"]["mae"]
    assert fitted_val <= r["blends"]["equal"]["val"]["mae"] + 1e-6
    assert fitted_val <= min(m["val"]["mae"] for m in r["members"].values()) + 1e-6
    assert r["k_sweep"]["best_k"] == r["k_sweep"]["ks"][int(np.argmin(r["k_sweep"]["mae"]))]
    assert r["members"]["knn"]["fit"]["params"]["k"] == r["k_sweep"]["best_k"]
    for name in L.LEARNERS:
        if name != "knn":
            assert r["members"][name]["fit"]["verify_max_abs_diff"] < 1e-6
    # the shipped blend is the best one within the budgets
    best = r["shipped"]["blend"]
    ok = {k: b for k, b in r["blends"].items() if b["ms_per_decision"] <= 25 and b["mb"] <= 30}
    assert best == min(ok, key=lambda k: ok[k]["val_wp"])   # chosen on validation, never on test
    # the gated blend: weights for quiet positions beside the others', each a convex combination
    gated = r["blends"]["gated"]
    for key in ("weights", "quiet_weights"):
        assert sum(gated[key].values()) == pytest.approx(1.0, abs=1e-5) and min(gated[key].values()) >= 0
    # the tables
    md = trained.results_md.read_text()
    for name in names + list(r["blends"]):
        assert f"| {name} " in md or f"**{name}**" in md
    assert json.loads(trained.results_json.read_text())["shipped"]["blend"] == best
    assert (trained.results_md.parent / "k_sweep.png").stat().st_size > 1000
    assert r["data"]["test"]["first"] == "Sample_k"


def test_shipped_ensemble_loads_as_an_evaluator(trained, monkeypatch):
    import chess

    from knights.board.positions import positions_from_boards
    from knights.evaluate.base import Evaluator
    from knights.evaluate.load import load_evaluator
    from knights.evaluate.names import available_evaluators

    folder = trained.out_dir
    assert D.is_shipped(folder)
    ens = D.load_shipped(folder)
    assert isinstance(ens, Evaluator) and ens.name == "democracy"
    board = chess.Board()
    children = []
    for mv in board.legal_moves:
        b = board.copy()
        b.push(mv)
        children.append(b)
    out = ens.evaluate(positions_from_boards(children))
    assert out.shape == (20,) and out.dtype == np.float32 and np.isfinite(out).all()
    np.testing.assert_allclose(ens.evaluate_boards(children), out)
    # the same as the trained blend, through the project's load_evaluator
    monkeypatch.setattr(D, "MODELS_DIR", folder)
    assert "democracy" in available_evaluators()
    np.testing.assert_array_equal(load_evaluator("democracy").evaluate(positions_from_boards(children)), out)


def test_shipped_ensemble_refuses_other_network_weights(trained, quick_net, tmp_path):
    import shutil

    folder = tmp_path / "copy"
    shutil.copytree(trained.out_dir, folder)
    doc = D.read_manifest(folder)
    doc["members"] = [m for m in doc["members"] if m["kind"] != "network"]
    # the network as fitted (its checksum) loads; other weights under its name are refused
    good = {"name": "EL/v8", "kind": "network", "version": "EL/v8", "weight": 0.1, "models_dir": str(quick_net),
            "weights_sha256": store.sha256_file(quick_net / "v8.pt"),
            **({"quiet_weight": 0.1} if "quiet_weight" in doc["members"][0] else {})}   # as the others, if gated
    (folder / D.MANIFEST).write_text(json.dumps({**doc, "members": doc["members"] + [good]}))
    assert D.is_shipped(folder) and "EL/v8" in [m.name for m in D.load_shipped(folder).members]
    bad = {**good, "weights_sha256": "0" * 64}
    (folder / D.MANIFEST).write_text(json.dumps({**doc, "members": doc["members"] + [bad]}))
    with pytest.raises(ModelFileError, match="not the EL/v8 weights"):
        D.load_shipped(folder)
    # a member whose files are missing: not shipped
    (folder / doc["members"][0]["file"]).unlink()
    assert not D.is_shipped(folder)
    assert not D.is_shipped(tmp_path / "nowhere")


def test_select_shipped_takes_the_best_within_budgets():
    from knights.lab.ensemble.results import select_shipped

    def blend(mae, ms, mb=1.0):   # the test MAE ranks the other way: it must not be what decides
        return {"val": {"mae": mae}, "test": {"mae": 10 - mae}, "ms_per_decision": ms, "mb": mb}

    blends = {"equal": blend(2.0, 10), "fitted": blend(1.5, 40), "cheap": blend(1.8, 5, 35.0),
              "original": blend(1.9, 2)}
    assert select_shipped(blends, 25, 30) == "original"
    assert select_shipped(blends, 50, 30) == "fitted"
    assert select_shipped(blends, 25, 40) == "cheap"
    with pytest.raises(RuntimeError, match="budgets"):
        select_shipped(blends, 1, 30)


def test_test_letters_never_overlap(tmp_path):
    from knights.lab.ensemble.plan import load_data, quick_plan

    with pytest.raises(ValueError, match="test chunks"):
        load_data(quick_plan(val="i,k"))
    # validation rows the learners trained on would make the blend favour the learners
    with pytest.raises(ValueError, match="also training chunks of the learners"):
        load_data(quick_plan(val="h,i"))


# ---------------------------------------------------------------------------- notebooks
NOTEBOOK_PARAMS = {
    "knn": {"rows": 2_000, "sweep_val_rows": 500, "k_max": 20},
    "random_forest": {"rows": 3_000},
    "svr": {"rows": 600, "probe_rows": [300, 600]},
    "linear": {"rows": 3_000},
    "ensemble": {"networks": [], "knn_rows": 1_500, "rf_rows": 3_000, "svr_rows": 600, "linear_rows": 3_000,
                 "sweep_val_rows": 500},
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(NOTEBOOK_PARAMS))
def test_notebook_runs_quick(name, tmp_path):
    from knights.lab.notebooks.build import notebook_path, run_notebook

    params = {"quick": True, **NOTEBOOK_PARAMS[name]}
    if name == "ensemble":
        params |= {"out_dir": str(tmp_path / "models"), "results_md": str(tmp_path / "RESULTS.md"),
                   "results_json": str(tmp_path / "ensemble.json")}
    executed = run_notebook(notebook_path(name), tmp_path / f"{name}.ipynb", params, progress=False)
    nb = json.loads(executed.read_text())
    errors = [o for c in nb["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors
    images = [o for c in nb["cells"] for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert images
    if name == "ensemble":   # no network member: the original blend is its classical part
        assert D.is_shipped(tmp_path / "models")
        r = json.loads((tmp_path / "ensemble.json").read_text())
        assert r["networks"] == [] and list(r["members"]) == list(L.LEARNERS)
        assert r["blends"]["original"]["weights"]["random_forest"] == pytest.approx(0.5)


# ---------------------------------------------------------------------------- benchmarks
@pytest.mark.slow
def test_ensemble_benchmarks(trained, monkeypatch):
    from knights.lab.bench import core as bench

    monkeypatch.setattr(D, "MODELS_DIR", trained.out_dir)
    bench.load_plugins()
    assert {"ensemble_load", "ensemble_decision"} <= set(bench.BENCHMARKS)
    try:
        (load,) = bench.BENCHMARKS["ensemble_load"](True)
        (decision,) = bench.BENCHMARKS["ensemble_decision"](True)
    finally:
        bench._cleanup()
    for r in (load, decision):
        assert r["status"] in ("PASS", "MISS") and r["metric"] == "rate" and r["rate"] > 0
        json.dumps(r)
    assert load["details"]["seconds"] > 0 and load["target"] == pytest.approx(1 / 3)
    assert decision["target"] == pytest.approx(40.0) and decision["details"]["threads"] == 1
    assert decision["details"]["positions_per_decision"] >= 20
