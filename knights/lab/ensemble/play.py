"""One-ply play: the democracy against its best member alone, over the same openings against the same anchor.

    python -m knights.lab.ensemble.play --arm sparse+quiesce --games 400     # one arm (resumable)
    python -m knights.lab.ensemble.play --arm EL/v23+quiesce --games 400
    python -m knights.lab.ensemble.play --summary --member EL/v23+quiesce    # report/results/democracy_play.json

Each arm is the one-ply bot (``ours:<evaluator>``, stochastic as shipped) against one anchor
(:data:`ANCHOR`, Stockfish at a limited Elo) for the same games of :func:`knights.lab.arena.matches.schedule`:
game ``g`` opens with opening ``g // 2`` and the bot has White when ``g`` is even, so game ``g`` of one arm and
game ``g`` of the other start from the same position with the same colours. An arm plays its games in order in
one process, appends each to ``runs/democracy/play/<arm>/games.jsonl`` as it ends and, run again, plays only the
games not yet there (:func:`knights.lab.arena.matches.finished`). :func:`summary` pairs the games both arms
have finished and gives each arm's score and the difference with the standard error of the paired differences.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from knights.common import write_json
from knights.lab.arena.game import Settings
from knights.lab.arena.matches import _close_players, finished, run_task, safe_name, save_record, schedule
from knights.learn import registry

ANCHOR = "sf-elo:1500"
"""Near the one-ply bot's strength (about 1590 on the rating ladder), so both arms score well away from 0 and 1."""
DEMOCRACY = "sparse+quiesce"
PLAY_DIR = registry.REPO_ROOT / "runs" / "democracy" / "play"
RESULTS = registry.REPO_ROOT / "report" / "results" / "democracy_play.json"
SEED = 2024


def arm_folder(evaluator: str, folder: Path = PLAY_DIR) -> Path:
    return folder / safe_name(evaluator)


def tasks_for(evaluator: str, games: int, anchor: str = ANCHOR, seed: int = SEED) -> list[Any]:
    return schedule([(f"ours:{evaluator}", anchor, games)], Settings(seed=seed))


def play_arm(evaluator: str, games: int, anchor: str = ANCHOR, folder: Path = PLAY_DIR, seed: int = SEED,
             progress: bool = True) -> int:
    """Play the arm's games not yet in its log, in order; the number played now."""
    if games < 1:
        raise ValueError(f"--games must be at least 1, not {games}")
    out = arm_folder(evaluator, folder)
    out.mkdir(parents=True, exist_ok=True)
    tasks = tasks_for(evaluator, games, anchor, seed)
    done = {r["index"] for r in finished(out, tasks)}
    todo = [t for t in tasks if t.index not in done]
    log = out / "games.jsonl"
    try:
        for n, task in enumerate(todo, 1):
            row = save_record(out, log, run_task(task))
            if progress:
                print(f"{_dt.datetime.now():%H:%M:%S} {evaluator} game {task.index}: {row['score_a']:g} "
                      f"({len(done) + n}/{games}, {row['wall']:.1f} s)", flush=True)
    finally:
        _close_players()
    return len(todo)


def _score(scores: list[float]) -> dict[str, Any]:
    n = len(scores)
    mean = sum(scores) / n if n else float("nan")
    sd = math.sqrt(sum((s - mean) ** 2 for s in scores) / (n - 1)) if n > 1 else float("nan")
    return {"games": n, "wins": sum(s == 1.0 for s in scores), "draws": sum(s == 0.5 for s in scores),
            "losses": sum(s == 0.0 for s in scores), "score": round(mean, 4),
            "se": round(sd / math.sqrt(n), 4) if n > 1 else None}


def summary(democracy: str, member: str, games: int, anchor: str = ANCHOR, folder: Path = PLAY_DIR,
            seed: int = SEED) -> dict[str, Any]:
    """Both arms' scores on the games both have finished (the same openings and colours) and the difference
    (democracy minus member) with the standard error of the paired per-game differences."""
    arms, walls = {}, {}
    for evaluator in (democracy, member):
        records = finished(arm_folder(evaluator, folder), tasks_for(evaluator, games, anchor, seed))
        arms[evaluator] = {r["index"]: float(r["score_a"]) for r in records}
        walls[evaluator] = round(sum(float(r.get("wall", 0.0)) for r in records), 1)
    common = sorted(set(arms[democracy]) & set(arms[member]))
    diffs = [arms[democracy][g] - arms[member][g] for g in common]
    return {
        "what": "One-ply play: the shipped democracy against its best member alone (chosen on the selection sets), "
                "judged where the captures end, each against the same anchor over the same openings and colours "
                "(game g: opening g // 2, the bot White when g is even); python -m knights.lab.ensemble.play",
        "anchor": anchor, "seed": seed, "games_planned": games, "settings": asdict(Settings(seed=seed)),
        "limits": "the bot one ply, stochastic as shipped; the anchor with the arena's default for sf-elo (no nodes or "
                  "movetime given: 20,000 nodes a move, knights.lab.arena.players.StockfishPlayer)",
        "wall_seconds": walls,
        "democracy": democracy, "member": member,
        "games_paired": len(common),
        "arms": {k: _score([v[g] for g in common]) for k, v in arms.items()},
        "arms_all_games": {k: _score(list(v.values())) for k, v in arms.items()},
        "difference": {"score": _score(diffs)["score"], "se_paired": _score(diffs)["se"],
                       "note": "democracy minus member over the paired games; SE of the per-game differences"},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arm", default=None, help="play this evaluator's games (ours:<arm> against the anchor)")
    ap.add_argument("--games", type=int, default=400)
    ap.add_argument("--anchor", default=ANCHOR)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--folder", type=Path, default=PLAY_DIR)
    ap.add_argument("--summary", action="store_true", help="write the paired result of --democracy and --member")
    ap.add_argument("--democracy", default=DEMOCRACY)
    ap.add_argument("--member", default=None, help="the democracy's best member (its evaluator name)")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    if args.arm is None and not args.summary:
        ap.error("name --arm to play or --summary to write the result")
    if args.arm is not None:
        play_arm(args.arm, args.games, args.anchor, args.folder, args.seed)
    if args.summary:
        if args.member is None:
            ap.error("--summary needs --member")
        result = summary(args.democracy, args.member, args.games, args.anchor, args.folder, args.seed)
        write_json(args.out, result)
        print(json.dumps(result["arms"], indent=1), json.dumps(result["difference"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
