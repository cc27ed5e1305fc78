"""Pool the games of ``knights match`` runs into one comparison, written as JSON: ``python -m knights.lab.arena.pool``.

A measurement, not a test. Each ``--arm NAME FOLDER [FOLDER ...]`` names one player's runs
(the folders ``knights match --out`` wrote, each holding ``games.jsonl``); the runs of
different arms should come from the same seeds, so that they meet the same openings. For
every run and every arm pooled: games, wins, draws, losses and the score of the player
under test (the match's first player), and, for two arms, the second's pooled score less the
first's with its standard error. It also reads every game's moves (the PGNs beside
``games.jsonl``) for two ways a one-ply bot throws points away: the games in which the
player under test made a move after which the opponent could mate at once while another
move did not allow it (``avoidable_mate_in_one``, with the player's score in them), and the
draws by threefold repetition with the player three pawns or more of material ahead
(``repetition_draws_ahead``; ``of_them_not_on_the_board``: those ended because the side to move
could claim the repetition with its next move, not because it stood on the board)::

    .venv/bin/python -m knights.lab.arena.pool --what "..." \\
        --arm democracy runs/dem_old runs/match_democracy \\
        --arm democracy+qsearch runs/match7_democracy_qsearch runs/match_democracy_qsearch \\
        --out report/results/one_ply_capture_search.json
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from knights.common import module_main, write_json
from knights.engine.rules import mates_in_one
from knights.lab.arena.matches import match_records
from knights.lab.arena.players import material_cp
from knights.lab.arena.scores import PairStats

AHEAD_PAWNS = 3
"""Material lead (pawns) at which a repetition draw counts as thrown away."""


def allows_mate(board: chess.Board, move: chess.Move) -> bool:
    board.push(move)
    try:
        return mates_in_one(board)
    finally:
        board.pop()


def read_game(folder: Path, game: dict[str, Any]) -> dict[str, bool]:
    """What one game's moves show about the player under test (the match's first player)."""
    with open(folder / game["pgn_file"]) as f:
        record = chess.pgn.read_game(f)
    if record is None:
        raise SystemExit(f"{folder / game['pgn_file']}: no game in it")
    ours = chess.WHITE if game["white"] == game["a"] else chess.BLACK
    board = record.board()
    avoidable = False
    for move in record.mainline_moves():
        if board.turn == ours and not avoidable and allows_mate(board, move):
            avoidable = any(not allows_mate(board, m) for m in board.legal_moves)
        board.push(move)
    ahead = game["termination"] == "threefold repetition" and material_cp(board, ours) >= 100 * AHEAD_PAWNS
    return {"avoidable_mate_in_one": avoidable, "repetition_draw_ahead": ahead,
            "claimed_not_on_board": ahead and not board.is_repetition(3)}


def run_figures(folder: Path) -> tuple[dict[str, Any], list[float], list[dict[str, bool]]]:
    """One run's games from its ``games.jsonl``: who played whom and the tally, the
    player under test's score of every game and what each game's moves show."""
    games = match_records(folder)
    if not games:
        raise SystemExit(f"{folder}/games.jsonl holds no games")
    players = {(g["a"], g["b"]) for g in games}
    if len(players) != 1:
        raise SystemExit(f"{folder}: more than one pairing ({sorted(players)}); pool one pairing a run")
    (player, opponent), = players
    scores = [g["score_a"] for g in games]
    return ({"folder": str(folder), "player": player, "opponent": opponent, **tally(scores)}, scores,
            [read_game(folder, g) for g in games])


def misses(scores: list[float], read: list[dict[str, bool]]) -> dict[str, Any]:
    mated = [s for s, r in zip(scores, read, strict=True) if r["avoidable_mate_in_one"]]
    return {"avoidable_mate_in_one": {"games": len(mated), "score": sum(mated)},
            "repetition_draws_ahead": sum(r["repetition_draw_ahead"] for r in read),
            "of_them_not_on_the_board": sum(r["claimed_not_on_board"] for r in read)}


def tally(scores: list[float]) -> dict[str, Any]:
    wins, draws, losses = (sum(s == x for s in scores) for x in (1.0, 0.5, 0.0))
    stats = PairStats("player", "opponent", games=len(scores), wins=wins, draws=draws, losses=losses)
    return {"games": stats.games, "wins": wins, "draws": draws, "losses": losses, "score": round(stats.score, 4),
            "ci95": [round(x, 4) for x in stats.interval()]}


def difference_error(a: dict[str, Any], b: dict[str, Any]) -> float:
    """The standard error of the difference of two arms' pooled scores (:func:`tally`'s), each from the spread of its
    games' own scores (:meth:`~knights.lab.arena.scores.PairStats.standard_error`)."""
    return math.sqrt(sum(PairStats("player", "opponent", games=t["games"], wins=t["wins"], draws=t["draws"],
                                   losses=t["losses"]).standard_error() ** 2 for t in (a, b)))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--arm", nargs="+", action="append", required=True, metavar="NAME FOLDER",
                        help="an arm's name, then the match folders of its runs")
    parser.add_argument("--what", default="", help="what the comparison asks, written into the JSON")
    parser.add_argument("--out", type=Path, required=True)


def run(args: argparse.Namespace) -> int:
    return pool(args.arm, args.what, args.out)


def pool(arm_folders: list[list[str]], what: str, out_path: Path) -> int:
    """Each ``[name, folder, ...]`` of ``arm_folders`` pooled, compared and written to ``out_path`` with its command."""
    arms: dict[str, Any] = {}
    for name, *folders in arm_folders:
        if not folders:
            raise SystemExit(f"--arm {name}: give at least one match folder")
        try:
            figures = [run_figures(Path(f)) for f in folders]
        except ValueError as e:             # not a match folder, or a bad record: named
            raise SystemExit(str(e)) from None
        runs = [r for r, _, _ in figures]
        scores = [x for _, s, _ in figures for x in s]
        arms[name] = {"runs": runs, "pooled": tally(scores),
                      "games_read": misses(scores, [x for _, _, r in figures for x in r])}
        print(f"{name}: " + "; ".join(f"{r['folder']} {r['score']:.3f} over {r['games']}" for r in runs)
              + f"; pooled {arms[name]['pooled']['score']:.3f} over {arms[name]['pooled']['games']}; "
              + f"{arms[name]['games_read']}")
    argv = [a for name, *folders in arm_folders for a in ("--arm", name, *folders)]
    argv += [*(["--what", what] if what else []), "--out", str(out_path)]
    out: dict[str, Any] = {"what": what, "command": " ".join(["python -m knights.lab.arena.pool", *argv]),
                           "arms": arms}
    if len(arms) == 2:
        (a, fa), (b, fb) = ((n, f["pooled"]) for n, f in arms.items())
        se = difference_error(fa, fb)
        out["difference"] = {"arm": b, "against": a, "value": round(fb["score"] - fa["score"], 4),
                             "standard_error": round(se, 4)}
        print(f"{b} - {a}: {fb['score'] - fa['score']:+.3f} ({se:.3f} standard error)")
    write_json(out_path, out)
    return 0


DESCRIPTION = "Two arms' knights match folders pooled and compared, with what the one-ply bot's games show."


def main(argv: list[str] | None = None) -> int:
    return module_main("knights.lab.arena.pool", DESCRIPTION, add_arguments, run, argv)


if __name__ == "__main__":
    sys.exit(main())
