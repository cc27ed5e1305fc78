"""Search benchmarks (found by ``knights bench``): ``search``.

Where the search's time goes, side by side in one run on the same middlegame positions
of the committed sample (:func:`~knights.bench.engine.middlegame_positions`), one core:

``search_nodes``  nodes a second of :class:`~knights.play.search.SearchEngine` with the
                  default network, against python-chess's bare legal move generation
                  (a perft to depth 2: generate, push, pop, nothing else). The ratio says
                  how much a search node costs beyond making the move; the details split
                  the search's time between the evaluator and everything else.
``search_evals``  positions a second the search hands the evaluator, against the
                  evaluator's own rate on batches of the same size made outside any
                  search (``Evaluator.evaluate`` alone). Near 1: the search is fed by
                  the evaluator's speed, not by its own bookkeeping. Target >= 0.5.
"""

from __future__ import annotations

import time
from functools import partial

import chess
import numpy as np

from knights.bench.core import benchmark, make_result
from knights.bench.engine import middlegame_positions, network_evaluator_for_timing
from knights.evaluate.base import Evaluator
from knights.evaluate.timing import timed

EVAL_SHARE_TARGET = 0.5


def perft(board: chess.Board, depth: int) -> int:
    """Leaf count of the legal move tree to ``depth``: python-chess's bare move generation."""
    if depth == 0:
        return 1
    total = 0
    for move in board.generate_legal_moves():
        board.push(move)
        total += perft(board, depth - 1)
        board.pop()
    return total


def movegen_rate(boards: list[chess.Board]) -> float:
    """Nodes a second of :func:`perft` to depth 2 over ``boards`` (best of 3 each)."""
    nodes = seconds = 0.0
    for board in boards:
        best, count = timed(partial(perft, board.copy(), 2), 3)
        nodes += count
        seconds += best
    return nodes / seconds


def evaluator_rate(evaluator: Evaluator, boards: list[chess.Board], batch: int) -> float:
    """Positions a second of ``evaluator.evaluate`` on batches of ``batch`` children of ``boards``."""
    from knights.board.positions import Positions
    from knights.play.children import expand

    positions, seconds = 0, 0.0
    for board in boards:
        moves = list(board.legal_moves)[:batch]
        kids = expand(board, moves)
        n = len(moves)
        batch_positions = Positions(kids.squares, np.full(n, board.turn == chess.BLACK, np.int8),
                                    kids.check.astype(np.int8), np.zeros(n, np.int8))
        best, _ = timed(partial(evaluator.evaluate, batch_positions), 5)
        positions += n
        seconds += best
    return positions / seconds


@benchmark("search")
def bench_search(quick: bool) -> list[dict]:
    import torch

    from knights.play.search import SearchEngine, SearchLimits

    torch.set_num_threads(1)
    boards = middlegame_positions(4 if quick else 12)
    evaluator, trained = network_evaluator_for_timing()
    seconds_each = 0.5 if quick else 2.0
    nodes = evals = calls = 0
    spent = eval_spent = 0.0
    depths = []
    for board in boards:
        engine = SearchEngine(evaluator, stochastic=False)
        started = time.perf_counter()
        decision = engine.choose(board, limits=SearchLimits.movetime(seconds_each))
        spent += time.perf_counter() - started
        c = engine.counters
        nodes += c.nodes
        evals += c.eval_positions
        calls += c.eval_calls
        eval_spent += c.eval_seconds
        depths.append(decision.depth)
    search_nps = nodes / spent
    batch = max(1, round(evals / max(calls, 1)))
    movegen = movegen_rate(boards)
    own = evaluator_rate(evaluator, boards, batch)
    search_eps = evals / spent
    details = {"evaluator": evaluator.name, "trained_weights": trained, "positions": len(boards),
               "seconds_per_position": seconds_each, "mean_depth": round(float(np.mean(depths)), 2),
               "nodes": nodes, "search_nodes_per_s": round(search_nps), "movegen_nodes_per_s": round(movegen),
               "evaluated_positions": evals, "evaluator_calls": calls, "mean_batch": batch,
               "eval_share_of_time": round(eval_spent / spent, 3),
               "bookkeeping_share_of_time": round(1 - eval_spent / spent, 3),
               "search_evals_per_s": round(search_eps), "evaluator_own_evals_per_s": round(own), "threads": 1}
    return [
        make_result("search_nodes", search_nps, movegen, target=0.0, unit="nodes/s",
                    baseline="python-chess perft(2): legal move generation, push, pop", details=details),
        make_result("search_evals", search_eps, own, target=EVAL_SHARE_TARGET, unit="positions/s",
                    baseline=f"the evaluator alone on batches of {batch}", details=details),
    ]
