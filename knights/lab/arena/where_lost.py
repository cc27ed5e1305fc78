"""Where the search's real-clock games were decided: ``python -m knights.lab.arena.where_lost``.

Stockfish at depth ``--judge`` (12) scores every position of a run's games (``make clock-strength``
writes them under ``results_pgn/clock_strength/``) as :mod:`knights.lab.arena.quality` does (the game's
history included, lichess's win probability). A move gives away what its mover's win probability
drops from before it to after it (nothing when it rises); the book's random opening plies count for
neither side. Moves are grouped by the phase of the position they were played in: the pieces left on
the board, a knight or bishop 1, a rook 2 and a queen 4 (24 at the start), in :data:`PHASES`. A lost
game fell behind for good at the first ply after which the bot's win probability stayed below
:data:`BEHIND`, and was decided at the first after which it stayed below :data:`LOST`.

Writes ``report/results/where_lost.json``, one entry for each folder of games read (the newest run
is ``1000ms``; a retired one is ``1000ms, <label>``, and the games of a network the search no longer plays,
in a folder beside the default's, are ``1000ms, <network>``: :func:`by_player`).

>>> phase(chess.Board())
24
>>> [phase_name(p) for p in (24, 12, 5, 0)]
['middlegame', 'late middlegame', 'ending', 'pawns and kings']
>>> decided_ply([0.5, 0.2, 0.6, 0.2, 0.1])
3
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
import chess.pgn
import numpy as np

from knights.common import module_main, write_json
from knights.engine.spec import SEARCH_NETWORK, network_of
from knights.lab.arena.matches import numbered_records
from knights.lab.results.tables import RESULTS_DIR

OUT = RESULTS_DIR / "where_lost.json"
GAMES = Path("results_pgn/clock_strength")
JUDGE_DEPTH = 12
LOST = 0.3
"""A lost game was decided where the bot's win probability fell below this for the rest of the game."""
BEHIND = 0.5
"""And fell behind for good where it fell below this (never level again)."""
PHASE_WEIGHTS = {chess.KNIGHT: 1, chess.BISHOP: 1, chess.ROOK: 2, chess.QUEEN: 4}
PHASES = (("middlegame", 20), ("late middlegame", 10), ("ending", 1), ("pawns and kings", 0))
"""Each phase's name and the least phase (:func:`phase`) it takes, highest first."""


def phase(board: chess.Board) -> int:
    """The pieces left on ``board``, both sides, weighted by :data:`PHASE_WEIGHTS` (24 at the start)."""
    return sum(w * len(board.pieces(piece, colour)) for piece, w in PHASE_WEIGHTS.items() for colour in chess.COLORS)


def phase_name(value: int) -> str:
    """The phase (:data:`PHASES`) of a position whose :func:`phase` is ``value``."""
    return next(name for name, least in PHASES if value >= least)


def decided_ply(win: Sequence[float], lost: float = LOST) -> int | None:
    """The first ply (index into ``win``, the bot's win probability after each ply) from which it stays below
    ``lost`` to the end; None when the last one is not below it."""
    if not win or win[-1] >= lost:
        return None
    i = len(win)
    while i > 0 and win[i - 1] < lost:
        i -= 1
    return i


def judged_plies(game: chess.pgn.Game, ours: chess.Color, depth: int, engine: Any) -> list[dict[str, Any]]:
    """Every ply of ``game`` after its book (:func:`knights.lab.arena.quality.analyse_game`, Stockfish at ``depth``):
    whether the bot moved, the phase before the move, the win probability the mover gave away and the bot's win
    probability after it."""
    from knights.lab.arena.quality import analyse_game

    board = game.board()
    phases = []
    for move in game.mainline_moves():
        phases.append(phase(board))
        board.push(move)
    out = []
    for m in analyse_game(game, depth, engine)["moves"]:
        mine = (m["color"] == "white") == (ours == chess.WHITE)
        out.append({"ours": mine, "phase": phases[m["ply"] - 1],
                    "given": max(0.0, m["win_before"] - m["win_after"]) / 100,
                    "win": (m["win_after"] if mine else 100 - m["win_after"]) / 100})
    return out


def summarise(games: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The win probability each side gave away a move, by phase, and where the lost games were decided;
    ``games``: ``{"score": the bot's, "plies": [judged_plies rows], "book": plies}``."""
    by_phase: dict[str, dict[str, Any]] = {}
    for name, _ in PHASES:
        row: dict[str, Any] = {}
        for side, ours in (("ours", True), ("opponents", False)):
            given = [p["given"] for g in games for p in g["plies"]
                     if p["ours"] == ours and phase_name(p["phase"]) == name]
            row[side] = {"moves": len(given), "mean": round(float(np.mean(given)), 4) if given else None,
                         "total": round(float(np.sum(given)), 2)}
        by_phase[name] = row
    losses: dict[str, Any] = {"games": sum(g["score"] == 0 for g in games)}
    for key, below in (("decided", LOST), ("behind", BEHIND)):
        found = []
        for g in games:
            k = decided_ply([p["win"] for p in g["plies"]], below) if g["score"] == 0 else None
            if k is not None:
                found.append({"ply": g["book"] + k + 1, "phase": g["plies"][k]["phase"],
                              "plies": g["book"] + len(g["plies"])})
        losses[key] = len(found)
        if found:
            losses[f"median_{key}_ply"] = float(np.median([d["ply"] for d in found]))
            losses[f"{key}_in"] = {name: sum(phase_name(d["phase"]) == name for d in found) for name, _ in PHASES}
            if key == "decided":
                losses["median_plies"] = float(np.median([d["plies"] for d in found]))
    return {"games": len(games), "by_phase": by_phase, "losses": losses}


Records = list[tuple[dict[str, Any], chess.pgn.Game]]
"""A run's games: each record (a line of ``games.jsonl``) with its PGN."""


def read_run(folder: Path) -> Records:
    """The records (``games.jsonl``; a game played again: its newest record) of a run's games and their PGNs; a
    record that does not parse, or whose PGN is missing, is an error naming its line."""
    index = folder / "games.jsonl"
    if not index.is_file():
        raise FileNotFoundError(f"{index}: no games (make clock-strength writes them)")
    records = {(r["a"], r["b"], r["index"]): (n, r) for n, r in numbered_records(folder)}
    out: Records = []
    for n, r in sorted(records.values(), key=lambda x: x[0]):
        path = folder / str(r.get("pgn_file") or "")
        if not r.get("pgn_file") or not path.is_file():
            raise FileNotFoundError(f"{index}, line {n}: its PGN {path} is missing")
        with open(path) as fh:
            game = chess.pgn.read_game(fh)
        if game is None:
            raise ValueError(f"{path}: no game in the file")
        out.append((r, game))
    return out


def by_player(folder: Path, records: Records) -> dict[str, Records]:
    """A folder's games by the bot that played them. When the search's network changes, ``make clock-strength``
    sets the old network's run aside in its results file but leaves its games in the same folder, so a folder
    that holds more than one bot's games names each run apart: the default network's ``<folder>``, any other's
    ``'<folder>, <network>'``. A folder of one bot's games is ``<folder>`` (a run of the default's, or one read
    on purpose). Two bots of one name are an error naming the folder."""
    groups: dict[str, Records] = {}
    for r, game in records:
        groups.setdefault(r["a"], []).append((r, game))
    if len(groups) == 1:
        return {folder.name: records}
    out: dict[str, Records] = {}
    for player, rows in groups.items():
        network = network_of(player)
        name = folder.name if network == SEARCH_NETWORK else f"{folder.name}, {network}"
        if name in out:
            raise ValueError(f"{folder}: two bots' games would both be {name!r} ({player} and {out[name][0][0]['a']})")
        out[name] = rows
    return out


def run(folders: Sequence[Path], depth: int = JUDGE_DEPTH, out: Path = OUT, progress: bool = True) -> dict[str, Any]:
    """Judge every game in ``folders`` and write the summary of each to ``out``."""
    from tqdm import tqdm

    from knights.data.stockfish import Stockfish

    started = time.perf_counter()
    runs: dict[str, Any] = {}
    with Stockfish() as engine:
        for folder in folders:
            for name, records in by_player(folder, read_run(folder)).items():
                games = []
                for r, game in tqdm(records, desc=name, unit="game", disable=not progress):
                    ours = chess.WHITE if r["white"] == r["a"] else chess.BLACK
                    games.append({"score": r["score_a"], "book": int(game.headers.get("OpeningPlies", "0") or 0),
                                  "plies": judged_plies(game, ours, depth, engine)})
                runs[name] = {"player": records[0][0]["a"], "opponents": sorted({r["b"] for r, _ in records}),
                              **summarise(games)}
    doc = {"generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
           "command": "python -m knights.lab.arena.where_lost " + " ".join(sys.argv[1:]),
           "judge_depth": depth, "lost_below": LOST, "behind_below": BEHIND, "phases": dict(PHASES),
           "phase_weights": {chess.piece_name(p): w for p, w in PHASE_WEIGHTS.items()},
           "seconds": round(time.perf_counter() - started, 1), "runs": runs}
    write_json(out, doc)
    return doc


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("folders", nargs="*", help=f"folders of games (default: every one under {GAMES})")
    p.add_argument("--judge", type=int, default=JUDGE_DEPTH, help="Stockfish's depth scoring the positions")
    p.add_argument("--out", default=str(OUT))
    p.add_argument("--quiet", action="store_true")


def main_args(a: argparse.Namespace) -> int:
    if a.judge < 1:
        raise SystemExit("where_lost: --judge >= 1")
    folders = [Path(f) for f in a.folders] or sorted(p for p in GAMES.glob("*ms*") if p.is_dir())
    if not folders:
        raise SystemExit(f"where_lost: no games under {GAMES} (make clock-strength plays them)")
    doc = run(folders, a.judge, Path(a.out), progress=not a.quiet)
    for name, r in doc["runs"].items():
        lost = r["losses"]
        medians = "" if not lost.get("decided") else (
            f", behind for good at ply {lost['median_behind_ply']:g} and decided at ply "
            f"{lost['median_decided_ply']:g} (medians) of {lost['median_plies']:g}")
        print(f"{name}: {r['games']} games; {lost['games']} lost{medians}")
        for ph, row in r["by_phase"].items():
            o, t = row["ours"], row["opponents"]
            if o["moves"]:
                print(f"  {ph}: bot {o['mean']:.4f} a move over {o['moves']}, opponents {t['mean'] or 0:.4f}")
    print(f"wrote {a.out}")
    return 0


DESCRIPTION = "Where the searching bot's real-clock games were decided, judged by Stockfish."


def main(argv: list[str] | None = None) -> int:
    return module_main("knights.lab.arena.where_lost", DESCRIPTION, add_arguments, main_args, argv)


if __name__ == "__main__":
    sys.exit(main())
