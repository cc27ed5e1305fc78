"""The report builds from what the repository holds.

* Every table and figure ``report/report.tex`` includes is written by the report's
  scripts (``report/build.py``) in this run, and every ``\\num...`` macro it uses is
  defined in the generated ``numbers.tex``; no placeholder had to be invented for
  something no script produces.
* That holds with the results committed now, with every results file missing or
  malformed, and with results in the shapes their producers write (synthetic, so
  that every table's filled-in path runs).
* No number is typed by hand into the .tex.
* The report never reads source code: what it quotes from the code comes from
  ``report/results/settings.json``, which must equal what ``knights settings`` writes
  now (so a renamed constant fails here, not as a placeholder in the PDF); no report
  module imports ``ast``; every file the report or ``original.json`` points to is in
  the repository.
* ``--strict`` (what ``make report`` runs) exits 1 and names every unmeasured value:
  a number, a placeholder table or figure, a single table cell marked n/m, and every
  statement the results contradict; on the committed results it passes.
* The best network's predictions that the build computes reproduce the MAE that
  ``independent.json`` recorded; example positions are chosen by their rule.
* ``README.md``'s generated results block is what ``python report/build.py --readme``
  writes now.
* With LaTeX installed (``latexmk`` on PATH), the PDF builds and has the expected
  section titles and no placeholder (checked with ``pdftotext`` when poppler-utils is
  installed, by ``report/check_pdf.py``, which CI runs too). ``make test`` does not need
  TeX: without it that part is skipped, saying why.
"""

from __future__ import annotations

import ast
import doctest
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "report"
TEX = REPORT / "report.tex"
sys.path.insert(0, str(REPORT))

import check_pdf  # noqa: E402

from reportgen import build as rb  # noqa: E402
from reportgen import predictions, readme, tex  # noqa: E402
from reportgen.sources import Sources  # noqa: E402


@pytest.fixture(scope="module")
def live_settings() -> dict:
    """What ``knights settings`` writes now, from the imported code."""
    from knights import settings

    return settings.collect()


# -- what report.tex needs, read independently of the build's own parser -------------------------
def tex_body() -> str:
    return re.sub(r"(?<!\\)%.*", "", TEX.read_text())


def needed() -> tuple[set[str], set[str], set[str]]:
    text = tex_body()
    tables = {m for m in re.findall(r"\\input\{tables/([^}]+)\}", text)}
    figures = {m for m in re.findall(r"\\includegraphics(?:\[[^\]]*\])?\{figures/([^}]+)\}", text)}
    macros = set(re.findall(r"\\(num[A-Za-z]+)", text))
    return ({t if t.endswith(".tex") else t + ".tex" for t in tables},
            {f if f.endswith(".pdf") else f + ".pdf" for f in figures}, macros)


def defined_macros(numbers: Path) -> set[str]:
    return set(re.findall(r"\\newcommand\{\\(num[A-Za-z]+)\}", numbers.read_text()))


def check_outputs(out: Path, b: rb.Build, started: float) -> None:
    tables, figures, macros = needed()
    assert tables and figures and macros
    written = {p.resolve() for p in b.written}
    for name in tables:
        path = out / "tables" / name
        assert path.resolve() in written and path.is_file(), f"tables/{name} is not produced by report/build.py"
        assert path.stat().st_mtime >= started - 1
    for name in figures:
        path = out / "figures" / name
        assert path.resolve() in written and path.is_file(), f"figures/{name} is not produced by report/build.py"
        assert path.stat().st_mtime >= started - 1
        assert path.read_bytes()[:5] == b"%PDF-"
    missing = macros - defined_macros(out / "numbers.tex")
    assert not missing, f"macros used in report.tex but not defined by numbers.tex: {sorted(missing)}"
    assert not b.errors, b.errors
    assert not b.fallbacks, f"report.tex needs what no script produces: {b.fallbacks}"


def run_build(out: Path, **kw) -> rb.Build:
    started = time.time()
    b = rb.build(out, Sources(ROOT, **kw))
    check_outputs(out, b, started)
    return b


# -- the committed state -------------------------------------------------------------------------
@pytest.mark.slow
def test_build_from_repository(tmp_path):
    b = run_build(tmp_path)
    # the data statistics always have a source (the committed sample at least)
    assert "numStatsRows" not in b.nums.pending
    # what the report quotes from the code comes from settings.json, always present
    quoted = {"numTestLetter", "numMatePawns", "numClipPawns", "numMateScore", "numOpeningLastMove",
              "numDefaultEvaluator", "numOrigCaptureBonus", "numParamsElVEight", "numElVersions"}
    assert not quoted & set(b.nums.pending), {k: b.nums.pending[k] for k in quoted & set(b.nums.pending)}
    for table in ("el_versions", "sl_versions", "opening"):
        assert "\\pending" not in (tmp_path / "tables" / f"{table}.tex").read_text(), table


def test_settings_json_is_what_the_code_says_now(live_settings):
    committed = json.loads((REPORT / "results" / "settings.json").read_text())
    assert committed == live_settings, "report/results/settings.json is stale: run `knights settings`"


def test_report_reads_no_source_code():
    """The report's numbers come from JSON that commands write, never from parsing code."""
    for path in sorted(REPORT.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert "ast" not in imported, f"{path.relative_to(ROOT)} imports ast"


def referenced_paths() -> set[str]:
    """Repository paths named in report.tex (``\\cmd``/``\\texttt`` with a slash, not a
    command line; ``vN`` stands for any version) and in original.json's ``_about``."""
    quoted = re.findall(r"\\(?:cmd|texttt)\{([^{}\s]*/[^{}\s]*)\}", tex_body())
    about = json.loads((REPORT / "original.json").read_text())["_about"]
    return {p.replace("\\_", "_") for p in quoted} | set(re.findall(r"[\w/.-]+/[\w.-]+\.\w+", about))


def test_referenced_files_are_in_the_repository():
    paths = referenced_paths()
    assert "docs/original.md" in paths and "knights/notebooks/ship.py" in paths
    missing = [p for p in sorted(paths) if not any(ROOT.glob(p.replace("vN", "v*").rstrip("/")))]
    assert not missing, f"report.tex or original.json points outside the repository: {missing}"


def results_dir_with_settings(path: Path) -> Path:
    """An empty results folder holding only the code's settings: the code is always
    there (settings.json is its record), the measurements may not be."""
    path.mkdir()
    shutil.copy(REPORT / "results" / "settings.json", path)
    return path


def test_build_without_any_results(tmp_path):
    empty = results_dir_with_settings(tmp_path / "results")
    b = run_build(tmp_path / "out", results_dir=empty, models={"EL": tmp_path / "none", "SL": tmp_path / "none"})
    assert b.placeholders, "missing results must give marked placeholders"
    assert "numBestMae" in b.nums.pending and "numShippedElo" in b.nums.pending
    assert "\\notyet{" in (tmp_path / "out" / "numbers.tex").read_text()


@pytest.mark.parametrize("settings", [None, {"versions": {"EL/v1": {"layers": 3}, "EL/vx": 1}, "engine": []}])
def test_build_without_or_with_broken_settings(tmp_path, settings):
    results = tmp_path / "results"
    results.mkdir()
    if settings is not None:
        (results / "settings.json").write_text(json.dumps(settings))
    b = rb.build(tmp_path / "out", Sources(ROOT, results_dir=results))
    assert not b.errors, b.errors
    assert "numMateScore" in b.nums.pending
    assert "settings.json" in (tmp_path / "out" / "tables" / "opening.tex").read_text()


def test_build_with_malformed_results(tmp_path):
    bad = results_dir_with_settings(tmp_path / "results")
    (bad / "elo.json").write_text("{not json")
    (bad / "networks.json").write_text(json.dumps({"evaluation": [{"name": 3, "mae": "x"}], "move_networks": 5}))
    (bad / "ensemble.json").write_text(json.dumps({"members": {"knn": 7}, "blends": [],
                                                   "k_sweep": {"ks": [1, 2], "mae": ["a", None]}}))
    (bad / "bench.json").write_text(json.dumps({"benchmarks": {"decision": {"rate": "fast"}, "soak": 3}}))
    (bad / "training_runs.json").write_text("[1, 2]")
    (bad / "quality.json").write_text(json.dumps({"players": {"x": 1}}))
    run_build(tmp_path / "out", results_dir=bad)


# -- results in their producers' shapes ------------------------------------------------------------
def fake_results(root: Path, settings: dict) -> tuple[Path, dict]:
    """Small results files shaped like knights results / ship-models / knights.evaluate.train_democracy /
    strength / quality / bench write them, EL + SL metadata for every version, and
    ``settings`` as knights settings writes it."""
    res, el, sl = root / "results", root / "models_EL", root / "models_SL"
    for d in (res, el, sl):
        d.mkdir(parents=True)
    (res / "settings.json").write_text(json.dumps(settings))
    numbers = {f: [int(n.split("/v")[1]) for n in settings["versions"] if n.startswith(f"{f}/")] for f in ("EL", "SL")}
    metric = {"mae": 1.5, "median_ae": 0.9, "sign_agreement": 0.8, "rows": 1000}
    evaluation = [{"name": "material", "kind": "baseline", **metric, "mae": 2.5},
                  {"name": "stockfish depth 1", "kind": "baseline", "seconds": 12.0, **metric, "mae": 0.9}]
    runs = {}
    for v in numbers["EL"]:
        h = {"train_loss": [3.0, 2.0, 1.8], "val_loss": [2.9, 2.1, 1.9], "epoch_seconds": [10, 10, 10],
             "rows_per_second": [5000.0, 5100.0, 5200.0], "device": "cpu"}
        data = {k: {"folder": "data/full", "letters": s, "chunks": 26, "rows": 100_000,
                    "generator": {"stockfish": "Stockfish 15.1", "depth": 8}}
                for k, s in (("train", "a-i except every 4th"), ("val", "every 4th except j"), ("test", "j"))}
        meta = {"version": f"EL/v{v}", "parameters": 1000 * v, "quick": False, "history": h, "data": data,
                "test": {**metric, "mae": 2.0 - v / 10}, "train_seconds": 30.0}
        (el / f"v{v}.json").write_text(json.dumps(meta))
        evaluation.append({"name": f"EL/v{v}", "kind": "network", "parameters": 1000 * v, "epochs": 3,
                           "train_rows": 100_000, **metric, "mae": 2.0 - v / 10})
        runs[f"EL/v{v}"] = {"version": f"EL/v{v}", "parameters": {"epochs": 3}, "seconds": 30.0 * v, "epochs": 3,
                            "train_rows": 100_000, "rows_per_second": h["rows_per_second"], "device": "cpu",
                            "test": meta["test"]}
    sl_h = {"train_loss": [9.0, 8.0], "val_loss": [9.5, 8.5], "epoch_seconds": [60, 60],
            "rows_per_second": [300.0, 310.0], "device": "cpu"}
    moves = []
    for v in numbers["SL"]:
        test = {"rows": 1000, "rows_with_move": 1000, "legal_share": 0.1 * v, "top1_played": 0.01 * v}
        (sl / f"v{v}.json").write_text(json.dumps({"version": f"SL/v{v}", "parameters": 10_000_000, "quick": False,
                                                   "history": sl_h, "test": test}))
        moves.append({"name": f"SL/v{v}", "kind": "network", "parameters": 10_000_000, "epochs": 2, **test})
        runs[f"SL/v{v}"] = {"version": f"SL/v{v}", "seconds": 120.0, "epochs": 2, "train_rows": 35_000,
                            "rows_per_second": sl_h["rows_per_second"], "device": "cpu", "test": test}
    (res / "networks.json").write_text(json.dumps(
        {"data": {"folder": "data/full", "test_letters": "j", "rows": 1000}, "evaluation": evaluation, "seconds": 90.0,
         "move_networks": moves, "best": {"name": "EL/v8", "mae": 1.2, "vs_material": 0.5}}))
    (res / "training_runs.json").write_text(json.dumps(runs))
    split = {"val": metric, "test": metric}
    members = {"EL/v8": {"kind": "network", **split, "ms_per_decision": 1.0, "mb": 1.7}}
    for name in ("knn", "random_forest", "svr", "linear_svr", "linear"):
        members[name] = {"kind": "learner", **split, "ms_per_decision": 2.0, "mb": 3.0,
                         "fit": {"train_rows": 20_000, "fit_seconds": 4.0}}
    weights = {n: 1 / 6 for n in members}
    blends = {b: {"weights": weights, "how": "x", "val": {**metric, "mae": val}, "test": metric, "ms_per_decision": 9.0,
                  "mb": 12.0, "members": list(members)}
              for b, val in (("equal", 1.6), ("original", 1.55), ("fitted", 1.5))}
    (res / "ensemble.json").write_text(json.dumps({
        "generated": "2026-01-01T00:00:00", "quick": False, "data": {"test": {"rows": 1000}, "val": {"rows": 900}},
        "networks": ["EL/v8"],
        "k_sweep": {"ks": list(range(1, 11)), "mae": [2 - k / 20 + (k / 30) ** 2 for k in range(1, 11)],
                    "best_k": 7, "train_rows": 20_000, "val_rows": 5000, "seconds": 3.0},
        "members": members, "blends": blends,
        "shipped": {"blend": "fitted", "load_seconds": 0.2, "ms_per_decision": 9.0, "mb": 12.0,
                    "budgets": {"ms_per_decision": 25.0, "mb": 30.0, "load_seconds": 3.0}},
        "total_seconds": 600.0}))
    vs = {"score": 0.8, "games": 20, "wins": 15, "draws": 2, "losses": 3, "wins_by_mate": 12}
    players = [
        {"player": "sf-elo:1350", "rating": 1350.0, "se": 0, "low": 1350.0, "high": 1350.0, "games": 40, "score": 30,
         "anchor": True, "relative": False, "label": "sf-elo:1350", "kind": "anchor", "shipped": False,
         "score_rate": 0.75, "vs": {}},
        {"player": "ours:default", "rating": 900.0, "se": 40, "low": 820.0, "high": 980.0, "games": 60, "score": 45,
         "anchor": False, "relative": False, "label": "EL/v8 (one ply, stochastic) [shipped bot]", "kind": "ours",
         "shipped": True, "score_rate": 0.75, "vs": {"random": vs, "greedy": vs, "sf-elo:1350": {**vs, "score": 0.1}}},
        {"player": "ours:default+threats", "rating": 880.0, "se": 50, "low": 780.0, "high": 980.0, "games": 40,
         "score": 28, "anchor": False, "relative": False, "label": "EL/v8+threats (one ply, stochastic)",
         "kind": "ours", "shipped": False, "score_rate": 0.7,
         "vs": {"greedy": vs, "sf-elo:1350": {**vs, "score": 0.05}}},
        {"player": "random", "rating": 300.0, "se": 50, "low": 200.0, "high": 400.0, "games": 40, "score": 5,
         "anchor": False, "relative": False, "label": "random", "kind": "opponent", "shipped": False,
         "score_rate": 0.1, "vs": {}},
        {"player": "greedy", "rating": 650.0, "se": 60, "low": 530.0, "high": 770.0, "games": 60, "score": 25,
         "anchor": False, "relative": False, "label": "greedy", "kind": "opponent", "shipped": False,
         "score_rate": 0.42, "vs": {}},
        *({"player": f"ours:EL/v{v}", "rating": 600.0 + 50 * v, "se": 80, "low": 440.0 + 50 * v,
           "high": 760.0 + 50 * v, "games": 40, "score": 15, "anchor": False, "relative": False,
           "label": f"EL/v{v} (one ply, stochastic)", "kind": "ours", "shipped": False, "score_rate": 0.375,
           "vs": {"greedy": vs, "random": vs}} for v in (1, 2)),
    ]
    (res / "dataset_more.json").write_text(json.dumps({
        "generated": "2026-01-01T00:00:00", "positions_kept": 9_000, "positions_played": 10_000,
        "dropped": {"repeated": 1_000},
        "styles": {"openings": {"rows": 4_000, "games": 40, "seconds": 20.0},
                   "odds": {"rows": 6_000, "games": 60, "seconds": 30.0}},
        "depth": 8, "workers": 2, "seconds_all_runs": 50.0, "worker_seconds_all_runs": 100.0,
        "positions_per_worker_second": 100.0, "seconds_play": 50.0, "seconds_combine": 5.0, "excluded": {}}))
    (res / "elo.json").write_text(json.dumps({
        "generated": "2026-01-01T00:00:00", "method": "maximum likelihood; 95% interval = rating +- 1.96 se",
        "anchors": {"sf-elo:1350": 1350.0}, "games": 200, "opponents": ["random", "greedy", "sf-elo:1350"],
        "players": players, "targets": [{"player": "ours:default", "opponent": "greedy", "what": "score >= 0.75",
                                         "min_score": 0.75, "games": 20, "score": 0.8, "mate_share": 0.6,
                                         "status": "PASS"}],
        "settings": {"max_plies": 300}, "seconds_games": 900.0, "seconds_quality": 100.0, "workers": 2}))
    total = {"games": 10, "moves": 400, "acpl": 120.0, "accuracy": 70.5, "inaccuracies": 30, "mistakes": 12,
             "blunders": 9, "blunders_per_game": 0.9}
    (res / "quality.json").write_text(json.dumps({"depth": 10, "method": "x", "games": 10,
                                                  "players": {"ours:default": total, "random": total},
                                                  "pairings": [], "per_game": []}))
    bench = {}
    for name in rb.sources.BENCH_ORDER:
        bench[name] = {"name": name, "status": "PASS", "unit": "rows/s", "rate": 1000.0, "baseline_rate": 100.0,
                       "ratio": 10.0, "metric": "ratio", "target": 5.0, "passed": True, "baseline": "row by row",
                       "details": {"bench_seconds": 5.0}, "quick": False, "machine": {"cpu_count": 2}}
    bench["decision"].update(unit="decisions/s", details={"ms_per_decision": 1.5, "baseline_ms_per_decision": 15.0,
                                                         "legal_moves_mean": 33.1})
    bench["ensemble_decision"].update(unit="decisions/s", details={"ms_per_decision": 9.0,
                                                                  "network_ms_per_decision": 1.5})
    bench["ensemble_load"]["details"] = {"seconds": 0.2}
    bench["decision_ens"] = {"name": "decision_ens", "status": "SKIP", "unit": "decisions/s", "rate": None,
                             "baseline_rate": None, "ratio": None, "metric": "ratio", "target": 8.0,
                             "details": {"reason": "the democracy ensemble is not shipped yet"}}
    bench["soak"].update(unit="games", rate=500.0, baseline_rate=500.0, ratio=1.0, target=1.0, details={
        "games": 500, "plies": 40_000, "illegal": 0, "errors": 0, "capped": 3,
        "vs_random": {"win": 200, "draw": 30, "loss": 0, "unfinished": 20},
        "self_play": {"1-0": 100, "0-1": 90, "1/2-1/2": 60, "*": 0}, "ms_per_ply": 2.5})
    search = {"mean_depth": 4.5, "positions": 12, "seconds_per_position": 2.0, "eval_share_of_time": 0.7,
              "mean_batch": 23, "evaluator": "EL/v10"}
    bench["search_nodes"].update(unit="nodes/s", rate=3600.0, baseline_rate=240_000.0, ratio=0.015, target=0.0,
                                 details=search)
    bench["search_evals"].update(unit="positions/s", rate=9600.0, baseline_rate=17_500.0, ratio=0.55, target=0.5,
                                 details=search)
    bench["uci_soak_1s+0s"] = {**bench["soak"], "name": "uci_soak_1s+0s", "rate": 100.0, "baseline_rate": 100.0,
                               "details": {"games": 100, "plies": 9000, "illegal": 0, "errors": 0, "time_losses": 0,
                                           "clock": "1s+0s", "least_left_ms": 90}}
    (res / "bench.json").write_text(json.dumps({"benchmarks": bench}))
    (res / "dataset.json").write_text(json.dumps({"rows": 1_000_000, "games": 12_000, "seconds": 20_000.0,
                                                  "workers": 2, "stockfish": "Stockfish 15.1",
                                                  "recipe": {"seed": 2024, "depth": 8, "max_plies": 300}}))
    stats = rb.datastats.compute(ROOT / "data" / "sample")
    (res / "data_stats.json").write_text(json.dumps({**stats, "folder": "data/sample"}))
    # the independent sets and the search's matches as their producers wrote them (every
    # position is re-evaluated by the build, so the best network's real weights come too)
    for name in ("independent.json", "search_strength.json"):
        shutil.copy(REPORT / "results" / name, res / name)
    best = rb.sources.best_network_independent(Sources(ROOT))
    for suffix in (".pt", ".json"):
        shutil.copy(ROOT / "models_EL" / f"v{best.removeprefix('EL/v')}{suffix}", el)
    return res, {"EL": el, "SL": sl}


@pytest.mark.slow
def test_build_with_results_in_producer_shapes(tmp_path, live_settings):
    res, models = fake_results(tmp_path / "in", live_settings)
    b = run_build(tmp_path / "out", results_dir=res, models=models)
    assert not b.unmeasured(), f"unmeasured despite results: {b.unmeasured()}"
    assert not b.contradictions, b.contradictions
    text = (tmp_path / "out" / "numbers.tex").read_text()
    for macro in ("numBestMae", "numMaterialMae", "numBestK", "numShippedElo", "numQualityAccuracy",
                  "numDecisionRatio", "numDecisionMs", "numSoakClean", "numEnsembleDecisionMs", "numShipSeconds",
                  "numBestLegalShare", "numEloLevel"):
        line = next(ln for ln in text.splitlines() if ln.startswith(f"\\newcommand{{\\{macro}}}"))
        assert "notyet" not in line, line
    for table in ("networks", "el_versions", "sl_versions", "training_runs"):
        assert "\\pending" not in (tmp_path / "out" / "tables" / f"{table}.tex").read_text(), table


# -- the .tex itself -----------------------------------------------------------------------------
def test_no_hand_typed_numbers():
    body = tex_body().split("\\begin{document}", 1)[1]
    # the references cite years and pages: facts about the cited works, not results
    body = re.sub(r"\\begin\{thebibliography\}.*?\\end\{thebibliography\}", "", body, flags=re.S)
    body = re.sub(r"\\(label|ref|input|includegraphics|cmd|texttt|cite|url)(\[[^\]]*\])?\{[^}]*\}", "", body)
    body = re.sub(r"\[[^\]]*\]", "", body)              # optional arguments: widths, placements, V1 items
    body = re.sub(r"\b(V\d+|EL/v\d+|SL/v\d+|L1)\b", "", body)  # names, not numbers
    body = body.replace("\\itemsep0pt", "")
    digits = [ln.strip() for ln in body.splitlines() if re.search(r"\d", ln)]
    assert not digits, f"numbers typed into report.tex (use a \\num... macro): {digits}"


# -- strict builds ---------------------------------------------------------------------------------
def test_strict_refuses_every_unmeasured_value(tmp_path, capsys):
    empty = results_dir_with_settings(tmp_path / "results")
    none = tmp_path / "none"
    code = rb.main(["--strict", "--quiet", "--out", str(tmp_path / "out"), "--results", str(empty),
                    "--models-el", str(none), "--models-sl", str(none)])
    err = capsys.readouterr().err
    assert code == 1
    assert "report/build.py --strict" in err and "\\numBestMae (numbers.tex)" in err
    assert "tables/networks.tex: waiting for" in err and "figures/elo.pdf: waiting for" in err
    # the same build without --strict is a draft: it succeeds and says what is missing
    assert rb.main(["--out", str(tmp_path / "draft"), "--results", str(empty), "--models-el", str(none),
                    "--models-sl", str(none)]) == 0
    assert "draft:" in capsys.readouterr().out


@pytest.mark.slow
def test_strict_names_a_single_unmeasured_cell_and_a_contradiction(tmp_path, live_settings):
    res, models = fake_results(tmp_path / "in", live_settings)
    networks = json.loads((res / "networks.json").read_text())
    networks["evaluation"][3]["median_ae"] = None          # one cell of one row
    (res / "networks.json").write_text(json.dumps(networks))
    ensemble = json.loads((res / "ensemble.json").read_text())
    ensemble["blends"]["original"]["val"] = {**ensemble["blends"]["original"]["val"], "mae": 0.1}
    (res / "ensemble.json").write_text(json.dumps(ensemble))  # validation now prefers another blend
    b = rb.build(tmp_path / "out", Sources(ROOT, results_dir=res, models=models))
    row = networks["evaluation"][3]["name"]
    assert b.cells == [f"tables/networks.tex: {row}"], b.cells
    assert any("validation chooses 'original'" in c for c in b.contradictions), b.contradictions
    problems = b.problems()
    assert any(p.startswith(f"tables/networks.tex: {row}") for p in problems)
    assert "numPendingCount" in b.nums.values and b.nums.values["numPendingCount"] != "0"


@pytest.mark.slow
def test_strict_passes_on_the_committed_results(tmp_path, capsys):
    code = rb.main(["--strict", "--out", str(tmp_path)])
    assert code == 0, capsys.readouterr().err
    assert (tmp_path / "numbers.tex").is_file() and (tmp_path / "tables" / "provenance.tex").is_file()
    assert (tmp_path / "figures" / "predicted.pdf").read_bytes()[:5] == b"%PDF-"
    assert "\\newcommand{\\numPendingCount}{0}" in (tmp_path / "numbers.tex").read_text()


def test_benchmarks_are_judged_in_the_unit_of_their_target():
    def entry(**kw):
        base = {"name": "x", "status": "PASS", "unit": "rows/s", "rate": 100.0, "baseline_rate": 10.0, "ratio": 10.0,
                "metric": "ratio", "target": 5.0, "quick": False, "details": {}, "baseline": "b"}
        return {**base, **kw}

    S = rb.sources
    ratio = entry()
    assert S.bench_kind(ratio) == "ratio" and S.bench_measure(ratio) == (10.0, 5.0) and S.bench_met(ratio)
    # a rate of decisions whose target is a time: judged as milliseconds a decision, at most the target
    decision = entry(unit="decisions/s", metric="rate", rate=400.0, target=1000 / 3)
    assert S.bench_kind(decision) == "time"
    ms, target_ms = S.bench_measure(decision)
    assert abs(ms - 2.5) < 1e-9 and abs(target_ms - 3.0) < 1e-9 and S.bench_met(decision) is True
    assert S.bench_met(entry(unit="decisions/s", metric="rate", rate=200.0, target=1000 / 3)) is False
    assert S.bench_kind(entry(unit="loads/s", metric="rate", rate=3.0, target=1 / 3)) == "time"
    assert S.bench_kind(entry(metric="ratio", target=0.0)) == "info"
    assert S.bench_met(entry(metric="ratio", target=0.0)) is None
    games = entry(unit="games", rate=99.0, baseline_rate=100.0)
    assert S.bench_kind(games) == "count" and S.bench_met(games) is False
    # a recorded PASS that the figures deny is flagged in the table
    table = rb.tables.bench([entry(name="bad", ratio=2.0)], "", ())
    assert "PASS?" in table


def test_tex_helpers_examples():
    assert doctest.testmod(tex).failed == 0


# -- the best network's predictions, example positions ----------------------------------------------
@pytest.mark.slow
def test_predictions_reproduce_the_recorded_mae(tmp_path):
    src = Sources(ROOT)
    best = rb.sources.best_network_independent(src)
    assert best, "independent.json names no network measured on every set"
    result = predictions.compute(ROOT, ROOT / "models_EL", best, cache_dir=tmp_path)
    recorded = {st["name"]: next(r["mae"] for r in st["evaluation"] if r["name"] == best)
                for st in rb.sources.independent_sets(src)}
    assert {st["name"] for st in result["sets"]} == set(recorded)
    for st in result["sets"]:
        assert abs(predictions.mae(st) - recorded[st["name"]]) < 1e-3, st["name"]
        assert len(st["fens"]) == len(st["target"])
    # the cache gives back the same arrays
    predictions._MEMORY.clear()
    again = predictions.compute(ROOT, ROOT / "models_EL", best, cache_dir=tmp_path)
    assert all((a["network"] == b["network"]).all() for a, b in zip(result["sets"], again["sets"], strict=True))
    chosen = predictions.examples(result)
    assert [e["set"] for e in chosen] == ["games", "games", "tactics", "endgames"]
    for e in chosen:
        assert abs(e["target"]) < predictions.MATE_LIMIT
    tactics = next(st for st in result["sets"] if st["name"] == "tactics")
    ok = abs(tactics["target"]) < predictions.MATE_LIMIT
    worst = float(abs(tactics["network"][ok] - tactics["target"][ok]).max())
    assert abs(abs(chosen[2]["network"] - chosen[2]["target"]) - worst) < 1e-5
    close = chosen[0]
    assert abs(close["network"] - close["target"]) <= predictions.CLOSE


def test_predictions_say_what_is_missing(tmp_path):
    with pytest.raises(predictions.Unavailable, match="no independent sets"):
        predictions.compute(tmp_path, tmp_path, "EL/v10")
    (tmp_path / "data" / "independent").mkdir(parents=True)
    (tmp_path / "data" / "independent" / "games.csv").write_text("board,cp\n")
    with pytest.raises(predictions.Unavailable, match="no weights for EL/v10"):
        predictions.compute(tmp_path, tmp_path, "EL/v10")


# -- README's generated block ----------------------------------------------------------------------
def test_readme_block_is_what_the_generator_writes_now():
    committed = readme.current((ROOT / "README.md").read_text())
    assert committed is not None, "README.md has no results block: run `python report/build.py --readme`"
    assert committed == readme.block(Sources(ROOT)), \
        "README.md's results block is stale: run `python report/build.py --readme`"


def test_readme_block_goes_after_the_opening_commands_and_is_replaced_in_place(tmp_path):
    text = "# T\n\n```sh\nmake play\nmake test\n```\n\nMore.\n"
    first = readme.place(text, readme.BEGIN + "\nA\n" + readme.END)
    assert first.index("make test") < first.index("A") < first.index("More.")
    second = readme.place(first, readme.BEGIN + "\nB\n" + readme.END)
    assert "A" not in second.replace("make", "") and second.count(readme.END) == 1 and "B" in second
    with pytest.raises(readme.ReadmeError, match="no fenced block"):
        readme.place("# nothing to put it after\n", "x")


def test_readme_block_reports_what_is_not_measured(tmp_path):
    empty = results_dir_with_settings(tmp_path / "results")
    text = readme.block(Sources(ROOT, results_dir=empty, models={"EL": tmp_path / "n", "SL": tmp_path / "n"}))
    assert text.startswith(readme.BEGIN) and text.endswith(readme.END)
    assert readme.NOT_YET in text and "| `make data` | not measured yet |" in text


# -- the PDF (only where LaTeX is installed) ------------------------------------------------------
def test_pdf_check_finds_missing_sections_and_placeholders():
    titles = check_pdf.section_titles(TEX.read_text())
    assert "Independent test sets" in titles and "Search" in titles and "Limitations" in titles
    assert "References" in titles
    assert check_pdf.problems(" ".join(titles), titles) == []
    found = check_pdf.problems(" ".join(titles[1:]) + " waiting [n/m: elo.json] and Table ??", titles)
    assert any(titles[0] in p for p in found)
    assert any("'n/m'" in p for p in found) and any("'??'" in p for p in found)


@pytest.mark.slow
def test_pdf_builds_with_sections(tmp_path):
    if not (shutil.which("latexmk") and shutil.which("pdflatex")):
        pytest.skip("latexmk/pdflatex not installed: the PDF is checked by `make report` and .ci/run "
                    "(apt-get install texlive-latex-base texlive-latex-recommended texlive-latex-extra latexmk)")
    b = rb.build(tmp_path, Sources(ROOT))
    assert not b.fallbacks
    shutil.copy(TEX, tmp_path / "report.tex")
    proc = subprocess.run(["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error", "report.tex"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    log = (tmp_path / "report.log").read_text(errors="replace") if (tmp_path / "report.log").exists() else ""
    assert proc.returncode == 0, log[-3000:] or proc.stdout[-3000:]
    pdf = tmp_path / "report.pdf"
    assert pdf.is_file() and pdf.read_bytes()[:5] == b"%PDF-"
    assert "undefined" not in " ".join(ln for ln in log.splitlines() if "Reference" in ln or "Citation" in ln)
    if not shutil.which("pdftotext"):
        pytest.skip("pdftotext (poppler-utils) not installed: the PDF built; its text is not checked")
    text = check_pdf.pdf_text(pdf)
    assert check_pdf.problems(text, check_pdf.section_titles(TEX.read_text())) == []
