"""Every evaluator on the independent test sets, beside the baselines, error by bucket.

``knights results`` (:func:`run`) writes ``models_EL/RESULTS.md`` and two JSON files.
First come the headline figures, what play needs (:func:`headline`, the key ``headline``
of each JSON file and the first section of ``RESULTS.md``): for every evaluator, beside
counting material and Stockfish at depth 1, on the test letters and on every independent
set, the MAE on quiet positions within a pawn of level and the error in win probability
(:func:`knights.lab.results.tables.headline_metrics`), and on the ``games`` set the one-ply move
quality (:mod:`knights.lab.results.move_choice`: the share of positions where the one-ply choice
is Stockfish's best move at depth 10, and its mean centipawn loss). The move quality is
measured by an application, so ``knights results`` hands it in (``move_quality``);
``python -m knights.lab.results.independent`` measures everything else. Then:

* the section on the test letters ``j`` (:func:`knights.lab.results.tables.letter_table`:
  measured now when ``data/full`` is here, else the figures measured earlier, marked so),
  written to ``report/results/networks.json`` only when measured now;
* one section per independent set (``data/independent/*.csv``, built by
  ``python -m knights.lab.arena.testsets``): every trained EL version, the shipped democracy
  with and without the threat term, its members that are not EL versions (an archived version whose
  weights are not on this machine keeps the row measured earlier on the same rows, marked so), counting
  material and Stockfish at depth 1, all on the same rows; MAE, median error, sign
  agreement and the MAE in every |eval| bucket and on forced mates
  (:func:`knights.lab.results.tables.bucket_metrics`), and on the quiet rows alone
  (``quiet_buckets``); written to ``report/results/independent.json``;
* whether the democracy beats its best member on each set, and by how much.

The independent sets are read like any chunk (:func:`knights.data.chunks.read_chunk`):
a malformed row is skipped and counted, and the skips are reported by file and line.
Each evaluator sees the rows as the networks saw their test letters: the ``capture``
flag is the move played's (only EL/v4 reads it; ``endgames`` rows have no move, so 0).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from knights.common import module_main, write_json
from knights.data.chunks import Encoded, ReadReport, read_chunk, select_chunks
from knights.evaluate import democracy
from knights.evaluate.base import Evaluator, network_evaluator
from knights.evaluate.learner import LearnerEvaluator
from knights.evaluate.qsearch import QSEARCH_SUFFIX, CaptureSearchEvaluator
from knights.evaluate.threats import THREATS_SUFFIX, ThreatAwareEvaluator
from knights.lab.results.tables import (
    LEVEL_PAWNS,
    NETWORKS_JSON,
    RESULTS_DIR,
    STOCKFISH_DEPTH1,
    archived_here,
    baseline_rows,
    evaluation_markdown,
    evaluation_row,
    headline_markdown,
    keep_earlier,
    letter_markdown,
    letter_table,
    level_note,
    level_reference,
    paired_difference,
    quiet_rows,
)
from knights.learn import registry
from knights.learn.experiment import FULL_DATA, TEST_LETTERS
from knights.learn.training import check_at_least, check_folder

INDEPENDENT_DIR = registry.REPO_ROOT / "data" / "independent"
INDEPENDENT_JSON = RESULTS_DIR / "independent.json"
RESULTS_MD = registry.REPO_ROOT / "models_EL" / "RESULTS.md"
SET_ORDER = ("games", "tactics", "endgames")
"""The sets in the order they are built and shown; any other CSV in the folder follows."""
MOVE_QUALITY_SET = "games"
"""The set whose positions the one-ply move quality is measured on (real game positions)."""
SEARCH = "search"
"""The kind of an evaluator that searches (one ply, :mod:`knights.lab.results.depth_one`): measured beside the
others, but
neither a set's best evaluator nor asked for a one-ply choice."""
MoveQuality = Callable[[Encoded, list[tuple[str, Evaluator]]], dict[str, Any]]
"""Measures the one-ply move quality of (kind, evaluator) pairs on a set's rows, counting
material and Stockfish at depth 1 among its ``rows`` (:func:`knights.lab.results.move_choice.measure`)."""
HEADLINE_KEYS = ("quiet_level_mae", "quiet_level_rows", "win_probability_error", "quiet_win_probability_error",
                 "best_move_share", "mean_cp_loss")
DEFINITIONS = {
    "quiet_level_mae": f"MAE in pawns over the quiet positions (knights.features.attacks.quiet: not in check, no "
                       f"legal capture that wins material) whose |Stockfish eval| <= {LEVEL_PAWNS:g} pawn",
    "win_probability_error": "mean |p(prediction) - p(Stockfish)| over every position, p = "
                             "knights.learn.targets.win_probability (0.00368208 per centipawn)",
    "quiet_win_probability_error": "the same over every quiet position (chosen by the position, not by its label)",
    "best_move_share": "share of the positions where the one-ply choice is Stockfish's best move (depth 10)",
    "mean_cp_loss": "mean centipawn loss of the one-ply choice by Stockfish at depth 10 (mover's side, +-1000 "
                    "clamp, mates +-1000)",
    "no_loss_share": "share of the positions where that loss is 0: Stockfish's best move or one it scores as high"}
"""What the headline keys mean (written into the JSON files beside them)."""


def set_files(folder: Path = INDEPENDENT_DIR) -> list[Path]:
    """The independent sets in ``folder``: :data:`SET_ORDER` first, then the rest by name."""
    if not folder.is_dir():
        return []
    files = sorted(folder.glob("*.csv"))
    rank = {name: i for i, name in enumerate(SET_ORDER)}
    return sorted(files, key=lambda p: (rank.get(p.stem, len(rank)), p.stem))


def load_set(path: Path, notice: Callable[[str], None] | None = None) -> tuple[Encoded, ReadReport]:
    """The rows of one set; malformed rows skipped, counted and, through ``notice``
    (default: standard error), reported with the file and line of the first few."""
    data, report = read_chunk(path)
    if report.skipped:
        say = notice or _stderr
        say(report.summary())
        for example in report.examples:
            say(f"  {example}")
    return data, report


def _stderr(text: str) -> None:
    print(text, file=sys.stderr)


def evaluate_in_blocks(evaluator: Evaluator, data: Encoded, block: int = 4096) -> np.ndarray:
    """``evaluator`` over ``data`` in blocks (memory stays small), pawns from White's side."""
    out = [np.asarray(evaluator.evaluate(data.take(slice(i, i + block))), dtype=np.float32).reshape(-1)
           for i in range(0, len(data), block)]
    return np.concatenate(out) if out else np.zeros(0, np.float32)


def evaluators() -> tuple[list[tuple[str, Evaluator]], democracy.Democracy | None]:
    """What is measured besides the baselines: every trained EL version, the newest with the
    capture search (``+qsearch``), and, when the democracy is shipped, it, it with the threat
    term, it with the capture search, and its members that are not EL versions (the classical
    learners). Also the democracy itself (``None`` when not shipped)."""
    out: list[tuple[str, Evaluator]] = []
    versions = [v for v in registry.all_versions("EL") if v.is_trained()]
    out += [("network", network_evaluator(v.name)) for v in versions]
    if versions:                                     # the newest, already loaded, with the capture search
        out.append(("network", CaptureSearchEvaluator(out[-1][1])))
    dem = democracy.load_shipped() if democracy.is_shipped() else None
    if dem is not None:
        out += [("ensemble", dem), ("ensemble", ThreatAwareEvaluator(dem)), ("ensemble", CaptureSearchEvaluator(dem))]
        names = {v.name for v in versions}
        out += [("member", m) for m in dem.members if m.name not in names and isinstance(m, LearnerEvaluator)]
    return out, dem


def democracy_gain(dem: democracy.Democracy, data: Encoded, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The democracy (and with threats) against its best member on ``data``: MAE of each,
    the gain in pawns (positive: the democracy is better) and as a share of the member's."""
    members: list[dict[str, Any]] = []
    quiet = dem.quiet_weights if dem.quiet_weights is not None else [None] * len(dem.members)
    for member, weight, calm in zip(dem.members, dem.weights, quiet, strict=True):
        err = np.abs(evaluate_in_blocks(member, data).astype(np.float64) - data.target)
        members.append({"name": member.name, "weight": round(float(weight), 6),
                        **({} if calm is None else {"quiet_weight": round(float(calm), 6)}), "mae": float(err.mean())})
    best = min(members, key=lambda m: m["mae"])
    by_name = {r["name"]: r["mae"] for r in rows}
    out: dict[str, Any] = {"members": members, "best_member": best["name"], "best_member_mae": best["mae"]}
    for name in (dem.name, dem.name + THREATS_SUFFIX, dem.name + QSEARCH_SUFFIX):
        mae = by_name[name]
        out[name] = {"mae": mae, "gain": best["mae"] - mae, "relative_gain": (best["mae"] - mae) / best["mae"],
                     "beats_best_member": bool(mae < best["mae"])}
    return out


def with_move_quality(rows: list[dict[str, Any]], quality: dict[str, Any]) -> list[dict[str, Any]]:
    """``rows`` with each evaluator's ``best_move_share`` and ``mean_cp_loss`` (and ``no_loss_share`` when
    measured) from ``quality`` (:data:`MoveQuality`'s result) among its headline keys, right after them."""
    by_name = {r["name"]: r for r in quality["rows"]}
    out = []
    for row in rows:
        q = by_name.get(row["name"])
        if q is None:
            out.append(row)
            continue
        head = {k: row[k] for k in ("name", "kind", *HEADLINE_KEYS[:3]) if k in row}
        extra = {"no_loss_share": q["no_loss_share"]} if q.get("no_loss_share") is not None else {}
        out.append({**head, "best_move_share": q["best_move_share"], "mean_cp_loss": q["mean_cp_loss"], **extra, **row})
    return out


def set_table(path: Path, measured: list[tuple[str, Evaluator]], dem: democracy.Democracy | None, *,
              with_stockfish: bool = True, progress: bool = True,
              move_quality: MoveQuality | None = None) -> dict[str, Any]:
    """The table of one independent set (see the module docstring); ``move_quality``
    measures the one-ply choices when the set is :data:`MOVE_QUALITY_SET`."""
    started = time.perf_counter()
    data, report = load_set(path)
    sidecar_path = path.with_suffix(".json")
    sidecar = json.loads(sidecar_path.read_text()) if sidecar_path.is_file() else {}
    calm = quiet_rows(data)
    baseline: dict[str, np.ndarray] = {}
    rows = baseline_rows(data, calm, with_stockfish=with_stockfish, progress=progress, predictions=baseline)
    for kind, ev in measured:
        pred = evaluate_in_blocks(ev, data)
        yardstick = baseline.get(STOCKFISH_DEPTH1)
        paired = {} if yardstick is None else {
            "quiet_level_vs_stockfish": paired_difference(pred, yardstick, data.target, calm)}
        rows.append(evaluation_row(ev.name, kind, pred, data.target, calm, **paired))
    one_ply = [(kind, ev) for kind, ev in measured if kind != SEARCH]   # a searched row's choice is not one ply's
    quality = move_quality(data, one_ply) if move_quality is not None and path.stem == MOVE_QUALITY_SET else None
    if quality is not None:
        rows = with_move_quality(rows, quality)
    table: dict[str, Any] = {
        "set": path.stem, "file": registry.repo_relative(path), "rows": len(data),
        "skipped": {"total": report.total_skipped, "by_reason": dict(report.skipped), "examples": report.examples},
        "generator": sidecar.get("generator"), "label_depth": (sidecar.get("label") or {}).get("depth"),
        "label_engine": (sidecar.get("label") or {}).get("engine"), "seed": (sidecar.get("recipe") or {}).get("seed"),
        "dropped": sidecar.get("dropped"), "build_time_s": sidecar.get("time_s"),
        "quiet_rows": int(calm.sum()), "quiet_level": level_reference(data.target, calm), "evaluation": rows}
    if quality is not None:
        table["move_quality"] = {k: v for k, v in quality.items() if k != "rows"}
    learned = [r for r in rows if r["kind"] not in ("baseline", SEARCH)]
    if learned:
        best = min(learned, key=lambda r: r["mae"])
        table["best"] = {"name": best["name"], "mae": best["mae"]}
        sf = next((r for r in rows if r["name"] == STOCKFISH_DEPTH1), None)
        if sf:
            table["best"]["vs_stockfish_depth1"] = best["mae"] / sf["mae"] - 1.0
    if dem is not None:
        table["democracy"] = democracy_gain(dem, data, rows)
    table["seconds"] = round(time.perf_counter() - started, 1)
    return table


SAME_SET = ("set", "file", "rows", "seed", "label_depth", "quiet_rows")
"""What makes a set's earlier table one over the same positions."""


def with_earlier_rows(sets: list[dict[str, Any]], earlier: Path,
                      absent: set[str] | None = None) -> list[dict[str, Any]]:
    """``sets`` with the rows of the versions in ``absent`` (default: the archived versions whose weights are not on
    this machine) carried over from the table ``earlier`` measured over the same positions
    (:func:`~knights.lab.results.tables.keep_earlier`)."""
    if not earlier.is_file():
        return sets
    before = {t["set"]: t for t in json.loads(earlier.read_text()).get("sets", [])}
    absent = archived_here() if absent is None else absent
    for table in sets:
        then = before.get(table["set"])
        if then is not None and all(then.get(k) == table.get(k) for k in SAME_SET):
            table["evaluation"] = keep_earlier(table["evaluation"], then["evaluation"], absent)
    return sets


def democracy_on_letters(table: dict[str, Any]) -> list[dict[str, Any]]:
    """The shipped democracy's figures on the test letters, as its trainer measured them
    (``ensemble/models/democracy.json``), when they are the same letters of the same folder."""
    if not democracy.is_shipped():
        return []
    doc = democracy.read_manifest()
    test = doc.get("test") or {}
    folder = (doc.get("data") or {}).get("folder")
    same = folder == table["data"]["folder"] and test.get("rows") == table["data"]["rows"]
    if not same or "mae" not in test:
        return []
    return [{"name": "democracy", "source": "ensemble/models/democracy.json", **test}]


def independent_markdown(table: dict[str, Any]) -> str:
    """The section of ``RESULTS.md`` on one independent set."""
    drop = table.get("dropped") or {}
    lines = [f"## Independent set `{table['set']}` ({table['rows']:,} positions, `{table['file']}`)", ""]
    if table.get("generator"):
        lines += [f"Generator: {table['generator']}. Labelled by {table.get('label_engine') or 'Stockfish'} at depth "
                  f"{table.get('label_depth')}; seed {table.get('seed')}. De-duplicated against the training data "
                  f"and the positions near the start: {', '.join(f'{n:,} {r}' for r, n in drop.items()) or 'none'} "
                  "dropped.", ""]
    if table["skipped"]["total"]:
        lines += [f"Malformed rows skipped: {table['skipped']['total']:,} ({table['skipped']['by_reason']}).", ""]
    lines += evaluation_markdown(table["evaluation"], details=False)
    lines += ["", f"Quiet positions: {table.get('quiet_rows', 0):,}. What play needs: the MAE on those within a pawn "
                  "of level, the error in win probability"
                  + (", the one-ply move quality" if "move_quality" in table else "")
                  + " and the quiet positions' MAE by bucket.", ""]
    lines += headline_markdown(table["evaluation"]) + level_note(table.get("quiet_level"))
    mq = table.get("move_quality")
    if mq:
        lines += ["", f"Move quality: {mq['positions']:,} positions (every {mq['every']}th row); {mq['method']}. "
                      f"{mq['seconds']:.0f} s, {mq['stockfish_searches']:,} new Stockfish searches (the rest from "
                      f"`{mq['cache']}`)."]
        if mq.get("stockfish_by_depth"):
            lines += ["", "The same share for Stockfish's own move, by its depth: "
                          + "; ".join(f"depth {d['depth']} {d['best_move_share']:.1%}, {d['mean_cp_loss']:.0f} cp"
                                      for d in mq["stockfish_by_depth"]) + "."]
    best = table.get("best")
    if best:
        rel = best.get("vs_stockfish_depth1")
        lines += ["", f"Best learned evaluator: **{best['name']}**, MAE {best['mae']:.3f}"
                      + (f", {abs(rel):.0%} {'above' if rel > 0 else 'below'} Stockfish at depth 1." if rel is not None
                         else ".")]
    dem = table.get("democracy")
    if dem:
        parts = []
        for name in ("democracy", "democracy" + THREATS_SUFFIX, "democracy" + QSEARCH_SUFFIX):
            if name not in dem:                 # written before the capture search was measured
                continue
            d = dem[name]
            verdict = "beats" if d["beats_best_member"] else "does not beat"
            parts.append(f"{name} {verdict} its best member {dem['best_member']} ({dem['best_member_mae']:.3f}): "
                         f"MAE {d['mae']:.3f}, {d['gain']:+.3f} pawns ({d['relative_gain']:+.1%})")
        lines += ["", "; ".join(parts) + "."]
    return "\n".join(lines) + "\n"


def headline(letters: dict[str, Any] | None, sets: list[dict[str, Any]]) -> dict[str, Any]:
    """The headline figures of every evaluator by set (``j``'s letters first), under clear
    keys: ``quiet_level_mae`` and ``win_probability_error`` as ``{evaluator: {set: value}}``,
    ``move_quality`` as ``{set, positions, depth, rows: {evaluator: {best_move_share,
    mean_cp_loss}}}`` (``None`` when not measured), and what each means (``definitions``)."""
    tables = ([(f"letters {letters['data']['test_letters']}", letters["evaluation"])] if letters else [])
    tables += [(st["set"], st["evaluation"]) for st in sets]
    out: dict[str, Any] = {"definitions": DEFINITIONS, "sets": [name for name, _ in tables]}
    for key in ("quiet_level_mae", "win_probability_error", "quiet_win_probability_error"):
        by_name: dict[str, dict[str, float]] = {}
        for name, rows in tables:
            for r in rows:
                if r.get(key) is not None:
                    by_name.setdefault(r["name"], {})[name] = r[key]
        out[key] = by_name
    refs = ([(f"letters {letters['data']['test_letters']}", letters.get("quiet_level"))] if letters else [])
    refs += [(st["set"], st.get("quiet_level")) for st in sets]
    out["always_level_mae"] = {name: ref["always_level_mae"] for name, ref in refs
                               if ref and ref.get("always_level_mae") is not None}
    quality = next((st for st in sets if "move_quality" in st), None)
    out["move_quality"] = None if quality is None else {
        "set": quality["set"], "positions": quality["move_quality"]["positions"],
        "depth": quality["move_quality"]["depth"],
        "rows": {r["name"]: {"best_move_share": r["best_move_share"], "mean_cp_loss": r["mean_cp_loss"]}
                 for r in quality["evaluation"] if "best_move_share" in r}}
    return out


def headline_section(head: dict[str, Any]) -> list[str]:
    """The first section of ``RESULTS.md``: :func:`headline` as three tables."""
    sets = head["sets"]
    lines = ["## Headline: what play needs", "",
             "Quiet positions within a pawn of level: the MAE in pawns over the positions that are quiet (not in "
             "check, no legal capture that wins material: `knights.features.attacks.quiet`) and that Stockfish "
             f"calls within {LEVEL_PAWNS:g} pawn of level, where judgement is all positional. Win-probability error: "
             "the mean |p(prediction) - p(Stockfish)| over every position, p = `knights.learn.targets."
             "win_probability` (Lichess's 0.00368208 a centipawn). One-ply move quality on the `games` set: the "
             "share of positions where the evaluator's one-ply choice is Stockfish's best move at depth 10, and the "
             "choice's mean centipawn loss (`knights.lab.results.move_choice`). Material and Stockfish at depth 1 "
             "on the "
             "same rows.", ""]
    for key, title, fmt in (("quiet_level_mae", "Quiet positions within a pawn of level, MAE (pawns)", ".3f"),
                            ("win_probability_error", "Error in win probability", ".4f"),
                            ("quiet_win_probability_error", "Error in win probability on every quiet position",
                             ".4f")):
        lines += [f"### {title}", "", "| evaluator | " + " | ".join(f"`{s}`" for s in sets) + " |",
                  "|---" + "|---:" * len(sets) + "|"]
        for name, values in head[key].items():
            lines.append(f"| {name} | " + " | ".join(format(values[s], fmt) if s in values else "-" for s in sets)
                         + " |")
        if key == "quiet_level_mae" and head.get("always_level_mae"):
            ref = head["always_level_mae"]
            lines.append("| *yardstick: always 0 (level)* | " + " | ".join(
                format(ref[s], fmt) if s in ref else "-" for s in sets) + " |")
        lines.append("")
    mq = head.get("move_quality")
    if mq:
        lines += [f"### One-ply move quality on `{mq['set']}` ({mq['positions']:,} positions, Stockfish depth "
                  f"{mq['depth']})", "", "| evaluator | best move | mean cp loss |", "|---|---:|---:|"]
        lines += [f"| {name} | {r['best_move_share']:.1%} | {r['mean_cp_loss']:.1f} |"
                  for name, r in mq["rows"].items()]
        lines.append("")
    return lines


def markdown(letters: dict[str, Any] | None, sets: list[dict[str, Any]]) -> str:
    """The whole ``RESULTS.md``."""
    out = ["# Held-out results", "", "Generated by `knights results`; do not edit by hand.", ""]
    out += headline_section(headline(letters, sets))
    out += ["MAE in pawns against Stockfish (mates +-10, everything else clipped to +-9). The columns `< 1`, `1-3`, "
            "`3-6` and `>= 6` give the MAE over the positions whose Stockfish evaluation is that large in pawns "
            "(either side; their number in brackets), `mate` over those Stockfish scores as a forced mate. Sign "
            "agreement leaves out positions Stockfish calls exactly 0. The independent sets are built by "
            "`python -m knights.lab.arena.testsets`; each set's JSON sidecar in `data/independent/` gives its recipe, "
            "what de-duplication dropped and how long it took.", ""]
    if letters is not None:
        out.append(letter_markdown(letters))
    else:
        out += ["## Test letters", "", "Not measured: `data/full` is not here and no earlier table was found.", ""]
    out += [independent_markdown(t) for t in sets]
    if not sets:
        out += ["## Independent sets", "", "None found: build them with `python -m knights.lab.arena.testsets`.", ""]
    return "\n".join(out)


def run(data_dir: str | Path = FULL_DATA, test: str = TEST_LETTERS, *, max_rows: int | None = None,
        with_stockfish: bool = True, independent_dir: Path = INDEPENDENT_DIR, out_md: Path = RESULTS_MD,
        out_json: Path = INDEPENDENT_JSON, networks_json: Path = NETWORKS_JSON, threads: int | None = 1,
        progress: bool = True, move_quality: MoveQuality | None = None,
        played: Sequence[tuple[str, Evaluator]] = ()) -> list[Path]:
    """Measure and write everything (see the module docstring); returns the files written.
    ``move_quality``: measures the one-ply move quality on :data:`MOVE_QUALITY_SET`
    (``knights results`` passes :func:`knights.lab.results.move_choice.measure`; ``None``: not measured).
    ``played``: (kind, evaluator) pairs that only the play side can build, measured after
    :func:`evaluators` (``knights results`` passes the newest compiled network judged where the
    captures end, :mod:`knights.engine.judged`)."""
    if threads is not None:
        import torch

        torch.set_num_threads(threads)
    started = time.perf_counter()
    letters = letter_table(data_dir, test, max_rows=max_rows, with_stockfish=with_stockfish, progress=progress,
                           earlier=networks_json)
    written: list[Path] = []
    if letters is not None:
        letters["extra_rows"] = democracy_on_letters(letters)
        if letters.get("measured") == "now":
            write_json(networks_json, {"headline": headline(letters, []), **letters})
            written.append(networks_json)
    measured, dem = evaluators()
    measured += list(played)
    sets = [set_table(p, measured, dem, with_stockfish=with_stockfish, progress=progress, move_quality=move_quality)
            for p in set_files(independent_dir)]
    sets = with_earlier_rows(sets, out_json)
    out_md.write_text(markdown(letters, sets))
    doc = {"headline": headline(letters, sets),
           "generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
           "seconds": round(time.perf_counter() - started, 1),
           "buckets": "MAE over the rows whose |Stockfish evaluation| in pawns is < 1, 1-3, 3-6, >= 6 (mates "
                      "excluded), and over the forced mates ('mate')",
           "letters": None if letters is None else {
               "measured": letters.get("measured"), "data": letters["data"],
               "evaluation": letters["evaluation"], "extra_rows": letters.get("extra_rows", [])},
           "sets": sets}
    write_json(out_json, doc)
    return [*written, out_md, out_json]


DESCRIPTION = ("Held-out tables: every network and shipped evaluator on the test letters and on every independent "
               "set, beside counting material and Stockfish at depth 1, by |eval| bucket.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``knights results`` (the same as the module's own command line)."""
    p.add_argument("--data-dir", default=None, help=f"chunk folder of the test letters (default {FULL_DATA}; "
                                                    "while it is not here, the table measured earlier)")
    p.add_argument("--test", default=TEST_LETTERS, help="test letters (never trained on)")
    p.add_argument("--max-rows", type=int, default=None)
    p.add_argument("--no-stockfish", action="store_true", help="skip the Stockfish depth-1 baseline")
    p.add_argument("--independent-dir", default=None,
                   help=f"folder of the independent sets (default {registry.repo_relative(INDEPENDENT_DIR)})")
    p.add_argument("--quiet", action="store_true")


def check_arguments(a: argparse.Namespace) -> None:
    """Refuse, before any work, options no run could use: a ``--data-dir`` given that holds no chunks
    of the ``--test`` letters (the default's folder may be missing: the table measured earlier is
    used), an ``--independent-dir`` given that is not a folder, ``--max-rows`` below 1."""
    check_at_least(1, ("--max-rows", a.max_rows))
    folder = registry.repo_path(a.data_dir or FULL_DATA)
    if a.data_dir is not None or folder.is_dir():
        try:
            select_chunks(folder, a.test)
        except FileNotFoundError as exc:
            raise ValueError(f"--data-dir: {exc}") from None
        except ValueError as exc:
            raise ValueError(f"--test: {exc}") from None
    if a.independent_dir is not None:
        check_folder(registry.repo_path(a.independent_dir), "--independent-dir")


def main_args(a: argparse.Namespace, move_quality: MoveQuality | None = None,
              played: Sequence[tuple[str, Evaluator]] = ()) -> int:
    """Run as the parsed options of :func:`add_arguments` say (``move_quality``, ``played``: see :func:`run`),
    once :func:`check_arguments` passes them."""
    check_arguments(a)
    for path in run(a.data_dir or FULL_DATA, a.test, max_rows=a.max_rows, with_stockfish=not a.no_stockfish,
                    independent_dir=registry.repo_path(a.independent_dir or INDEPENDENT_DIR), progress=not a.quiet,
                    move_quality=move_quality, played=played):
        print(f"wrote {registry.repo_relative(path)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return module_main("knights.lab.results.independent", DESCRIPTION, add_arguments, main_args, argv)


if __name__ == "__main__":
    sys.exit(main())
