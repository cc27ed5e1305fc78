"""Benchmarks: our pipeline against a baseline, run in the same process on the same data.

Speed targets in this project are **ratios** (ours / baseline) measured in one run,
so that a slow or busy machine slows both sides alike; absolute rates are reported
for information. ``knights bench [NAME ...] [--quick]`` runs the registered
benchmarks (all by default), prints one table row per result and merges the results
into ``report/results/bench.json`` (``$KNIGHTS_RESULTS_DIR`` overrides the folder).

Adding a benchmark
------------------
Register a function ``fn(quick: bool) -> list[dict]`` with :func:`benchmark` and build
each result with :func:`make_result` (or :func:`make_skip`)::

    from knights.bench.core import benchmark, make_result

    @benchmark("train")
    def bench_train(quick: bool) -> list[dict]:
        ...
        return [make_result("train", ours_rate, baseline_rate, target=3.0,
                            baseline="row-by-row loader + same model")]

``knights bench`` finds such functions by importing, before it runs, every module
of the ``knights.bench`` package (one file per subject: data here, ``training``, ``engine``, ``ensemble``)
(plus the modules listed, comma-separated, in ``$KNIGHTS_BENCH_MODULES``).

Data benchmarks defined here
----------------------------
``encode``    CSSLab chunk text -> what is stored per row (signed squares, the ten
              piece counts, the target): :func:`read_chunk` + :func:`piece_counts`
              against the original's loader (``pandas.read_csv`` + ``iterrows`` + one
              python-chess ``Board`` per row) producing the same arrays, checked
              equal. Planes are made per batch from the squares: ``cache`` times
              that. Target: ratio >= 30.
``cache``     shuffled mini-batches of 15,000 (six planes float32 + targets) streamed
              from the encoded cache. Target: >= 1,000,000 rows/s; the ratio against
              the row-by-row loader is reported too.
``generate``  labelled positions/s of one generator worker (:func:`play_game`) against
              bare Stockfish analysing exactly the same positions at the same depth.
              Target: ratio >= 0.90. Skipped (with the install hint) without Stockfish.

The chunk text of ``encode`` and ``cache`` comes from seeded random playouts with a
synthetic, well-formed ``cp`` column: it is input for timing the parser, no engine
is needed (``generate`` is the benchmark that uses the real Stockfish).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib
import json
import math
import os
import platform
import random
import tempfile
import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from knights.evaluate.timing import timed  # noqa: F401  (re-exported: the benchmarks' timer)

BenchFn = Callable[[bool], list[dict]]

BENCHMARKS: dict[str, BenchFn] = {}
"""Registered benchmarks, name -> ``fn(quick) -> list of result dicts``, in registration order."""

DEFAULT_RESULTS_DIR = Path("report/results")
RESULTS_FILE = "bench.json"
PLUGIN_ENV = "KNIGHTS_BENCH_MODULES"
RESULTS_ENV = "KNIGHTS_RESULTS_DIR"


# -- registry ------------------------------------------------------------------------
def benchmark(name: str) -> Callable[[BenchFn], BenchFn]:
    """Decorator: register ``fn(quick: bool) -> list[dict]`` under ``name``.

    Registering a different function under a taken name is an error (re-importing
    the same module replaces its own entry).
    """
    if not name or not isinstance(name, str) or any(c.isspace() for c in name):
        raise ValueError(f"bad benchmark name {name!r}: use a non-empty word")

    def register(fn: BenchFn) -> BenchFn:
        old = BENCHMARKS.get(name)
        if old is not None and (old.__module__, old.__qualname__) != (fn.__module__, fn.__qualname__):
            raise ValueError(f"benchmark {name!r} is already registered by "
                             f"{old.__module__}.{old.__qualname__}")
        BENCHMARKS[name] = fn
        return fn

    return register


_PLUGIN_ERRORS: dict[str, str] = {}


def load_plugins() -> dict[str, str]:
    """Import the modules that register more benchmarks (see the module docstring).

    Returns ``{module: error}`` for those that failed to import; they are reported,
    and the benchmarks that did load still run.
    """
    root = Path(__file__).resolve().parent     # every module of knights/bench/ registers benchmarks
    names = [f"{__package__}.{path.stem}" for path in sorted(root.glob("*.py"))
             if path.stem not in ("__init__", "core")]
    names += [m.strip() for m in os.environ.get(PLUGIN_ENV, "").split(",") if m.strip()]
    for module in names:
        if module == __name__ or module in _PLUGIN_ERRORS:
            continue
        try:
            importlib.import_module(module)
        except Exception as exc:  # a broken plugin must not hide the others
            _PLUGIN_ERRORS[module] = f"{type(exc).__name__}: {exc}"
    return dict(_PLUGIN_ERRORS)


def select(names: Sequence[str]) -> list[str]:
    """The benchmarks to run: ``names`` in the given order, or all when empty.
    An unknown name is a ``ValueError`` listing the known ones."""
    if not names:
        return list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        msg = (f"unknown benchmark{'s' if len(unknown) > 1 else ''} "
               f"{', '.join(repr(n) for n in unknown)}; available: {', '.join(BENCHMARKS) or '(none)'}")
        if _PLUGIN_ERRORS:
            msg += "; modules that failed to load: " + "; ".join(f"{m} ({e})" for m, e in _PLUGIN_ERRORS.items())
        raise ValueError(msg)
    return list(dict.fromkeys(names))


# -- results ---------------------------------------------------------------------------
def make_result(name: str, rate: float, baseline_rate: float | None, *, target: float,
                metric: str = "ratio", unit: str = "rows/s", baseline: str = "",
                details: dict | None = None) -> dict:
    """One benchmark result. ``metric`` says what ``target`` bounds from below:
    ``"ratio"`` (ours / baseline, the default) or ``"rate"`` (ours, in ``unit``)."""
    if metric not in ("ratio", "rate"):
        raise ValueError(f"metric must be 'ratio' or 'rate', not {metric!r}")
    ratio = rate / baseline_rate if baseline_rate else None
    value = ratio if metric == "ratio" else rate
    passed = value is not None and math.isfinite(value) and value >= target
    return {
        "name": name, "status": "PASS" if passed else "MISS", "unit": unit,
        "rate": float(rate), "baseline_rate": None if baseline_rate is None else float(baseline_rate),
        "ratio": None if ratio is None else float(ratio), "metric": metric, "target": float(target),
        "passed": bool(passed), "baseline": baseline, "details": details or {},
    }


def make_skip(name: str, reason: str, *, target: float | None = None, metric: str = "ratio",
              unit: str = "rows/s") -> dict:
    """A result for a benchmark that could not run here (``reason`` says why and how to fix it)."""
    return {"name": name, "status": "SKIP", "unit": unit, "rate": None, "baseline_rate": None,
            "ratio": None, "metric": metric, "target": target, "passed": None, "baseline": "",
            "details": {"reason": reason}}


def _num(x: float | None, unit: str = "") -> str:
    if x is None:
        return "-"
    if abs(x) >= 100:
        return f"{x:,.0f}{unit}"
    return f"{x:,.2f}{unit}"


HEADER = f"{'benchmark':<12} {'ours':>14} {'baseline':>14} {'ratio':>9} {'target':>16}  result"


def format_row(r: dict) -> str:
    """The table row of one result."""
    if r.get("target") is None:
        target = "-"
    elif r["metric"] == "ratio":
        target = f">= {r['target']:g}x"
    else:
        target = f">= {_num(r['target'])}/s"
    ratio = "-" if r.get("ratio") is None else f"{r['ratio']:.2f}x"
    row = (f"{r['name']:<12} {_num(r.get('rate')):>14} {_num(r.get('baseline_rate')):>14} "
           f"{ratio:>9} {target:>16}  {r['status']}")
    if r["status"] == "SKIP":
        row += f" ({r['details'].get('reason', '')})"
    return row


def machine_info() -> dict:
    info: dict[str, object] = {
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    if hasattr(os, "sched_getaffinity"):
        info["cpus_usable"] = len(os.sched_getaffinity(0))
    if hasattr(os, "getloadavg"):
        info["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    try:
        import torch
        info["torch"] = torch.__version__
    except Exception:
        info["torch"] = None
    return info


def results_dir(path: str | Path | None = None) -> Path:
    return Path(path or os.environ.get(RESULTS_ENV) or DEFAULT_RESULTS_DIR)


def write_results(results: Sequence[dict], directory: str | Path | None = None, *,
                  quick: bool = False, machine: dict | None = None) -> Path:
    """Merge ``results`` by name into ``<directory>/bench.json`` (other entries are kept)."""
    path = results_dir(directory) / RESULTS_FILE
    machine = machine or machine_info()
    doc: dict = {"benchmarks": {}}
    if path.exists():
        try:
            doc = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path} is not valid JSON ({exc}); move it away to start afresh") from exc
        if not isinstance(doc.get("benchmarks"), dict):
            raise ValueError(f"{path} has no 'benchmarks' object; move it away to start afresh")
    for r in results:
        doc["benchmarks"][r["name"]] = {**r, "quick": quick, "machine": machine}
    doc["machine"] = machine
    doc["updated"] = machine["date"]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")
    os.replace(tmp, path)
    return path


def run_benchmarks(names: Sequence[str] = (), *, quick: bool = False,
                   results_directory: str | Path | None = None,
                   out: Callable[[str], None] = print) -> list[dict]:
    """Run the selected benchmarks, print the table, write the JSON; return the results."""
    load_plugins()
    chosen = select(names)
    for module, error in _PLUGIN_ERRORS.items():
        out(f"warning: benchmark module {module} failed to load: {error}")
    machine = machine_info()
    out(f"{'quick' if quick else 'full'} run on {machine['cpu_count']} CPUs, {machine['platform']}, "
        f"python {machine['python']}, torch {machine['torch']}, load {machine.get('loadavg', '?')}")
    out(HEADER)
    results: list[dict] = []
    try:
        for name in chosen:
            t0 = time.perf_counter()
            got = BENCHMARKS[name](quick)
            elapsed = time.perf_counter() - t0
            for r in got:
                r.setdefault("details", {})["bench_seconds"] = round(elapsed, 2)
                out(format_row(r))
            results.extend(got)
    finally:
        _cleanup()
    path = write_results(results, results_directory, quick=quick, machine=machine)
    out(f"results: {path}")
    return results


def main(args: argparse.Namespace) -> int:
    """Entry point of ``knights bench`` (``args.which``, ``args.quick``, optional
    ``args.results_dir``)."""
    run_benchmarks(list(getattr(args, "which", []) or []), quick=bool(getattr(args, "quick", False)),
                   results_directory=getattr(args, "results_dir", None))
    return 0


# -- measuring ---------------------------------------------------------------------------
# -- bench data: seeded random playouts written as CSSLab chunks ---------------------------
_WORKSPACE: tempfile.TemporaryDirectory | None = None
_MEMO: dict[tuple, object] = {}


def _workdir() -> Path:
    global _WORKSPACE
    if _WORKSPACE is None:
        _WORKSPACE = tempfile.TemporaryDirectory(prefix="knights-bench-")
    return Path(_WORKSPACE.name)


def _cleanup() -> None:
    """Remove the temporary bench data (and forget the memoised measurements on it)."""
    global _WORKSPACE
    _MEMO.clear()
    if _WORKSPACE is not None:
        _WORKSPACE.cleanup()
        _WORKSPACE = None


def playout_rows(n_rows: int, seed: int = 7, max_plies: int = 160) -> list[dict[str, str]]:
    """``n_rows`` CSSLab rows from seeded random games (python-chess), with a synthetic
    but well-formed ``cp``: material balance plus noise, ~2% mates, large values that
    the targets clip. Input data for timing the parser, not engine labels."""
    import chess

    from knights.data import csslab

    values = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9, chess.KING: 0}
    rng = random.Random(seed)
    rows: list[dict[str, str]] = []
    game = 0
    while len(rows) < n_rows:
        board = chess.Board()
        plies = rng.randint(20, max_plies)
        ply = 0
        while ply < plies and len(rows) < n_rows and not board.is_game_over(claim_draw=False):
            moves = list(board.legal_moves)
            move = rng.choice(moves)
            if rng.random() < 0.02:
                mate = rng.randint(1, 12) * rng.choice((1, -1))
                cp_white = csslab.format_eval(mate=mate)
            else:
                material = sum(values[p.piece_type] * (1 if p.color else -1) for p in board.piece_map().values())
                cp_white = csslab.format_pawns(material + rng.gauss(0.0, 1.5))
            cp_rel = cp_white if board.turn == chess.WHITE else csslab.negate_eval(cp_white)
            rows.append({
                "game_id": f"bench{game:06d}", "type": "Bench", "move_ply": str(ply),
                "move": move.uci(), "cp": cp_white, "cp_rel": cp_rel,
                "is_capture": csslab.format_bool(board.is_capture(move)),
                **csslab.position_columns(board),
            })
            board.push(move)
            ply += 1
        game += 1
    return rows


def _write_chunk(path: Path, rows: Sequence[dict[str, str]]) -> Path:
    from knights.data import csslab

    with open(path, "w", newline="") as fh:
        csslab.RowWriter(fh).write_all(rows)
    return path


def bench_data(quick: bool) -> dict:
    """The bench chunks (memoised per process): ``full`` (one chunk of all rows),
    ``prefix`` (its first rows, for the baseline), ``warm`` (a small chunk for
    warm-ups) and ``parts`` (the same rows as chunk files of 5,000 rows, or 1,000 quick)."""
    key = ("data", quick)
    if key not in _MEMO:
        n, n_base, part = (3_000, 300, 1_000) if quick else (50_000, 5_000, 5_000)
        folder = _workdir() / ("quick" if quick else "full")
        folder.mkdir()
        rows = playout_rows(n, seed=2024)
        parts_dir = folder / "chunks"
        parts_dir.mkdir()
        parts = [_write_chunk(parts_dir / f"Bench_{chr(97 + i // 26)}{chr(97 + i % 26)}",
                              rows[s:s + part]) for i, s in enumerate(range(0, n, part))]
        _MEMO[key] = {
            "rows": n, "baseline_rows": n_base,
            "full": _write_chunk(folder / "Bench_full", rows),
            "prefix": _write_chunk(folder / "Bench_prefix", rows[:n_base]),
            "warm": _write_chunk(folder / "Bench_warm", rows[:200]),
            "parts": parts,
        }
    return _MEMO[key]  # type: ignore[return-value]


# -- encode ------------------------------------------------------------------------------
def encode_ours(path: str | Path) -> tuple:
    """Our pipeline: chunk text -> what the cache stores per row (signed squares),
    plus the ten piece counts and the targets."""
    from knights.features.planes import piece_counts
    from knights.data.chunks import read_chunk

    block, _ = read_chunk(path)
    return block.squares, piece_counts(block.squares), block.target


def encode_baseline(path: str | Path) -> tuple:
    """What the original did: pandas.read_csv, then row by row (iterrows) a python-chess
    Board, the board's pieces written square by square as signed codes, the ten piece
    counts from the board, and the cp text parsed (mates +-10, clip +-9)."""
    import chess
    import pandas as pd

    kinds = (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN)
    start = (8, 2, 2, 2, 1)
    value = (1.0, 3.0, 3.1, 5.0, 9.0)
    df = pd.read_csv(path)
    n = len(df)
    squares = np.zeros((n, 64), dtype=np.int8)
    counts = np.zeros((n, 10), dtype=np.float32)
    targets = np.zeros(n, dtype=np.float32)
    i = 0
    for _, row in df.iterrows():
        board = chess.Board(row.board)
        for square in chess.SQUARES:
            piece = board.piece_at(square)
            if piece is not None:
                code = piece.piece_type if piece.color == chess.WHITE else -piece.piece_type
                squares[i, (7 - chess.square_rank(square)) * 8 + chess.square_file(square)] = code
        for j, kind in enumerate(kinds):
            counts[i, j] = len(board.pieces(kind, chess.WHITE)) / start[j] * value[j]
            counts[i, 5 + j] = -len(board.pieces(kind, chess.BLACK)) / start[j] * value[j]
        cp = str(row.cp).strip()
        if cp.startswith("#"):
            targets[i] = -10.0 if cp[1:].startswith("-") else 10.0
        else:
            targets[i] = max(-9.0, min(9.0, float(cp)))
        i += 1
    return squares, counts, targets


def _outputs_match(data: dict, baseline_out: tuple) -> bool:
    """Whether the baseline's arrays equal ours on the same rows (like is compared with like)."""
    squares, counts, targets = baseline_out
    ours_squares, ours_counts, ours_targets = encode_ours(data["prefix"])
    return bool(np.array_equal(squares, ours_squares)
                and np.allclose(counts, ours_counts, rtol=1e-6, atol=1e-6)
                and np.array_equal(targets, ours_targets))


def baseline_encode_rate(quick: bool, repeats: int | None = None) -> dict:
    """Rows/s of the row-by-row loader on the bench prefix (best of ``repeats``), and
    whether its output equals ours. Memoised per process: ``encode`` stores its own
    measurement here and ``cache`` reuses it."""
    key = ("baseline", quick)
    if key not in _MEMO:
        data = bench_data(quick)
        encode_baseline(data["warm"])  # imports, pandas and python-chess warm-up
        seconds, out = timed(lambda: encode_baseline(data["prefix"]), repeats or (1 if quick else 2))
        _MEMO[key] = {"rate": len(out[2]) / seconds, "rows": len(out[2]), "seconds": seconds,
                      "outputs_match": _outputs_match(data, out)}
    return _MEMO[key]  # type: ignore[return-value]


@benchmark("encode")
def bench_encode(quick: bool) -> list[dict]:
    """Chunk text -> training arrays, ours against the row-by-row original.

    Ours runs on the whole chunk, the baseline on its prefix; the runs alternate
    (baseline, ours, baseline, ours, ...) so that both meet the same machine load,
    and each side's best time counts."""
    data = bench_data(quick)
    encode_baseline(data["warm"])
    encode_ours(data["warm"])
    base_times, our_times = [], []
    base_out = ours_out = None
    for _ in range(2 if quick else 3):
        t0 = time.perf_counter()
        base_out = encode_baseline(data["prefix"])
        base_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        ours_out = encode_ours(data["full"])
        our_times.append(time.perf_counter() - t0)
    assert base_out is not None and ours_out is not None
    rows, base_rows = len(ours_out[0]), len(base_out[2])
    base = {"rate": base_rows / min(base_times), "rows": base_rows, "seconds": min(base_times),
            "outputs_match": _outputs_match(data, base_out)}
    _MEMO[("baseline", quick)] = base
    seconds = min(our_times)
    return [make_result(
        "encode", rows / seconds, base["rate"], target=30.0,
        baseline="pandas.read_csv + iterrows + python-chess Board per row",
        details={"rows": rows, "seconds": round(seconds, 4), "baseline_rows": base_rows,
                 "baseline_seconds": round(base["seconds"], 4), "outputs_match": base["outputs_match"],
                 "repeats": len(our_times), "chunk_bytes": Path(data["full"]).stat().st_size,
                 "columns": 47})]


# -- cache -------------------------------------------------------------------------------
@benchmark("cache")
def bench_cache(quick: bool) -> list[dict]:
    """Shuffled mini-batches (six planes float32 + targets) from the encoded cache."""
    from knights.features.planes import six_planes
    from knights.data.chunks import ChunkCache, iter_batches, load_encoded

    data = bench_data(quick)
    base = baseline_encode_rate(quick)
    batch = 1_000 if quick else 15_000
    cache = ChunkCache(_workdir() / f"cache-{'quick' if quick else 'full'}")
    load_encoded(data["parts"], cache)  # first use parses and stores every chunk (not timed)

    def epoch(seed: int) -> int:
        block = load_encoded(data["parts"], cache)
        n = 0
        for b in iter_batches(block, batch, shuffle=True, seed=seed):
            x = six_planes(b.squares)  # what a training step feeds the network
            y = np.ascontiguousarray(b.target, dtype=np.float32)
            assert len(x) == len(y)
            n += len(x)
        return n

    epoch(0)  # warm-up
    trials = 3 if quick else 7
    times = []
    rows = 0
    for seed in range(1, trials + 1):
        t0 = time.perf_counter()
        rows = epoch(seed)
        times.append(time.perf_counter() - t0)
    seconds = min(times)
    rate = rows / seconds
    result = make_result(
        "cache", rate, base["rate"], target=1_000_000.0, metric="rate",
        baseline="row-by-row loader of `encode` (pandas iterrows + Board per row)",
        details={"rows_per_epoch": rows, "chunks": len(data["parts"]), "batch_size": batch,
                 "epochs_timed": trials, "seconds_per_epoch": round(seconds, 4),
                 "baseline_rows": base["rows"]})
    return [result]


# -- generate ----------------------------------------------------------------------------
@benchmark("generate")
def bench_generate(quick: bool) -> list[dict]:
    """Labelled positions/s of one generator worker against bare Stockfish on the same positions."""
    from knights.data.generate import Recipe, play_game
    from knights.data.stockfish import INSTALL_HINT, Stockfish, StockfishMissing, find_stockfish

    try:
        path = find_stockfish()
    except StockfishMissing:
        return [make_skip("generate", f"Stockfish not found; {INSTALL_HINT}", target=0.90,
                          unit="positions/s")]
    depth, min_positions, max_games = (6, 120, 8) if quick else (8, 1_500, 40)
    recipe = Recipe(seed=2024, depth=depth)
    ours_s = bare_s = 0.0
    positions = games = same = 0
    with Stockfish(path, threads=1, hash_mb=recipe.hash_mb) as sf:
        name = sf.name
        sf.new_game()  # warm-up: start-up costs and a few searches
        for fen in ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"):
            sf.analyse(fen, depth=depth)
        while positions < min_positions and games < max_games:
            # ours then bare, game by game, so both see the same machine load
            t0 = time.perf_counter()
            rows = play_game(sf, recipe, games)
            ours_s += time.perf_counter() - t0
            fens = [r["board"] for r in rows]
            t0 = time.perf_counter()
            sf.new_game()
            analyses = [sf.analyse(fen, depth=depth) for fen in fens]
            bare_s += time.perf_counter() - t0
            for r, a in zip(rows, analyses):
                a = a.white_pov(r["white_active"] == "True")
                same += (a.mate, a.cp) == _score_of(r["cp"])
            positions += len(rows)
            games += 1
    if positions == 0:
        raise RuntimeError("generate bench: the games produced no positions")
    return [make_result(
        "generate", positions / ours_s, positions / bare_s, target=0.90, unit="positions/s",
        baseline="bare Stockfish (our UCI client) on the same positions",
        details={"positions": positions, "games": games, "depth": depth, "stockfish": name,
                 "seconds": round(ours_s, 3), "baseline_seconds": round(bare_s, 3),
                 "labels_match": round(same / positions, 4)})]


def _score_of(cp_text: str) -> tuple[int | None, int | None]:
    """(mate, centipawns) of a ``cp`` column value, to compare with an Analysis."""
    if cp_text.startswith("#"):
        return int(cp_text[1:]), None
    return None, int(round(float(cp_text) * 100))

