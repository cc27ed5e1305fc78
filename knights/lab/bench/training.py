"""Training throughput: our pipeline against the model's own limit and the original's loader.

Three ways to run the same V8 training steps (same model, optimiser, batch size)
on the committed sample, side by side in one process:

``model``     the step alone on random tensors already in memory: the model's limit.
``ours``      chunk files -> encoded cache -> shuffled batches -> six planes +
              counts -> step: the full pipeline of :func:`knights.learn.training.fit`.
``row``       what the original did for every batch: pandas rows, one python-chess
              Board per row to fill the planes and count the pieces, then the step.

Targets: ``ours`` at least 90% of ``model`` and at least 4x ``row``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from knights.lab.bench.core import benchmark, make_result, make_skip


def _model_and_opt():
    from knights.learn import registry

    version = registry.get("EL/v8")
    torch.manual_seed(0)
    model = version.build()
    opt = torch.optim.Adam(model.parameters(), lr=version.library.TRAIN.lr)
    return model, opt, version.library.INPUTS


def _step(model: torch.nn.Module, opt: torch.optim.Optimizer, planes: torch.Tensor, extra: torch.Tensor,
          target: torch.Tensor) -> None:
    loss = torch.nn.functional.l1_loss(model(planes, extra), target)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()


def _row_by_row_batch(frame, start: int, stop: int):
    """One batch encoded the original way: a Board per row."""
    import chess

    from knights.data import csslab

    kinds = (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING)
    weights = (1 / 8, 3 / 2, 3.1 / 2, 5 / 2, 9 / 1)
    n = stop - start
    planes = np.zeros((n, 6, 8, 8), dtype=np.float32)
    counts = np.zeros((n, 10), dtype=np.float32)
    target = np.zeros(n, dtype=np.float32)
    for i, (_, row) in enumerate(frame.iloc[start:stop].iterrows()):
        board = chess.Board(row.board)
        for square, piece in board.piece_map().items():
            planes[i, piece.piece_type - 1, 7 - chess.square_rank(square), chess.square_file(square)] = (
                1.0 if piece.color else -1.0)
        for j, kind in enumerate(kinds[:5]):
            counts[i, j] = len(board.pieces(kind, chess.WHITE)) * weights[j]
            counts[i, 5 + j] = -len(board.pieces(kind, chess.BLACK)) * weights[j]
        target[i] = csslab.eval_to_pawns(str(row.cp))
    return torch.from_numpy(planes), torch.from_numpy(counts), torch.from_numpy(target)


@benchmark("train")
def bench_train(quick: bool) -> list[dict]:
    import pandas as pd

    from knights.data.cache import ChunkCache, iter_batches, load_encoded
    from knights.data.chunks import select_chunks
    from knights.lab.bench.core import workdir
    from knights.learn import registry
    from knights.learn.experiment import SAMPLE_DATA

    batch = 1024 if quick else 8192
    files = select_chunks(registry.REPO_ROOT / SAMPLE_DATA, "a-c" if quick else "all")
    cache = ChunkCache(workdir() / "train-cache")
    rows = len(load_encoded(files, cache))  # builds the cache once, as the first epoch of a run does
    sizes = [min(batch, rows - s) for s in range(0, rows, batch)]

    model, opt, spec = _model_and_opt()
    tensors = {n: (torch.randn(n, 6, 8, 8), torch.randn(n, spec.n_extra), torch.randn(n)) for n in set(sizes)}
    _step(model, opt, *tensors[batch])  # warm-up

    def run_model() -> None:
        """One epoch's worth of steps (same batch sizes) on tensors already in memory."""
        for n in sizes:
            _step(model, opt, *tensors[n])

    def run_ours() -> None:
        """One epoch as fit() runs it: read the cache, shuffle, encode each batch, step."""
        data = load_encoded(files, cache)
        for block in iter_batches(data, batch, seed=1):
            planes, extra = spec.tensors(block)
            _step(model, opt, planes, extra, torch.from_numpy(np.asarray(block.target)))

    frame = pd.concat([pd.read_csv(f, usecols=["board", "cp"], dtype=str) for f in files[:8]], ignore_index=True)
    row_steps = 1 if quick else 2

    def run_row() -> None:
        for s in range(row_steps):
            _step(model, opt, *_row_by_row_batch(frame, s * batch, (s + 1) * batch))

    times: dict[str, list[float]] = {"model": [], "ours": [], "row": []}
    for _ in range(2 if quick else 3):   # alternate, so all three meet the same machine load
        for name, fn in (("model", run_model), ("ours", run_ours), ("row", run_row)):
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    rate = {k: (rows if k != "row" else row_steps * batch) / min(v) for k, v in times.items()}
    details = {"batch": batch, "rows_per_epoch": rows, "threads": torch.get_num_threads(),
               "model_rows_per_s": round(rate["model"]), "row_by_row_rows_per_s": round(rate["row"]),
               "model": "EL/v8", "data": SAMPLE_DATA}
    return [
        make_result("train_vs_model", rate["ours"], rate["model"], target=0.90, unit="rows/s",
                    baseline="V8 step on random tensors in memory (the model's limit)", details=details),
        make_result("train_vs_row", rate["ours"], rate["row"], target=4.0, unit="rows/s",
                    baseline="pandas rows + python-chess Board per row, then the same step", details=details),
    ]


@benchmark("train_sparse")
def bench_train_sparse(quick: bool) -> list[dict]:
    """EL/v13's training steps as :func:`~knights.learn.training.fit` runs them (feature lists
    from the cached squares, the sparse product, the win-probability loss, Adam) against
    the same network summed by ``nn.EmbeddingBag`` (the usual way), and against EL/v10's
    dense convolutions on the same rows. The issue's absolute target, 200,000 rows a
    second on 2 cores, is in the details (``v13_rows_per_s``)."""
    from knights.data.cache import ChunkCache, iter_batches, load_encoded
    from knights.data.chunks import select_chunks
    from knights.lab.bench.core import workdir
    from knights.learn import registry
    from knights.learn.experiment import SAMPLE_DATA
    from knights.learn.nnue import SparseNet
    from knights.learn.training import WinProbTask

    files = select_chunks(registry.REPO_ROOT / SAMPLE_DATA, "a-c" if quick else "all")
    data = load_encoded(files, ChunkCache(workdir() / "train-cache"))
    v13, v10 = registry.get("EL/v13").library, registry.get("EL/v10").library
    batch = v13.TRAIN.batch_size
    task = WinProbTask(v13.INPUTS)

    class BagNet(SparseNet):
        """The same network, its columns summed by nn.EmbeddingBag (one more row: the padding)."""

        def accumulator(self, features: torch.Tensor) -> torch.Tensor:
            weight = torch.cat([self.columns, torch.zeros(1, self.hidden)])
            sums: torch.Tensor = torch.nn.functional.embedding_bag(features, weight, mode="sum", padding_idx=768)
            return sums + self.bias

    def epoch_of(model: torch.nn.Module, spec: Any, loss: Any) -> Callable[[], None]:
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)

        def run() -> None:
            for block in iter_batches(data, batch, seed=1):
                out = model(*spec.tensors(block))
                value = loss(out, block, torch.device("cpu"))
                opt.zero_grad(set_to_none=True)
                value.backward()
                opt.step()
        return run

    torch.manual_seed(0)
    runs = {"v13": epoch_of(SparseNet(128), v13.INPUTS, task.loss),
            "bag": epoch_of(BagNet(128), v13.INPUTS, task.loss),
            "v10": epoch_of(v10.build_model(), v10.INPUTS, WinProbTask(v10.INPUTS).loss)}
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(2 if quick else 3):   # alternate, so all meet the same machine load
        for name, fn in runs.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    rate = {k: len(data) / min(v) for k, v in times.items()}
    details = {"batch": batch, "rows_per_epoch": len(data), "threads": torch.get_num_threads(),
               "v13_rows_per_s": round(rate["v13"]), "embedding_bag_rows_per_s": round(rate["bag"]),
               "v10_rows_per_s": round(rate["v10"]), "target_rows_per_s": 200_000, "data": SAMPLE_DATA}
    return [
        make_result("train_sparse_vs_embedding_bag", rate["v13"], rate["bag"], target=1.2, unit="rows/s",
                    baseline="the same network, columns summed by nn.EmbeddingBag", details=details),
        make_result("train_sparse_vs_dense", rate["v13"], rate["v10"], target=10.0, unit="rows/s",
                    baseline="EL/v10's convolutions on the same rows and batches", details=details),
    ]


@benchmark("train_cuda")
def bench_train_cuda(quick: bool) -> list[dict]:
    """EL/v17's training on a GPU against the same machine's CPU cores: whole epochs of
    :func:`~knights.learn.training.fit` (batches drawn, files flipped, feature lists built
    on the CPU and copied, the sparse product, Adam) on the committed sample repeated to
    ``rows_per_epoch`` rows. The details add the GPU's step alone on batches already on
    it (the model's limit there, so the gap to ``fit`` is the CPU side's cost), a larger
    batch, and how far the GPU's forward pass and gradients are from the CPU's on the
    same weights and batch. Skipped without CUDA; a skip leaves a measured result in
    ``bench.json`` as it was (:func:`~knights.lab.bench.core.write_results`)."""
    if not torch.cuda.is_available():
        return [make_skip("train_cuda", "no CUDA device here (the GPU's figures, if any, stay as measured)")]
    import dataclasses

    from knights.data.cache import ChunkCache, iter_batches, load_encoded
    from knights.data.chunks import select_chunks
    from knights.lab.bench.core import workdir
    from knights.learn import registry
    from knights.learn.experiment import SAMPLE_DATA
    from knights.learn.training import WinProbTask, fit

    v17 = registry.get("EL/v17").library
    sample = load_encoded(select_chunks(registry.REPO_ROOT / SAMPLE_DATA, "all"), ChunkCache(workdir() / "train-cache"))
    repeats = 8 if quick else 64
    data = sample.take(np.tile(np.arange(len(sample)), repeats))
    task = WinProbTask(v17.INPUTS)
    cuda, cpu = torch.device("cuda"), torch.device("cpu")
    name = torch.cuda.get_device_name(0)

    def fit_rate(device: torch.device, batch: int) -> float:
        torch.manual_seed(0)
        cfg = dataclasses.replace(v17.TRAIN, epochs=3, batch_size=batch, keep_best=False)
        history = fit(v17.build_model(), task, data, None, cfg, device=device, progress=False)
        return max(history.rows_per_second[1:])      # the first epoch pays CUDA's start-up

    def step_rate(batch: int) -> float:
        """Steps alone, on batches built and copied to the GPU beforehand."""
        torch.manual_seed(0)
        model = v17.build_model().to(cuda)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        blocks = list(iter_batches(data, batch, seed=1))
        ready = [(task.inputs(b, cuda), b) for b in blocks]
        seconds = []
        for _ in range(3):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for inputs, block in ready:
                loss = task.loss(model(*inputs), block, cuda)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
            torch.cuda.synchronize()
            seconds.append(time.perf_counter() - t0)
        return len(data) / min(seconds[1:])

    def parity() -> dict[str, float]:
        """Largest gap between the GPU's and the CPU's output and weight gradients."""
        torch.manual_seed(0)
        net, gpu = v17.build_model(), v17.build_model()
        gpu.load_state_dict(net.state_dict())
        gpu.to(cuda)
        block = data.take(np.arange(min(4096, len(data))))
        outs = []
        for model, device in ((net, cpu), (gpu, cuda)):
            out = model(*task.inputs(block, device))
            task.loss(out, block, device).backward()
            outs.append((out.detach().cpu(), {k: p.grad.detach().cpu() for k, p in model.named_parameters()
                                              if p.grad is not None}))
        return {"output": float((outs[0][0] - outs[1][0]).abs().max()),
                "gradient": max(float((outs[0][1][k] - outs[1][1][k]).abs().max()) for k in outs[0][1])}

    batch = v17.TRAIN.batch_size
    gaps = parity()
    rates = {"cpu": fit_rate(cpu, batch), "cuda": fit_rate(cuda, batch), "cuda_4x_batch": fit_rate(cuda, 4 * batch),
             "cuda_steps_only": step_rate(batch)}
    details = {"gpu": name, "batch": batch, "rows_per_epoch": len(data), "cpu_threads": torch.get_num_threads(),
               **{f"{k}_rows_per_s": round(v) for k, v in rates.items()},
               "max_output_gap": gaps["output"], "max_gradient_gap": gaps["gradient"],
               "model": "EL/v17", "data": f"{SAMPLE_DATA} x{repeats}"}
    return [make_result("train_cuda", rates["cuda"], rates["cpu"], target=1.0, unit="rows/s",
                        baseline=f"the same fit() on this machine's {torch.get_num_threads()} CPU threads",
                        details=details)]
