"""Move quality: every move of a game judged by Stockfish at a fixed depth.

Each position of the game (before every move, and the final one) is searched to
``depth`` (default 10) with the game's history (so repetitions are seen). From the
mover's point of view, with scores clamped to +-1000 centipawns and a mate counted
as +-1000 (as lichess does):

* **centipawn loss** = max(0, eval before - eval after the move);
* **win%** = 50 + 50 * (2 / (1 + exp(-0.00368208 * cp)) - 1);
* **move accuracy** = 103.1668 * exp(-0.04354 * (win%before - win%after)) - 3.1669,
  clamped to [0, 100] (a move that raises the win% counts as 100);
* **inaccuracy / mistake / blunder**: the move loses at least 10 / 20 / 30 win%
  points (lichess's thresholds; each move counts in its worst class only).

A player's **game accuracy** is the plain arithmetic mean of its move accuracies
(not lichess's volatility-weighted / harmonic blend); a match summary averages
the players' game accuracies over their games and the centipawn loss over all
their moves. Book moves (the first ``OpeningPlies`` of an arena game) are skipped.
Terminal positions are scored by the rules (mated: -1000, drawn: 0) without asking
Stockfish.

``knights quality GAME.pgn`` prints one game's report; ``knights quality FOLDER``
summarises every PGN under a match folder into ``report/results/quality.json``
(:mod:`knights.lab.arena.commands`).
"""

from __future__ import annotations

import contextlib
import functools
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import chess
import chess.pgn

from knights.board.outcome import outcome
from knights.common import write_json
from knights.data.csslab import winrate
from knights.data.stockfish import Stockfish
from knights.lab.arena.players import game_position

CP_CEILING = 1000
THRESHOLDS = ((30.0, "blunder"), (20.0, "mistake"), (10.0, "inaccuracy"))


def win_percent(cp: float) -> float:
    """lichess's win% for a centipawn score (side to move's point of view): the
    logistic curve of :func:`knights.data.csslab.winrate`, in percent."""
    return 100.0 * winrate(cp / 100.0)


def move_accuracy(win_before: float, win_after: float) -> float:
    """lichess's accuracy of one move from the mover's win% before and after it."""
    acc = 103.1668 * math.exp(-0.04354 * (win_before - win_after)) - 3.1669
    return max(0.0, min(100.0, acc))


def classify(win_drop: float) -> str | None:
    """``"blunder"``, ``"mistake"``, ``"inaccuracy"`` or ``None`` for a drop in win% points."""
    for threshold, name in THRESHOLDS:
        if win_drop >= threshold:
            return name
    return None


def score_cp(cp: int | None, mate: int | None) -> int:
    """One number for a search result, side to move's view: cp clamped, mate = +-1000."""
    if mate is not None:
        return CP_CEILING if mate > 0 else -CP_CEILING
    return max(-CP_CEILING, min(CP_CEILING, cp or 0))


def _terminal_cp(board: chess.Board) -> int | None:
    """Score of a finished position from the side to move, or ``None`` if play goes on."""
    ended = outcome(board, claim_next_move=True)
    if ended is None:
        return None
    return -CP_CEILING if ended.winner is not None else 0


def evaluate_positions(game: chess.pgn.Game, depth: int, engine) -> list[int]:
    """Scores (side to move's view) of every position of the main line, start included."""
    board = game.board()
    scores = []
    moves = list(game.mainline_moves())
    engine.new_game()
    for i in range(len(moves) + 1):
        terminal = _terminal_cp(board) if i == len(moves) else None  # earlier ones had a move played
        if terminal is not None:
            scores.append(terminal)
        else:
            a = engine.analyse(game_position(board), depth=depth)
            scores.append(score_cp(a.cp, a.mate))
        if i < len(moves):
            board.push(moves[i])
    return scores


def analyse_game(game: chess.pgn.Game, depth: int = 10, engine=None, skip_book: bool = True) -> dict:
    """Per-move judgement of ``game`` and a per-player summary (``White`` / ``Black``)."""
    own = engine is None
    engine = engine or Stockfish()
    try:
        scores = evaluate_positions(game, depth, engine)
    finally:
        if own:
            engine.close()
    board = game.board()
    book = int(game.headers.get("OpeningPlies", "0") or 0) if skip_book else 0
    moves_out = []
    for i, move in enumerate(game.mainline_moves()):
        color = board.turn
        san = board.san(move)
        board.push(move)
        if i < book:
            continue
        before, after = scores[i], -scores[i + 1]
        wb, wa = win_percent(before), win_percent(after)
        moves_out.append({"ply": i + 1, "color": "white" if color else "black", "san": san,
                          "eval_before": before, "eval_after": after, "cp_loss": max(0, before - after),
                          "win_before": round(wb, 2), "win_after": round(wa, 2),
                          "accuracy": round(move_accuracy(wb, wa), 2), "class": classify(wb - wa)})
    players = {}
    for side, tag in (("white", "White"), ("black", "Black")):
        players[side] = {"name": game.headers.get(tag, "?"), **_summarise_moves(
            [m for m in moves_out if m["color"] == side])}
    return {"white": game.headers.get("White", "?"), "black": game.headers.get("Black", "?"),
            "result": game.headers.get("Result", "*"), "termination": game.headers.get("Termination", ""),
            "opening": game.headers.get("Opening", ""), "depth": depth, "players": players, "moves": moves_out}


def _summarise_moves(moves: Sequence[dict]) -> dict:
    n = len(moves)
    classes = [m["class"] for m in moves]
    return {"moves": n,
            "acpl": round(sum(m["cp_loss"] for m in moves) / n, 1) if n else None,
            "accuracy": round(sum(m["accuracy"] for m in moves) / n, 2) if n else None,
            "inaccuracies": classes.count("inaccuracy"), "mistakes": classes.count("mistake"),
            "blunders": classes.count("blunder")}


def read_games(path: str | Path) -> list[chess.pgn.Game]:
    games = []
    with open(path, encoding="utf-8") as fh:
        while (game := chess.pgn.read_game(fh)) is not None:
            if game.errors:
                raise ValueError(f"{path}: unreadable PGN ({game.errors[0]})")
            games.append(game)
    return games


def pgn_files(folder: str | Path) -> list[Path]:
    """Every ``*.pgn`` under ``folder`` (recursively), sorted."""
    return sorted(Path(folder).rglob("*.pgn"))


# -- many games, in parallel --------------------------------------------------------------------------------------
@functools.cache
def _process_engine() -> Stockfish:
    """This process's Stockfish, started on first use and closed when the process exits."""
    import multiprocessing.util

    engine = Stockfish()
    multiprocessing.util.Finalize(None, engine.close, exitpriority=10)
    return engine


def _analyse_file(job: tuple[str, int]) -> list[dict]:
    path, depth = job
    out = []
    for game in read_games(path):
        result = analyse_game(game, depth, _process_engine())
        result.pop("moves")
        result["file"] = path
        out.append(result)
    return out


def summarise_files(files: Sequence[str | Path], *, depth: int = 10, workers: int = 1, progress: bool = True,
                    root: str | Path | None = None) -> dict:
    """Analyse every game of ``files`` and summarise by player and by pairing."""
    from tqdm import tqdm

    jobs = [(str(f), depth) for f in files]
    games: list[dict] = []
    bar = tqdm(total=len(jobs), desc=f"quality d{depth}", unit="file", disable=not progress, file=sys.stderr)
    try:
        if workers <= 1 or len(jobs) <= 1:
            try:
                for job in jobs:
                    games += _analyse_file(job)
                    bar.update(1)
            finally:
                if _process_engine.cache_info().currsize:
                    _process_engine().close()
                    _process_engine.cache_clear()
        else:
            import multiprocessing as mp

            with mp.get_context("spawn").Pool(min(workers, len(jobs))) as pool:
                for result in pool.imap_unordered(_analyse_file, jobs):
                    games += result
                    bar.update(1)
                pool.close()
                pool.join()
    finally:
        bar.close()
    if root is not None:
        for g in games:
            with contextlib.suppress(ValueError):  # a file outside root keeps its path
                g["file"] = str(Path(g["file"]).relative_to(root))
    games.sort(key=lambda g: g["file"])
    return summarise(games, depth)


def summarise(games: Sequence[dict], depth: int) -> dict:
    """Per-player and per-pairing totals from :func:`analyse_game` results."""
    by_player: dict[str, list[dict]] = {}
    by_pair: dict[tuple[str, str], list[dict]] = {}
    for g in games:
        for color, other in (("white", "black"), ("black", "white")):
            p = g["players"][color]
            opp = g["players"][other]["name"]
            by_player.setdefault(p["name"], []).append(p)
            by_pair.setdefault((p["name"], opp), []).append(p)

    def total(rows: list[dict]) -> dict:
        moves = sum(r["moves"] for r in rows)
        acc = [r["accuracy"] for r in rows if r["accuracy"] is not None]
        return {"games": len(rows), "moves": moves,
                "acpl": round(sum(r["acpl"] * r["moves"] for r in rows if r["moves"]) / moves, 1) if moves else None,
                "accuracy": round(sum(acc) / len(acc), 2) if acc else None,
                "inaccuracies": sum(r["inaccuracies"] for r in rows),
                "mistakes": sum(r["mistakes"] for r in rows),
                "blunders": sum(r["blunders"] for r in rows),
                "blunders_per_game": round(sum(r["blunders"] for r in rows) / len(rows), 2) if rows else None}

    return {
        "depth": depth,
        "method": ("Stockfish at fixed depth; cp clamped to +-1000 (mate = +-1000); lichess win% and move "
                   "accuracy formulas; game accuracy = arithmetic mean of move accuracies; "
                   "inaccuracy/mistake/blunder = win% drop >= 10/20/30; book moves skipped"),
        "games": len(games),
        "players": {name: total(rows) for name, rows in sorted(by_player.items())},
        "pairings": [{"player": a, "opponent": b, **total(rows)} for (a, b), rows in sorted(by_pair.items())],
        "per_game": games,
    }


def write_summary(summary: dict, path: str | Path) -> Path:
    path = Path(path)
    write_json(path, summary, indent=2)
    return path


def format_summary(summary: dict) -> str:
    lines = [f"move quality, Stockfish depth {summary['depth']}, {summary['games']} games",
             f"{'player':<28} {'games':>5} {'moves':>6} {'ACPL':>6} {'acc%':>6} {'inacc':>6} {'mist':>5} {'blund':>6}"]
    for name, t in summary["players"].items():
        lines.append(f"{name:<28} {t['games']:>5} {t['moves']:>6} {_n(t['acpl']):>6} {_n(t['accuracy']):>6} "
                     f"{t['inaccuracies']:>6} {t['mistakes']:>5} {t['blunders']:>6}")
    return "\n".join(lines)


def format_game(result: dict) -> str:
    lines = [f"{result['white']} - {result['black']}  {result['result']}  ({result['termination']})  "
             f"Stockfish depth {result['depth']}"]
    for m in result["moves"]:
        prefix = f"{(m['ply'] + 1) // 2}{'.' if m['color'] == 'white' else '...'}"
        lines.append(f"{prefix:>6} {m['san']:<8} {m['eval_before']:>6} -> {m['eval_after']:>6}  "
                     f"loss {m['cp_loss']:>5}  acc {m['accuracy']:>6.1f}  {m['class'] or ''}")
    for color in ("white", "black"):
        p = result["players"][color]
        lines.append(f"{color:<6} {p['name']}: {p['moves']} moves, ACPL {_n(p['acpl'])}, accuracy "
                     f"{_n(p['accuracy'])}%, {p['inaccuracies']} inaccuracies, {p['mistakes']} mistakes, "
                     f"{p['blunders']} blunders")
    return "\n".join(lines)


def _n(x) -> str:
    return "-" if x is None else f"{x:g}"
