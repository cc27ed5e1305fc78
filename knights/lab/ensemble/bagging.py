"""A bag of networks of one design: EL/v24's recipe trained from scratch on data/full, once per seed.

The democracy study (:mod:`knights.lab.ensemble.study`) asks how much members that differ only by chance
(their initial weights, the order of their batches, which rows' files are mirrored) gain by voting. Each member is
EL/v24's design and settings (:class:`~knights.learn.nnue.SparseNet` with a 256-wide accumulator and a 32-32 head,
the squared error of the win probability, quiet rows only, files mirrored on half the rows that cannot castle,
Adam at 0.002 on a cosine schedule, batches of 4,096, 30 epochs, the best validation epoch kept) on data/full's
training letters alone (``a-i except every 10th``; validation ``every 10th except j``), trained by the one loop
(:func:`knights.learn.training.fit`, through :func:`knights.learn.ablation.train_variant`) with ``seed`` = 0, 1, ...
The seed sets both the initial weights and the data order.

    python -m knights.lab.ensemble.bagging --seeds 0-4        # runs/democracy/bag/seed0.pt ... seed4.pt (+ .json)

A finished member (its file there, with its checksum) is not trained again. The files are plain state dicts written
by :func:`knights.learn.modelfile.save_model` (loaded with ``weights_only=True``, checksum verified).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from knights.learn import registry

BAG_DIR = registry.REPO_ROOT / "runs" / "democracy" / "bag"
DESIGN = "EL/v24"
"""The version whose design and settings every bag member repeats (on data/full alone)."""


def variant(seed: int) -> Any:
    """The ablation variant of EL/v24's design on data/full alone with ``seed``."""
    from knights.lab.ablation import Variant

    return Variant(f"bag_seed{seed}", flip_files=True, hidden=256,
                   settings=(("batch_size", 4096), ("seed", int(seed))),
                   says=f"{DESIGN}'s design and settings on data/full alone, seed {seed}")


def member_path(seed: int, folder: Path = BAG_DIR) -> Path:
    return folder / f"seed{seed}.pt"


def train_member(seed: int, folder: Path = BAG_DIR, device: str | None = None, progress: bool = True,
                 epochs: int | None = None) -> Path:
    """Train (or find) bag member ``seed``; returns its weights file."""
    from knights.data.cache import ChunkCache
    from knights.lab import ablation
    from knights.learn import modelfile
    from knights.learn.experiment import FULL_DATA

    path = member_path(seed, folder)
    if path.is_file() and modelfile.meta_of(path) is not None:
        return path
    cache = ChunkCache(registry.repo_path(FULL_DATA).parent / "cache")
    t0 = time.perf_counter()
    model, record = ablation.train_variant(variant(seed), cache, device, progress, epochs)
    record["wall_seconds"] = round(time.perf_counter() - t0, 1)
    folder.mkdir(parents=True, exist_ok=True)
    modelfile.save_model(model, path, {"bag": {"design": DESIGN, "seed": int(seed), "data": FULL_DATA,
                                               "letters": "train a-i except every 10th, val every 10th except j"},
                                       "training": record})
    return path


def parse_seeds(text: str) -> list[int]:
    """``"0-4"`` or ``"0,2,5"`` -> the seeds."""
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.strip().partition("-")
        out += list(range(int(lo), int(hi) + 1)) if hi else [int(lo)]
    if not out or min(out) < 0:
        raise ValueError(f"bad seeds {text!r}: e.g. 0-4 or 0,2,5")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m knights.lab.ensemble.bagging", description=__doc__.splitlines()[0])
    p.add_argument("--seeds", default="0-4")
    p.add_argument("--out", default=str(BAG_DIR))
    p.add_argument("--device")
    p.add_argument("--epochs", type=int, help="another epoch count (a quick look; the study uses the recipe's 30)")
    a = p.parse_args(argv)
    for seed in parse_seeds(a.seeds):
        path = train_member(seed, Path(a.out), a.device, progress=True, epochs=a.epochs)
        print(f"seed {seed}: {path}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
