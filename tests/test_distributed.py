"""Distributed training: two CPU processes (gloo, started by torchrun) train a version to
the weights one process gets with the same global batch, and resume from their checkpoint.

Run as a script (``torchrun ... tests/test_distributed.py OUT``), this file is the
processes' side of the test: ``knights train --distributed`` for one epoch, then again
for two, which resumes after the first.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from knights.data.cache import ChunkCache, iter_batches, load_encoded
from knights.data.chunks import select_chunks
from knights.learn import modelfile, registry
from knights.learn.distributed import Replicas, choose_precision, global_batch, settle
from knights.learn.experiment import SAMPLE_DATA, run_version

RUN = ["EL/v1", "--quick", "--train", "a-b", "--val", "i", "--test", "k", "--batch-size", "1000"]
"""5,000 training rows in global batches of 1,000 (500 per process)."""


def test_shares_of_a_batch_are_equal_and_cover_it(tmp_path):
    data = load_encoded(select_chunks(registry.REPO_ROOT / SAMPLE_DATA, "a"), ChunkCache(tmp_path))
    data = dataclasses.replace(data.take(np.arange(1003)), target=np.arange(1003, dtype=np.float32))  # row ids
    for world in (2, 3):
        shares = [list(Replicas(rank=r, world=world).batches(data, 300, seed=7)) for r in range(world)]
        whole = list(iter_batches(data, 300, seed=7))
        assert all(len(s) == len(whole) for s in shares)
        for step, batch in enumerate(whole):
            parts = [s[step].target for s in shares]
            assert len({len(p) for p in parts}) == 1            # equal shares: the gradient average is exact
            taken = np.concatenate(parts)
            assert len(set(taken)) == len(taken) == len(batch) - len(batch) % world   # no row twice
            assert set(taken) <= set(batch.target)               # only rows of this batch
            for p, s in zip(parts, shares, strict=True):         # and each share's other columns go with its rows
                assert np.array_equal(s[step].squares, data.squares[p.astype(int)])
    with pytest.raises(ValueError, match="batch size 301 is not a multiple of the 2 processes"):
        next(Replicas(rank=0, world=2).batches(data, 301, seed=7))
    halves = [Replicas(rank=r, world=2).share(data) for r in (0, 1)]
    assert np.array_equal(np.concatenate([h.target for h in halves]), data.target)


def test_batch_and_precision_choices():
    cpu2 = Replicas(rank=0, world=2)
    assert global_batch(25_000, None, cpu2) == 25_000                 # the CPU keeps the version's batch
    assert global_batch(25_001, None, cpu2) == 25_002                 # rounded up to equal shares
    assert global_batch(25_000, 4_000, cpu2) == 4_000
    with pytest.raises(ValueError, match="--batch-size 4001 is not a multiple of the 2 processes"):
        global_batch(25_000, 4_001, cpu2)
    gpu2 = Replicas(rank=0, world=2, device=torch.device("cuda", 0))
    assert global_batch(25_000, None, gpu2) == 50_000                 # on GPUs: the version's batch per GPU
    assert choose_precision("auto", torch.device("cpu")) == "float32"
    with pytest.raises(ValueError, match="needs a CUDA GPU"):
        choose_precision("bf16", torch.device("cpu"))
    with pytest.raises(ValueError, match="unknown precision"):
        choose_precision("fp8", torch.device("cpu"))


def test_outside_torchrun_the_error_says_how_to_start(monkeypatch, capsys):
    from knights.cli import main

    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(var, raising=False)
    assert main(["train", "EL/v1", "--distributed", "--quick"]) == 2
    err = capsys.readouterr().err
    assert "not started by torchrun" in err and "torchrun --standalone --nproc-per-node 2" in err
    monkeypatch.setenv("WORLD_SIZE", "2")   # torchrun started two processes, but not a distributed run
    assert main(["train", "EL/v1", "--quick"]) == 2
    assert "add --distributed" in capsys.readouterr().err


def test_a_group_join_started_is_ended_by_close_after_a_barrier_unless_it_failed(monkeypatch):
    import socket

    import torch.distributed as dist

    from knights.learn import distributed

    with socket.socket() as s:   # a free port for the one-process group's store
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for var, value in {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1",
                       "MASTER_PORT": str(port)}.items():
        monkeypatch.setenv(var, value)
    barriers: list[int] = []
    real = distributed.settle
    monkeypatch.setattr(distributed, "settle", lambda: (barriers.append(1), real()))
    try:
        for wait, expected in ((True, [1]), (False, [])):
            barriers.clear()
            replicas = Replicas.join("cpu")
            assert replicas.owns_group and dist.is_initialized() and replicas.world == 1
            replicas.close(wait=wait)
            assert not dist.is_initialized() and barriers == expected
        dist.init_process_group("gloo")   # a group the caller started: used, and left open
        replicas = Replicas.join("cpu")
        assert not replicas.owns_group
        replicas.close()
        assert dist.is_initialized() and barriers == []
    finally:   # no group left to the tests after this one, whatever failed
        if dist.is_initialized():
            dist.destroy_process_group()


@pytest.mark.slow   # torchrun starts two more processes that import torch and train: seconds, more under load
def test_two_gloo_processes_train_the_weights_of_one(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("KNIGHTS_CACHE", str(cache))
    # the reference: one process, two epochs, the same global batch
    one = run_version("EL/v1", quick=True, train="a-b", val="i", test="k", epochs=2, batch_size=1000,
                      out_dir=tmp_path / "one", progress=False)
    first = run_version("EL/v1", quick=True, train="a-b", val="i", test="k", epochs=1, batch_size=1000,
                        out_dir=tmp_path / "first", progress=False)

    torchrun = Path(sys.executable).with_name("torchrun")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "KNIGHTS_CACHE": str(cache)}
    with subprocess.Popen([str(torchrun), "--standalone", "--nproc-per-node", "2", __file__, str(tmp_path / "two")],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          cwd=registry.REPO_ROOT, start_new_session=True) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=240)
        except subprocess.TimeoutExpired:   # end the launcher and the processes it started, not only the launcher
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            pytest.fail(f"torchrun did not finish in 240 s: {stdout[-2000:]} {stderr[-2000:]}")
    assert proc.returncode == 0, stdout[-3000:] + stderr[-3000:]
    assert "2 processes (gloo, cpu, float32), global batch 1,000 (500 each)" in stdout
    assert "resuming from" in stdout and "after epoch 1" in stdout

    def weights(path: Path) -> dict[str, torch.Tensor]:
        return modelfile.load_state(path)

    for ours, theirs in ((tmp_path / "two" / "v1-epoch1.pt", first.weights), (tmp_path / "two" / "v1.pt", one.weights)):
        a, b = weights(ours), weights(theirs)
        assert a.keys() == b.keys()
        for k in a:
            assert torch.allclose(a[k], b[k], rtol=1e-4, atol=1e-6), (ours.name, k, float((a[k] - b[k]).abs().max()))
    meta = modelfile.read_meta(tmp_path / "two" / "v1.json")
    assert meta["distributed"] == {"processes": 2, "backend": "gloo", "device": "cpu", "precision": "float32"}
    assert meta["train_config"]["batch_size"] == 1000
    assert np.allclose(meta["history"]["train_loss"], one.history.train_loss, rtol=1e-5)
    assert np.allclose(meta["history"]["val_loss"], one.history.val_loss, rtol=1e-5)
    # one writer: the checkpoint holds both epochs; the processes' rows were shared, not repeated
    state = torch.load(tmp_path / "two" / "EL_v1.ckpt", weights_only=True)
    assert len(state["history"]["train_loss"]) == 2
    assert not any(p.name.startswith(".tmp-") for p in cache.iterdir())


def _processes_side(out: str) -> int:
    """What each process torchrun starts runs: one epoch, keep its weights, then two (resuming).
    Both runs use one process group (``knights train`` leaves a group it did not start open)."""
    import torch.distributed as dist

    from knights.cli import main

    dist.init_process_group("gloo")
    code = 1
    try:
        first = [*RUN, "--distributed", "--out-dir", out, "--epochs", "1"]
        if main(["train", *first]) != 0:
            return 1
        if os.environ["RANK"] == "0":
            for suffix in (".pt", ".json"):   # the weights and the metadata that verifies them
                shutil.copy(Path(out) / f"v1{suffix}", Path(out) / f"v1-epoch1{suffix}")
        code = main(["train", *first[:-1], "2"])
        return code
    finally:
        if code == 0:
            settle()   # as Replicas.close() does before it ends a group it started
        dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(_processes_side(sys.argv[1]))
