"""The one training loop, shared by every version.

Read it top to bottom: a :class:`TrainConfig` says how to train, a :class:`Task`
says what a batch is and how it is scored (evaluation networks: L1 in pawns; move
networks: their own loss), and :func:`fit` runs epochs over in-memory encoded data,
with a tqdm bar, per-epoch train and validation loss, a checkpoint after every
epoch and resume from it.

>>> cfg = TrainConfig(epochs=2, batch_size=4096, optimizer="adam", lr=0.006)
>>> cfg.lr_at(0.0), cfg.lr_at(1.0)                      # the original's constant rate
(0.006, 0.006)
>>> cosine = cfg.replace(schedule="cosine")
>>> round(cosine.lr_at(0.5), 5), round(cosine.lr_at(1.0), 5)   # half way; the floor, lr x min_lr_ratio
(0.00306, 0.00012)

A run is then one call (:func:`knights.learn.experiment.run_version` makes it for a version)::

    history = fit(model, EvalTask(spec), train, val, cfg, checkpoint="runs/v8.ckpt")

The same loop also runs as one of several processes that train one model together
(``fit(..., replicas=...)``, :mod:`knights.learn.distributed`): it then asks the
:class:`Replicas` for its share of every batch, for the backward step, and for the
sums of the epoch's figures over all processes; only rank 0 writes the checkpoint.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import random
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext, suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path
from queue import Empty, Queue
from typing import Any, Protocol, TypeVar

import numpy as np
import torch
from torch import nn

from knights.data.cache import iter_batches
from knights.data.chunks import Encoded
from knights.features.inputs import Inputs
from knights.learn.buckets import WinBuckets
from knights.learn.modelfile import _load_failure as load_failure  # a model file's words, for the same refusal
from knights.learn.targets import PAWN_LOGIT

T = TypeVar("T")
U = TypeVar("U")


# -- configuration ------------------------------------------------------------------
@dataclass(frozen=True)
class TrainConfig:
    """How to train: optimiser, learning rate, epochs, batch size, seed.

    The original trained at a constant learning rate and kept the last epoch; those
    are the defaults. ``schedule="cosine"`` lowers the rate step by step along half a
    cosine to ``lr * min_lr_ratio`` by the last epoch; ``keep_best`` ends with the
    weights of the epoch with the lowest validation loss; ``mirror`` flips a random
    half of every evaluation batch to the other colour (:meth:`Encoded.mirrored`);
    ``flip_files`` reverses the files of a random half of the rows that have no castling
    rights (:meth:`Encoded.file_flipped`), for networks whose inputs already see
    both colours alike (EL/v13's features).
    """

    epochs: int = 10
    batch_size: int = 15_000
    optimizer: str = "adam"   # "adam", "adamw" or "sgd"
    lr: float = 0.006
    momentum: float = 0.0     # SGD only
    weight_decay: float = 0.0  # AdamW only (decoupled weight decay)
    seed: int = 0
    eval_batch_size: int = 50_000
    schedule: str = "constant"  # "constant" or "cosine"
    min_lr_ratio: float = 0.02
    keep_best: bool = False
    mirror: bool = False
    flip_files: bool = False

    def __post_init__(self) -> None:
        if self.schedule not in ("constant", "cosine"):
            raise ValueError(f"unknown schedule {self.schedule!r}: use 'constant' or 'cosine'")

    def lr_at(self, progress: float) -> float:
        """The learning rate after ``progress`` (0..1) of the whole run."""
        if self.schedule == "constant":
            return self.lr
        floor = self.lr * self.min_lr_ratio
        return floor + (self.lr - floor) * 0.5 * (1.0 + math.cos(math.pi * min(max(progress, 0.0), 1.0)))

    def replace(self, **changes: object) -> TrainConfig:
        return TrainConfig(**{**asdict(self), **changes})


def choose_device(override: str | None = None) -> torch.device:
    """CUDA, then Apple MPS, then the CPU; ``override`` (or ``$KNIGHTS_DEVICE``) wins."""
    override = override or os.environ.get("KNIGHTS_DEVICE")
    if override:
        return torch.device(override)
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


# -- a command's options, checked before any work ---------------------------------------
def check_device(text: str | None, option: str = "--device") -> None:
    """Refuse a device torch does not know (``None``: not given), naming ``option``."""
    if text is None:
        return
    try:
        torch.device(text)
    except RuntimeError:
        shown = repr(text) if len(text) <= 40 else repr(text[:37]) + "\u2026"
        raise ValueError(f"{option} {shown} is not a device such as cpu, cuda or cuda:1") from None


def check_at_least(low: float, *options: tuple[str, float | None]) -> None:
    """Refuse the first ``(option, value)`` whose value is below ``low`` (``None``: not given)."""
    for option, value in options:
        if value is not None and value < low:
            raise ValueError(f"{option} must be at least {low}, not {value}")


def check_output(text: str | Path | None, option: str, *, folder: bool = False) -> None:
    """Refuse an output that could never be written: ``text`` (a file, or a folder when ``folder``)
    that exists as the other kind, or whose path runs through a file or an unwritable folder.
    A ValueError naming the option and the path; ``None`` (not given) passes."""
    if text is None:
        return
    path = Path(text)
    if folder and path.exists() and not path.is_dir():
        raise ValueError(f"{option} {text} is a file, not a folder: name a folder (it is made when missing)")
    if not folder and path.is_dir():
        raise ValueError(f"{option} {text} is a folder: name the file to write")
    for parent in path.absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                raise ValueError(f"{option} {text}: {parent} is a file, not a folder")
            if not os.access(parent, os.W_OK | os.X_OK):
                raise ValueError(f"{option} {text}: cannot write in {parent} (permission denied)")
            return


def check_folder(text: str | Path | None, option: str) -> None:
    """Refuse an input folder that is not there or is a file (``None``: not given)."""
    if text is not None and not Path(text).is_dir():
        raise ValueError(f"{option} {text} is a file, not a folder" if Path(text).exists()
                         else f"{option} {text}: no such folder")


def make_optimizer(model: nn.Module, cfg: TrainConfig) -> torch.optim.Optimizer:
    if cfg.optimizer == "adam":
        return torch.optim.Adam(model.parameters(), lr=cfg.lr)
    if cfg.optimizer == "adamw":
        return torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=cfg.momentum)
    raise ValueError(f"unknown optimizer {cfg.optimizer!r}: use 'adam', 'adamw' or 'sgd'")


def seed_everything(seed: int) -> None:
    """Seed every generator a run draws from. On a GPU, cuDNN is also told to pick its
    deterministic convolutions (and not to time and switch between algorithms), so that
    two runs there give the same weights too (seen: EL/v3 twice on an H200 differed)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


# -- tasks --------------------------------------------------------------------------
class Task(Protocol):
    """What one batch means for a family of networks."""

    def inputs(self, block: Encoded, device: torch.device) -> tuple[torch.Tensor, ...]: ...
    def loss(self, output: torch.Tensor, block: Encoded, device: torch.device) -> torch.Tensor: ...


@dataclass(frozen=True)
class EvalTask:
    """Evaluation networks: predict pawns from White's side, L1 loss (reads as the
    average error in pawns). Their targets flip sign with the colours, so
    :meth:`augment` can mirror rows."""

    spec: Inputs

    def augment(self, block: Encoded, rng: np.random.Generator) -> Encoded:
        return block.mirrored(rng.random(len(block)) < 0.5)

    def inputs(self, block: Encoded, device: torch.device) -> tuple[torch.Tensor, ...]:
        return self.spec.tensors(block, device)

    def loss(self, output: torch.Tensor, block: Encoded, device: torch.device) -> torch.Tensor:
        target = torch.from_numpy(np.asarray(block.target, dtype=np.float32)).to(device)
        return nn.functional.l1_loss(output, target)


@dataclass(frozen=True)
class BucketTask(EvalTask):
    """Evaluation networks with a win-probability bucket head (EL V12,
    :mod:`knights.learn.buckets`): in train mode the network gives logits and the
    loss is the HL-Gauss cross-entropy; in eval mode it gives pawns and the loss is
    L1, so the validation loss (which picks the kept epoch) reads as the error in
    pawns, comparable with every other version's."""

    buckets: WinBuckets = field(default_factory=WinBuckets)

    def loss(self, output: torch.Tensor, block: Encoded, device: torch.device) -> torch.Tensor:
        if output.ndim == 1:
            return super().loss(output, block, device)
        target = torch.from_numpy(np.asarray(block.target, dtype=np.float32)).to(device)
        return self.buckets.loss(output, target)


@dataclass(frozen=True)
class WinProbTask(EvalTask):
    """Evaluation networks that learn in win-probability space (EL V13,
    :mod:`knights.learn.targets`): the model still answers pawns, and the loss is the
    squared difference of the two win probabilities, so a pawn near equality costs
    far more than a pawn at +8 and mates weigh no more than any won position. The
    validation loss is the same, so the kept epoch is the best one in that space."""

    def loss(self, output: torch.Tensor, block: Encoded, device: torch.device) -> torch.Tensor:
        target = torch.from_numpy(np.asarray(block.target, dtype=np.float32)).to(device)
        p = torch.sigmoid(PAWN_LOGIT * output.float())
        q = torch.sigmoid(PAWN_LOGIT * target)
        return ((p - q) ** 2).mean()


class Replicas(Protocol):
    """What :func:`fit` needs to run as process ``rank`` of ``world`` that train one
    model together (:class:`knights.learn.distributed.Replicas` is the implementation).

    ``batch_size`` stays the *global* batch: every process takes its share of the rows a
    single process would have taken, and the gradients are averaged over processes, so
    the steps are those of one process (up to float rounding).
    """

    rank: int
    world: int

    def wrap(self, model: nn.Module, epochs_done: int) -> nn.Module:
        """The module to run forward and backward through (gradients shared); all
        processes must have resumed after the same epoch."""
        ...

    def batches(self, data: Encoded, batch_size: int, seed: int) -> Iterator[Encoded]:
        """This process's share of each batch that ``iter_batches(data, batch_size, seed=seed)`` makes."""
        ...

    def share(self, data: Encoded) -> Encoded:
        """This process's share of ``data`` for the validation loss."""
        ...

    def autocast(self) -> AbstractContextManager[object]:
        """The context of the forward pass (mixed precision on GPUs)."""
        ...

    def step(self, loss: torch.Tensor, opt: torch.optim.Optimizer) -> None:
        """Backward pass and optimiser step."""
        ...

    def sum(self, values: Sequence[float]) -> list[float]:
        """Each value summed over all processes."""
        ...


# -- history and checkpoints ----------------------------------------------------------
StateDict = dict[str, torch.Tensor]
"""A model's weights by name (``model.state_dict()``)."""

@dataclass
class History:
    train_loss: list[float] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    epoch_seconds: list[float] = field(default_factory=list)
    rows_per_second: list[float] = field(default_factory=list)
    device: str = ""
    best_epoch: int | None = None   # 1-based; set when the run keeps its best epoch

    @property
    def epochs(self) -> int:
        return len(self.train_loss)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


_LATER_SETTINGS = ("schedule", "min_lr_ratio", "keep_best", "mirror", "weight_decay", "flip_files")


def config_key(cfg: TrainConfig, model: nn.Module, n_train: int, task: object = None) -> str:
    """A short hash that ties a checkpoint to one run's settings (all but the epoch
    count, so a finished constant-rate run can also be extended; a scheduled run's
    rate depends on its length, so there the count is part of the key). Settings
    left at their defaults that older checkpoints did not have are not hashed, so
    those checkpoints still resume."""
    shapes = {k: list(v.shape) for k, v in model.state_dict().items()}
    defaults = TrainConfig()
    settings = {k: v for k, v in asdict(cfg).items()
                if not (k == "epochs" and cfg.schedule == "constant")
                and not (k in _LATER_SETTINGS and v == getattr(defaults, k))}
    buckets = getattr(task, "buckets", None)   # a bucket network's targets are part of what it learns
    ranking = getattr(task, "key", None)      # a ranked run's siblings and weight (knights.learn.siblings)
    extra = ([asdict(buckets)] if buckets is not None else []) + ([ranking()] if callable(ranking) else [])
    text = json.dumps([settings, shapes, n_train, *extra], sort_keys=True)
    return hashlib.sha1(text.encode()).hexdigest()[:16]


class TrainingError(RuntimeError):
    """A run that cannot go on: a damaged checkpoint, or a loss or weights that are not finite.
    The message names the file or the epoch; the last good checkpoint is left as it was."""


def save_checkpoint(path: Path, model: nn.Module, opt: torch.optim.Optimizer, history: History, key: str,
                    best: StateDict | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                "history": history.as_dict(), "key": key, "best": best}, tmp)
    os.replace(tmp, path)


def _read_checkpoint(path: Path) -> dict[str, Any]:
    """The checkpoint at ``path`` as saved by :func:`save_checkpoint`; anything else (random bytes,
    a list, a pickle of other Python objects, said as a model file's refusal says it: never loaded)
    is a :class:`TrainingError` naming the file, never a traceback."""
    advice = "delete it (or move it away) to start this run afresh"
    try:
        with warnings.catch_warnings():   # torch's notes on a foreign pickle's protocol: the refusal says it all
            warnings.simplefilter("ignore")
            state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - whatever a damaged file makes torch.load raise
        raise TrainingError(f"{path}: not a training checkpoint ({load_failure(exc)}); {advice}") from None
    if not (isinstance(state, dict) and isinstance(state.get("model"), dict) and isinstance(state.get("history"), dict)
            and "optimizer" in state and isinstance(state.get("key"), str)):
        raise TrainingError(f"{path}: not a training checkpoint (a {type(state).__name__} without the model, "
                            f"optimizer, history and key of a run); {advice}")
    return state


def kept_checkpoint(path: Path, key: str) -> Path:
    """Where a checkpoint of the settings ``key`` is kept when a run of other settings takes ``path``."""
    return path.with_name(f"{path.stem}.{key}{path.suffix}")


def claim_checkpoint(path: Path, key: str, *, report: bool = True) -> None:
    """Make ``path`` this run's checkpoint: a checkpoint of other settings there is never
    overwritten but renamed to :func:`kept_checkpoint` (with a note on stderr), and one kept
    earlier for these settings comes back to ``path``, so that it resumes."""
    import sys

    if path.is_file():
        other = _read_checkpoint(path)["key"]
        if other == key:
            return
        aside = kept_checkpoint(path, other)
        os.replace(path, aside)
        if report:
            print(f"note: {path} was made with other settings; kept as {aside} (run those settings again to "
                  f"resume it); this run starts afresh", file=sys.stderr)
    mine = kept_checkpoint(path, key)
    if mine.is_file():
        os.replace(mine, path)


def _check_finite(model: nn.Module, where: str, advice: str) -> None:
    bad = [k for k, v in model.state_dict().items() if v.is_floating_point() and not bool(torch.isfinite(v).all())]
    if bad:
        raise TrainingError(f"{where}: the weights are non-finite (NaN or infinity in {', '.join(bad[:3])}"
                            f"{', ...' if len(bad) > 3 else ''}); {advice}")


def load_checkpoint(path: Path, model: nn.Module, opt: torch.optim.Optimizer,
                    key: str) -> tuple[History, StateDict | None] | None:
    """Restore a checkpoint of the same run: its history and the best epoch's weights
    (if it keeps them); None when there is none (or it is of another run). A damaged file,
    or one whose weights are not finite, is a :class:`TrainingError` naming it."""
    if not path.is_file():
        return None
    state = _read_checkpoint(path)
    if state.get("key") != key:
        return None
    try:
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        history = History(**state["history"])
    except (RuntimeError, TypeError, ValueError, KeyError) as exc:
        first = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
        raise TrainingError(f"{path}: not a training checkpoint of this model ({first}); "
                            "delete it (or move it away) to start this run afresh") from None
    _check_finite(model, f"{path} (after epoch {history.epochs})", "delete it (or move it away) to start afresh")
    return history, state.get("best")


# -- the loop ---------------------------------------------------------------------------
@torch.no_grad()
def evaluate_loss(model: nn.Module, task: Task, data: Encoded, cfg: TrainConfig, device: torch.device) -> float:
    """Mean loss over ``data`` (weighted by batch size)."""
    model.eval()
    total, n = 0.0, 0
    for block in iter_batches(data, cfg.eval_batch_size, shuffle=False):
        out = model(*task.inputs(block, device))
        total += float(task.loss(out, block, device)) * len(block)
        n += len(block)
    return total / max(n, 1)


def ahead(items: Iterable[T], prepare: Callable[[T], U], depth: int = 2) -> Iterator[U]:
    """``prepare(item)`` for each item, in order, worked out by a second thread up to
    ``depth`` items ahead of the caller: the next batch is drawn, flipped and encoded
    while the model steps on this one (numpy and torch release the interpreter's lock
    in their loops). An error in ``prepare`` is raised here, at its item."""
    if depth < 1:
        raise ValueError(f"ahead(): depth must be at least 1, not {depth}")
    done = object()
    queue: Queue[Any] = Queue(maxsize=depth)
    stop = threading.Event()

    def work() -> None:
        try:
            for item in items:
                if stop.is_set():
                    return
                queue.put((True, prepare(item)))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            queue.put((False, exc))
            return
        queue.put((True, done))

    worker = threading.Thread(target=work, name="batches-ahead", daemon=True)
    worker.start()
    try:
        while True:
            ok, value = queue.get()
            if not ok:
                raise value
            if value is done:
                return
            yield value
    finally:   # the caller stopped early (or failed): let the worker finish its put and end
        stop.set()
        while worker.is_alive():
            with suppress(Empty):
                queue.get(timeout=0.05)


def fit(model: nn.Module, task: Task, train: Encoded, val: Encoded | None, cfg: TrainConfig, *,
        checkpoint: str | Path | None = None, device: str | torch.device | None = None,
        progress: bool = True, replicas: Replicas | None = None) -> History:
    """Train ``model`` for ``cfg.epochs`` epochs (counting epochs already in the checkpoint).

    After every epoch the model, optimiser and history go to ``checkpoint``; a rerun
    with the same settings resumes after the last finished epoch. With ``replicas``
    this is one process of several (see :class:`Replicas`); rank 0 alone reports
    progress and writes the checkpoint.
    """
    from tqdm.auto import tqdm

    device = torch.device(device) if device is not None else choose_device()
    if device.type == "cuda" and device.index is None:   # the same GPU in every thread (ahead's too)
        device = torch.device("cuda", torch.cuda.current_device())
    seed_everything(cfg.seed)
    model.to(device)
    opt = make_optimizer(model, cfg)
    key = config_key(cfg, model, len(train), task)
    ckpt = Path(checkpoint) if checkpoint else None
    lead = replicas is None or replicas.rank == 0
    if ckpt and lead and replicas is None:   # (a distributed run's processes must all read the same file)
        claim_checkpoint(ckpt, key)
    restored = load_checkpoint(ckpt, model, opt, key) if ckpt else None
    history, best = restored if restored else (History(), None)
    history.device = str(device)
    progress = progress and lead
    net = model if replicas is None else replicas.wrap(model, history.epochs)
    if history.epochs and progress:
        print(f"resuming from {ckpt} after epoch {history.epochs}")
    augment = getattr(task, "augment", None) if cfg.mirror else None
    if cfg.mirror and augment is None:
        raise ValueError(f"mirror=True, but {type(task).__name__} cannot mirror its batches")
    steps_per_epoch = -(-len(train) // cfg.batch_size)
    wide = torch.float32 if device.type == "mps" else torch.float64    # (MPS has no float64)
    # where the second thread (ahead) puts a batch's inputs: on the device itself for CUDA
    # (measured on an H200), but on the CPU for other accelerators, as MPS can fail when two
    # threads use it at once; the main thread then moves them
    staging = device if device.type in ("cpu", "cuda") else torch.device("cpu")
    for epoch in range(history.epochs, cfg.epochs):
        net.train()
        t0 = time.perf_counter()
        summed, n = torch.zeros((), dtype=wide, device=device), 0.0
        rng = np.random.default_rng(cfg.seed * 1000 + epoch + 7919)
        seed = cfg.seed * 1000 + epoch
        batches = (iter_batches(train, cfg.batch_size, seed=seed) if replicas is None
                   else replicas.batches(train, cfg.batch_size, seed))
        bar = tqdm(batches, total=steps_per_epoch, desc=f"epoch {epoch + 1}/{cfg.epochs}",
                   unit="batch", disable=not progress, leave=False)

        def prepare(block: Encoded, rng: np.random.Generator = rng) -> tuple[Encoded, tuple[torch.Tensor, ...]]:
            if augment is not None:
                block = augment(block, rng)
            if cfg.flip_files:
                block = block.file_flipped(rng.random(len(block)) < 0.5)
            return block, task.inputs(block, staging)

        for step, (block, inputs) in enumerate(ahead(bar, prepare)):
            if staging != device:
                inputs = tuple(t.to(device) for t in inputs)
            for group in opt.param_groups:
                group["lr"] = cfg.lr_at((epoch * steps_per_epoch + step) / (cfg.epochs * steps_per_epoch))
            with nullcontext() if replicas is None else replicas.autocast():
                out = net(*inputs)
                loss = task.loss(out, block, device)
            opt.zero_grad(set_to_none=True)
            if replicas is None:
                loss.backward()
                opt.step()
            else:
                replicas.step(loss, opt)
            # summed where the loss is: reading it every step would make the CPU wait for
            # a GPU, which could otherwise run while the next batch is prepared
            summed = summed + loss.detach().to(wide) * len(block)
            n += len(block)
            if progress and step % 32 == 31:
                bar.set_postfix(loss=f"{float(summed) / n:.4f}")
        total = float(summed)
        seconds = time.perf_counter() - t0
        if replicas is None:
            val_loss = (evaluate_loss(model, task, val, cfg, device)
                        if val is not None and len(val) else float("nan"))
        else:   # each process scores its share; the sums over all give every process the same figures
            mine = replicas.share(val) if val is not None else None
            rows = len(mine) if mine is not None else 0
            val_sum = evaluate_loss(model, task, mine, cfg, device) * rows if mine is not None and rows else 0.0
            total, n, val_sum, val_rows = replicas.sum([total, n, val_sum, rows])
            val_loss = val_sum / val_rows if val_rows else float("nan")
        train_loss = total / max(n, 1)
        has_val = val is not None and len(val) > 0
        if not math.isfinite(train_loss) or (has_val and not math.isfinite(val_loss)):
            what = "training" if not math.isfinite(train_loss) else "validation"
            kept = f"; {ckpt} keeps epoch {history.epochs}" if ckpt and history.epochs else ""
            raise TrainingError(f"epoch {epoch + 1}/{cfg.epochs}: the {what} loss is not finite "
                                f"({train_loss if what == 'training' else val_loss}): the run diverged (try a lower "
                                f"learning rate){kept}; nothing was written")
        history.train_loss.append(train_loss)
        history.val_loss.append(val_loss)
        history.epoch_seconds.append(seconds)
        history.rows_per_second.append(n / seconds if seconds > 0 else float("nan"))
        if cfg.keep_best and (history.best_epoch is None
                              or history.val_loss[-1] < history.val_loss[history.best_epoch - 1]):
            history.best_epoch = history.epochs
            best = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
        if progress:
            print(f"epoch {epoch + 1}/{cfg.epochs}: train {history.train_loss[-1]:.4f}  "
                  f"val {history.val_loss[-1]:.4f}  ({history.rows_per_second[-1]:,.0f} rows/s)")
        if ckpt and lead:
            save_checkpoint(ckpt, model, opt, history, key, best)
    if cfg.keep_best and best is not None:
        model.load_state_dict(best)
        if progress and history.best_epoch is not None:
            print(f"kept epoch {history.best_epoch} (validation {history.val_loss[history.best_epoch - 1]:.4f})")
    _check_finite(model, "the trained model", "nothing was written")
    model.eval()
    return history


def environment() -> dict[str, Any]:
    """Library versions and machine, for model metadata (scikit-learn's read from its installed metadata: a training
    run does not import scikit-learn for it)."""
    from importlib.metadata import version

    import chess

    return {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__,
            "python-chess": chess.__version__, "scikit-learn": version("scikit-learn"),
            "platform": platform.platform(), "cpu_count": os.cpu_count()}
