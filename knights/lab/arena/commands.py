"""The arena's command line: ``knights match``, ``knights scores``, ``knights strength``, ``knights quality``.

:func:`add_arguments` adds the subcommands (and soak's) to :mod:`knights.cli`'s parser;
each ``*_main`` takes the parsed arguments and returns the exit code::

    knights match ours:material random greedy --games 20     # PGNs and scores
    knights scores results_pgn/matches/a results_pgn/matches/b --player ours:material --out s.json  # pooled
    knights strength --quick                                 # the rating ladder
    knights strength --search --times 100 1000               # the searching bot's ratings
    knights quality results_pgn/matches/ours_material-...    # Stockfish judges the moves
"""

from __future__ import annotations

import datetime as _dt
import os
import time
from pathlib import Path

from knights.common import commit, write_json
from knights.lab.arena import quality
from knights.lab.arena.elo import anchors_of
from knights.lab.arena.game import Settings
from knights.lab.arena.ladder import format_plan, run_strength, strength_plan
from knights.lab.arena.matches import match_records, run_games, safe_name, schedule
from knights.lab.arena.report import format_rating, rating_report
from knights.lab.arena.scores import format_scores, pair_stats, pairings
from knights.lab.arena.specs import SPEC_HELP, check_spec
from knights.learn.training import check_at_least, check_output


def default_workers() -> int:
    return max(1, os.cpu_count() or 1)


def match_main(args) -> int:
    """``knights match A B [C ...]``: A against each of B, C, ..."""
    check_at_least(1, ("--games", args.games), ("--workers", args.workers), ("--movetime", args.movetime),
                   ("--nodes", args.nodes), ("--max-plies", args.max_plies))
    check_output(args.out, "--out", folder=True)
    settings = Settings(max_plies=args.max_plies, nodes=args.nodes, movetime_ms=args.movetime, seed=args.seed)
    specs = [check_spec(s) for s in args.players]
    if len(specs) < 2:
        raise ValueError("name the engine under test and at least one opponent")
    engine, opponents = specs[0], specs[1:]
    out = Path(args.out or Path("results_pgn") / "matches" /
               f"{safe_name(engine)}-{_dt.datetime.now():%Y%m%d-%H%M%S}")
    if (out / "games.jsonl").exists():
        (out / "games.jsonl").unlink()
    tasks = schedule([(engine, o, args.games) for o in opponents], settings)
    start = time.perf_counter()
    records = run_games(tasks, out, workers=args.workers, progress=not args.quiet, desc="match")
    print(format_scores(records))
    anchors = anchors_of(specs)
    if anchors:
        report = rating_report(records, anchors, engines=[engine])
        for p in report["players"]:
            print(f"{p['player']:<24} {format_rating(p)}")
    print(f"{len(records)} games in {time.perf_counter() - start:.0f} s; PGNs in {out}")
    return 0


def scores_main(args) -> int:
    """``knights scores FOLDER [FOLDER ...]``: the games of match folders pooled, each pairing's score with its 95%
    interval (seen from ``--player``'s side when given); ``--out`` writes them as JSON, with the folders and the
    commit they were read at."""
    check_output(args.out, "--out")
    records, seen = [], set()
    for folder in args.folders:
        if Path(folder).resolve() in seen:
            raise ValueError(f"{folder}: named twice (its games would count twice)")
        seen.add(Path(folder).resolve())
        records += match_records(folder)
    if not records:
        raise ValueError(f"no games in {', '.join(args.folders)}")
    if args.player is not None and not any(args.player in (r["a"], r["b"]) for r in records):
        raise ValueError(f"--player {args.player}: played none of these games")
    print(format_scores(records, args.player))
    if args.out:
        stats = pair_stats(records)
        rows = [{**stats[key].to_dict(), "game_seconds": round(sum(walls))}
                for key, walls in pairings(records, args.player).items()]
        write_json(args.out, {"folders": [str(f) for f in args.folders], "commit": commit(), "pairings": rows})
        print(f"wrote {args.out}")
    return 0


def strength_main(args) -> int:
    """``knights strength [--quick]``; ``knights strength --search`` rates the searching bot."""
    if args.workers is None:
        args.workers = 1 if args.clock else default_workers()
    check_at_least(1, ("--workers", args.workers))
    for option, folder in (("--results-dir", args.results_dir), ("--figures-dir", args.figures_dir),
                           ("--pgn-dir", args.pgn_dir)):   # written once every game is played
        check_output(folder, option, folder=True)
    if args.search:
        return search_strength_main(args)
    if args.clock:
        raise ValueError("--clock rates the searching bot on a real clock: give it with --search")
    plan = strength_plan(quick=args.quick, engines=args.engines or None, games=args.games,
                         chain_games=args.chain_games, version_games=args.version_games, seed=args.seed)
    if args.quality_games is not None:
        plan.quality_games = args.quality_games
    if args.dry_run:
        print(format_plan(plan, args.workers))
        return 0
    base = Path("runs/strength-quick") if args.quick else None
    results = args.results_dir or (base / "results" if base else Path("report/results"))
    figures = args.figures_dir or (base / "figures" if base else Path("report/figures"))
    pgns = args.pgn_dir or (base / "pgn" if base else Path("results_pgn/strength"))
    run_strength(plan, results_dir=results, figures_dir=figures, pgn_dir=pgns, workers=args.workers,
                 progress=not args.quiet, quality=not args.no_quality)
    return 0


def search_strength_main(args) -> int:
    """``knights strength --search [--times 100 1000] [--anchors ...] [--games N] [--sunfish-games N]``."""
    import shlex
    import sys

    from knights.lab.arena.search_strength import (
        ANCHORS,
        CLOCK_ANCHORS,
        CLOCK_PGNS,
        CLOCK_RESULTS,
        GAMES,
        PGNS,
        RESULTS,
        TIMES_MS,
        run_search_strength,
    )

    if args.quick or args.engines or args.dry_run:
        raise ValueError("--search plays its own players: --quick, --engines and --dry-run do not apply")
    anchors = args.anchors or list(CLOCK_ANCHORS if args.clock else ANCHORS)
    if any(e < 1350 or e > 2850 for e in anchors):
        raise ValueError(f"--anchors: Stockfish's UCI_Elo (15.1) is from 1350 to 2850, not {anchors}")
    command = "knights " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    default = CLOCK_RESULTS if args.clock else RESULTS
    results = Path(args.results_dir) / default.name if args.results_dir else default
    run_search_strength(args.times or ([1000] if args.clock else list(TIMES_MS)), anchors,
                        GAMES if args.games is None else args.games, args.sunfish_games,
                        results=results,
                        pgn_dir=Path(args.pgn_dir) if args.pgn_dir else (CLOCK_PGNS if args.clock else PGNS),
                        workers=args.workers, progress=not args.quiet, seed=args.seed,
                        sunfish=not args.no_sunfish, command=command, clock=args.clock, retire=args.retire,
                        deterministic=args.deterministic)
    print(f"wrote {results}")
    return 0


def quality_main(args) -> int:
    """``knights quality GAME.pgn | FOLDER [--depth 10] [--out FILE]``."""
    path = Path(args.path)
    if path.is_dir():
        files = quality.pgn_files(path)
        if not files:
            raise ValueError(f"no .pgn files under {path}")
        summary = quality.summarise_files(files, depth=args.depth, workers=args.workers, progress=not args.quiet,
                                          root=path)
        summary["folder"] = str(path)
        out = quality.write_summary(summary, args.out or "report/results/quality.json")
        print(quality.format_summary(summary))
        print(f"wrote {out}")
        return 0
    if not path.is_file():
        raise FileNotFoundError(f"no such PGN file or folder: {path}")
    games = quality.read_games(path)
    if not games:
        raise ValueError(f"{path} holds no game")
    from knights.data.stockfish import Stockfish

    results = []
    with Stockfish() as sf:
        for game in games:
            result = quality.analyse_game(game, args.depth, sf)
            results.append(result)
            print(quality.format_game(result))
    if args.out:
        quality.write_summary({"depth": args.depth, "games": results}, args.out)
        print(f"wrote {args.out}")
    return 0


def add_arguments(sub) -> None:
    """The ``match``, ``scores``, ``strength``, ``soak`` and ``quality`` subcommands (for :mod:`knights.cli`)."""
    m = sub.add_parser("match", help="play an engine against opponents; PGNs and scores",
                       description=f"Players: {SPEC_HELP}.")
    m.add_argument("players", nargs="+", help="the engine under test, then its opponents")
    m.add_argument("--games", type=int, default=20, help="games against each opponent (2 per opening)")
    m.add_argument("--workers", type=int, default=default_workers())
    m.add_argument("--movetime", type=int, default=None, help="ms per move for sf-elo and uci: players")
    m.add_argument("--nodes", type=int, default=None, help="nodes per move for sf-elo and uci: players")
    m.add_argument("--max-plies", type=int, default=300)
    m.add_argument("--seed", type=int, default=2024)
    m.add_argument("--out", default=None, help="folder for the PGNs (default results_pgn/matches/...)")
    m.add_argument("--quiet", action="store_true")
    m.set_defaults(func=match_main)

    c = sub.add_parser("scores", help="match folders' games pooled: each pairing's score with its 95%% interval")
    c.add_argument("folders", nargs="+", help="match folders (knights match --out), their games pooled")
    c.add_argument("--player", default=None, help="see each pairing from this player's side")
    c.add_argument("--out", default=None, help="write the scores as JSON here")
    c.set_defaults(func=scores_main)

    s = sub.add_parser("strength", help="the rating ladder: Elo table, plot, PGNs, move quality")
    s.add_argument("--quick", action="store_true", help="a few games, material evaluator (smoke test)")
    s.add_argument("--search", action="store_true",
                   help="rate the default searching bot instead: a fixed time a move against sunfish and "
                        "Stockfish UCI_Elo anchors; writes report/results/search_strength.json (resumes)")
    s.add_argument("--clock", action="store_true",
                   help="--search on a real clock: the anchors think the same wall time a move (default 1 s, "
                        "anchors 2000 2200); writes report/results/clock_strength.json (resumes)")
    s.add_argument("--times", type=int, nargs="+", default=None,
                   help="--search: milliseconds a move, one run each (default 100 1000)")
    s.add_argument("--anchors", type=int, nargs="+", default=None,
                   help="--search: Stockfish UCI_Elo anchors (default 1350 1500 1800 2000)")
    s.add_argument("--sunfish-games", type=int, default=None,
                   help="--search: games against sunfish (default: --games)")
    s.add_argument("--no-sunfish", action="store_true", help="--search: play the anchors only")
    s.add_argument("--retire", default=None, metavar="LABEL",
                   help="--search after a change to the search: every run so far goes to the results file's "
                        "'previous' as '<run>, LABEL' and its games aside; the --times runs start afresh")
    s.add_argument("--deterministic", action="store_true",
                   help="--search: the bot with its stochastic opening off (search:default:det), runs of its own")
    s.add_argument("--engines", nargs="*", default=None,
                   help="our players to rate (first = the shipped bot); default: ours:default + trained EL")
    s.add_argument("--games", type=int, default=None, help="games of the shipped bot per opponent (80; --search: 20)")
    s.add_argument("--version-games", type=int, default=None, help="games of other versions per opponent (40)")
    s.add_argument("--chain-games", type=int, default=None, help="games per ladder pairing (40)")
    s.add_argument("--quality-games", type=int, default=None, help="shipped-bot games analysed per opponent (10)")
    s.add_argument("--no-quality", action="store_true")
    s.add_argument("--dry-run", action="store_true", help="print the pairings and a time estimate, play nothing")
    s.add_argument("--workers", type=int, default=None,
                   help="games at once (default: one a core; --clock: 1, the bot and its opponent a core each)")
    s.add_argument("--seed", type=int, default=2024)
    s.add_argument("--results-dir", default=None)
    s.add_argument("--figures-dir", default=None)
    s.add_argument("--pgn-dir", default=None)
    s.add_argument("--quiet", action="store_true")
    s.set_defaults(func=strength_main)

    from knights.lab.arena import soak

    soak.add_arguments(sub)

    q = sub.add_parser("quality", help="Stockfish judges every move: ACPL, accuracy, blunders")
    q.add_argument("path", help="a PGN file (one report per game) or a match folder (summary)")
    q.add_argument("--depth", type=int, default=10)
    q.add_argument("--workers", type=int, default=default_workers())
    q.add_argument("--out", default=None, help="JSON output (folder default: report/results/quality.json)")
    q.add_argument("--quiet", action="store_true")
    q.set_defaults(func=quality_main)
