"""The ``knights`` command: ``knights <command> [options]``.

The launcher of every application: it parses arguments, turns them into the calls of
the modules that own each command (a few small handlers build their recipes here and
write their JSON reports through :func:`knights.common.write_json`), and reports errors
as one clear line (no traceback) with a non-zero exit code.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from knights.common import quoted

Handler = Callable[[argparse.Namespace], int]


def _data_generate(args: argparse.Namespace) -> int:
    from knights.data.generate import Recipe, generate
    from knights.learn.training import check_output

    if args.shard is None:
        check_output(args.out, "--out")
    check_output(args.report, "--report")
    recipe = Recipe(seed=args.seed, depth=args.depth, max_plies=args.max_plies,
                    games_per_part=args.games_per_part)
    report = generate(args.out, args.positions, recipe, workers=args.workers, dedup=args.dedup,
                      progress=not args.quiet, shard=args.shard,
                      until_part=-1 if args.until_part is None else args.until_part)
    print(report.summary())
    if args.report:
        import os

        from knights.common import write_json

        write_json(args.report, {
            "rows": report.rows, "games": report.games, "seconds": round(report.seconds, 1),
            "workers": report.workers, "stockfish": report.stockfish, "parts_reused": report.parts_reused,
            "duplicates_dropped": report.duplicates_dropped, "recipe": recipe.key(report.stockfish),
            "cpu_count": os.cpu_count()})
    return 0


def _shard_flag(text: str) -> Shard:
    """``--shard K/N`` as a :class:`~knights.data.shards.Shard` (argparse names the flag on error)."""
    from knights.data.shards import Shard

    try:
        return Shard.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _part_number(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{quoted(text)} is not a part number (0, 1, 2, ...)")
    return int(text)


def _number(text: str, what: str, ok: Callable[[float], bool], rule: str) -> float:
    """A finite number of ``what`` for which ``ok`` holds; an argparse error saying ``rule`` otherwise."""
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{quoted(text)} is not a number of {what}") from None
    if not math.isfinite(value) or not ok(value):
        raise argparse.ArgumentTypeError(f"must be {rule}, not {quoted(text)}")
    return value


def _at_least(low: int, what: str) -> Callable[[str], int]:
    """An argparse type: a whole number of ``what`` from ``low`` (argparse names the option)."""
    def whole(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{quoted(text)} is not a whole number of {what}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, not {value}")
        return value

    return whole


def _seed(text: str) -> int:
    """``--seed``: a whole number from 0 to the UCI Seed option's most (leave it out for fresh entropy)."""
    from knights.frontends.uci import SEED_MAX

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{quoted(text)} is not a whole number") from None
    if not 0 <= value <= SEED_MAX:
        raise argparse.ArgumentTypeError(f"must be a whole number from 0 to {SEED_MAX} (leave it out for a "
                                         f"fresh seed), not {quoted(text)}")
    return value


def _short(most: int, what: str) -> Callable[[str], str]:
    """An argparse type: text of at most ``most`` characters (the longest ``what`` there is), so
    that no error down the line quotes a 5,000-character value whole."""
    def text(value: str) -> str:
        if len(value) > most:
            raise argparse.ArgumentTypeError(f"{quoted(value)} is too long for {what} ({len(value):,} characters; "
                                             f"at most {most})")
        return value

    return text


EVALUATOR_NAME = _short(64, "an evaluator name")
FEN = _short(100, "a FEN")


def _seconds(text: str) -> float:
    """``--movetime``: a finite number of seconds above 0 (``nan`` hung the bot; ``-1`` passed)."""
    return _number(text, "seconds", lambda v: v > 0, "a finite number of seconds above 0")


def _depth(text: str) -> int:
    """``--depth``: a whole number of plies from 1 (the one-ply bot) to the UCI Depth option's most."""
    from knights.engine.constants import UNLIMITED_DEPTH as MAX_DEPTH

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{quoted(text)} is not a whole number of plies") from None
    if not 1 <= value <= MAX_DEPTH:
        raise argparse.ArgumentTypeError(f"must be from 1 (the one-ply bot) to {MAX_DEPTH}, not {value}")
    return value


def _bonus(text: str) -> float:
    """``--capture-bonus``: pawns from 0 to 1 (the UCI CaptureBonus option's 0-100 centipawns)."""
    return _number(text, "pawns", lambda v: 0.0 <= v <= 1.0, "from 0 to 1 pawn")


def _data_grow(args: argparse.Namespace) -> int:
    import os

    from knights.common import write_json
    from knights.data.generate import Recipe
    from knights.data.grow import grow
    from knights.learn.training import check_output

    check_output(args.work, "--work", folder=True)
    check_output(args.report, "--report")
    report = grow(args.positions, depth=args.depth, rounds=args.rounds, workers=args.workers, work=args.work,
                  progress=not args.quiet, grown=args.set)
    print(report.summary())
    if args.report:
        write_json(args.report, {**report.as_dict(Recipe(depth=args.depth)), "cpu_count": os.cpu_count()})
    return 0


def _data_merge(args: argparse.Namespace) -> int:
    from knights.data.shards import merge

    print(merge(args.out, args.positions, args.sources or None, dedup=args.dedup).summary())
    return 0


def _data_store(args: argparse.Namespace) -> int:
    from knights.data.store import lasting_notice, record, store

    started = time.perf_counter()
    m = store(args.store, workers=args.workers, progress=not args.quiet)
    size = sum(s["bytes"] for s in m["shards"].values())
    print(f"stored {m['positions']:,} positions from {len(m['files']):,} files in {len(m['shards'])} shards "
          f"({size / 2**20:.1f} MiB) under {args.store}")
    notice = lasting_notice(args.store)
    if notice:
        print(notice, file=sys.stderr)
    if args.report:
        record(args.report, "store", {"positions": m["positions"], "files": len(m["files"]), "shards": len(m["shards"]),
                                      "bytes": size, "seconds": round(time.perf_counter() - started, 1),
                                      "workers": args.workers})
    return 0


def _data_restore(args: argparse.Namespace) -> int:
    from knights.data.store import record, restore

    started = time.perf_counter()
    r = restore(args.store, workers=args.workers, progress=not args.quiet)
    print(f"restored {r['positions']:,} positions: {r['written']:,} files written, {r['kept']:,} already equal "
          f"(every file's sha256 checked)")
    if args.report:
        record(args.report, "restore", {**r, "seconds": round(time.perf_counter() - started, 1),
                                        "workers": args.workers})
    return 0


def _data_independent(args: argparse.Namespace) -> int:
    from knights.lab.arena.testsets import run

    return run(args)


def _data_final(args: argparse.Namespace) -> int:
    from knights.lab.arena.testsets import FINAL_DIR, build_final
    from knights.learn.registry import REPO_ROOT

    if (REPO_ROOT / FINAL_DIR / "final.csv").exists() and not args.force:
        print(f"knights data final: error: {FINAL_DIR}/final.csv exists and is frozen by its checksum; it is made "
              "once (--force to make it again, which changes every final-test figure)", file=sys.stderr)
        return 2
    for path in build_final(args.rows, depth=args.depth, seed=args.seed, progress=not args.quiet):
        print(f"wrote {path}")
    return 0


def _data_convert(args: argparse.Namespace) -> int:
    from knights.data.convert import convert_file

    try:
        report = convert_file(args.src, args.dst, args.format, progress=not args.quiet, limit=args.limit)
    except OSError as exc:  # anything the up-front checks could not foresee (disk full, a race)
        if exc.strerror is None:   # our own message (an input not found), which names its file
            raise ValueError(str(exc)) from None
        print(f"knights data convert: error: {exc.filename or args.dst}: {exc.strerror}", file=sys.stderr)
        return 2
    print(report.summary())
    for message in report.first_errors:
        print(f"  {message}")
    return 0


def _data_check(args: argparse.Namespace) -> int:
    from knights.data.chunks import read_chunk, select_chunks

    files = select_chunks(args.folder, args.letters, prefix=args.prefix)
    total = unreadable = 0
    for path in files:
        try:
            block, report = read_chunk(path)
        except OSError as exc:
            print(f"knights data check: error: cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
            unreadable += 1
            continue
        except ValueError as exc:  # a chunk without the required columns: name it, check the rest
            print(f"knights data check: error: {exc}", file=sys.stderr)
            unreadable += 1
            continue
        total += len(block)
        if report.skipped:
            print(report.summary())
            for example in report.examples:   # "file:line: reason" of the first bad rows
                print(f"  {example}")
    print(f"{len(files)} chunk files, {total:,} usable rows" + (f", {unreadable} unreadable" if unreadable else ""))
    return 1 if unreadable else 0


def _play(args: argparse.Namespace) -> int:
    from knights.frontends.terminal import main as play_main

    return play_main(args)


def _uci(args: argparse.Namespace) -> int:
    from knights.frontends.uci import main as uci_main

    return uci_main(args)


def _uci_arguments(uci: argparse.ArgumentParser, evaluators: str) -> None:
    uci.add_argument("--evaluator", type=EVALUATOR_NAME, default=None, help=f"initial Evaluator option: {evaluators}")
    uci.add_argument("--seed", type=_seed, default=None, help="initial Seed option (0 or more)")
    uci.add_argument("--deterministic", "--no-stochastic", dest="deterministic", action="store_true",
                     help="start with Stochastic off")
    uci.add_argument("--depth", type=int, default=None,
                     help="initial Depth option: the deepest search (1: the paper's one-ply bot)")
    uci.set_defaults(func=_uci, command="uci")


def _fast_uci_args(argv: Sequence[str]) -> argparse.Namespace | None:
    """``knights uci`` parsed without :func:`build_parser`, whose other commands import torch
    (seconds): a GUI's ``uci`` must be answered at once. ``None`` for anything else
    (``--help`` included, which the full parser describes)."""
    if list(argv[:1]) != ["uci"] or {"-h", "--help"} & set(argv):
        return None
    uci = argparse.ArgumentParser(prog="knights uci")
    _uci_arguments(uci, "see 'knights uci --help'")
    return uci.parse_args(list(argv[1:]))


def _notebook(args: argparse.Namespace) -> int:
    import time

    from knights.lab.notebooks.build import parse_value, run_named, write_notebooks
    from knights.learn import registry

    if args.write:
        if args.param or args.quick:
            raise ValueError("--write runs the committed form (quick = True); -p and --quick are for one run")
        t0 = time.perf_counter()
        paths = write_notebooks(args.name or None, execute=args.execute, report=print)
        if args.execute:
            print(f"{len(paths)} notebooks written and executed in {time.perf_counter() - t0:.0f} s")
        else:
            print(f"{len(paths)} templates written without outputs; add --execute for the committed form")
        return 0
    if args.execute:
        raise ValueError("--execute goes with --write (knights notebook --write --execute [NAME ...])")
    if not args.name:
        raise ValueError("name a version (e.g. EL/v8), a learner (knn, ...), 'ensemble' or a notebook path, "
                         "or pass --write")
    params = {k: parse_value(v) for k, v in args.param}
    if args.quick:
        params["quick"] = True
    for name in args.name:
        src, out, seconds = run_named(name, params)
        print(f"executed {registry.repo_relative(src)} in {seconds:.0f} s -> {registry.repo_relative(out)}")
    return 0


def _train(args: argparse.Namespace) -> int:
    import os

    from knights.learn import distributed

    if args.distributed:
        return distributed.run(args)
    distributed.check_options(args)
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        raise RuntimeError(f"{os.environ['WORLD_SIZE']} processes were started (torchrun): add --distributed, "
                           "or every process trains alone and writes the same files")
    from knights.lab.notebooks.teach import plot_history
    from knights.learn.experiment import run_version

    result = run_version(args.name, data_dir=args.data_dir, more=args.more or (), train=args.train, val=args.val,
                         test=args.test, epochs=args.epochs, batch_size=args.batch_size,
                         quick=args.quick, out_dir=args.out_dir, device=args.device)
    plot_history(result)
    return 0


def _bench(args: argparse.Namespace) -> int:
    from knights.lab.bench.core import main as bench_main

    return bench_main(args)


def _ensemble(args: argparse.Namespace) -> int:
    from knights.lab.ensemble.train import run

    return run(args)


if TYPE_CHECKING:
    from knights.data.shards import Shard

    Subcommands = argparse._SubParsersAction[argparse.ArgumentParser]


def _arena_commands(sub: Subcommands) -> None:
    """``knights match``, ``knights strength`` and ``knights quality`` (knights.lab.arena.commands)."""
    from knights.lab.arena.commands import add_arguments

    add_arguments(sub)


def _serve_command(sub: Subcommands) -> None:
    """``knights serve``: play the bot in a browser (knights.frontends.web.server)."""
    from knights.frontends.web.server import add_arguments
    from knights.frontends.web.server import main as serve_main

    serve = sub.add_parser("serve", help="play the bot in a browser: a local web page (127.0.0.1:8000)")
    add_arguments(serve)
    serve.set_defaults(func=serve_main)


def _ensemble_command(sub: Subcommands) -> None:
    """``knights ensemble``: what ``python -m knights.lab.ensemble.train`` runs, same options."""
    from knights.lab.ensemble import train as train_democracy

    ens = sub.add_parser("ensemble", help="train the classical learners, fit the democracy's weights, ship the best "
                                          "blend (ensemble/models/)", description=train_democracy.DESCRIPTION)
    train_democracy.add_arguments(ens)
    ens.set_defaults(func=_ensemble)


def _models_commands(sub: Subcommands) -> None:
    """``knights ship-models`` (train every shipped version), ``knights results`` (its table) and
    ``knights settings`` (the settings the report quotes, as JSON)."""
    from knights.lab.results import error_sources, label_floor
    from knights.lab.results import independent as independent_results

    def ship(args: argparse.Namespace) -> int:
        from knights.lab.notebooks.ship import RUNS
        from knights.lab.notebooks.ship import ship as run
        from knights.learn import registry

        names = [registry.get(name).name for name in args.names]
        unknown = [name for name in names if name not in RUNS]
        if unknown:
            raise ValueError(f"{', '.join(unknown)}: not a shipped version; ship-models trains {', '.join(RUNS)}")
        run(names or None)
        return 0

    def results(args: argparse.Namespace) -> int:
        from knights.lab.results.depth_one import judged_evaluators
        from knights.lab.results.move_choice import measure

        independent_results.check_arguments(args)   # before the searched players are built (seconds)
        return independent_results.main_args(
            args, move_quality=lambda data, measured: measure(data, measured, progress=not args.quiet),
            played=judged_evaluators())

    sp = sub.add_parser("ship-models", help="train the shipped versions through their notebooks (the recorded recipe)")
    sp.add_argument("names", nargs="*", help="versions (default: all, in order)")
    sp.set_defaults(func=ship)
    rp = sub.add_parser("results", help="held-out table of every trained network with the baselines")
    independent_results.add_arguments(rp)
    rp.set_defaults(func=results)

    lf = sub.add_parser("label-floor", help="how far the training labels' depth is from the independent sets' "
                        "labels (report/results/label_floor.json)", description=label_floor.DESCRIPTION)
    label_floor.add_arguments(lf)
    lf.set_defaults(func=label_floor.main_args)
    es = sub.add_parser("error-sources", help="where the evaluators err on the independent games set's level "
                        "positions, by players, material and men (report/results/error_sources.json)",
                        description=error_sources.DESCRIPTION)
    error_sources.add_arguments(es)
    es.set_defaults(func=error_sources.main_args)

    def ablation(args: argparse.Namespace) -> int:
        from knights.lab.ablation import run
        from knights.learn.training import check_at_least, check_device

        check_at_least(1, ("--epochs", args.epochs))
        check_device(args.device)
        run(args.only or None, device=args.device, progress=not args.quiet, epochs=args.epochs)
        return 0

    ab = sub.add_parser("ablation", help="what each change of EL/v13's recipe bought (report/results/ablation.json)")
    ab.add_argument("--only", action="append", help="a variant's name (repeatable; default: all)")
    ab.add_argument("--device", default=None, help="cpu, cuda, ... (default: the fastest there is)")
    ab.add_argument("--epochs", type=int, default=None, help="another epoch count (default: EL/v13's)")
    ab.add_argument("--quiet", action="store_true")
    ab.set_defaults(func=ablation)

    def settings(args: argparse.Namespace) -> int:
        from knights.lab.settings import write

        print(f"wrote {write()}")
        return 0

    st = sub.add_parser("settings", help="write report/results/settings.json: the settings the report quotes")
    st.set_defaults(func=settings)


DESCRIPTION = ("Knights and Kernels: a one-ply chess bot over trained evaluators, with its data, training, "
               "matches and benchmarks. 'knights COMMAND --help' lists a command's options.")


def build_parser() -> argparse.ArgumentParser:
    from knights.data.convert import FORMATS
    from knights.engine.spec import ONE_PLY_EVALUATOR, SEARCH_NETWORK
    from knights.evaluate.names import DEFAULT_EVALUATOR, DEFAULT_NETWORK
    from knights.learn import distributed

    evaluators = (f"material, democracy or a trained EL version such as {DEFAULT_NETWORK}, each optionally "
                  f"with +qsearch or +threats, or a compiled network with +quiesce (default: {SEARCH_NETWORK} "
                  "when the bot searches, as it does unless --depth 1; "
                  f"{ONE_PLY_EVALUATOR} at depth 1, else {DEFAULT_EVALUATOR}; while their files are missing, "
                  "the newest trained network, else material, with a notice)")
    parser = argparse.ArgumentParser(prog="knights", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True)

    data = sub.add_parser("data", help="generate, convert and check datasets").add_subparsers(
        dest="data_command", required=True)
    gen = data.add_parser("generate", help="play and label games with real Stockfish")
    gen.add_argument("--positions", type=int, default=1_000_000, help="rows to write (whole games)")
    gen.add_argument("--depth", type=_at_least(1, "plies"), default=8, help="Stockfish labelling depth")
    gen.add_argument("--seed", type=int, default=2024)
    gen.add_argument("--workers", type=_at_least(1, "workers"), default=1, help="parallel workers, one Stockfish each")
    gen.add_argument("--max-plies", type=int, default=300, help="adjudicate games longer than this")
    gen.add_argument("--games-per-part", type=int, default=25, help="games per resumable part file")
    gen.add_argument("--dedup", action="store_true", help="drop repeated positions")
    gen.add_argument("--out", default="data/generated/games.csv")
    gen.add_argument("--quiet", action="store_true")
    gen.add_argument("--report", default=None, help="also write the run's figures to this JSON file")
    gen.add_argument("--shard", type=_shard_flag, default=None, metavar="K/N",
                     help="play only part K of an N-way split (parts p with p mod N = K-1) into OUT.parts/, "
                          "no CSV; 'knights data merge' joins the shards")
    gen.add_argument("--until-part", type=_part_number, default=None, metavar="P",
                     help="with --shard: also play every part of the shard numbered up to P (the merge says when)")
    gen.set_defaults(func=_data_generate)

    grw = data.add_parser("grow", help="play more games of the other generator styles, new positions only")
    grw.add_argument("--positions", type=int, default=4_000_000, help="positions to play over all grown styles")
    grw.add_argument("--depth", type=_at_least(1, "plies"), default=8, help="Stockfish labelling depth (as data/full)")
    grw.add_argument("--rounds", type=int, default=4, help="the styles take turns in this many rounds")
    grw.add_argument("--workers", type=_at_least(1, "workers"), default=1, help="parallel workers, one Stockfish each")
    grw.add_argument("--set", default="more",
                     choices=("more", "endings", "shallow", "cold", "chaos", "again", "sound", "sound300k", "sound2",
                              "sound3"),
                     help="more: the openings, strong and odds styles (data/more); endings: endings from a thinned "
                          "start played out (data/endings); shallow: Stockfish playing an early iteration's move "
                          "(data/shallow); cold, chaos, again, sound: the style experiment's sets; sound300k: the "
                          "sound games' first 300,000 positions (EL/v23's); sound2, sound3: the sound games from a "
                          "second and a third seed (knights.data.grow)")
    grw.add_argument("--work", default=None,
                     help="folder of the styles' files and the combined file (default: the set's own, "
                          "data/generated/<set>)")
    grw.add_argument("--report", default=None, help="also write the run's figures to this JSON file")
    grw.add_argument("--quiet", action="store_true")
    grw.set_defaults(func=_data_grow)

    mrg = data.add_parser("merge", help="join the parts of sharded 'data generate' runs into one CSV")
    mrg.add_argument("--out", default="data/generated/games.csv", help="the CSV to write")
    mrg.add_argument("--positions", type=int, default=None,
                     help="rows to write (default: the --positions the shards were run with)")
    mrg.add_argument("--from", dest="sources", nargs="+", default=[], metavar="RUN",
                     help="the shards' --out paths or their .parts folders (default: OUT.parts)")
    mrg.add_argument("--dedup", action="store_true", help="drop repeated positions")
    mrg.set_defaults(func=_data_merge)

    for name, func, what in (("store", _data_store, "pack the labelled CSV files (data/full's and the grown parts) "
                              "into a compact, checksummed store that restores them byte for byte"),
                             ("restore", _data_restore, "write the store's CSV files back (resumable: equal files are "
                              "kept)")):
        sp = data.add_parser(name, help=what)
        sp.add_argument("--store", default="data/store", help="the store's folder (default data/store, ignored by git)")
        sp.add_argument("--workers", type=_at_least(1, "workers"), default=1)
        sp.add_argument("--report", default=None, help="also write the run's figures to this JSON file (its own key)")
        sp.add_argument("--quiet", action="store_true")
        sp.set_defaults(func=func)

    from knights.lab.arena import testsets

    ind = data.add_parser("independent", help="build the independent test sets (data/independent/) with real Stockfish")
    testsets.add_arguments(ind)
    ind.set_defaults(func=_data_independent)

    fin = data.add_parser("final", help="build the final test set (data/final/, made once: games of Stockfish at "
                          "random Skill Levels, labelled at depth 12; read only by the democracy study's final "
                          "step, make democracy)")
    fin.add_argument("--rows", type=_at_least(1, "--rows"), default=5000)
    fin.add_argument("--depth", type=_at_least(1, "--depth"), default=12)
    fin.add_argument("--seed", type=int, default=4242)
    fin.add_argument("--force", action="store_true", help="make it again over the frozen set")
    fin.add_argument("--quiet", action="store_true")
    fin.set_defaults(func=_data_final)

    conv = data.add_parser("convert", help="convert Lichess JSONL(.zst), Kaggle CSV or PGN to CSSLab CSV")
    conv.add_argument("src", help="input file (.jsonl, .jsonl.zst, .csv, .pgn, .pgn.zst)")
    conv.add_argument("dst", help="output CSV")
    conv.add_argument("--format", choices=FORMATS, default=None, help="input format (default: from the name)")
    conv.add_argument("--limit", type=int, default=None, help="stop after this many rows")
    conv.add_argument("--quiet", action="store_true")
    conv.set_defaults(func=_data_convert)

    check = data.add_parser("check", help="read chunk files and report malformed rows")
    check.add_argument("folder")
    check.add_argument("letters", help='chunk letters: "a-d", "e,f", "every 4th", "all"')
    check.add_argument("--prefix", default=None)
    check.set_defaults(func=_data_check)

    play = sub.add_parser("play", help="play the bot in the terminal")
    play.add_argument("--color", "--colour", choices=("white", "black", "random"), default="white",
                      help="your colour (default white)")
    play.add_argument("--evaluator", type=EVALUATOR_NAME, default=None, help=evaluators)
    play.add_argument("--seed", type=_seed, default=None,
                      help="seed of the opening randomness (and of --color random), 0 or more")
    play.add_argument("--deterministic", "--no-stochastic", dest="deterministic", action="store_true",
                      help="always play the best move (no stochastic opening)")
    play.add_argument("--capture-bonus", type=_bonus, default=0.0,
                      help="pawns added to captures, as the original's 0.15 (default 0)")
    play.add_argument("--depth", type=_depth, default=None,
                      help="the deepest search (default 64: as deep as --movetime allows; 1: the paper's one-ply bot)")
    play.add_argument("--movetime", type=_seconds, default=None, help="seconds the bot thinks a move (default 1)")
    play.add_argument("--fen", type=FEN, default=None, help="start from this position")
    play.add_argument("--games-dir", default="games", help="where the PGN is saved (default games/)")
    play.add_argument("--ascii", action="store_true", help="letters instead of Unicode pieces")
    play.set_defaults(func=_play)

    uci = sub.add_parser("uci", help="run the bot as a UCI engine on stdin/stdout (GUIs, lichess-bot)")
    _uci_arguments(uci, evaluators)

    nb = sub.add_parser("notebook", help="run a notebook with papermill, or rebuild the committed notebooks",
                        description="Run notebooks (the executed copy goes to runs/notebooks/, the notebook stays "
                                    "as committed), or rewrite them from their templates.")
    nb.add_argument("name", nargs="*", help="EL/v8, SL/v2, knn, random_forest, svr, linear, ensemble or a path "
                                            "(with --write: which to rewrite, default all)")
    nb.add_argument("-p", "--param", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                    help="set a parameter of the notebook's parameters cell (-p epochs 3)")
    nb.add_argument("--quick", action="store_true",
                    help="the committed sample and a short run (output: runs/notebooks/NAME.quick.ipynb)")
    nb.add_argument("--write", action="store_true", help="rewrite notebooks from their templates (no outputs)")
    nb.add_argument("--execute", action="store_true",
                    help="with --write: also run each quickly and keep its outputs (the committed form)")
    nb.set_defaults(func=_notebook)

    tr = sub.add_parser("train", help="train a version without the notebook")
    tr.add_argument("name")
    distributed.add_run_options(tr)
    tr.add_argument("--batch-size", type=int, default=None)
    tr.add_argument("--quick", action="store_true")
    tr.add_argument("--distributed", action="store_true",
                    help="one of several processes started by torchrun (docs/distributed.md); "
                         "--batch-size is then the global batch")
    distributed.add_options(tr)
    tr.set_defaults(func=_train)

    bench = sub.add_parser("bench", help="benchmarks (ratios against baselines run in the same process)")
    bench.add_argument("which", nargs="*", default=[], help="benchmark names (default: all)")
    bench.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    bench.set_defaults(func=_bench)

    _arena_commands(sub)  # match, strength, quality
    _ensemble_command(sub)  # ensemble
    _serve_command(sub)  # serve
    _models_commands(sub)  # ship-models, results, settings
    return parser


def _starting(argv: Sequence[str]) -> None:
    """``knights play`` at a terminal: a line before torch and the bot load (seconds): the wait is not silent."""
    if list(argv[:1]) == ["play"] and not {"-h", "--help"} & set(argv) and sys.stdout.isatty():
        print("Knights and Kernels: loading the bot...", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    _starting(sys.argv[1:] if argv is None else argv)
    args = _fast_uci_args(sys.argv[1:] if argv is None else argv) or build_parser().parse_args(argv)
    handler: Handler = args.func
    name = " ".join(["knights", args.command, *([args.data_command] if args.command == "data" else [])])
    try:
        return handler(args)
    except KeyboardInterrupt:
        print("interrupted; finished work is kept", file=sys.stderr)
        return 130
    except (FileNotFoundError, ValueError, RuntimeError) as exc:
        print(f"{name}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:   # what no check foresaw (a disk full, a folder removed meanwhile): one line
        print(f"{name}: error: {exc.filename or ''}{': ' if exc.filename else ''}{exc.strerror or exc}",
              file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
