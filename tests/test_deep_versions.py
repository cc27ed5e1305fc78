"""EL V11 (residual CNN, global pooling) and EL V12 (residual blocks + transformer,
win-probability buckets): the parts they add to the one loop, and that each saves, loads
safely and answers in pawns like every other version. That they learn is their notebooks'
quick run (tests/test_notebooks.py, ``DEEP``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from knights.data.cache import ChunkCache, load_encoded
from knights.data.chunks import select_chunks
from knights.evaluate.base import network_evaluator
from knights.features import planes as P
from knights.learn import registry
from knights.learn.buckets import MAX_PAWNS, BucketHead, WinBuckets
from knights.learn.experiment import SAMPLE_DATA, run_version, version_task
from knights.learn.training import BucketTask, EvalTask, fit, seed_everything

SAMPLE = registry.REPO_ROOT / SAMPLE_DATA


def test_twelve_planes_hold_each_piece_once():
    rng = np.random.default_rng(0)
    squares = rng.integers(-6, 7, size=(50, 64)).astype(np.int8)
    planes = P.twelve_planes(squares)
    assert planes.shape == (50, 12, 8, 8)
    assert np.array_equal(planes.sum(axis=1).reshape(50, 64), (squares != 0).astype(np.float32))
    six = P.six_planes(squares)   # +1 White, -1 Black: the same information, split by colour
    assert np.array_equal(planes[:, :6] - planes[:, 6:], six)


@pytest.mark.parametrize("bins", [64, 128])
def test_bucket_targets_are_distributions_centred_on_the_win_probability(bins):
    b = WinBuckets(bins=bins)
    pawns = torch.linspace(-MAX_PAWNS, MAX_PAWNS, 81)
    t = b.targets(pawns)
    assert torch.allclose(t.sum(dim=1), torch.ones(81), atol=1e-5) and (t >= 0).all()
    peak = b.centers[t.argmax(dim=1)]
    assert torch.all((peak - b.win_probability(pawns)).abs() <= 1.0 / bins)
    back = b.pawns(torch.log(t + 1e-12))   # the targets' own expectation gives the pawns back
    inner = pawns.abs() <= 9
    assert torch.allclose(back[inner], pawns[inner], atol=0.02)
    assert (back.abs() <= MAX_PAWNS + 1e-4).all()


def test_bucket_loss_is_lowest_at_the_target():
    b = WinBuckets()
    pawns = torch.tensor([-4.0, 0.0, 0.5, 7.0])
    exact = b.loss(torch.log(b.targets(pawns) + 1e-12), pawns)
    for shift in (-1.0, 1.0, 3.0):
        assert b.loss(torch.log(b.targets(pawns + shift) + 1e-12), pawns) > exact + 1e-3


def test_bucket_head_gives_logits_in_training_and_pawns_otherwise():
    head = BucketHead(8, WinBuckets(bins=32))
    x = torch.randn(5, 8)
    assert head.train()(x).shape == (5, 32)
    y = head.eval()(x)
    assert y.shape == (5,) and (y.abs() <= MAX_PAWNS + 1e-4).all()


def test_versions_pick_their_task():
    assert type(version_task(registry.get("EL/v11"))) is EvalTask
    task = version_task(registry.get("EL/v12"))
    assert isinstance(task, BucketTask) and task.buckets == registry.get("EL/v12").library.BUCKETS


@pytest.mark.parametrize("name", ["EL/v11", "EL/v12"])
def test_deep_versions_answer_in_pawns_for_any_batch(name):
    lib = registry.get(name).library
    torch.manual_seed(0)
    model = lib.build_model().eval()
    cache = ChunkCache()
    block = load_encoded(select_chunks(SAMPLE, "a"), cache)
    with torch.inference_mode():
        whole = model(*lib.INPUTS.tensors(block))
        one = model(*lib.INPUTS.tensors(block.take(np.arange(3))))
    assert whole.shape == (len(block),) and torch.isfinite(whole).all()
    assert torch.allclose(one, whole[:3], atol=1e-4)   # eval mode: no batch statistics leak between rows


@pytest.mark.parametrize("name", ["EL/v11", "EL/v12"])
def test_deep_versions_save_and_load(name, tmp_path):
    """A run on one chunk of the sample, one epoch: the saved file loads (weights_only)
    into an evaluator that reproduces the test metrics the run recorded. (That the
    networks learn is their notebooks' quick run: tests/test_notebooks.py, ``DEEP``.)"""
    result = run_version(name, quick=True, train="a", epochs=1, out_dir=tmp_path, progress=False)
    meta = result.meta
    assert len(meta["history"]["val_loss"]) == 1 and meta["data"]["train"]["rows"] == len(
        load_encoded(select_chunks(SAMPLE, "a"), ChunkCache()))
    test = load_encoded(select_chunks(SAMPLE, "k-m"), ChunkCache())
    assert meta["test"]["rows"] == len(test)
    ev = network_evaluator(name, tmp_path)
    pred = ev.evaluate(test)
    assert abs(float(np.mean(np.abs(pred - test.target))) - meta["test"]["mae"]) < 1e-3


def test_deep_version_training_is_bit_identical():
    """Batch norm, attention and the bucket loss keep training reproducible: the same
    seed and data give the same bytes of weights (the loop seeds before each run; the
    model is built after the same seed)."""
    version = registry.get("EL/v12")
    lib = version.library
    data = load_encoded(select_chunks(SAMPLE, "a"), ChunkCache())
    cfg = lib.TRAIN.replace(epochs=1, batch_size=512)
    states = []
    for scramble in (1, 2):
        torch.manual_seed(scramble)   # whatever state the process happens to be in
        seed_everything(cfg.seed)
        model = lib.build_model()
        fit(model, version_task(version), data, data.take(np.arange(500)), cfg, device="cpu", progress=False)
        states.append(model.state_dict())
    for key in states[0]:
        assert torch.equal(states[0][key], states[1][key]), key


def test_metadata_names_each_loss():
    """A bucket network's train loss is in another unit than its validation loss, and the
    metadata says so (the report and the notebooks read it to label the curves)."""
    from knights.learn.experiment import loss_names

    assert loss_names(registry.get("EL/v12"))["train"].startswith("HL-Gauss cross-entropy")
    assert loss_names(registry.get("EL/v12"))["validation"] == "L1 (pawns)"
    assert loss_names(registry.get("EL/v11")) == {"train": "L1 (pawns)", "validation": "L1 (pawns)"}
