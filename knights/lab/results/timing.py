"""Timing helpers shared by the trainer and the benchmarks: one core, one move decision.

A *move decision* of the one-ply bot evaluates the position after every legal
move (~35 in a middlegame) in one batch. :func:`decision_batches` builds such
batches from real positions; :func:`ms_per_decision` times an evaluator on them
with every thread pool (BLAS/OpenMP and torch) held to one thread.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TypeVar

import numpy as np

if TYPE_CHECKING:
    from knights.board.positions import Positions
    from knights.data.chunks import Encoded

T = TypeVar("T")


@contextlib.contextmanager
def single_core() -> Iterator[None]:
    """BLAS/OpenMP pools and torch limited to one thread inside the block."""
    import torch
    from threadpoolctl import threadpool_limits

    before = torch.get_num_threads()
    with threadpool_limits(limits=1):
        torch.set_num_threads(1)
        try:
            yield
        finally:
            torch.set_num_threads(before)


def decision_batches(block: Encoded, count: int = 12, seed: int = 0, min_moves: int = 20) -> list[Positions]:
    """``count`` batches of Positions: the children (after every legal move) of
    positions drawn from ``block`` that have at least ``min_moves`` legal moves."""
    from knights.board.arrays import board_from_arrays
    from knights.board.positions import positions_from_boards

    rng = np.random.default_rng(seed)
    batches = []
    for i in rng.permutation(len(block)):
        b = board_from_arrays(block.squares[i], bool(block.white[i]), int(block.castling[i]), int(block.ep[i]))
        if not b.is_valid():
            continue
        moves = list(b.legal_moves)
        if len(moves) < min_moves:
            continue
        children = []
        for mv in moves:
            c = b.copy(stack=False)
            c.push(mv)
            children.append(c)
        batches.append(positions_from_boards(children))
        if len(batches) == count:
            break
    if not batches:
        raise ValueError(f"no position with {min_moves}+ legal moves in the block")
    return batches


def ms_per_decision(evaluate: Callable[[Positions], object], batches: list[Positions], repeats: int = 5) -> float:
    """Median over the batches of the best of ``repeats`` timings, in ms, one core."""
    with single_core():
        evaluate(batches[0])   # warm caches and lazy initialisation
        per = []
        for batch in batches:
            best = float("inf")
            for _ in range(repeats):
                t0 = time.perf_counter()
                evaluate(batch)
                best = min(best, time.perf_counter() - t0)
            per.append(best)
    return float(np.median(per) * 1000)


def timed(fn: Callable[[], T], repeats: int) -> tuple[float, T]:
    """Best wall time of ``repeats`` calls of ``fn`` (time.perf_counter) and the last value.

    The best, not the mean: other load on the machine only ever adds time."""
    t0 = time.perf_counter()
    value = fn()
    times = [time.perf_counter() - t0]
    for _ in range(max(1, repeats) - 1):
        t0 = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t0)
    return min(times), value
