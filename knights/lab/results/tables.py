"""The held-out results table of every trained network, beside the baselines.

``knights results`` evaluates each trained EL version on the test letters (never
trained on) and writes ``models_EL/RESULTS.md`` and ``report/results/networks.json``:
MAE in pawns, median absolute error and the share of positions whose sign agrees
with Stockfish, beside, on the same rows,

* counting material (P=1 N=3 B=3 R=5 Q=9, clipped to +-9), and
* Stockfish at depth 1 (same targets: mates +-10, clipped to +-9), on each position alone,
  and with its hash kept from row to row (:data:`HASH_KEPT`).

Move networks (SL) get their own table: the share of positions where the top
predicted move is legal and where it is the move played.

Every evaluator's error is also broken down by how large Stockfish's evaluation is
(:func:`bucket_metrics`): near-level positions, clear advantages, winning ones, and forced
mates apart, since an error of a pawn means little at +8 and everything at +0.5.

The headline figures are what play needs (:func:`headline_metrics`): the MAE on **quiet**
positions (:func:`knights.features.attacks.quiet`: not in check, no legal capture that
wins material) that Stockfish calls **within one pawn of level** (``|eval| <= 1``), where
judgement is all positional, and the mean error in **win probability**
(:func:`knights.learn.metrics.win_probability_error`), where an error weighs what it costs
a game. Every row also carries the quiet positions' MAE by bucket (``quiet_buckets``).

``data/full`` is large and not on every machine. :func:`letter_table` measures the test
letters when the folder is there and otherwise reads back the table measured earlier
(``report/results/networks.json``), marked so (``"measured": "earlier"``), rather than
dropping it; measured now, it keeps an archived version's earlier row where the version's weights are not on
this machine (:func:`keep_earlier`). The tables over the independent test sets, which need the democracy (a later
stage), are made by :mod:`knights.lab.results.independent`, which writes
``models_EL/RESULTS.md`` with this table as its first section.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import chess
import numpy as np

from knights.board.arrays import board_from_arrays, material_balance
from knights.common import write_json
from knights.data import csslab
from knights.data.cache import ChunkCache, load_encoded
from knights.data.chunks import Encoded, select_chunks
from knights.features.attacks import quiet
from knights.learn import registry
from knights.learn.experiment import FULL_DATA, TEST_LETTERS, held_out_metrics, predict
from knights.learn.metrics import regression_metrics, win_probability_error

RESULTS_DIR = registry.REPO_ROOT / "report" / "results"
NETWORKS_JSON = RESULTS_DIR / "networks.json"

BUCKETS: tuple[tuple[str, float, float], ...] = (
    ("< 1", 0.0, 1.0), ("1-3", 1.0, 3.0), ("3-6", 3.0, 6.0), (">= 6", 6.0, float("inf")))
"""Buckets of the size of Stockfish's evaluation, ``|eval|`` in pawns (name, from, below),
mates excluded: they have their own."""
MATES = "mate"
"""The bucket of positions Stockfish scores as a forced mate (targets of +-10 pawns)."""
LEVEL_PAWNS = 1.0
""""Within one pawn of level": quiet positions whose ``|Stockfish eval| <= LEVEL_PAWNS``
give the headline MAE (:func:`headline_metrics`)."""


def bucket_index(target: np.ndarray) -> np.ndarray:
    """For each target, its bucket: the index into :data:`BUCKETS`, or ``len(BUCKETS)``
    for a forced mate (a target of exactly +-:data:`~knights.data.csslab.MATE_PAWNS`;
    every other evaluation is clipped to +-9)."""
    size = np.abs(np.asarray(target, dtype=np.float64))
    index = np.full(len(size), len(BUCKETS), dtype=np.int64)
    for i, (_, lo, hi) in enumerate(BUCKETS):
        index[(size >= lo) & (size < hi) & (size != csslab.MATE_PAWNS)] = i
    return index


def bucket_metrics(pred: np.ndarray, target: np.ndarray) -> list[dict[str, Any]]:
    """MAE (pawns) and rows of every bucket, mates last; a bucket without rows has MAE
    ``None``. The rows add up to ``len(target)``.

    >>> table = bucket_metrics(np.array([0.0, 2, 10]), np.array([0.5, 2, 10]))
    >>> [(b["rows"], b["mae"]) for b in table]
    [(1, 0.5), (1, 0.0), (0, None), (0, None), (1, 0.0)]
    """
    err = np.abs(np.asarray(pred, dtype=np.float64) - np.asarray(target, dtype=np.float64))
    index = bucket_index(target)
    out = []
    for i, name in enumerate([b[0] for b in BUCKETS] + [MATES]):
        rows = int((index == i).sum())
        out.append({"bucket": name, "rows": rows, "mae": float(err[index == i].mean()) if rows else None})
    return out


def quiet_rows(data: Encoded) -> np.ndarray:
    """Which rows of ``data`` are quiet (the project's one definition,
    :func:`knights.features.attacks.quiet`), ``(N,)`` bool."""
    return quiet(data.squares, data.white, data.check)


def level_rows(target: np.ndarray, calm: np.ndarray) -> np.ndarray:
    """The headline's rows: quiet (``calm``) and within :data:`LEVEL_PAWNS` of level."""
    return np.asarray(calm, dtype=bool) & (np.abs(np.asarray(target, dtype=np.float64)) <= LEVEL_PAWNS)


def headline_metrics(pred: np.ndarray, target: np.ndarray, calm: np.ndarray) -> dict[str, Any]:
    """The headline figures: the MAE (pawns) over the quiet rows (``calm``) within
    :data:`LEVEL_PAWNS` of level and their number (MAE ``None`` when there are none), the
    win-probability error over every row, and over every quiet row (chosen by the position
    alone, not by its label, so a guess that stays near level gains nothing there).

    >>> h = headline_metrics(np.array([0.5, 0.0, 3.0]), np.array([1.0, 0.2, 2.0]), np.array([True, False, True]))
    >>> h["quiet_level_mae"], h["quiet_level_rows"], round(h["win_probability_error"], 4)
    (0.5, 1, 0.0461)
    """
    pred = np.asarray(pred, dtype=np.float64)
    target = np.asarray(target, dtype=np.float64)
    level = level_rows(target, calm)
    n = int(level.sum())
    calm = np.asarray(calm, dtype=bool)
    return {"quiet_level_mae": float(np.abs(pred[level] - target[level]).mean()) if n else None,
            "quiet_level_rows": n, "win_probability_error": win_probability_error(pred, target),
            "quiet_win_probability_error": win_probability_error(pred[calm], target[calm]) if calm.any() else None}


def mean_difference(d: np.ndarray) -> dict[str, Any] | None:
    """The mean of paired differences ``d`` (one a row: ours less the reference's), its standard error (their
    spread over the square root of their number: what both find hard cancels) and the number of rows; ``None``
    with fewer than two rows.

    >>> mean_difference(np.array([-0.5, 0.0]))
    {'difference': -0.25, 'standard_error': 0.25, 'rows': 2}
    """
    d = np.asarray(d, dtype=np.float64)
    n = d.size
    if n < 2:
        return None
    return {"difference": float(d.mean()), "standard_error": float(d.std(ddof=1) / np.sqrt(n)), "rows": n}


def paired_difference(pred: np.ndarray, reference: np.ndarray, target: np.ndarray,
                      calm: np.ndarray) -> dict[str, Any] | None:
    """``pred``'s error against ``reference``'s on the same headline rows (quiet, within :data:`LEVEL_PAWNS`): the
    mean of the rows' differences of absolute error (negative: ``pred`` errs less), its standard error (the rows'
    spread of that difference over the square root of their number: the two errors are paired, so what both find
    hard cancels) and the number of rows; ``None`` with fewer than two rows.

    >>> paired_difference(np.array([0.0, 0.5]), np.array([0.5, 0.5]), np.array([0.0, 0.0]), np.array([True, True]))
    {'difference': -0.25, 'standard_error': 0.25, 'rows': 2}
    """
    level = level_rows(target, calm)
    t = np.asarray(target, dtype=np.float64)[level]
    ours, theirs = np.asarray(pred, dtype=np.float64)[level], np.asarray(reference, dtype=np.float64)[level]
    return mean_difference(np.abs(ours - t) - np.abs(theirs - t))


CALIBRATION_PAWNS = 3.0
""":func:`calibration_slope` is fitted on the quiet rows where the evaluator says within this many pawns of level."""


def calibration_slope(pred: np.ndarray, target: np.ndarray, calm: np.ndarray) -> tuple[float | None, int]:
    """How large the labels are for a value the evaluator gives, and over how many rows: the
    least-squares slope of label on value (through 0) over the quiet rows (``calm``) where the
    value is within :data:`CALIBRATION_PAWNS` of level, chosen by the value, not the label (1:
    calibrated; above 1 the evaluator understates advantages). None where no row qualifies.

    >>> calibration_slope(np.array([1.0, -2.0, 5.0]), np.array([1.5, -3.0, 0.0]), np.array([True, True, True]))
    (1.5, 2)
    """
    pred = np.asarray(pred, dtype=np.float64)
    target = np.asarray(target, dtype=np.float64)
    within = np.asarray(calm, dtype=bool) & (np.abs(pred) <= CALIBRATION_PAWNS)
    denominator = float((pred[within] ** 2).sum())
    slope = float((pred[within] * target[within]).sum()) / denominator if denominator else None
    return slope, int(within.sum())


def level_reference(target: np.ndarray, calm: np.ndarray) -> dict[str, Any]:
    """What the headline MAE means: the same quiet, level rows scored by a guess that every
    position is exactly level (0 pawns). The rows are chosen by their label, so a guess that
    stays near 0 is rewarded there; an evaluator that errs more than this on them reads
    imbalances (mostly material) that Stockfish finds compensated.

    >>> level_reference(np.array([0.5, -0.25, 3.0]), np.array([True, True, True]))
    {'rows': 2, 'always_level_mae': 0.375}
    """
    target = np.asarray(target, dtype=np.float64)
    level = level_rows(target, calm)
    return {"rows": int(level.sum()),
            "always_level_mae": float(np.abs(target[level]).mean()) if level.any() else None}


def evaluation_row(name: str, kind: str, pred: np.ndarray, target: np.ndarray, calm: np.ndarray | None = None,
                   **extra: Any) -> dict[str, Any]:
    """One row of a results table: ``name``, ``kind``, the headline figures when the quiet
    rows (``calm``, :func:`quiet_rows`) are given (:func:`headline_metrics`), ``extra``
    fields, the overall figures (:func:`~knights.learn.metrics.regression_metrics`), the
    buckets, and the quiet rows' buckets."""
    head = {} if calm is None else headline_metrics(pred, target, calm)
    row = {"name": name, "kind": kind, **head, **extra, **regression_metrics(pred, target),
           "buckets": bucket_metrics(pred, target)}
    if calm is not None:
        calm = np.asarray(calm, dtype=bool)
        row["quiet_rows"] = int(calm.sum())
        row["quiet_buckets"] = bucket_metrics(np.asarray(pred)[calm], np.asarray(target)[calm])
    return row


def stockfish_values(boards: Iterable[chess.Board], depth: int, *, clear_hash: bool = False, total: int | None = None,
                     progress: bool = True) -> np.ndarray:
    """Stockfish's evaluation of every board at ``depth``, in pawns from White's side (as every
    target). One engine searches them one after another, and a shallow search's value depends on
    what it searched before; ``clear_hash``: a cleared hash before every board, as the
    independent sets were labelled (:func:`knights.data.independent.label`)."""
    from tqdm import tqdm

    from knights.data.generate import rel_text
    from knights.data.stockfish import Stockfish

    with Stockfish() as sf:
        def value(board: chess.Board) -> float:
            if clear_hash:
                sf.new_game()
            return csslab.eval_to_pawns(rel_text(sf.analyse(board.fen(), depth=depth).white_pov(board.turn)))

        return np.fromiter((value(b) for b in tqdm(boards, total=total, desc=f"stockfish depth {depth}", unit="pos",
                                                   disable=not progress)), dtype=np.float64)


STOCKFISH_DEPTH1 = "stockfish depth 1"
"""The baseline row of Stockfish at depth 1 on each position alone (its hash cleared before each): the tables'
yardstick, which every measured row of the independent sets is also paired with (:func:`paired_difference`)."""
HASH_KEPT = "stockfish depth 1, hash kept"
"""The baseline row of Stockfish at depth 1 searching the rows one after another with its hash kept
(the headline's ``stockfish depth 1`` clears it before each position)."""


def stockfish_depth1(data: Encoded, depth: int = 1, progress: bool = True, *, clear_hash: bool = True) -> np.ndarray:
    """Stockfish's evaluation of every position at ``depth``, as a target in pawns. Each position
    is searched from a cleared hash (``clear_hash``), as every evaluator here sees each position
    alone and as the independent sets were labelled; with the hash kept from one row to the next
    (``clear_hash=False``), a shallow search reads what it found on the earlier rows of the same
    games, and errs less than it would on the position alone (:func:`baseline_rows` keeps that
    row too, named :data:`HASH_KEPT`)."""
    boards = (board_from_arrays(data.squares[i], bool(data.white[i]), int(data.castling[i]), int(data.ep[i]))
              for i in range(len(data)))
    return stockfish_values(boards, depth, clear_hash=clear_hash, total=len(data), progress=progress).astype(np.float32)


def build_table(data_dir: str | Path = FULL_DATA, test: str = TEST_LETTERS, *, max_rows: int | None = None,
                with_stockfish: bool = True, progress: bool = True) -> dict[str, Any]:
    started = time.perf_counter()
    folder = registry.repo_path(data_dir)
    files = select_chunks(folder, test)
    data = load_encoded(files, ChunkCache(folder.parent / "cache"), progress=progress)
    if max_rows is not None and len(data) > max_rows:
        data = data.take(np.random.default_rng(0).choice(len(data), max_rows, replace=False))
    calm = quiet_rows(data)
    rows = baseline_rows(data, calm, with_stockfish=with_stockfish, progress=progress)
    moves: list[dict[str, Any]] = []
    for version in registry.all_versions():
        if not version.is_trained():
            continue
        model, meta = version.load()
        entry = {"name": version.name, "kind": "network", "parameters": meta.get("parameters"),
                 "epochs": len(meta.get("history", {}).get("train_loss", [])),
                 "train_rows": meta.get("data", {}).get("train", {}).get("rows")}
        if version.family == "EL":
            rows.append(evaluation_row(version.name, "network", predict(model, version.library.INPUTS, data),
                                       data.target, calm,
                                       **{k: v for k, v in entry.items() if k not in ("name", "kind")}))
        else:
            moves.append({**entry, **held_out_metrics(version, model, data)})
    table: dict[str, Any] = {
        "data": {"folder": registry.repo_relative(folder), "test_letters": test, "rows": len(data)},
        "evaluation": rows, "move_networks": moves, "quiet_level": level_reference(data.target, calm)}
    table["seconds"] = round(time.perf_counter() - started, 1)
    best = min((r for r in rows if r["kind"] == "network"), key=lambda r: r["mae"], default=None)
    if best:
        table["best"] = {"name": best["name"], "mae": best["mae"],
                         "vs_material": 1.0 - best["mae"] / rows[0]["mae"]}
    return table


def baseline_rows(data: Encoded, calm: np.ndarray | None = None, *, with_stockfish: bool = True,
                  progress: bool = True, predictions: dict[str, np.ndarray] | None = None) -> list[dict[str, Any]]:
    """The baselines on ``data``: counting material (clipped to +-9 like the targets)
    and, unless ``with_stockfish`` is false, Stockfish at depth 1 on each position alone and
    with its hash kept from row to row (:data:`HASH_KEPT`; with their seconds);
    ``calm``: the quiet rows, for the headline figures (:func:`evaluation_row`); ``predictions``: a dict that
    receives each baseline's values by name."""
    material = np.clip(material_balance(data.squares), -csslab.CLIP_PAWNS, csslab.CLIP_PAWNS)
    rows = [evaluation_row("material", "baseline", material, data.target, calm)]
    kept = {} if predictions is None else predictions
    kept["material"] = material
    if with_stockfish:
        for name, clear in ((STOCKFISH_DEPTH1, True), (HASH_KEPT, False)):
            t0 = time.perf_counter()
            sf = kept[name] = stockfish_depth1(data, progress=progress, clear_hash=clear)
            rows.append(evaluation_row(name, "baseline", sf, data.target, calm, seconds=time.perf_counter() - t0))
    return rows


def earlier_table(path: Path = NETWORKS_JSON) -> dict[str, Any] | None:
    """The letter table measured earlier (``networks.json``), marked ``"measured":
    "earlier"``; ``None`` when there is none."""
    if not path.is_file():
        return None
    table: dict[str, Any] = json.loads(path.read_text())
    table["measured"] = "earlier"
    table["read_from"] = registry.repo_relative(path)
    return table


def archived_here() -> set[str]:
    """The versions whose weights are not on this machine (archived: not in git; ``make version V=...`` rebuilds
    them): a fresh clone cannot measure them again."""
    return {v.name for v in registry.all_versions() if not v.is_trained() and not registry.entry(v.name).in_git}


def keep_earlier(rows: list[dict[str, Any]], earlier: Iterable[dict[str, Any]],
                 absent: set[str]) -> list[dict[str, Any]]:
    """``rows`` with the ``earlier`` row of each version in ``absent`` (:func:`archived_here`) put back where it
    stood, after the row that came before it then, and marked ``"measured": "earlier"``: rerunning the tables on a
    machine without an archived version's weights keeps its figures rather than dropping them. ``earlier``: the
    same table's rows, measured on the same positions.

    >>> now = [{"name": "material"}, {"name": "EL/v3"}]
    >>> then = [{"name": "material"}, {"name": "EL/v2", "mae": 5.0}, {"name": "EL/v3"}]
    >>> [(r["name"], r.get("measured")) for r in keep_earlier(now, then, {"EL/v2"})]
    [('material', None), ('EL/v2', 'earlier'), ('EL/v3', None)]
    """
    out = list(rows)
    placed: list[str] = []
    for row in earlier:
        name = row["name"]
        if name in absent and all(r["name"] != name for r in out):
            before = [i for i, r in enumerate(out) if r["name"] in placed]
            out.insert(before[-1] + 1 if before else 0, {**row, "measured": "earlier"})
        placed.append(name)
    return out


def row_label(row: dict[str, Any]) -> str:
    """A row's name in a Markdown table; a row carried over from an earlier run (:func:`keep_earlier`) says so."""
    return f"{row['name']} (measured earlier)" if row.get("measured") == "earlier" else row["name"]


def letter_table(data_dir: str | Path = FULL_DATA, test: str = TEST_LETTERS, *, max_rows: int | None = None,
                 with_stockfish: bool = True, progress: bool = True,
                 earlier: Path = NETWORKS_JSON) -> dict[str, Any] | None:
    """The table over the test letters: measured now when ``data_dir`` is here (marked
    ``"measured": "now"``), else read back from ``earlier`` (``None`` when neither is)."""
    if registry.repo_path(data_dir).is_dir():
        table = build_table(data_dir, test, max_rows=max_rows, with_stockfish=with_stockfish, progress=progress)
        table["measured"] = "now"
        before, absent = earlier_table(earlier), archived_here()
        if before is not None and before.get("data") == table["data"]:
            for key in ("evaluation", "move_networks"):
                table[key] = keep_earlier(table[key], before.get(key, []), absent)
        return table
    return earlier_table(earlier)


def _pawns(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def evaluation_markdown(rows: list[dict[str, Any]], *, details: bool = True) -> list[str]:
    """The lines of a Markdown table of evaluators: overall MAE, median error and sign
    agreement, then the MAE of every bucket (``-`` where a row has no buckets, as tables
    measured before buckets existed, or a bucket has no rows). ``details``: the networks'
    parameters and epochs too."""
    names = [b[0] for b in BUCKETS] + [MATES]
    counts: dict[str, int] = {}
    for r in rows:
        for b in r.get("buckets") or []:
            counts.setdefault(b["bucket"], b["rows"])
    heads = [f"{n} ({counts[n]:,})" if n in counts else n for n in names]
    head = ["evaluator"] + (["parameters", "epochs"] if details else []) + \
        ["MAE (pawns)", "median error", "sign agrees"] + heads
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for r in rows:
        cells = [row_label(r)]
        if details:
            cells += [f"{r['parameters']:,}" if r.get("parameters") else "-", str(r.get("epochs", "-"))]
        cells += [f"{r['mae']:.3f}", f"{r['median_ae']:.3f}", f"{r['sign_agreement']:.1%}"]
        by_name = {b["bucket"]: b["mae"] for b in r.get("buckets") or []}
        cells += [_pawns(by_name.get(n)) for n in names]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def headline_markdown(rows: list[dict[str, Any]]) -> list[str]:
    """The lines of a Markdown table of the headline figures (:func:`headline_metrics`),
    the one-ply move quality where a row has it, and the quiet positions' MAE by bucket
    (``-`` where a row lacks a figure)."""
    names = [b[0] for b in BUCKETS] + [MATES]
    counts: dict[str, int] = {}
    for r in rows:
        for b in r.get("quiet_buckets") or []:
            counts.setdefault(b["bucket"], b["rows"])
    level = next((r["quiet_level_rows"] for r in rows if r.get("quiet_level_rows") is not None), None)
    moves = any("best_move_share" in r for r in rows)
    head = ["evaluator", f"quiet, within a pawn{f' ({level:,})' if level is not None else ''}", "win-prob error"]
    head += ["best move", "mean cp loss"] if moves else []
    head += [f"quiet {n} ({counts[n]:,})" if n in counts else f"quiet {n}" for n in names]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for r in rows:
        cells = [row_label(r), _pawns(r.get("quiet_level_mae")), _number(r.get("win_probability_error"), ".4f")]
        if moves:
            cells += [_number(r.get("best_move_share"), ".1%"), _number(r.get("mean_cp_loss"), ".1f")]
        by_name = {b["bucket"]: b["mae"] for b in r.get("quiet_buckets") or []}
        cells += [_pawns(by_name.get(n)) for n in names]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def level_note(ref: dict[str, Any] | None) -> list[str]:
    """The sentence under a headline table that gives :func:`level_reference`'s yardstick."""
    if not ref or ref.get("always_level_mae") is None:
        return []
    return ["", f"Yardstick: calling every one of these {ref['rows']:,} quiet, level positions exactly level "
                f"(0 pawns) errs {ref['always_level_mae']:.3f} pawns on them."]


def _number(x: float | None, fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


def letter_markdown(table: dict[str, Any], level: str = "##") -> str:
    """The section of ``RESULTS.md`` on the test letters (``level``: its heading's ``#``)."""
    d = table["data"]
    lines = [f"{level} Letters `{d['test_letters']}` of `{d['folder']}` ({d['rows']:,} positions)", ""]
    if table.get("measured") == "earlier":
        lines += [f"Measured earlier and read back from `{table.get('read_from', 'networks.json')}`: `{d['folder']}` "
                  "is not on this machine. Same generator as the training letters (so it flatters the networks), "
                  "labelled at depth 8. Buckets were not measured then.", ""]
    lines += evaluation_markdown(table["evaluation"])
    for extra in table.get("extra_rows", []):
        lines += [f"| {extra['name']} (measured earlier: {extra['source']}) | - | - | {extra['mae']:.3f} | "
                  f"{extra['median_ae']:.3f} | {extra['sign_agreement']:.1%} |" + " - |" * (len(BUCKETS) + 1)]
    if table.get("best"):
        b = table["best"]
        lines += ["", f"Best network: **{b['name']}**, MAE {b['mae']:.3f}, "
                      f"{b['vs_material']:.0%} below counting material."]
    if any("quiet_level_mae" in r for r in table["evaluation"]):
        lines += ["", "What play needs: the MAE on quiet positions within a pawn of level, the error in win "
                      "probability, and the quiet positions' MAE by bucket.", ""]
        lines += headline_markdown(table["evaluation"]) + level_note(table.get("quiet_level"))
    if table["move_networks"]:
        lines += ["", f"{level}# Move networks", "",
                  "| network | parameters | epochs | top move legal | top move = played |", "|---|---:|---:|---:|---:|"]
        for r in table["move_networks"]:
            lines.append(f"| {row_label(r)} | {r['parameters']:,} | {r['epochs']} | {r['legal_share']:.1%} | "
                         f"{r['top1_played']:.1%} |")
    return "\n".join(lines) + "\n"


def markdown(table: dict[str, Any]) -> str:
    """``RESULTS.md`` holding the letter table alone (what :func:`write` writes)."""
    return ("# Held-out results\n\nGenerated by `knights results`; do not edit by hand.\n\n"
            + letter_markdown(table))


def write(table: dict[str, Any], out_md: Path | None = None, out_json: Path | None = None) -> tuple[Path, Path]:
    """The letter table alone: ``RESULTS.md`` and ``networks.json`` (the independent sets'
    sections come from :mod:`knights.lab.results.independent`)."""
    out_md = out_md or registry.REPO_ROOT / "models_EL" / "RESULTS.md"
    out_json = out_json or RESULTS_DIR / "networks.json"
    out_json.parent.mkdir(parents=True, exist_ok=True)
    out_md.write_text(markdown(table))
    write_json(out_json, table)
    return out_md, out_json
