"""The shared training machinery: model files, registry, the loop, resume, evaluator."""

from __future__ import annotations

import itertools
import pickle

import chess
import numpy as np
import pytest
import torch

from knights.board.positions import positions_from_boards
from knights.data.cache import ChunkCache, load_encoded
from knights.data.chunks import select_chunks
from knights.evaluate.base import MaterialEvaluator, NetworkEvaluator
from knights.features.inputs import InputSpec
from knights.learn import modelfile, registry
from knights.learn.experiment import SAMPLE_DATA, run_data, run_version
from knights.learn.nets import ConvNet, parameter_count
from knights.learn.store import sha256_file
from knights.learn.training import EvalTask, TrainConfig, choose_device, fit

SAMPLE = registry.REPO_ROOT / SAMPLE_DATA


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    cache = ChunkCache(tmp_path_factory.mktemp("cache"))
    train = load_encoded(select_chunks(SAMPLE, "a-c"), cache)
    val = load_encoded(select_chunks(SAMPLE, "i"), cache)
    return train, val


def test_original_widths_are_reproduced():
    widths = {v.name: v.build().n_flat + v.library.INPUTS.n_extra for v in registry.all_versions("EL")
              if isinstance(v.build(), ConvNet)}   # the original's family (V11 and V12 pool instead)
    # docs/original.md: V1 FC(402..), V3/V4 FC(578..), V8 paper FC(1080..) + 10 counts
    assert widths["EL/v1"] == 402 and widths["EL/v3"] == 578 and widths["EL/v4"] == 578
    assert widths["EL/v6"] == 1152 and widths["EL/v8"] == 1090


def test_registry_names_and_paths():
    v = registry.get("el/8")
    assert v.name == "EL/v8"
    assert v.weights().relative_to(registry.REPO_ROOT).as_posix() == "models_EL/v8.pt"
    assert v.library_path.relative_to(registry.REPO_ROOT).as_posix() == "source_EL/v8/library.py"
    with pytest.raises(ValueError, match="not a version name"):
        registry.get("v8")
    with pytest.raises(ValueError, match="unknown version EL/v99"):
        registry.get("EL/v99")
    assert [v.number for v in registry.all_versions("EL")] == list(range(1, 27))


def test_model_file_roundtrip_and_refusals(tmp_path):
    model = ConvNet(6, [(8, 3)], [16], n_extra=2)
    path = tmp_path / "m.pt"
    digest = modelfile.save_model(model, path, {"version": "test"})
    other = modelfile.load_into(ConvNet(6, [(8, 3)], [16], n_extra=2), path)
    for a, b in zip(model.state_dict().values(), other.state_dict().values(), strict=False):
        assert torch.equal(a, b)
    assert modelfile.read_meta(tmp_path / "m.json") == {"version": "test", "sha256": digest}
    assert digest == sha256_file(path)

    def record(name):   # metadata whose checksum matches, so the content check is what refuses
        modelfile.write_meta(tmp_path / f"{name}.json", {"sha256": sha256_file(tmp_path / f"{name}.pt")})

    # a whole pickled module (what the original shipped) is refused, not executed
    torch.save(model, tmp_path / "module.pt")
    record("module")
    with pytest.raises(modelfile.ModelFileError, match=r"module\.pt"):
        modelfile.load_state(tmp_path / "module.pt")

    # a tampered file that would run code when unpickled
    class Evil:
        def __reduce__(self):
            return (exec, ("open('PWNED', 'w').write('x')",))

    (tmp_path / "evil.pt").write_bytes(pickle.dumps({"w": Evil()}))
    record("evil")
    with pytest.raises(modelfile.ModelFileError, match=r"evil\.pt"):
        modelfile.load_state(tmp_path / "evil.pt")
    assert not (tmp_path / "PWNED").exists()
    torch.save({"w": [1, 2, 3]}, tmp_path / "list.pt")
    record("list")
    with pytest.raises(modelfile.ModelFileError, match="mapping of parameter names to tensors"):
        modelfile.load_state(tmp_path / "list.pt")
    with pytest.raises(modelfile.ModelFileError, match="do not fit"):
        modelfile.load_into(ConvNet(6, [(4, 3)], [16], n_extra=2), path)
    with pytest.raises(FileNotFoundError):
        modelfile.load_state(tmp_path / "missing.pt")


def test_fit_learns_and_resumes_exactly(sample, tmp_path):
    train, val = sample
    spec = InputSpec(planes="six", counts=True)
    cfg = TrainConfig(epochs=3, batch_size=1024, optimizer="adam", lr=0.003, seed=5)
    torch.manual_seed(0)
    straight = ConvNet(6, [(8, 5)], [32], n_extra=spec.n_extra)
    init = {k: v.clone() for k, v in straight.state_dict().items()}
    h = fit(straight, EvalTask(spec), train, val, cfg, checkpoint=tmp_path / "a.ckpt", device="cpu", progress=False)
    assert h.epochs == 3 and h.train_loss[-1] < h.train_loss[0]
    assert all(np.isfinite(h.val_loss))

    # the same run stopped after two epochs, then resumed to three, ends with the same weights
    resumed = ConvNet(6, [(8, 5)], [32], n_extra=spec.n_extra)
    resumed.load_state_dict(init)
    ckpt = tmp_path / "b.ckpt"
    fit(resumed, EvalTask(spec), train, val, cfg.replace(epochs=2), checkpoint=ckpt, device="cpu", progress=False)
    fresh = ConvNet(6, [(8, 5)], [32], n_extra=spec.n_extra)   # a new process would start from scratch
    h2 = fit(fresh, EvalTask(spec), train, val, cfg, checkpoint=ckpt, device="cpu", progress=False)
    assert h2.epochs == 3 and h2.train_loss[:2] == h.train_loss[:2]
    for a, b in zip(straight.state_dict().values(), fresh.state_dict().values(), strict=False):
        assert torch.allclose(a, b, atol=1e-6)
    # a checkpoint of other settings is not resumed
    other = ConvNet(6, [(8, 5)], [32], n_extra=spec.n_extra)
    h3 = fit(other, EvalTask(spec), train, val, cfg.replace(lr=0.001, epochs=1), checkpoint=ckpt,
             device="cpu", progress=False)
    assert h3.epochs == 1


def test_device_choice_honours_override(monkeypatch):
    assert choose_device("cpu").type == "cpu"
    monkeypatch.setenv("KNIGHTS_DEVICE", "cpu")
    assert choose_device().type == "cpu"


def test_network_evaluator_matches_training_encoding(sample):
    _train, _ = sample
    spec = InputSpec(planes="six", scalars=("turn", "check"), counts=True)
    model = ConvNet(6, [(4, 3)], [8], n_extra=spec.n_extra).eval()
    ev = NetworkEvaluator(model, spec, "tiny")
    boards = [chess.Board(), chess.Board("4k3/8/8/8/8/8/8/3QK3 b - - 0 1")]
    pos = positions_from_boards(boards)
    assert pos.check.tolist() == [0, 0] and pos.white.tolist() == [1, 0]
    with torch.no_grad():
        direct = model(*spec.tensors(pos)).numpy()
    np.testing.assert_allclose(ev.evaluate_boards(boards), direct, rtol=1e-6)
    assert MaterialEvaluator().evaluate_boards(boards).tolist() == [0.0, 9.0]


def test_quick_run_writes_loadable_model(tmp_path):
    result = run_version("EL/v1", quick=True, out_dir=tmp_path, progress=False)
    assert (tmp_path / "v1.pt").is_file() and (tmp_path / "v1.json").is_file()
    model, meta = registry.get("EL/v1").load(tmp_path)
    assert meta["parameters"] == parameter_count(model) == 52305
    assert meta["history"]["train_loss"] and meta["data"]["train"]["rows"] > 0
    assert 0 < meta["test"]["mae"] < 10 and meta["test"]["rows"] == meta["data"]["test"]["rows"]
    assert result.meta["test"] == meta["test"]
    assert meta["sha256"] == result.meta["sha256"] == sha256_file(tmp_path / "v1.pt")


def test_quantized_files_are_plain_tensors_and_close(tmp_path):
    from knights.learn.modelfile import QUANT_MIN_ELEMENTS, dequantize4, quantize4

    torch.manual_seed(1)
    w = torch.randn(300, 77)
    packed, scale = quantize4(w)
    assert packed.dtype == torch.uint8 and packed.shape == (300, 39)
    back = dequantize4(packed, scale, w.shape)
    # symmetric 4-bit: every value within half a step of its row's scale
    assert ((back - w).abs() <= scale[:, None] / 2 + 1e-6).all()
    big = ConvNet(0, [], [QUANT_MIN_ELEMENTS // 64 + 1], n_extra=64, out=2)
    modelfile.save_model(big, tmp_path / "big.pt", quantize=True)
    state = modelfile.load_state(tmp_path / "big.pt")
    assert "head.0.weight.q4" in state and "head.0.weight" not in state
    loaded = modelfile.load_into(ConvNet(0, [], [QUANT_MIN_ELEMENTS // 64 + 1], n_extra=64, out=2), tmp_path / "big.pt")
    w0 = big.state_dict()["head.0.weight"]
    assert torch.allclose(loaded.state_dict()["head.0.weight"], w0, atol=float(w0.abs().max()) / 7)
    assert torch.equal(loaded.state_dict()["head.2.weight"], big.state_dict()["head.2.weight"])  # small: exact


def test_cosine_schedule_and_checkpoint_keys():
    cfg = TrainConfig(lr=0.01, schedule="cosine", min_lr_ratio=0.1)
    assert cfg.lr_at(0.0) == pytest.approx(0.01) and cfg.lr_at(1.0) == pytest.approx(0.001)
    assert cfg.lr_at(0.5) == pytest.approx(0.0055)
    fractions = np.linspace(0, 1, 20)
    assert all(cfg.lr_at(a) >= cfg.lr_at(b) for a, b in itertools.pairwise(fractions))
    assert TrainConfig(lr=0.01).lr_at(0.7) == 0.01
    with pytest.raises(ValueError, match="unknown schedule"):
        TrainConfig(schedule="step")
    from knights.learn.training import config_key
    model = ConvNet(6, [(8, 3)], [16])
    constant = TrainConfig(lr=0.01)
    # a constant-rate run can be extended; a scheduled one depends on its length
    assert config_key(constant, model, 100) == config_key(constant.replace(epochs=30), model, 100)
    assert config_key(cfg, model, 100) != config_key(cfg.replace(epochs=30), model, 100)
    assert config_key(constant, model, 100) != config_key(constant.replace(mirror=True), model, 100)


def test_keep_best_mirror_and_schedule_train(sample, tmp_path):
    train, val = sample
    spec = InputSpec(planes="six", scalars=("turn",), counts=True, attacks=True, gains=True)
    cfg = TrainConfig(epochs=3, batch_size=1024, lr=0.02, schedule="cosine", keep_best=True, mirror=True)
    torch.manual_seed(1)
    model = ConvNet(spec.n_planes, [(8, 3)], [32], n_extra=spec.n_extra)
    task = EvalTask(spec)
    h = fit(model, task, train, val, cfg, checkpoint=tmp_path / "c.ckpt", device="cpu", progress=False)
    assert h.best_epoch == int(np.argmin(h.val_loss)) + 1
    from knights.learn.training import evaluate_loss
    # the model ends with its best epoch's weights, whichever epoch that was
    assert evaluate_loss(model, task, val, cfg, "cpu") == pytest.approx(min(h.val_loss), rel=1e-5)
    # resuming the finished run restores the best weights from the checkpoint
    again = ConvNet(spec.n_planes, [(8, 3)], [32], n_extra=spec.n_extra)
    h2 = fit(again, task, train, val, cfg, checkpoint=tmp_path / "c.ckpt", device="cpu", progress=False)
    assert h2.best_epoch == h.best_epoch
    for a, b in zip(model.state_dict().values(), again.state_dict().values(), strict=False):
        assert torch.equal(a, b)
    from knights.learn.moves import MoveTask
    with pytest.raises(ValueError, match="cannot mirror"):
        fit(ConvNet(6, [(8, 3)], [16], out=4096), MoveTask(InputSpec(), 1.0), train, val,
            TrainConfig(epochs=1, mirror=True), device="cpu", progress=False)


def test_same_seed_and_data_give_bit_identical_weights(tmp_path):
    """Training is reproducible on one machine: two runs of a version with the same seed
    and data give the same bytes of weights. (The model used to be built before the seed
    was set, so its initial weights, and everything after, differed from run to run.)"""
    states = []
    for run, scramble in (("a", 1), ("b", 2)):
        torch.manual_seed(scramble)   # whatever state the process happens to be in
        result = run_version("EL/v3", quick=True, out_dir=tmp_path / run, progress=False)
        states.append(result.model.state_dict())
    assert states[0].keys() == states[1].keys()
    for key in states[0]:
        assert torch.equal(states[0][key], states[1][key]), key


def test_more_folders_add_training_and_validation_rows_but_never_test_rows(tmp_path):
    """``--more DIR`` (``run_version(more=...)``): the extra folder's training and validation
    letters are read beside the main folder's, its test letters are not, and the metadata
    names the folder; the main folder given again is refused."""
    sample = registry.repo_path(SAMPLE_DATA)
    extra = tmp_path / "more"
    extra.mkdir()
    for chunk in select_chunks(sample, "a,i,k"):   # k would be a test chunk: it must stay unread
        (extra / chunk.name).write_bytes(chunk.read_bytes())
    version = registry.get("EL/v1")
    plan = run_data(version, quick=True, more=[str(extra)], train="a", val="i", test="k")
    assert [p.parent for p in plan.files["train"]] == [sample, extra]
    assert [p.parent for p in plan.files["val"]] == [sample, extra]
    assert [p.parent for p in plan.files["test"]] == [sample]
    with pytest.raises(ValueError, match="main data folder or given twice"):
        run_data(version, quick=True, more=[SAMPLE_DATA])
    with pytest.raises(ValueError, match="main data folder or given twice"):
        run_data(version, quick=True, more=[str(extra), str(extra / ".." / "more")])

    alone = run_version("EL/v1", quick=True, train="a", val="i", test="k", out_dir=tmp_path / "alone", progress=False)
    both = run_version("EL/v1", quick=True, more=[str(extra)], train="a", val="i", test="k",
                       out_dir=tmp_path / "both", progress=False)
    for split in ("train", "val"):
        assert both.meta["data"][split]["rows"] == 2 * alone.meta["data"][split]["rows"]
        assert both.meta["data"][split]["more"] == [str(extra)]
        assert both.meta["data"][split]["sha1"] != alone.meta["data"][split]["sha1"]
    assert both.meta["data"]["test"] == alone.meta["data"]["test"]
    # a version that continues from a parent which learned the main folder (TRAIN_MAIN = False, EL V25) trains on
    # the further folders alone; the main folder still validates and tests
    continued = run_data(registry.get("EL/v25"), data_dir=str(sample), more=[str(extra)], train="a", val="i",
                         test="k")
    assert [p.parent for p in continued.files["train"]] == [extra]
    assert [p.parent for p in continued.files["val"]] == [sample, extra]
    assert [p.parent for p in continued.files["test"]] == [sample]
    with pytest.raises(ValueError, match="TRAIN_MAIN"):
        run_data(registry.get("EL/v25"), data_dir=str(sample), train="a", val="i", test="k")


# ----------------------------------------------------------------- broken runs and checkpoints (issue 25)
def _tiny(spec):
    torch.manual_seed(0)
    return ConvNet(6, [(8, 5)], [32], n_extra=spec.n_extra)


def _poison_checkpoint(path, value=float("nan")):
    state = torch.load(path, weights_only=True)
    first = next(iter(state["model"]))
    state["model"][first].fill_(value)
    torch.save(state, path)


def test_a_nan_checkpoint_or_a_diverging_run_stops_naming_the_epoch(sample, tmp_path):
    """Resuming from a checkpoint holding NaN used to train on ("train nan val nan") and hand
    back a NaN model; a diverging run went on the same way. Both now stop with the reason."""
    from knights.learn.training import TrainingError

    train, val = sample
    spec = InputSpec(planes="six", counts=True)
    cfg = TrainConfig(epochs=1, batch_size=1024, lr=0.003, seed=5)
    ckpt = tmp_path / "run.ckpt"
    fit(_tiny(spec), EvalTask(spec), train, val, cfg, checkpoint=ckpt, device="cpu", progress=False)
    _poison_checkpoint(ckpt)
    for epochs in (1, 2):     # finished (nothing left to train) or resumed
        with pytest.raises(TrainingError, match=rf"{ckpt}.*non-finite"):
            fit(_tiny(spec), EvalTask(spec), train, val, cfg.replace(epochs=epochs), checkpoint=ckpt,
                device="cpu", progress=False)
    diverging = tmp_path / "diverging.ckpt"
    with pytest.raises(TrainingError, match=r"epoch 1/2: the training loss is not finite"):
        fit(_tiny(spec), EvalTask(spec), train, val, cfg.replace(epochs=2, lr=1e30), checkpoint=diverging,
            device="cpu", progress=False)
    assert not diverging.exists()               # no checkpoint of a NaN epoch


def test_a_checkpoint_of_other_settings_is_kept_under_its_own_name(sample, tmp_path, capsys):
    """A checkpoint made with other settings used to be overwritten without a word; it is now
    set aside under a name holding its settings' key, said so, and resumed when those settings
    come back."""
    train, val = sample
    spec = InputSpec(planes="six", counts=True)
    cfg = TrainConfig(epochs=1, batch_size=1024, lr=0.003, seed=5)
    ckpt = tmp_path / "run.ckpt"
    fit(_tiny(spec), EvalTask(spec), train, val, cfg, checkpoint=ckpt, device="cpu", progress=False)
    first = ckpt.read_bytes()
    capsys.readouterr()
    h = fit(_tiny(spec), EvalTask(spec), train, val, cfg.replace(batch_size=2000), checkpoint=ckpt, device="cpu",
            progress=False)
    assert h.epochs == 1
    kept = [p for p in tmp_path.iterdir() if p.name.startswith("run.") and p != ckpt]
    assert len(kept) == 1 and kept[0].read_bytes() == first
    err = capsys.readouterr().err
    assert str(ckpt) in err and "other settings" in err and str(kept[0]) in err
    # the first settings again: resumed from the kept file (one more epoch, not two)
    h2 = fit(_tiny(spec), EvalTask(spec), train, val, cfg.replace(epochs=2), checkpoint=ckpt, device="cpu",
             progress=False)
    import io

    assert h2.epochs == 2 and not kept[0].exists()   # resumed: it became the checkpoint again
    assert h2.train_loss[0] == torch.load(io.BytesIO(first), weights_only=True)["history"]["train_loss"][0]


@pytest.mark.parametrize("content", [b"\x00\x13 not a checkpoint \xff" * 40, "list"])
def test_a_corrupt_checkpoint_is_an_error_naming_the_file(sample, tmp_path, content):
    from knights.learn.training import TrainingError

    train, val = sample
    spec = InputSpec(planes="six", counts=True)
    ckpt = tmp_path / "run.ckpt"
    if content == "list":
        torch.save([1, 2, 3], ckpt)
    else:
        ckpt.write_bytes(content)
    before = ckpt.read_bytes()
    with pytest.raises(TrainingError, match=rf"{ckpt}: not a training checkpoint"):
        fit(_tiny(spec), EvalTask(spec), train, val, TrainConfig(epochs=1, batch_size=1024), checkpoint=ckpt,
            device="cpu", progress=False)
    assert ckpt.read_bytes() == before


def test_save_model_never_writes_a_broken_model_over_a_good_one(tmp_path):
    """A NaN model, or metadata recording ``"mae": NaN``, is refused before anything is written."""
    spec = InputSpec(planes="six", counts=True)
    path = tmp_path / "v1.pt"
    modelfile.save_model(_tiny(spec), path, {"test": {"mae": 0.5}})
    good_pt, good_json = path.read_bytes(), path.with_suffix(".json").read_bytes()
    broken = _tiny(spec)
    with torch.no_grad():
        next(iter(broken.parameters())).fill_(float("nan"))
    with pytest.raises(modelfile.ModelFileError, match=r"v1\.pt.*non-finite"):
        modelfile.save_model(broken, path, {"test": {"mae": 0.5}})
    with pytest.raises(modelfile.ModelFileError, match=r"v1\.json.*mae.*not a finite number"):
        modelfile.save_model(_tiny(spec), path, {"test": {"mae": float("nan")}})
    assert path.read_bytes() == good_pt and path.with_suffix(".json").read_bytes() == good_json
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v1.json", "v1.pt"]


@pytest.mark.slow
def test_train_command_refuses_a_nan_checkpoint_and_keeps_the_good_model(tmp_path, capsys):
    """The issue's run: ``knights train EL/v1 --quick --out-dir D`` twice, the checkpoint
    poisoned in between: exit 2 naming the checkpoint, ``v1.pt`` and ``v1.json`` untouched."""
    from knights import cli

    args = ["train", "EL/v1", "--quick", "--out-dir", str(tmp_path)]
    assert cli.main(args) == 0
    pt, meta = (tmp_path / "v1.pt").read_bytes(), (tmp_path / "v1.json").read_bytes()
    _poison_checkpoint(tmp_path / "EL_v1.ckpt")
    capsys.readouterr()
    assert cli.main([*args, "--epochs", "2"]) == 2
    err = capsys.readouterr().err
    assert "knights train: error:" in err and "EL_v1.ckpt" in err and "non-finite" in err
    assert (tmp_path / "v1.pt").read_bytes() == pt and (tmp_path / "v1.json").read_bytes() == meta


def test_batches_worked_out_ahead_come_in_order_and_carry_errors():
    """``ahead`` (fit's second thread, which draws, flips and encodes the next batches while
    the model steps): same items in the same order; an error in the work is raised at its
    item; a caller that stops early leaves no thread behind."""
    import threading

    from knights.learn.training import ahead

    assert list(ahead(range(50), lambda i: i * i)) == [i * i for i in range(50)]

    def fail_at_7(i: int) -> int:
        if i == 7:
            raise KeyError("row 7")
        return i

    got = []
    with pytest.raises(KeyError, match="row 7"):
        for value in ahead(range(20), fail_at_7):
            got.append(value)
    assert got == list(range(7))
    drawn = []

    def source():
        for i in range(10_000):
            drawn.append(i)
            yield i

    stream = ahead(source(), lambda i: i)
    assert next(stream) == 0
    stream.close()
    assert not any(t.name == "batches-ahead" for t in threading.enumerate())
    assert len(drawn) < 10                    # the worker stopped a few items ahead, not at the end
    with pytest.raises(ValueError, match="depth"):
        next(ahead(range(3), lambda i: i, depth=0))
