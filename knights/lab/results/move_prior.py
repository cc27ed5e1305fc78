"""Can a move prior teach the one-ply bot quiet moves? ``python -m knights.lab.results.move_prior``.

The one-ply bot (``sparse+quiesce``) finds Stockfish's best move less often than Stockfish at depth 1
when that move is quiet (:mod:`knights.lab.results.move_choice`). One route the project asked about is a
policy-like ranking of quiet moves. This is its simplest form, measured:

* **the prior**: over positions of the training data where a strong player (Stockfish with a random
  move at most 5% of the time, past the random opening plies) played a quiet move that lost nothing
  (``cp_loss`` 0.00), how often a quiet legal move with a given key (piece, from, to, seen from the
  mover's side) was the one played, against how often such a move was legal: ``log(rate / base)``,
  smoothed towards the base rate by :data:`SMOOTHING` moves;
* **the choice**: the one-ply bot's value of each move (pawns, the mover's side) plus ``lam`` times
  the prior of the quiet ones (captures, promotions and moves that end the game keep their value);
* ``lam`` is chosen on the selection set ``games`` (every 5th row, judged by Stockfish at depth 10 as
  :mod:`knights.lab.results.move_choice` does) and then measured once on the final test set.

Writes ``report/results/move_prior.json``: for each set, Stockfish depth 1, the one-ply bot, and the bot
with the prior at each ``lam`` (games) or the chosen one (final): best-move share, the same where the
judge's best move is quiet, and the centipawns lost (over all positions, and where the best move is quiet, with the
share of those where the move played loses nothing); and the one-ply bot as it plays (no prior) less Stockfish depth 1
on the same positions, paired, with standard errors (``one_ply_less_depth_1``: where the best move is quiet, and
over all).
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import chess
import numpy as np

from knights.common import module_main, write_json
from knights.lab.results.tables import RESULTS_DIR
from knights.learn import registry

OUT = RESULTS_DIR / "move_prior.json"
SOURCES = (("data/generated/more/strong.csv", 8), ("data/generated/games.csv", 6))
"""Training CSVs the prior counts from, and the random opening plies each skips (strong: 1-8, mixed: 0-6)."""
SMOOTHING = 20.0
LAMBDAS = (0.0, 0.02, 0.05, 0.1, 0.2, 0.4)
STRONG_EPS = 0.05


def move_key(board: chess.Board, move: chess.Move) -> int:
    """(piece, from, to) from the mover's side, as one index below 6 * 4096."""
    piece = board.piece_type_at(move.from_square) or chess.PAWN
    a, b = move.from_square, move.to_square
    if board.turn == chess.BLACK:
        a, b = chess.square_mirror(a), chess.square_mirror(b)
    return (piece - 1) * 4096 + a * 64 + b


def quiet(board: chess.Board, move: chess.Move) -> bool:
    return not (board.is_capture(move) or move.promotion)


def strong_rows(sources: Iterable[tuple[str, int]], limit: int) -> Iterable[tuple[chess.Board, chess.Move]]:
    """(board, quiet move played) of strong players' lossless quiet moves, at most ``limit``."""
    n = 0
    for path, skip in sources:
        with open(registry.repo_path(path), newline="") as fh:
            for row in csv.DictReader(fh):
                mover = row["white_player"] if row["white_active"] == "True" else row["black_player"]
                if not mover.startswith("stockfish-eps") or float(mover[len("stockfish-eps"):]) > STRONG_EPS:
                    continue
                if int(row["move_ply"]) < skip or row["cp_loss"] != "0.00":
                    continue
                board, move = chess.Board(row["board"]), chess.Move.from_uci(row["move"])
                if quiet(board, move):
                    yield board, move
                    n += 1
                    if n >= limit:
                        return


def fit_prior(rows: Iterable[tuple[chess.Board, chess.Move]]) -> tuple[np.ndarray, int]:
    """The prior table and the positions it counted."""
    legal, chosen = np.zeros(6 * 4096), np.zeros(6 * 4096)
    n = 0
    for board, played in rows:
        for m in board.legal_moves:
            if quiet(board, m):
                k = move_key(board, m)
                legal[k] += 1
                chosen[k] += m == played
        n += 1
    base = chosen.sum() / max(legal.sum(), 1)
    rate = (chosen + SMOOTHING * base) / (legal + SMOOTHING)
    return np.log(rate / base), n


def candidates(boards: Sequence[chess.Board], progress: bool) -> list[list[tuple[chess.Move, float, bool, int]]]:
    """Every board's one-ply candidates: (move, value for the mover, takes the prior, key)."""
    from tqdm import tqdm

    from knights.engine.build import ONE_PLY_EVALUATOR, evaluator
    from knights.engine.one_ply import OnePlyEngine

    engine = OnePlyEngine(evaluator(ONE_PLY_EVALUATOR), stochastic=False)
    out = []
    for b in tqdm(boards, desc="one ply", unit="pos", disable=not progress):
        d = engine.choose(b)
        sign = 1 if b.turn == chess.WHITE else -1
        out.append([(m, sign * s, quiet(b, m) and m not in d.outcomes, move_key(b, m)) for m, s in d.candidates])
    return out


def choices(cands: Sequence[Sequence[tuple[chess.Move, float, bool, int]]], prior: np.ndarray,
            lam: float) -> list[chess.Move]:
    return [max(c, key=lambda r: r[1] + (lam * prior[r[3]] if r[2] else 0.0))[0] for c in cands]


def judged(answered: Sequence[tuple[bool, int]], kinds: Sequence[str]) -> dict[str, Any]:
    from knights.lab.results.move_choice import quality_of

    q = quality_of(answered, kinds)
    quiet_row = q["by_best_kind"].get("quiet", {})
    return {"best_move_share": round(q["best_move_share"], 4), "mean_cp_loss": round(q["mean_cp_loss"], 1),
            "quiet_best_move_share": round(quiet_row.get("best_move_share", float("nan")), 4),
            "quiet_mean_cp_loss": round(quiet_row.get("mean_cp_loss", float("nan")), 1),
            "quiet_no_loss_share": round(quiet_row.get("no_loss_share", float("nan")), 4),
            "quiet_positions": quiet_row.get("positions", 0)}


def run(limit: int, out: Path = OUT, progress: bool = True) -> dict[str, Any]:
    from knights.evaluate.final import read_final
    from knights.lab.results.independent import INDEPENDENT_DIR, load_set
    from knights.lab.results.move_choice import (
        DEPTH,
        EVERY,
        AnalysisCache,
        judge_all,
        move_kind,
        paired_quality,
        sample_boards,
        stockfish_choices,
    )

    started = time.perf_counter()
    prior, counted = fit_prior(strong_rows(SOURCES, limit))
    sets = {"games": load_set(INDEPENDENT_DIR / "games.csv")[0], "final": read_final()[0]}
    doc: dict[str, Any] = {"generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                           "command": "python -m knights.lab.results.move_prior " + " ".join(sys.argv[1:]),
                           "prior_positions": counted, "sources": [s for s, _ in SOURCES], "smoothing": SMOOTHING,
                           "judge_depth": DEPTH, "every": EVERY, "sets": {}}
    with AnalysisCache() as cache:
        chosen_lam = None
        for name, data in sets.items():
            boards = sample_boards(data, EVERY)
            kinds = [move_kind(b, chess.Move.from_uci(str(cache.analyse(b.fen(), DEPTH).bestmove))) for b in boards]
            cands = candidates(boards, progress)
            depth1 = judge_all(cache, boards, stockfish_choices(cache, boards, 1), DEPTH)
            rows = {"stockfish depth 1": judged(depth1, kinds)}
            lams = LAMBDAS if chosen_lam is None else (0.0, chosen_lam)
            paired: dict[str, Any] = {}
            for lam in lams:
                answered = judge_all(cache, boards, choices(cands, prior, lam), DEPTH)
                rows[f"one ply + prior x {lam:g}"] = judged(answered, kinds)
                if lam == 0.0:      # the one-ply bot as it plays, paired with depth one on the same positions
                    paired = {"quiet": paired_quality(answered, depth1, kinds, "quiet"),
                              "all": paired_quality(answered, depth1, kinds)}
            if chosen_lam is None:     # chosen here, on the selection set, by the quiet best-move share
                chosen_lam = max(lams, key=lambda x: rows[f"one ply + prior x {x:g}"]["quiet_best_move_share"])
                doc["chosen_lambda"] = chosen_lam
            doc["sets"][name] = {"positions": len(boards), "rows": rows, "one_ply_less_depth_1": paired}
    doc["seconds"] = round(time.perf_counter() - started, 1)
    write_json(out, doc)
    return doc


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--positions", type=int, default=400_000, help="strong players' moves the prior counts")
    p.add_argument("--out", default=str(OUT))
    p.add_argument("--quiet", action="store_true")


def main_args(a: argparse.Namespace) -> int:
    doc = run(a.positions, registry.repo_path(a.out), progress=not a.quiet)
    for name, st in doc["sets"].items():
        for row, r in st["rows"].items():
            print(f"{name:<6} {row:<24} best {r['best_move_share']:.1%}  quiet best {r['quiet_best_move_share']:.1%} "
                  f"of {r['quiet_positions']}  {r['mean_cp_loss']:.1f} cp lost ({r['quiet_mean_cp_loss']:.1f} there, "
                  f"{r['quiet_no_loss_share']:.1%} lossless)")
        for where, p in st.get("one_ply_less_depth_1", {}).items():
            print(f"{name:<6} one ply less depth 1, {where}: " + ", ".join(
                f"{k} {v['difference']:+.3f} +- {v['standard_error']:.3f}" for k, v in p.items() if v is not None))
    print(f"chosen on games: lam {doc['chosen_lambda']:g}; wrote {a.out}")
    return 0


DESCRIPTION = "A count prior over quiet moves added to the one-ply bot's values, chosen on games, measured on final."


def main(argv: list[str] | None = None) -> int:
    return module_main("knights.lab.results.move_prior", DESCRIPTION, add_arguments, main_args, argv)


if __name__ == "__main__":
    sys.exit(main())
