"""The strength ladder: what ``knights strength`` plays, and playing it.

The free rungs (:data:`LADDER`, weak to strong) play their neighbours
(:data:`CHAIN`) and the Stockfish levels whose Elo is fixed (:data:`ANCHORS`), so
every rung gets a rating; our engines play the rungs; one fit rates everyone
(:mod:`knights.lab.arena.report`)::

    plan = strength_plan(quick=True)          # or the full plan, see strength_plan
    print(format_plan(plan, workers=2))       # the pairings and a time estimate
    run_strength(plan, results_dir="runs/r", figures_dir="runs/f", pgn_dir="runs/pgn")

:func:`run_strength` plays the plan (:func:`knights.lab.arena.matches.run_games`), writes
the rating report, and has Stockfish judge the first games of the shipped bot
against each opponent (:mod:`knights.lab.arena.quality`).
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from knights.engine.spec import SPARSE_DEMOCRACY
from knights.lab.arena import quality as move_quality
from knights.lab.arena.game import Settings
from knights.lab.arena.matches import player_seconds, run_games, safe_name, schedule
from knights.lab.arena.report import markdown_table, rating_report, write_report
from knights.lab.arena.scores import format_scores
from knights.lab.arena.specs import canonical

LADDER = ("random", "greedy", "ab2", "ab3", "sf-nodes:1", "sf-nodes:10", "sf-nodes:100")
"""The free rungs, weak to strong."""
ANCHORS = {"sf-elo:1350": 1350.0, "sf-elo:1500": 1500.0, "sf-elo:1800": 1800.0, "sf-elo:2000": 2000.0}
"""Stockfish 15.1 UCI_Elo levels: the fixed ratings."""

CHAIN = (
    ("random", "greedy"), ("greedy", "ab2"), ("ab2", "ab3"), ("greedy", "ab3"),
    ("ab3", "sf-nodes:1"), ("ab3", "sf-nodes:10"), ("sf-nodes:1", "sf-nodes:10"),
    ("sf-nodes:10", "sf-nodes:100"),
    ("sf-nodes:1", "sf-elo:1350"), ("sf-nodes:10", "sf-elo:1350"), ("sf-nodes:100", "sf-elo:1350"),
    ("sf-nodes:100", "sf-elo:1500"), ("sf-nodes:100", "sf-elo:1800"), ("sf-nodes:100", "sf-elo:2000"),
)
"""Games between the rungs that rate them: neighbours, plus the anchors each can score against."""

SHIPPED_OPPONENTS = ("random", "greedy", "ab2", "ab3", "sf-nodes:1", "sf-nodes:10", "sf-elo:1350")
VERSION_OPPONENTS = ("random", "greedy", "ab2", "sf-nodes:1")


@dataclass
class StrengthPlan:
    """Who plays whom, how often, and how much move quality is judged."""

    engines: list[str]                    # our players, the shipped bot first
    shipped: str
    pairings: list[tuple[str, str, int]]  # (a, b, games)
    anchors: dict[str, float]
    settings: Settings
    quality_games: int = 10               # shipped-bot games judged per opponent
    quality_depth: int = 10


def strength_plan(*, quick: bool = False, engines: Sequence[str] | None = None, games: int | None = None,
                  chain_games: int | None = None, version_games: int | None = None,
                  seed: int = 2024) -> StrengthPlan:
    """What ``knights strength`` plays.

    Full (defaults): the shipped bot (``ours:default``: one ply, stochastic openings,
    the one-ply default evaluator) plays 80 games (20 openings x 2 colours, twice) against
    each of :data:`SHIPPED_OPPONENTS`; the democracy's three variants and every
    trained EL version (stochastic too, so that all versions are judged as the bot
    plays) 40 games against each of :data:`VERSION_OPPONENTS` (the democracy's variants
    also against sf-elo:1350); the ladder's :data:`CHAIN` 40 games a pairing; the
    first 10 games of the shipped bot against each opponent are analysed for move
    quality at depth 10: 3,240 games with the twelve EL versions trained. Measured
    per-game times put it at about 27 minutes on 2 idle cores (the last full ladder,
    run at half these game counts, took 319 s); ``knights strength --dry-run`` prints
    the plan and an estimate.

    Quick: ``ours:material`` against random, greedy and sf-nodes:1, two games each,
    a short chain up to the 1350 anchor, games capped at 80 plies, Stockfish
    anchors at 1,000 nodes: a smoke test of the whole pipeline in seconds.
    """
    if quick:
        settings = Settings(max_plies=80, adjudicate_plies=10, nodes=1000, seed=seed)
        shipped = canonical(engines[0]) if engines else "ours:material"
        n, c = _count(games, 2), _count(chain_games, 2)
        pairings = [(shipped, o, n) for o in ("random", "greedy", "sf-nodes:1")]
        pairings += [("random", "greedy", c), ("greedy", "sf-nodes:1", c), ("sf-nodes:1", "sf-elo:1350", c)]
        return StrengthPlan([shipped], shipped, pairings, {"sf-elo:1350": 1350.0}, settings,
                            quality_games=1, quality_depth=6)
    names = [canonical(e) for e in engines] if engines else _our_engines()
    names = list(dict.fromkeys(names))
    shipped = names[0]
    pairings = [(shipped, o, _count(games, 80)) for o in SHIPPED_OPPONENTS]
    from knights.evaluate.names import DEFAULT_EVALUATOR, split_variant

    rivals = {split_variant(shipped)[0], f"ours:{split_variant(DEFAULT_EVALUATOR)[0]}"}
    for e in names[1:]:
        # the shipped evaluator's and the democracy's variants (with or without the threat term or the
        # capture search) also meet the lowest anchor, as the shipped bot does: which earns its place is
        # decided there (knights.engine.spec.ONE_PLY_EVALUATOR)
        extra = ("sf-elo:1350",) if split_variant(e)[0] in rivals else ()
        pairings += [(e, o, _count(version_games, 40)) for o in VERSION_OPPONENTS + extra]
    pairings += [(a, b, _count(chain_games, 40)) for a, b in CHAIN]
    pairings = [p for p in pairings if p[2] > 0]
    return StrengthPlan(names, shipped, pairings, dict(ANCHORS), Settings(seed=seed))


def _our_engines() -> list[str]:
    """The shipped one-ply bot, the democracy's variants (without a suffix, with the threat term, with the
    capture search), and every trained version, as specs.

    The shipped bot plays the one-ply default (:func:`~knights.engine.build.default_evaluator`: the compiled
    networks' democracy, each judged where the captures end); without their weights the bot falls back as the engine
    does, and so does the ladder, under the evaluator's real name. The democracy's variants stay beside it
    so that the ladder keeps measuring which earns its place."""
    from knights.engine.build import available as evaluators_here
    from knights.engine.build import default_evaluator
    from knights.engine.spec import ONE_PLY_EVALUATOR
    from knights.evaluate.names import VARIANT_SUFFIXES, default_evaluator_name, split_variant, trained_networks

    available = evaluators_here()
    default = default_evaluator(1, available)
    if default != ONE_PLY_EVALUATOR:
        print(f"note: {ONE_PLY_EVALUATOR} is not trained; the shipped bot is rated with '{default}'",
              file=sys.stderr)
    base = split_variant(default_evaluator_name(available))[0]
    variants = [f"ours:{base}{suffix}" for suffix in ("", *VARIANT_SUFFIXES) if base + suffix != default]
    return [f"ours:{default}"] + variants + [f"ours:{e}" for e in trained_networks(available)]


def _count(value: int | None, default: int) -> int:
    if value is not None and value < 0:
        raise ValueError(f"a game count cannot be negative ({value})")
    return default if value is None else value


def estimate_seconds(plan: StrengthPlan, workers: int = 1) -> dict:
    """Rough wall time of a plan from :data:`~knights.lab.arena.matches.SECONDS_PER_GAME`
    (quality: 60 plies a game at about 60 ms a position at depth 10)."""
    games = sum(n for _, _, n in plan.pairings)
    play = sum(n * (player_seconds(a) + player_seconds(b)) for a, b, n in plan.pairings)
    shipped_opponents = sum(1 for a, _, _ in plan.pairings if a == plan.shipped)
    judge = shipped_opponents * plan.quality_games * 60 * 0.06 * (plan.quality_depth / 10) ** 2
    w = max(1, workers)
    return {"games": games, "play_s": play / w, "quality_s": judge / w, "total_s": (play + judge) / w}


def format_plan(plan: StrengthPlan, workers: int) -> str:
    """The pairings, their seconds a game, and the whole plan's estimate."""
    lines = [f"{'player':<24} {'opponent':<16} {'games':>5} {'~s/game':>8}"]
    for a, b, n in plan.pairings:
        lines.append(f"{a:<24} {b:<16} {n:>5} {player_seconds(a) + player_seconds(b):>8.2f}")
    est = estimate_seconds(plan, workers)
    lines.append(f"{est['games']} games; rough estimate with {workers} worker(s): "
                 f"{est['play_s'] / 60:.0f} min of games + {est['quality_s'] / 60:.0f} min of move quality "
                 f"= {est['total_s'] / 60:.0f} min")
    return "\n".join(lines)


def run_strength(plan: StrengthPlan, *, results_dir: str | Path, figures_dir: str | Path,
                 pgn_dir: str | Path, workers: int = 1, progress: bool = True, quality: bool = True,
                 log=print) -> dict:
    """Play the plan, rate everyone, write the table, plot and (``quality``) the
    move-quality summary of the shipped bot's first games."""
    pgn_dir = Path(pgn_dir)
    if (pgn_dir / "games.jsonl").exists():  # a fresh run: forget the previous one's games
        (pgn_dir / "games.jsonl").unlink()
        for old in pgn_dir.glob("*__vs__*/g*.pgn"):
            old.unlink()
    start = time.perf_counter()
    tasks = schedule(plan.pairings, plan.settings)
    log(f"strength: {len(tasks)} games in {len(plan.pairings)} pairings, {workers} worker(s); PGNs in {pgn_dir}")
    records = run_games(tasks, pgn_dir, workers=workers, progress=progress, desc="strength")
    played = time.perf_counter() - start
    log(format_scores(records))
    report = rating_report(records, plan.anchors, shipped=plan.shipped, engines=plan.engines, rungs=LADDER)
    report["settings"] = dataclasses.asdict(plan.settings)
    report["sparse_democracy"] = list(SPARSE_DEMOCRACY)   # who sparse+quiesce's members were (the report checks)
    report["pgn_dir"] = str(pgn_dir)
    report["seconds_games"] = round(played, 1)
    report["workers"] = workers
    quality_path = Path(results_dir) / "quality.json"
    if quality:
        files = []
        for a, b, _ in plan.pairings:
            if a == plan.shipped:
                folder = pgn_dir / f"{safe_name(a)}__vs__{safe_name(b)}"
                files += sorted(folder.glob("*.pgn"))[: plan.quality_games]
        t0 = time.perf_counter()
        summary = move_quality.summarise_files(files, depth=plan.quality_depth, workers=workers, progress=progress,
                                               root=pgn_dir)
        move_quality.write_summary(summary, quality_path)
        report["seconds_quality"] = round(time.perf_counter() - t0, 1)
        log(move_quality.format_summary(summary))
    paths = write_report(report, results_dir, figures_dir)
    log(markdown_table(report))
    log("wrote " + ", ".join(str(p) for p in paths) + (f", {quality_path}" if quality else ""))
    log(f"strength: {time.perf_counter() - start:.0f} s in all ({played:.0f} s of games)")
    return report
