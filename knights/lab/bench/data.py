"""Data benchmarks: chunk text to training arrays, cached batches, generated labels.

``encode``    CSSLab chunk text -> what is stored per row (signed squares, the ten
              piece counts, the target): :func:`~knights.data.chunks.read_chunk` +
              :func:`~knights.features.planes.piece_counts` against the original's
              loader (``pandas.read_csv`` + ``iterrows`` + one python-chess ``Board``
              per row) producing the same arrays, checked equal. Planes are made per
              batch from the squares: ``cache`` times that. Target: ratio >= 30.
``cache``     shuffled mini-batches of 15,000 (six planes float32 + targets) streamed
              from the encoded cache. Target: >= 1,000,000 rows/s; the ratio against
              the row-by-row loader is reported too.
``generate``  labelled positions/s of one generator worker
              (:func:`~knights.data.generate.play_labelled_game`) against bare
              Stockfish analysing exactly the same positions at the same depth.
              Target: ratio >= 0.90. Skipped (with the install hint) without Stockfish.

The chunk text of ``encode`` and ``cache`` comes from seeded random playouts with a
synthetic, well-formed ``cp`` column (:func:`playout_rows`): it is input for timing
the parser, no engine is needed (``generate`` is the benchmark that uses the real
Stockfish). The framework around them (registry, results, the table) is
:mod:`knights.lab.bench.core`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from knights.board.pieces import PAWNS
from knights.lab.bench.core import MEMO, benchmark, make_result, make_skip, workdir
from knights.lab.results.timing import timed


# -- bench data: seeded random playouts written as CSSLab chunks ---------------------------
def playout_rows(n_rows: int, seed: int = 7, max_plies: int = 160) -> list[dict[str, str]]:
    """``n_rows`` CSSLab rows from seeded random games (python-chess), with a synthetic
    but well-formed ``cp``: material balance plus noise, ~2% mates, large values that
    the targets clip. Input data for timing the parser, not engine labels."""
    import chess

    from knights.data import csslab

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
                material = sum(PAWNS[p.piece_type] * (1 if p.color else -1) for p in board.piece_map().values())
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


def write_chunk(path: Path, rows: Sequence[dict[str, str]]) -> Path:
    """``rows`` as a CSSLab chunk file at ``path``, header included."""
    from knights.data import csslab

    with open(path, "w", newline="") as fh:
        csslab.RowWriter(fh).write_all(rows)
    return path


def bench_data(quick: bool) -> dict:
    """The bench chunks (memoised per process): ``full`` (one chunk of all rows),
    ``prefix`` (its first rows, for the baseline), ``warm`` (a small chunk for
    warm-ups) and ``parts`` (the same rows as chunk files of 5,000 rows, or 1,000 quick)."""
    key = ("data", quick)
    if key not in MEMO:
        n, n_base, part = (3_000, 300, 1_000) if quick else (50_000, 5_000, 5_000)
        folder = workdir() / ("quick" if quick else "full")
        folder.mkdir()
        rows = playout_rows(n, seed=2024)
        parts_dir = folder / "chunks"
        parts_dir.mkdir()
        parts = [write_chunk(parts_dir / f"Bench_{chr(97 + i // 26)}{chr(97 + i % 26)}",
                              rows[s:s + part]) for i, s in enumerate(range(0, n, part))]
        MEMO[key] = {
            "rows": n, "baseline_rows": n_base,
            "full": write_chunk(folder / "Bench_full", rows),
            "prefix": write_chunk(folder / "Bench_prefix", rows[:n_base]),
            "warm": write_chunk(folder / "Bench_warm", rows[:200]),
            "parts": parts,
        }
    return MEMO[key]  # type: ignore[return-value]


# -- encode ------------------------------------------------------------------------------
def encode_ours(path: str | Path) -> tuple:
    """Our pipeline: chunk text -> what the cache stores per row (signed squares),
    plus the ten piece counts and the targets."""
    from knights.data.chunks import read_chunk
    from knights.features.planes import piece_counts

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
    for i, (_, row) in enumerate(df.iterrows()):
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
    if key not in MEMO:
        data = bench_data(quick)
        encode_baseline(data["warm"])  # imports, pandas and python-chess warm-up
        seconds, out = timed(lambda: encode_baseline(data["prefix"]), repeats or (1 if quick else 2))
        MEMO[key] = {"rate": len(out[2]) / seconds, "rows": len(out[2]), "seconds": seconds,
                      "outputs_match": _outputs_match(data, out)}
    return MEMO[key]  # type: ignore[return-value]


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
    MEMO[("baseline", quick)] = base
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
    from knights.data.cache import ChunkCache, iter_batches, load_encoded
    from knights.features.planes import six_planes

    data = bench_data(quick)
    base = baseline_encode_rate(quick)
    batch = 1_000 if quick else 15_000
    cache = ChunkCache(workdir() / f"cache-{'quick' if quick else 'full'}")
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
    from knights.data.generate import Recipe, play_labelled_game
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
            rows = play_labelled_game(sf, recipe, games)
            ours_s += time.perf_counter() - t0
            fens = [r["board"] for r in rows]
            t0 = time.perf_counter()
            sf.new_game()
            analyses = [sf.analyse(fen, depth=depth) for fen in fens]
            bare_s += time.perf_counter() - t0
            for r, a in zip(rows, analyses, strict=True):
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
    return None, round(float(cp_text) * 100)
