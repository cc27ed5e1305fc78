"""Training on several processes at once: DistributedDataParallel, launched by ``torchrun``.

One machine with two GPUs (or, on the CPU, two processes)::

    torchrun --standalone --nproc-per-node 2 -m knights.learn.distributed EL/v8

``torchrun`` starts the processes and tells each its place (``RANK``, ``WORLD_SIZE``,
``LOCAL_RANK`` and where to meet); ``docs/distributed.md`` shows several machines.
Every process then does what :func:`knights.learn.experiment.run_version` does, through
the same loop (:func:`knights.learn.training.fit` with a :class:`Replicas`):

* **Same start.** Each process seeds before it builds the model, so all start from the
  same weights (``DistributedDataParallel`` also copies rank 0's weights to the others).
* **Own share of the data.** The selected chunks are joined once into one encoded file
  in the chunk cache, which every process memory-maps. A batch is the same shuffled
  rows a single process would take (``iter_batches``); process ``r`` of ``W`` takes
  every ``W``-th of them, starting at ``r``, and reads only those rows.
* **Shared gradients.** ``backward()`` averages the gradients over the processes. The
  shares are equal, so the average is the gradient of the whole batch's mean loss: ``W``
  processes with ``B / W`` rows each take the step one process takes with ``B`` rows.
  (Exactly, up to float rounding, for the evaluation networks without batch norm; a
  move network's loss counts only rows with a recorded move, and the mirror augmentation
  draws per process, so those agree with one process in distribution, not step for
  step. Batch norm (EL V11, V12) normalises over the rows it sees: on CUDA its layers
  become ``SyncBatchNorm``, whose statistics cover the whole global batch; on the CPU,
  where PyTorch has no synchronised batch norm, each process normalises over its own
  share, which is again the same training in distribution, not step for step.)
* **One writer.** Rank 0 writes the checkpoint after every epoch and the model file at
  the end; a rerun resumes from the checkpoint (every process reads it, so on several
  machines it must be on a shared filesystem: the run refuses otherwise).

``--batch-size`` is the *global* batch and must be a multiple of the number of processes.
By default it is the version's batch on the CPU (so the result is the single-process
one) and the version's batch *per GPU* on CUDA, where a larger batch is what keeps a GPU
busy. On CUDA the forward pass runs in mixed precision (bfloat16 where the GPU has it,
else float16 with a gradient scaler); the CPU stays float32.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from knights.common import command_main
from knights.data.cache import ChunkCache, load_encoded
from knights.data.chunks import Encoded
from knights.learn import registry
from knights.learn.experiment import (
    Result,
    run_data,
    save_version,
    trained_rows,
    version_meta,
    version_task,
    warm_start,
)
from knights.learn.training import (
    TrainConfig,
    check_at_least,
    check_device,
    check_output,
    choose_device,
    fit,
    seed_everything,
)

PRECISIONS = ("auto", "float32", "bf16", "fp16")
"""``--precision``: auto is bfloat16 (else float16) on CUDA, float32 on the CPU."""
BACKENDS = ("auto", "nccl", "gloo")
"""``--backend``: auto is nccl for GPUs, gloo for CPU processes."""
TORCHRUN_HINT = "torchrun --standalone --nproc-per-node 2 -m knights.learn.distributed EL/v8"


# -- the processes -------------------------------------------------------------------------
def settle() -> None:
    """Wait for every process of the group (any backend) before it is destroyed. Destroying a gloo group
    straight after the last collective (a process's share of it done, the other's maybe not) sometimes aborts
    a process as it exits ("terminate called without an active exception"): 7 of 60 two-process runs of
    tests/test_distributed.py's processes did, none of 40 with this barrier first (runs of 2026-11-28)."""
    dist.barrier()


@dataclass
class Replicas:
    """This process's place among those training one model (what
    :class:`knights.learn.training.Replicas` asks for), and the collective calls.

    Sharing rows needs no process group, so it can be looked at in one process:

    >>> data = np.arange(10)
    >>> [Replicas(rank=r, world=2).rows_of(data[:7]) for r in (0, 1)]   # 7 rows: one is left over
    [array([0, 2, 4]), array([1, 3, 5])]
    """

    rank: int = 0
    world: int = 1
    local_rank: int = 0
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    precision: str = "float32"
    backend: str = "gloo"
    scaler: torch.amp.GradScaler | None = None
    owns_group: bool = False   # whether join() started the process group (and close() ends it)

    @classmethod
    def join(cls, device: str | None = None, backend: str = "auto", precision: str = "auto") -> Replicas:
        """Join the process group ``torchrun`` set up (environment variables ``RANK``,
        ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``). A group the
        caller already started is used as it is, and left open by :meth:`close`."""
        missing = [v for v in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT") if v not in os.environ]
        if missing:
            raise RuntimeError(f"not started by torchrun ({', '.join(missing)} unset): run it as '{TORCHRUN_HINT}' "
                               "(docs/distributed.md)")
        local_rank = int(os.environ["LOCAL_RANK"])
        dev = choose_device(device)
        if dev.type == "cuda":
            dev = torch.device("cuda", local_rank)
            torch.cuda.set_device(dev)
        elif dev.type != "cpu":
            raise ValueError(f"distributed training runs on CUDA GPUs or on CPUs, not on {dev}: use --device cpu")
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}: use {', '.join(BACKENDS)}")
        backend = ("nccl" if dev.type == "cuda" else "gloo") if backend == "auto" else backend
        if backend == "nccl" and dev.type != "cuda":
            raise ValueError("the nccl backend needs CUDA GPUs: use --backend gloo for CPU processes")
        precision = choose_precision(precision, dev)
        owns = not dist.is_initialized()
        if owns:
            dist.init_process_group(backend, device_id=dev if dev.type == "cuda" else None)
        scaler = torch.amp.GradScaler("cuda") if precision == "fp16" else None
        return cls(dist.get_rank(), dist.get_world_size(), local_rank, dev, precision, dist.get_backend(),
                   scaler, owns)

    def close(self, wait: bool = True) -> None:
        """End the process group if :meth:`join` started it, once every process has come this far (``wait``;
        not after a failure, when the others may be inside a collective that will never complete)."""
        if self.owns_group and dist.is_initialized():
            if wait:
                settle()
            dist.destroy_process_group()

    # what fit() calls
    def wrap(self, model: nn.Module, epochs_done: int) -> nn.Module:
        """``model`` wrapped so that ``backward()`` averages gradients over the processes.
        Every process must resume after the same epoch (they read one checkpoint)."""
        seen = self.sum([float(epochs_done), float(epochs_done) ** 2])
        if seen[1] * self.world != seen[0] ** 2:   # all equal exactly when the variance is 0
            raise RuntimeError(f"the processes resume from different epochs (rank {self.rank}: {epochs_done}): "
                               "every process must see the same checkpoint; on several machines put it on a "
                               "filesystem they share (--out-dir for --quick runs, else runs/)")
        ids = [self.device.index] if self.device.type == "cuda" else None
        if self.device.type == "cuda":   # batch statistics over the global batch, as one process has them
            model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        return DistributedDataParallel(model, device_ids=ids)

    def batches(self, data: Encoded, batch_size: int, seed: int) -> Iterator[Encoded]:
        """This process's rows of each batch ``iter_batches(data, batch_size, seed=seed)`` makes."""
        if batch_size % self.world:
            raise ValueError(f"batch size {batch_size} is not a multiple of the {self.world} processes: "
                             "each process takes an equal share of every batch")
        order = np.random.default_rng(seed).permutation(len(data))   # iter_batches' order
        for start in range(0, len(data), batch_size):
            mine = self.rows_of(order[start:start + batch_size])
            if len(mine):
                yield data.take(np.sort(mine))   # in file order: the memory map reads forward

    def rows_of(self, batch: np.ndarray) -> np.ndarray:
        """This process's rows of one batch: every ``world``-th from ``rank``; the last
        ``len(batch) % world`` rows are left out so that every share is the same size."""
        usable = len(batch) - len(batch) % self.world
        return batch[self.rank:usable:self.world]

    def share(self, data: Encoded) -> Encoded:
        """A contiguous ``1 / world`` of ``data`` (in memory), for the validation loss."""
        n = len(data)
        return data.take(np.arange(n * self.rank // self.world, n * (self.rank + 1) // self.world))

    def autocast(self) -> AbstractContextManager[object]:
        if self.precision == "float32":
            return nullcontext()
        return torch.autocast("cuda", dtype=torch.bfloat16 if self.precision == "bf16" else torch.float16)

    def step(self, loss: torch.Tensor, opt: torch.optim.Optimizer) -> None:
        if self.scaler is None:
            loss.backward()
            opt.step()
        else:   # float16 gradients would underflow: scale the loss up, the gradients back down
            self.scaler.scale(loss).backward()
            self.scaler.step(opt)
            self.scaler.update()

    def sum(self, values: Sequence[float]) -> list[float]:
        if self.world == 1 and not dist.is_initialized():
            return [float(v) for v in values]
        t = torch.tensor(list(values), dtype=torch.float64, device=self.device)
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        return [float(v) for v in t.tolist()]

    # for the run around fit()
    def same(self, value: Any) -> Any:
        """Rank 0's ``value``, on every process (any picklable object)."""
        box = [value]
        if dist.is_initialized():
            dist.broadcast_object_list(box, src=0)
        return box[0]


def choose_precision(asked: str, device: torch.device) -> str:
    """``"float32"``, ``"bf16"`` or ``"fp16"`` for ``--precision`` on ``device``."""
    if asked not in PRECISIONS:
        raise ValueError(f"unknown precision {asked!r}: use {', '.join(PRECISIONS)}")
    if device.type != "cuda":
        if asked not in ("auto", "float32"):
            raise ValueError(f"--precision {asked} needs a CUDA GPU: on the CPU training stays float32")
        return "float32"
    if asked == "auto":
        return "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    return asked


def global_batch(version_batch: int, asked: int | None, replicas: Replicas) -> int:
    """The batch all processes share each step: ``asked`` (a multiple of the processes),
    else the version's batch on the CPU and the version's batch per GPU on CUDA."""
    if asked is not None:
        if asked < 1 or asked % replicas.world:
            raise ValueError(f"--batch-size {asked} is not a multiple of the {replicas.world} processes: "
                             "each process takes an equal share of every batch")
        return asked
    base = version_batch * (replicas.world if replicas.device.type == "cuda" else 1)
    return -(-base // replicas.world) * replicas.world


# -- the data --------------------------------------------------------------------------------
def joined_rows(files: Sequence[Path], cache: ChunkCache,
                report: Callable[[str], None] | None = None) -> tuple[str, list[str]]:
    """Join the chunks' cached rows into one ``.npy`` file in the cache (once per set of
    chunk contents) and return its name and the chunks' checksums."""
    records = [cache.records(f, report) for f in files]
    checksums = [cache.checksums[str(f)] for f in files]
    name = f"v{ChunkCache.VERSION}-rows-{hashlib.sha1(''.join(checksums).encode()).hexdigest()}.npy"
    path = cache.root / name
    if not path.exists():
        cache.root.mkdir(parents=True, exist_ok=True)
        tmp = cache.root / f".tmp-{os.getpid()}-{name}"
        joined = np.lib.format.open_memmap(tmp, mode="w+", dtype=ChunkCache.RECORD,
                                           shape=(sum(len(r) for r in records),))
        start = 0
        for r in records:
            joined[start:start + len(r)] = r
            start += len(r)
        joined.flush()
        del joined
        os.replace(tmp, path)
    return name, checksums


def mapped_rows(files: Sequence[Path], cache: ChunkCache, replicas: Replicas,
                report: Callable[[str], None] | None = None) -> tuple[Encoded, list[str]]:
    """The rows of ``files`` memory-mapped (read as used, shared through the page cache by
    the processes of a machine), and the chunks' checksums. The first process of each
    machine builds the joined file; the others wait for it."""
    built = joined_rows(files, cache, report) if replicas.local_rank == 0 else None
    name, checksums = replicas.same(built)
    differs = replicas.sum([float(built is not None and built[0] != name)])[0]
    if differs:
        raise RuntimeError(f"the chunks of {files[0].parent} differ between machines (rank 0 has {name}): "
                           "every machine must hold the same data")
    records = np.load(cache.root / name, mmap_mode="r")
    return Encoded(*(records[f] for f in Encoded.FIELDS)), checksums


# -- a version, end to end -----------------------------------------------------------------------
def train_version(name: str, replicas: Replicas, *, data_dir: str | None = None, more: Sequence[str] = (),
                  train: str | None = None, val: str | None = None, test: str | None = None,
                  epochs: int | None = None, batch_size: int | None = None, quick: bool = False,
                  out_dir: str | Path | None = None, progress: bool = True) -> Result | None:
    """:func:`~knights.learn.experiment.run_version` as one of ``replicas.world`` processes:
    the same defaults, data, seed, checkpoint and files; rank 0 writes them and gets the
    :class:`~knights.learn.experiment.Result`, the other processes ``None``."""
    lead = replicas.rank == 0
    version = registry.get(name)
    lib = version.library
    plan = run_data(version, data_dir=data_dir, more=more, train=train, val=val, test=test, epochs=epochs,
                    batch_size=batch_size, quick=quick)
    if quick:
        out = Path(replicas.same(str(out_dir or (tempfile.mkdtemp(prefix="knights-quick-") if lead else ""))))
    else:
        out = Path(out_dir) if out_dir else version.weights().parent
    cfg: TrainConfig = lib.TRAIN.replace(epochs=plan.epochs,
                                         batch_size=global_batch(plan.batch_size, batch_size, replicas))

    cache = ChunkCache(plan.folder.parent / "cache") if not quick else ChunkCache()
    files = plan.files
    say = print if progress and lead else None
    train_rows, train_sums = mapped_rows(files["train"], cache, replicas, say)
    val_rows, val_sums = mapped_rows(files["val"], cache, replicas, say)
    kept = trained_rows(version, {"train": train_rows, "val": val_rows})   # e.g. quiet positions only
    train_rows, val_rows = kept["train"], kept["val"]
    if say:
        say(f"{version.name}: {replicas.world} processes ({replicas.backend}, {replicas.device.type}, "
            f"{replicas.precision}), global batch {cfg.batch_size:,} ({cfg.batch_size // replicas.world:,} each), "
            f"{len(train_rows):,} training rows")

    seed_everything(cfg.seed)   # before the model is built: the same initial weights in every process
    model = lib.build_model()
    copied = warm_start(model, lib.PARENT, out) if getattr(lib, "PARENT", None) else []
    checkpoint = (out if quick else registry.REPO_ROOT / "runs") / f"{version.family}_v{version.number}.ckpt"
    t0 = time.perf_counter()
    history = fit(model, version_task(version), train_rows, val_rows, cfg, checkpoint=checkpoint,
                  device=replicas.device, progress=progress, replicas=replicas)
    model.cpu()
    result = None
    if lead:
        test_rows = load_encoded(files["test"], cache, report=say)
        recipes = plan.recipes({"train": train_sums, "val": val_sums,
                                "test": [cache.checksums[str(f)] for f in files["test"]]},
                               {"train": len(train_rows), "val": len(val_rows), "test": len(test_rows)})
        processes = {"processes": replicas.world, "backend": replicas.backend,
                     "device": replicas.device.type, "precision": replicas.precision}
        meta = version_meta(version, model, copied, cfg, quick, recipes, history, time.perf_counter() - t0,
                            distributed=processes)
        result = save_version(version, model, history, meta, test_rows, out, progress=progress)
    replicas.sum([0.0])   # the others wait until the files are written
    return result


# -- the command --------------------------------------------------------------------------------
def add_run_options(parser: argparse.ArgumentParser) -> None:
    """What data and where: the options ``knights train`` and this module's command share."""
    for opt in ("data-dir", "train", "val", "test", "out-dir", "device"):
        parser.add_argument(f"--{opt}", default=None)
    parser.add_argument("--more", action="append", default=None, metavar="DIR",
                        help="another chunk folder whose training and validation letters are added "
                             "(e.g. data/more, from make more-data); the test letters stay the main folder's")
    parser.add_argument("--epochs", type=int, default=None)


def check_options(args: argparse.Namespace) -> None:
    """Refuse, before any work and in one line naming the option, what :func:`add_run_options` and
    ``--batch-size`` were given that no run could use (``knights train`` checks the same)."""
    check_at_least(1, ("--epochs", args.epochs), ("--batch-size", args.batch_size))
    check_output(args.out_dir, "--out-dir", folder=True)
    check_device(args.device)


def add_options(parser: argparse.ArgumentParser) -> None:
    """The options only a distributed run has (``knights train --distributed`` has them too)."""
    parser.add_argument("--backend", choices=BACKENDS, default="auto",
                        help="distributed runs: nccl (GPUs) or gloo (CPU processes); default: auto")
    parser.add_argument("--precision", choices=PRECISIONS, default="auto",
                        help="distributed runs: auto is bf16 (else fp16) on CUDA, float32 on the CPU")


def run(args: argparse.Namespace) -> int:
    """Train ``args.name`` as one process of the group torchrun started (its options checked first)."""
    check_options(args)
    replicas = Replicas.join(args.device, args.backend, args.precision)
    try:
        train_version(args.name, replicas, data_dir=args.data_dir, more=args.more or (), train=args.train,
                      val=args.val, test=args.test, epochs=args.epochs, batch_size=args.batch_size,
                      quick=args.quick, out_dir=args.out_dir, progress=not getattr(args, "quiet", False))
    except BaseException:
        replicas.close(wait=False)
        raise
    replicas.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="torchrun [...] -m knights.learn.distributed",
                                     description="Train a version on several processes (DistributedDataParallel); "
                                                 "start it with torchrun (docs/distributed.md).")
    parser.add_argument("name", help="version, e.g. EL/v8")
    add_run_options(parser)
    parser.add_argument("--batch-size", type=int, default=None, help="global batch, a multiple of the processes")
    parser.add_argument("--quick", action="store_true", help="committed sample, one epoch")
    parser.add_argument("--quiet", action="store_true")
    add_options(parser)
    return command_main(parser, run, argv, name=f"knights.learn.distributed (rank {os.environ.get('RANK', '?')})")


if __name__ == "__main__":
    sys.exit(main())
