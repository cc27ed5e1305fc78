"""One-ply move quality: an evaluator's one-ply choice judged by Stockfish.

For each position of a set (by default every :data:`EVERY`-th row of the independent
``games`` set: rows 0, 5, 10, ... so 1,000 of its 5,000), the evaluator's one-ply choice
is the move :class:`~knights.engine.one_ply.OnePlyEngine` plays with its stochastic opening
off (``stochastic=False``): the legal move whose resulting position the evaluator scores
best for the mover, mates and draws scored by the rules, and a move after which the opponent
mates at once scored as lost (the engine's rule since the mate-in-one guard). Stockfish at :data:`DEPTH`
(default 10; the position alone, no game history) judges it:

* **best move**: the share of positions where the choice is Stockfish's best move;
* **mean cp loss**: Stockfish's score of the position (its best move) minus its score of
  the chosen move, from the mover's side: 0 when the choice is the best move, else
  ``max(0, score(position) - (-score(position after the move)))``, each searched to
  ``DEPTH``, clamped to +-1000 centipawns with a mate counted as +-1000, and a position
  that ends the game scored by the rules (mated -1000, drawn 0), as
  :mod:`knights.lab.arena.quality` does (its helpers).

* **no loss**: the share of positions where the choice loses nothing by that measure (0
  centipawns): Stockfish's best move, or another its search scores as high (a move as good, or
  one its search of the position after it rates higher than its search of the position did).

Each is also given by the kind of Stockfish's best move (:func:`move_kind`: a capture, else a
check, else a promotion, else a quiet move; ``by_best_kind``), where a one-ply evaluator's
judgement shows: after a capture or a check the captures that follow decide, after a quiet
move only the evaluation of the position does.

Beside every evaluator, the same for counting material's one-ply choice and for
Stockfish at depth 1's best move; and, as a yardstick for the share itself, Stockfish's own
best move at each depth of :data:`STOCKFISH_DEPTHS` judged the same way (``stockfish_by_depth``).
Stockfish's analyses are kept on disk by depth and FEN (:data:`CACHE`, one JSON line each;
git ignores ``data/cache/``), so a rerun with a new evaluator only searches the positions its
choices reach for the first time. Each search starts from a cleared hash (``ucinewgame``), so a
cached answer is the one a fresh search gives. ``knights results`` measures this on the ``games`` set
(:mod:`knights.lab.results.independent`).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import chess
import numpy as np

from knights.board.arrays import board_from_arrays
from knights.data.chunks import Encoded
from knights.data.stockfish import Analysis, Stockfish
from knights.engine.one_ply import OnePlyEngine
from knights.evaluate.base import Evaluator, MaterialEvaluator
from knights.lab.arena.quality import _terminal_cp, score_cp
from knights.lab.results.tables import STOCKFISH_DEPTH1, mean_difference
from knights.learn import registry

EVERY = 5
"""Every how many rows of the set a position is taken (5: 1,000 of the 5,000 of ``games``)."""
DEPTH = 10
"""Stockfish's depth for judging the choices."""
STOCKFISH_DEPTHS = (1, 2, 3, 4, 5, 6)
"""The depths at which Stockfish's own choice is judged too (``stockfish_by_depth``; those below the judge's depth):
how deep Stockfish must search before its move is the judge's best as often as a one-ply choice is."""
CACHE = registry.REPO_ROOT / "data" / "cache" / "stockfish_analyses.jsonl"
"""Stockfish's analyses by depth and FEN, one JSON line each: ``[depth, fen, cp, mate, bestmove]``."""
METHOD = ("the one-ply choice (OnePlyEngine, stochastic opening off) against Stockfish at depth {depth} on the "
          "position alone: best move = the share of positions where the choice is Stockfish's best move; mean cp "
          "loss = Stockfish's score of the position minus its score of the chosen move (0 for its best move; "
          "else of the position after the move, negated), the mover's side, clamped to +-1000, mates +-1000, "
          "positions that end the game scored by the rules; every {every}th row of the set")


class AnalysisCache:
    """Stockfish's analyses by ``(depth, FEN)``, read from and appended to ``path``; the
    engine starts on the first position not in the file. Use as a context manager."""

    def __init__(self, path: Path = CACHE) -> None:
        self.path = path
        self.known: dict[tuple[int, str], Analysis] = {}
        self.new = 0
        self._engine: Stockfish | None = None
        if path.is_file():
            for line in path.read_text().splitlines():
                try:
                    depth, fen, cp, mate, best = json.loads(line)
                except (ValueError, TypeError):
                    continue   # a line cut short by an interrupted run
                self.known[(int(depth), str(fen))] = Analysis(cp, mate, best, int(depth))

    def analyse(self, fen: str, depth: int) -> Analysis:
        """Stockfish's analysis of ``fen`` to ``depth`` (from the file, or searched and added)."""
        key = (depth, fen)
        if key not in self.known:
            if self._engine is None:
                self._engine = Stockfish()
            self._engine.new_game()
            a = self._engine.analyse(fen, depth=depth)
            self.known[key] = Analysis(a.cp, a.mate, a.bestmove, depth)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a") as fh:
                fh.write(json.dumps([depth, fen, a.cp, a.mate, a.bestmove]) + "\n")
            self.new += 1
        return self.known[key]

    def close(self) -> None:
        if self._engine is not None:
            self._engine.close()
            self._engine = None

    def __enter__(self) -> AnalysisCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def position_score(cache: AnalysisCache, board: chess.Board, depth: int = DEPTH) -> int:
    """Stockfish's score of ``board`` in centipawns from the side to move (clamped, mates
    +-1000; a finished game scored by the rules)."""
    terminal = _terminal_cp(board)
    if terminal is not None:
        return terminal
    a = cache.analyse(board.fen(), depth)
    return score_cp(a.cp, a.mate)


def judge(cache: AnalysisCache, board: chess.Board, move: chess.Move, depth: int = DEPTH) -> tuple[bool, int]:
    """Whether ``move`` is Stockfish's best move on ``board``, and its centipawn loss (see
    the module docstring)."""
    root = cache.analyse(board.fen(), depth)
    if move.uci() == root.bestmove:
        return True, 0
    after = board.copy(stack=False)
    after.push(move)
    return False, max(0, score_cp(root.cp, root.mate) + position_score(cache, after, depth))


def judge_all(cache: AnalysisCache, boards: Sequence[chess.Board], moves: Sequence[chess.Move],
              depth: int = DEPTH) -> list[tuple[bool, int]]:
    """:func:`judge` of each move on its board."""
    return [judge(cache, b, m, depth) for b, m in zip(boards, moves, strict=True)]


def sample_boards(data: Encoded, every: int = EVERY) -> list[chess.Board]:
    """The positions of rows 0, ``every``, 2 * ``every``, ... of ``data`` as boards."""
    return [board_from_arrays(data.squares[i], bool(data.white[i]), int(data.castling[i]), int(data.ep[i]))
            for i in range(0, len(data), every)]


def one_ply_choices(evaluator: Evaluator, boards: Sequence[chess.Board], progress: bool = True) -> list[chess.Move]:
    """The one-ply engine's move on each board (:class:`OnePlyEngine`, ``stochastic=False``)."""
    from tqdm import tqdm

    engine = OnePlyEngine(evaluator, stochastic=False)
    return [engine.choose(b).move for b in tqdm(boards, desc=f"one ply {evaluator.name}", unit="pos",
                                                 disable=not progress)]


def stockfish_choices(cache: AnalysisCache, boards: Sequence[chess.Board], depth: int = 1) -> list[chess.Move]:
    """Stockfish's best move on each board at ``depth`` (through the cache)."""
    return [chess.Move.from_uci(str(cache.analyse(b.fen(), depth).bestmove)) for b in boards]


def move_kind(board: chess.Board, move: chess.Move) -> str:
    """What ``move`` is on ``board``, the first that holds of: ``capture`` (en passant too), ``check``,
    ``promotion``, ``quiet``.

    >>> board = chess.Board("8/P7/7k/3p4/4P3/8/8/1R2K3 w - - 0 1")
    >>> [move_kind(board, chess.Move.from_uci(m)) for m in ("e4d5", "b1b6", "a7a8q", "e1f2")]
    ['capture', 'check', 'promotion', 'quiet']
    """
    if board.is_capture(move):
        return "capture"
    if board.gives_check(move):
        return "check"
    return "promotion" if move.promotion else "quiet"


def summarise(judged: Sequence[tuple[bool, int]]) -> dict[str, Any]:
    """``positions``, ``best_move_share``, ``mean_cp_loss`` and ``no_loss_share`` of :func:`judge`'s answers.

    >>> summarise([(True, 0), (False, 0), (False, 30), (False, 90)])
    {'positions': 4, 'best_move_share': 0.25, 'mean_cp_loss': 30.0, 'no_loss_share': 0.5}
    """
    best = np.array([j[0] for j in judged], dtype=bool)
    loss = np.array([j[1] for j in judged], dtype=np.float64)
    n = len(judged)
    return {"positions": n, "best_move_share": float(best.mean()) if n else None,
            "mean_cp_loss": float(loss.mean()) if n else None,
            "no_loss_share": float((loss == 0).mean()) if n else None}


def by_kind(kinds: Sequence[str], judged: Sequence[tuple[bool, int]]) -> dict[str, dict[str, Any]]:
    """:func:`summarise` of the answers of each kind in ``kinds`` (one a position, e.g. the kind of Stockfish's best
    move), the kinds in the order of :func:`move_kind`'s answers.

    >>> split = by_kind(["quiet", "capture", "quiet"], [(False, 20), (True, 0), (True, 0)])
    >>> list(split), split["quiet"]["best_move_share"], split["capture"]["positions"]
    (['capture', 'quiet'], 0.5, 1)
    """
    if len(kinds) != len(judged):
        raise ValueError(f"{len(kinds)} kinds for {len(judged)} answers")
    order = ("capture", "check", "promotion", "quiet")
    return {k: summarise([j for kind, j in zip(kinds, judged, strict=True) if kind == k])
            for k in sorted(set(kinds), key=lambda k: (order.index(k) if k in order else len(order), k))}


def paired_quality(ours: Sequence[tuple[bool, int]], reference: Sequence[tuple[bool, int]], kinds: Sequence[str],
                   kind: str | None = None) -> dict[str, Any]:
    """Two movers' :func:`judge` answers on the same positions (where the judge's best move is of ``kind``; all of
    them when ``None``), paired: for ``best_move_share``, ``mean_cp_loss`` and ``no_loss_share``, ours less the
    reference's with its standard error (:func:`knights.lab.results.tables.mean_difference`).

    >>> p = paired_quality([(True, 0), (False, 40), (True, 0)], [(False, 10), (False, 20), (True, 0)],
    ...                    ["quiet", "quiet", "capture"], "quiet")
    >>> p["best_move_share"]["difference"], p["mean_cp_loss"]["difference"], p["no_loss_share"]["rows"]
    (0.5, 5.0, 2)
    """
    if not len(ours) == len(reference) == len(kinds):
        raise ValueError(f"{len(ours)} and {len(reference)} answers for {len(kinds)} kinds")
    rows = [i for i, k in enumerate(kinds) if kind is None or k == kind]
    a = np.array([ours[i] for i in rows], dtype=np.float64).reshape(-1, 2)
    b = np.array([reference[i] for i in rows], dtype=np.float64).reshape(-1, 2)
    return {"best_move_share": mean_difference(a[:, 0] - b[:, 0]), "mean_cp_loss": mean_difference(a[:, 1] - b[:, 1]),
            "no_loss_share": mean_difference((a[:, 1] == 0).astype(float) - (b[:, 1] == 0).astype(float))}


def stockfish_by_depth(cache: AnalysisCache, boards: Sequence[chess.Board], kinds: Sequence[str],
                       depths: Sequence[int] = STOCKFISH_DEPTHS, depth: int = DEPTH) -> list[dict[str, Any]]:
    """Stockfish's own best move at each of ``depths`` judged by it at ``depth`` (:func:`move_quality`, by the kind of
    the judge's best move ``kinds``), one dict a depth: ``depth`` and :func:`summarise`'s keys with
    ``by_best_kind``."""
    return [{"depth": d, **move_quality(cache, boards, stockfish_choices(cache, boards, d), depth, kinds)}
            for d in depths]


def move_quality(cache: AnalysisCache, boards: Sequence[chess.Board], moves: Sequence[chess.Move],
                 depth: int = DEPTH, kinds: Sequence[str] | None = None) -> dict[str, Any]:
    """:func:`quality_of` the moves on ``boards``, each judged by Stockfish at ``depth``."""
    return quality_of(judge_all(cache, boards, moves, depth), kinds)


def quality_of(judged: Sequence[tuple[bool, int]], kinds: Sequence[str] | None = None) -> dict[str, Any]:
    """:func:`summarise` of :func:`judge`'s answers, and with ``kinds`` (one an answer) the same by kind
    (``by_best_kind``).

    >>> q = quality_of([(True, 0), (False, 30)], ["quiet", "capture"])
    >>> q["best_move_share"], q["by_best_kind"]["capture"]["mean_cp_loss"]
    (0.5, 30.0)
    """
    out = summarise(judged)
    if kinds is not None:
        out["by_best_kind"] = by_kind(kinds, judged)
    return out


def measure(data: Encoded, measured: Sequence[tuple[str, Evaluator]], *, every: int = EVERY, depth: int = DEPTH,
            cache_path: Path = CACHE, progress: bool = True) -> dict[str, Any]:
    """The move quality of every evaluator in ``measured`` ((kind, evaluator) pairs), after
    counting material's and Stockfish at depth 1's, on every ``every``-th row of ``data``."""
    from tqdm import tqdm

    started = time.perf_counter()
    boards = sample_boards(data, every)
    rows: list[dict[str, Any]] = []
    with AnalysisCache(cache_path) as cache:
        for b in tqdm(boards, desc=f"stockfish depth {depth}", unit="pos", disable=not progress):
            cache.analyse(b.fen(), depth)
        choices = [("material", "baseline", one_ply_choices(MaterialEvaluator(), boards, progress)),
                   (STOCKFISH_DEPTH1, "baseline", stockfish_choices(cache, boards, 1))]
        choices += [(ev.name, kind, one_ply_choices(ev, boards, progress)) for kind, ev in measured]
        best_kinds = [move_kind(b, chess.Move.from_uci(str(cache.analyse(b.fen(), depth).bestmove))) for b in boards]
        split = {}
        for name, kind, moves in tqdm(choices, desc="judging the choices", unit="evaluator", disable=not progress):
            quality = move_quality(cache, boards, moves, depth, best_kinds)
            split[name] = quality.pop("by_best_kind")
            rows.append({"name": name, "kind": kind, **quality})
        by_depth = stockfish_by_depth(cache, boards, best_kinds, [d for d in STOCKFISH_DEPTHS if d < depth], depth)
        new = cache.new
    return {"positions": len(boards), "every": every, "depth": depth, "method": METHOD.format(depth=depth, every=every),
            "stockfish_searches": new, "cache": registry.repo_relative(cache_path),
            "seconds": round(time.perf_counter() - started, 1), "rows": rows,
            "best_kinds": dict(Counter(best_kinds)),
            "by_best_kind": split, "stockfish_by_depth": by_depth}
