"""Search benchmarks (found by ``knights bench``): ``search``.

Where the search's time goes, side by side in one run on the same middlegame positions
of the committed sample (:func:`~knights.lab.bench.engine.middlegame_positions`), one core:

``search_nodes``  nodes a second of :class:`~knights.engine.search.SearchEngine` with the
                  default network, against python-chess's bare legal move generation
                  (a perft to depth 2: generate, push, pop, nothing else). The ratio says
                  how much a search node costs beyond making the move; the details split
                  the search's time between the evaluator and everything else.
``search_evals``  positions a second the search hands the evaluator, against the
                  evaluator's own rate on batches of the same size made outside any
                  search (``Evaluator.evaluate`` alone). Near 1: the search is fed by
                  the evaluator's speed, not by its own bookkeeping. Target >= 0.5.
``fast_search_vs_sunfish``
                  nodes a second of the compiled search the bot plays with
                  (:class:`~knights.engine.compiled_search.FastSearchEngine`, its network evaluated
                  incrementally; the piece-square fallback without its weights) against
                  sunfish's (PyPI ``sunfish``, its ``sunfish-uci`` driven through
                  python-chess) on the same positions, the same seconds each, in the same
                  run. sunfish's rate is its own report: the nodes and milliseconds of its
                  last ``info`` line. Target >= 1.0. The details split our time between
                  the evaluation, move generation, make/unmake and the rest (ordering,
                  the table, the tree): each part's count in the searches times its cost
                  measured alone on the same positions.
``fast_search_vs_counted``
                  the same compiled search against itself compiled with numba's reference
                  counts (in a process with ``KNIGHTS_NUMBA_COUNTED`` set and a cache folder
                  of its own), to a fixed depth on the same positions, each in a process of
                  its own: the same trees, node for node (checked), so the ratio is what
                  leaving the counts out buys. Target >= 1.25.
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from typing import Any

import chess
import numpy as np

from knights.evaluate.base import Evaluator
from knights.features.sparse import KING_ZONE, N_KING_ZONES
from knights.lab.bench.core import benchmark, make_result
from knights.lab.bench.engine import middlegame_positions, network_evaluator_for_timing
from knights.lab.results.timing import timed

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
    from knights.board.children import expand
    from knights.board.positions import Positions

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

    from knights.engine.search import SearchEngine, SearchLimits

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


FAST_VS_SUNFISH_TARGET = 1.0


def sunfish_rate(boards: list[chess.Board], seconds_each: float) -> tuple[float, list[dict]]:
    """sunfish's nodes a second over ``boards`` (the nodes and time of its last ``info``
    line on each position, summed) and what it reported per position."""
    import chess.engine

    from knights.lab.arena.peers import sunfish_command

    nodes = spent = 0.0
    rows = []
    engine = chess.engine.SimpleEngine.popen_uci(sunfish_command())
    try:
        for board in boards:
            result = engine.play(board, chess.engine.Limit(time=seconds_each), info=chess.engine.INFO_ALL,
                                 game=object())
            n, t = result.info.get("nodes"), result.info.get("time")
            if not n or not t:
                raise RuntimeError(f"sunfish reported no nodes or time on {board.fen()}: {result.info}")
            nodes += n
            spent += t
            rows.append({"nodes": int(n), "seconds": round(float(t), 3), "depth": result.info.get("depth")})
    finally:
        engine.quit()
    return nodes / spent, rows


def fast_search_parts(engine, boards: list[chess.Board], reps: int = 2000) -> dict[str, float]:
    """Seconds one static evaluation, one move generation and one make+unmake (with the
    accumulators) take in the compiled search, measured alone on ``boards``."""
    from knights.engine import compiled as core

    fast = engine.core
    costs = {"eval": 0.0, "movegen": 0.0, "make_unmake": 0.0}
    moves = 0
    for board in boards:
        fast.load(board)
        moves += len(fast.moves)
        for key, which in (("eval", 0), ("movegen", 1), ("make_unmake", 2)):
            core.time_parts(fast.pos, fast.net, fast.tables, 1, which)      # compiled already: warm
            started = time.perf_counter()
            core.time_parts(fast.pos, fast.net, fast.tables, reps, which)
            costs[key] += time.perf_counter() - started
    n = len(boards) * reps
    return {"eval": costs["eval"] / n, "movegen": costs["movegen"] / n,
            "make_unmake": costs["make_unmake"] / (n * max(1.0, moves / len(boards)))}


@benchmark("fast_search")
def bench_fast_search(quick: bool) -> list[dict]:
    """The compiled search beside sunfish, same positions, same seconds, same run."""
    from knights.engine.compiled_arrays import warm_up
    from knights.engine.compiled_search import FastSearchEngine, default_net_source
    from knights.engine.search import SearchLimits
    from knights.lab.bench.core import make_skip

    boards = middlegame_positions(4 if quick else 12)
    seconds_each = 0.5 if quick else 2.0
    compile_seconds = warm_up()
    source = default_net_source()
    nodes, spent, evals, gens, makes = 0, 0.0, 0, 0, 0
    depths = []
    engine = FastSearchEngine(net=source, stochastic=False)
    for board in boards:
        engine.new_game()
        started = time.perf_counter()
        decision = engine.choose(board, limits=SearchLimits.movetime(seconds_each))
        spent += time.perf_counter() - started
        nodes += engine.stats["nodes"]
        evals += engine.stats["evals"]
        gens += engine.stats["movegens"]
        makes += engine.stats["makes"]
        depths.append(decision.depth)
    ours = nodes / spent
    costs = fast_search_parts(engine, boards)
    split = {"evaluation": evals * costs["eval"] / spent, "move_generation": gens * costs["movegen"] / spent,
             "make_unmake": makes * costs["make_unmake"] / spent}
    split["rest"] = max(0.0, 1.0 - sum(split.values()))
    details = {"network": source or "piece-square fallback (no network weights)", "positions": len(boards),
               "seconds_per_position": seconds_each, "nodes": nodes, "fast_nodes_per_s": round(ours),
               "mean_depth": round(float(np.mean(depths)), 2), "evaluations": evals, "move_generations": gens,
               "makes": makes, "seconds_per_eval": costs["eval"], "seconds_per_movegen": costs["movegen"],
               "seconds_per_make_unmake": costs["make_unmake"],
               "time_split": {k: round(v, 3) for k, v in split.items()},
               "warm_up_seconds": round(compile_seconds, 2)}
    zones = zones_cost(engine.net, boards, 2_000 if quick else 20_000)
    counts = counted_cost(len(boards), 6 if quick else 9)
    try:
        theirs, rows = sunfish_rate(boards, seconds_each)
    except (ValueError, OSError) as exc:       # sunfish is not installed
        return [make_skip("fast_search_vs_sunfish", f"{exc}", target=FAST_VS_SUNFISH_TARGET, unit="nodes/s"), zones,
                counts]
    details["sunfish_nodes_per_s"] = round(theirs)
    details["sunfish"] = rows
    return [make_result("fast_search_vs_sunfish", ours, theirs, target=FAST_VS_SUNFISH_TARGET, unit="nodes/s",
                        baseline="sunfish-uci (PyPI sunfish) on the same positions and seconds", details=details),
            zones, counts]


ZONES_VS_PLAIN_TARGET = 0.85
COUNTED_TARGET = 1.25


def searched(engine: Any, boards: list[chess.Board], limits: Any) -> tuple[int, float]:
    """Nodes and seconds of ``engine`` searching each of ``boards`` to ``limits``, each from fresh tables."""
    started, nodes = time.perf_counter(), 0
    for board in boards:
        engine.new_game()
        engine.choose(board, limits=limits)
        nodes += engine.stats["nodes"]
    return nodes, time.perf_counter() - started


def depth_search(depth: int, positions: int) -> dict:
    """Nodes and seconds (best of three) of the compiled search to ``depth`` on the first ``positions`` middlegame
    positions, each from fresh tables: one side of :func:`counted_cost`, run in its own process."""
    from knights.engine.compiled_search import FastSearchEngine
    from knights.engine.search import SearchLimits

    boards = middlegame_positions(positions)
    engine = FastSearchEngine(stochastic=False)
    engine.choose(boards[0], limits=SearchLimits(depth=2))          # compiled (or loaded) before the clock starts
    runs = [searched(engine, boards, SearchLimits(depth=depth)) for _ in range(3)]
    return {"nodes": runs[-1][0], "seconds": min(seconds for _, seconds in runs)}


def counted_cost(positions: int, depth: int) -> dict:
    """The compiled search as shipped against the same search compiled with numba's reference counts
    (:data:`~knights.engine.compiled.COUNTED`: a process of its own with its own cache folder, compiled the first time,
    about a minute): :func:`depth_search` in each, one after the other."""
    import json
    import os
    import subprocess
    import sys
    import tempfile

    code = ("import json; from knights.lab.bench.search import depth_search; "
            f"print(json.dumps(depth_search({depth}, {positions})))")
    runs = {}
    ours = {k: v for k, v in os.environ.items() if k != "KNIGHTS_NUMBA_COUNTED"}       # the cache as it is
    counted = {**ours, "KNIGHTS_NUMBA_COUNTED": "1",
               "NUMBA_CACHE_DIR": str(Path(tempfile.gettempdir()) / f"knights-numba-counted-{os.getuid()}")}
    for name, env in (("ours", ours), ("counted", counted)):
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        runs[name] = json.loads(out.stdout.strip().splitlines()[-1])
    if runs["ours"]["nodes"] != runs["counted"]["nodes"]:      # not the same work: no ratio to give
        raise RuntimeError(f"with reference counts the search took {runs['counted']['nodes']} nodes, without "
                           f"{runs['ours']['nodes']}")
    rates = {k: v["nodes"] / v["seconds"] for k, v in runs.items()}
    return make_result("fast_search_vs_counted", rates["ours"], rates["counted"], target=COUNTED_TARGET,
                       unit="nodes/s",
                       baseline="the same search compiled with numba's reference counts, the same trees",
                       details={"depth": depth, "positions": positions, "nodes": runs["ours"]["nodes"],
                                "same_trees": True, "seconds": round(runs["ours"]["seconds"], 3),
                                "counted_seconds": round(runs["counted"]["seconds"], 3), "best_of": 3})


def zones_cost(net: Any, boards: list[chess.Board], nodes: int) -> dict:
    """What the king's zones cost the compiled search: the network searched as it is, against
    the same network packed as a zoned one whose zone columns are zero (the same values, so the
    same trees, node for node; only the zones' bookkeeping differs), alternating, best of two."""
    from knights.engine.compiled_search import FastSearchEngine
    from knights.engine.search import SearchLimits
    from knights.lab.bench.core import make_skip

    if net.use[0] == 0:
        return make_skip("fast_search_zones_vs_plain", "no network weights here: the piece-square fallback "
                         "has no zones", target=ZONES_VS_PLAIN_TARGET, unit="nodes/s")

    plain_cols = net.cols[:-1]
    zoned = net._replace(cols=np.concatenate([np.tile(plain_cols, (N_KING_ZONES, 1)), net.cols[-1:]]),
                         zone=np.asarray(KING_ZONE, np.int64))
    engines = {"plain": FastSearchEngine(net=net, stochastic=False),
               "zoned": FastSearchEngine(net=zoned, stochastic=False)}
    best = {k: float("inf") for k in engines}
    counted = {k: 0 for k in engines}
    for _ in range(2):
        for name, eng in engines.items():
            counted[name], seconds = searched(eng, boards, SearchLimits(nodes=nodes))
            best[name] = min(best[name], seconds)
    same = counted["plain"] == counted["zoned"]
    if not same:          # the zoned packing changed a value: the comparison would not be of the same work
        raise RuntimeError(f"the zoned network searched {counted['zoned']} nodes, the plain one {counted['plain']}")
    rates = {k: counted[k] / best[k] for k in engines}
    return make_result("fast_search_zones_vs_plain", rates["zoned"], rates["plain"], target=ZONES_VS_PLAIN_TARGET,
                       unit="nodes/s", baseline="the same network without the king's zones, the same trees",
                       details={"nodes_per_position": nodes, "positions": len(boards), "same_trees": same,
                                "zoned_nodes_per_s": round(rates["zoned"]), "plain_nodes_per_s": round(rates["plain"])})
