"""What the search does with a fixed time a move: ``python -m knights.lab.arena.time_use``.

The default searching bot thinks ``--ms`` of wall time on each position of the selection sets
(``games`` and ``tactics``, every ``--every``-th row) once for each *soft share* (the part of the
time after which no new iteration starts; the search stops for good at the hard deadline, the whole
time, and a cut iteration keeps its best move if that move was searched again first). Every search starts
from empty tables, the runs alternate position by position and each share goes first on half of them, so a
busy machine slows every share alike. For each share: the
seconds a move actually took, the depth finished, how often the last iteration was cut and how
often the cut changed the move, and Stockfish's judgement of the move played (depth ``--judge``,
:func:`knights.lab.results.move_choice.judge`: best-move share and centipawns lost, paired
against the first share with a standard error).

Writes ``report/results/time_use.json``. A fixed time a move banks nothing: whatever a search
leaves unused is lost, which is what this measures; a clock (``wtime``/``btime``) banks it, so the
UCI front end's clock shares (:mod:`knights.engine.clock`) are another question.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import chess
import numpy as np

from knights.common import module_main, write_json
from knights.engine.clock import MOVETIME_SOFT_SHARE
from knights.engine.search import Iteration, SearchLimits
from knights.lab.results.tables import RESULTS_DIR, mean_difference

OUT = RESULTS_DIR / "time_use.json"
SHARES = (MOVETIME_SOFT_SHARE, 1.0)
"""The search's own share first (the baseline), then every iteration run into the deadline."""
SETS = ("games", "tactics")


def positions(every: int, sets: Sequence[str] = SETS) -> list[tuple[str, chess.Board]]:
    """Every ``every``-th row of each selection set, as boards (name of the set, board)."""
    from knights.lab.results.independent import INDEPENDENT_DIR, load_set
    from knights.lab.results.move_choice import sample_boards

    out = []
    for name in sets:
        data, _ = load_set(INDEPENDENT_DIR / f"{name}.csv")
        out += [(name, b) for b in sample_boards(data, every)]
    return out


def think(engine: Any, board: chess.Board, seconds: float, soft_share: float) -> dict[str, Any]:
    """One search of ``board`` with ``seconds`` hard and ``soft_share * seconds`` soft, from empty tables (a search
    of the same position before it would otherwise hand this one its transposition table); what it did."""
    engine.new_game()
    engine.stats = {}                                      # a search that returns at once leaves none
    finished: list[Iteration] = []
    started = time.perf_counter()
    decision = engine.choose(board, limits=SearchLimits(soft=soft_share * seconds, hard=seconds),
                             on_iteration=finished.append)
    took = time.perf_counter() - started
    last = finished[-1] if finished else None
    nodes = int((getattr(engine, "stats", None) or {}).get("nodes", 0))
    cut = last is not None and nodes > last.nodes          # searched on after its last finished iteration
    return {"move": decision.move.uci(), "seconds": took, "depth": last.depth if last else 1, "cut": bool(cut),
            "changed": bool(last is not None and last.pv and decision.move != last.pv[0])}


def summary(rows: list[dict[str, Any]], base: list[dict[str, Any]] | None) -> dict[str, Any]:
    seconds = np.array([r["seconds"] for r in rows])
    loss = np.array([r["loss"] for r in rows], float)
    out = {"positions": len(rows), "mean_seconds": round(float(seconds.mean()), 3),
           "median_seconds": round(float(np.median(seconds)), 3),
           "mean_depth": round(float(np.mean([r["depth"] for r in rows])), 2),
           "cut_share": round(float(np.mean([r["cut"] for r in rows])), 3),
           "changed_by_cut_share": round(float(np.mean([r["changed"] for r in rows])), 3),
           "best_move_share": round(float(np.mean([r["best"] for r in rows])), 3),
           "mean_cp_loss": round(float(loss.mean()), 1)}
    if base is not None:
        paired = mean_difference(loss - np.array([r["loss"] for r in base], float))
        if paired is not None:
            out["cp_loss_minus_first"] = round(paired["difference"], 1)
            out["cp_loss_minus_first_se"] = round(paired["standard_error"], 1)
        same = np.array([a["move"] == b["move"] for a, b in zip(rows, base, strict=True)])
        out["same_move_as_first"] = round(float(same.mean()), 3)
    return out


def run(ms: int, shares: Sequence[float], every: int, judge_depth: int, out: Path = OUT,
        progress: bool = True) -> dict[str, Any]:
    from tqdm import tqdm

    from knights.engine.build import build
    from knights.lab.results.move_choice import AnalysisCache, judge

    boards = positions(every)
    from knights.engine.constants import UNLIMITED_DEPTH
    from knights.engine.spec import parse

    engine = build(parse("search:default:det").with_options(depth=UNLIMITED_DEPTH))
    engine.choose(boards[0][1], limits=SearchLimits(hard=0.2))       # compiled and loaded before the clock runs
    seconds = ms / 1000
    runs: dict[float, list[dict[str, Any]]] = {s: [] for s in shares}
    started = time.perf_counter()
    with AnalysisCache() as cache:
        for i, (name, board) in enumerate(tqdm(boards, desc=f"searching {ms} ms a move", unit="pos",
                                               disable=not progress)):
            for share in shares if i % 2 == 0 else shares[::-1]:   # each share goes first on half the positions
                row = think(engine, board, seconds, share)
                row["best"], row["loss"] = judge(cache, board, chess.Move.from_uci(row["move"]), judge_depth)
                row["set"] = name
                runs[share].append(row)
    first = runs[shares[0]]
    doc = {"generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
           "command": "python -m knights.lab.arena.time_use " + " ".join(sys.argv[1:]),
           "player": "search:default (deterministic)", "ms": ms, "every": every, "sets": list(SETS),
           "judge_depth": judge_depth, "seconds": round(time.perf_counter() - started, 1),
           "shares": {f"{s:g}": summary(runs[s], None if s == shares[0] else first) for s in shares},
           "by_set": {name: {f"{s:g}": summary([r for r in runs[s] if r["set"] == name],
                                              None if s == shares[0] else [r for r in first if r["set"] == name])
                             for s in shares} for name in SETS}}
    write_json(out, doc)
    return doc


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ms", type=int, default=1000, help="wall milliseconds a move (the hard deadline)")
    p.add_argument("--shares", type=float, nargs="+", default=list(SHARES),
                   help="soft shares to compare, the first the baseline (default: the search's own, then 1)")
    p.add_argument("--every", type=int, default=25, help="every n-th row of each selection set (default 25: 200 each)")
    p.add_argument("--judge", type=int, default=12, help="Stockfish's depth judging the moves")
    p.add_argument("--out", default=str(OUT))
    p.add_argument("--quiet", action="store_true")


def main_args(a: argparse.Namespace) -> int:
    if a.ms < 10 or a.every < 1 or a.judge < 1 or not a.shares or any(not 0 < s <= 1 for s in a.shares):
        raise SystemExit("time_use: --ms >= 10, --every >= 1, --judge >= 1, shares in (0, 1]")
    doc = run(a.ms, a.shares, a.every, a.judge, Path(a.out), progress=not a.quiet)
    for share, row in doc["shares"].items():
        print(f"soft {share}: {row['mean_seconds']:.2f} s a move, depth {row['mean_depth']:.1f}, cut "
              f"{row['cut_share']:.0%}, best move {row['best_move_share']:.1%}, {row['mean_cp_loss']:.1f} cp lost"
              + (f" ({row['cp_loss_minus_first']:+.1f} +- {row['cp_loss_minus_first_se']:.1f} against the first)"
                 if "cp_loss_minus_first" in row else ""))
    print(f"wrote {a.out}")
    return 0


DESCRIPTION = "What the searching bot does with a fixed time a move, by the share after which no iteration starts."


def main(argv: list[str] | None = None) -> int:
    return module_main("knights.lab.arena.time_use", DESCRIPTION, add_arguments, main_args, argv)


if __name__ == "__main__":
    sys.exit(main())
