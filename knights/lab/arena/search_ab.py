"""What each part of the search is worth in games: ``python -m knights.lab.arena.search_ab`` (``make search-ab``).

The default searching bot plays itself with one or more of its parts switched off
(:data:`knights.engine.compiled_search.FEATURES`), both sides deterministic at the same number of nodes a
move, so the machine's load cannot favour either side. Every opening of the book
(:data:`knights.lab.arena.openings.OPENINGS`) is followed by ``--random-plies`` random legal moves drawn from
a seeded generator, one start per game pair, and each start is played twice with the colours swapped. The
games end as the arena's do (:func:`knights.lab.arena.game.play_game`: the rules, a material lead held for
twenty moves, 300 plies).

For each variant: the default's wins, draws and losses, its score and the rating difference with a 95%
interval from the pairs' spread (the two games of a start share its imbalance, so pairs, not games, are the
independent draws). Writes ``report/results/search_ab.json``; the games go to
``results_pgn/search_ab/<variant>.jsonl``, one line each, and a run resumes from them.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import chess

from knights.common import commit, module_main, write_json
from knights.engine.search import SearchEngine, SearchLimits
from knights.lab.arena.elo import Z95, elo_difference
from knights.lab.arena.game import Settings, play_game, white_points
from knights.lab.arena.matches import whole_lines
from knights.lab.arena.openings import OPENINGS
from knights.lab.arena.players import EnginePlayer
from knights.lab.results.tables import RESULTS_DIR

OUT = RESULTS_DIR / "search_ab.json"
SETTINGS = ("nodes", "pairs", "random_plies", "seed", "command")
"""What each variant's row records of how it was played (with its commit)."""
GAMES_DIR = Path("results_pgn/search_ab")
NODES = 30_000
"""Nodes a move: about 0.15 s of this search on one core, depth 7-8 in the middlegame."""


class NodesPlayer(EnginePlayer):
    """A search that stops after ``nodes`` nodes a move, whatever the clock says."""

    def __init__(self, engine: SearchEngine, nodes: int, name: str) -> None:
        super().__init__(engine, name)
        self.search = engine
        self.limits = SearchLimits(nodes=nodes)
        self.nodes = self.moves = 0          # this game's

    def choose_move(self, board: chess.Board) -> chess.Move:
        self.last = self.search.choose(board, limits=self.limits)
        self.nodes += self.last.nodes
        self.moves += 1
        return self.last.move

    def new_game(self) -> None:
        super().new_game()
        self.nodes = self.moves = 0


def starts(pairs: int, random_plies: int, seed: int) -> list[chess.Board]:
    """``pairs`` starting boards: the book's openings in turn, each followed by ``random_plies`` random legal
    moves (a start that ends the game is drawn again)."""
    rng = random.Random(seed)
    out: list[chess.Board] = []
    while len(out) < pairs:
        board = OPENINGS[len(out) % len(OPENINGS)].board()
        for _ in range(random_plies):
            board.push(rng.choice(list(board.legal_moves)))
        if not board.is_game_over():
            out.append(board)
    return out


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Wins, draws and losses of the default and its rating difference, the interval from the game pairs."""
    by_pair: dict[int, list[float]] = {}
    for r in rows:
        by_pair.setdefault(int(r["pair"]), []).append(float(r["score"]))
    pairs = [sum(v) / len(v) for v in by_pair.values()]
    n = len(pairs)
    score = sum(float(r["score"]) for r in rows) / len(rows)
    mean = sum(pairs) / n
    se = math.sqrt(sum((p - mean) ** 2 for p in pairs) / (n - 1) / n) if n > 1 else float("nan")

    def elo(s: float) -> float:
        return round(elo_difference(min(max(s, 1e-3), 1 - 1e-3)), 1)

    return {"games": len(rows), "wins": sum(r["score"] == 1.0 for r in rows),
            "draws": sum(r["score"] == 0.5 for r in rows), "losses": sum(r["score"] == 0.0 for r in rows),
            "score": round(score, 4), "elo": elo(score),
            "interval": [elo(score - Z95 * se), elo(score + Z95 * se)] if n > 1 else None,
            "mean_plies": round(sum(int(r["plies"]) for r in rows) / len(rows), 1),
            "nodes_a_move": {side: round(sum(r["nodes"][side] for r in rows) / max(1, sum(r["moves"][side]
                                                                                          for r in rows)))
                             for side in ("default", "variant")}}


def variant_name(off: Sequence[str]) -> str:
    """``["lmp", "lmr_log"]`` -> ``"lmp+lmr_log off"``: the variant's key in the results and its games file."""
    return "+".join(sorted(off)) + " off"


def read_games(path: Path) -> list[dict[str, Any]]:
    """The game records in ``path`` (none when it is missing); a last line cut short by a killed run is dropped
    from the file, any other unreadable line is an error naming it."""
    if not path.exists():
        return []
    rows = []
    for number, line in enumerate(whole_lines(path), 1):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}, line {number}: not a game record ({exc.msg})") from None
    return rows


def play_variant(off: Sequence[str], pairs: int, nodes: int, random_plies: int, seed: int,
                 progress: bool = True, games_dir: Path = GAMES_DIR) -> list[dict[str, Any]]:
    """The games of the default against itself with ``off`` switched off (resuming from the games on disk)."""
    from tqdm import tqdm

    from knights.engine.compiled_search import FEATURES, FastSearchEngine

    unknown = sorted(set(off) - set(FEATURES))
    if unknown:
        raise ValueError(f"--off: no such part of the search: {', '.join(unknown)} (one of {', '.join(FEATURES)})")
    name = variant_name(off)
    path = games_dir / f"{name.replace(' ', '_')}.jsonl"
    same = {"nodes_limit": nodes, "seed": seed, "random_plies": random_plies}
    done = [r for r in read_games(path) if all(r.get(k) == v for k, v in same.items())]
    have = {(r["pair"], r["default_white"]) for r in done}
    boards = starts(pairs, random_plies, seed)
    players = {"default": NodesPlayer(FastSearchEngine(stochastic=False), nodes, "default"),
               "variant": NodesPlayer(FastSearchEngine(stochastic=False, features=dict.fromkeys(off, False)),
                                      nodes, name)}
    todo = [(i, w) for i in range(pairs) for w in (True, False) if (i, w) not in have]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as out:
        for i, default_white in tqdm(todo, desc=name, unit="game", disable=not progress):
            white, black = ((players["default"], players["variant"]) if default_white
                            else (players["variant"], players["default"]))
            started = time.perf_counter()
            record = play_game(white, black, boards[i], Settings())
            points = white_points(record.result)
            row = {"pair": i, "default_white": default_white, "score": points if default_white else 1.0 - points,
                   "result": record.result, "termination": record.termination,
                   "plies": len(record.board.move_stack), "start": boards[i].fen(),
                   "nodes": {k: p.nodes for k, p in players.items()}, "moves": {k: p.moves for k, p in players.items()},
                   "nodes_limit": nodes, "seed": seed, "random_plies": random_plies,
                   "seconds": round(time.perf_counter() - started, 1)}
            out.write(json.dumps(row) + "\n")
            out.flush()
            done.append(row)
    return [r for r in done if r["pair"] < pairs]


def run(variants: Sequence[Sequence[str]], pairs: int, nodes: int, random_plies: int, seed: int, out: Path = OUT,
        progress: bool = True, games_dir: Path = GAMES_DIR) -> dict[str, Any]:
    """Play every variant (resuming) and merge its summary into ``out``: each variant keeps the settings and the
    command it was played with, so variants measured at different nodes or on an earlier default sit side by side."""
    doc = json.loads(out.read_text()) if out.exists() else {}
    results = dict(doc.get("variants") or {})
    started = time.perf_counter()
    command = "python -m knights.lab.arena.search_ab " + " ".join(sys.argv[1:])
    for off in variants:
        rows = play_variant(off, pairs, nodes, random_plies, seed, progress, games_dir)
        results[variant_name(off)] = {**summary(rows), "nodes": nodes, "pairs": pairs, "random_plies": random_plies,
                                      "seed": seed, "command": command, "commit": commit()}
    for key in SETTINGS:        # a file from before kept one run's settings at its top: they were each variant's
        value = doc.pop(key, None)
        for settings in results.values():
            settings.setdefault(key, value)
    doc.update(note=("The default searching bot (deterministic) against itself with parts switched off, both at "
                     "the same nodes a move, from the book's openings and random plies, each start with both "
                     "colours; score, elo and interval are the default's (positive: the part pays); each variant "
                     "names its settings, its command and the commit of the default that played it"),
               generated=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
               seconds=round(float(doc.get("seconds", 0.0)) + time.perf_counter() - started, 1), variants=results)
    write_json(out, doc)
    return doc


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--off", nargs="+", action="append", required=True, metavar="PART",
                   help="parts switched off in the variant (repeat --off for more variants)")
    p.add_argument("--pairs", type=int, default=60, help="starts, each played with both colours (default 60)")
    p.add_argument("--nodes", type=int, default=NODES, help=f"nodes a move for both sides (default {NODES:,})")
    p.add_argument("--random-plies", type=int, default=2, help="random moves after each book line (default 2)")
    p.add_argument("--seed", type=int, default=2024)
    p.add_argument("--out", default=str(OUT))
    p.add_argument("--quiet", action="store_true")


def main_args(a: argparse.Namespace) -> int:
    if a.pairs < 2 or a.nodes < 100 or a.random_plies < 0:
        raise SystemExit("search_ab: --pairs >= 2, --nodes >= 100, --random-plies >= 0")
    doc = run(a.off, a.pairs, a.nodes, a.random_plies, a.seed, Path(a.out), progress=not a.quiet)
    for name, row in doc["variants"].items():
        low, high = row["interval"] or (float("nan"), float("nan"))
        print(f"{name}: the default scores {row['score']:.3f} (+{row['wins']} ={row['draws']} -{row['losses']}), "
              f"{row['elo']:+.0f} Elo [{low:+.0f}, {high:+.0f}]")
    print(f"wrote {a.out}")
    return 0


DESCRIPTION = "What each part of the search is worth: the default against itself with parts switched off."


def main(argv: list[str] | None = None) -> int:
    return module_main("knights.lab.arena.search_ab", DESCRIPTION, add_arguments, main_args, argv)


if __name__ == "__main__":
    sys.exit(main())
