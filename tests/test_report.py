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
* With LaTeX installed (``latexmk`` on PATH), the PDF builds and has the expected
  section titles (checked with ``pdftotext`` when poppler-utils is installed).
  ``make test`` does not need TeX: without it that part is skipped, saying why.
"""

from __future__ import annotations

import ast
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

from reportgen import build as rb  # noqa: E402
from reportgen.sources import Sources  # noqa: E402


@pytest.fixture(scope="module")
def live_settings() -> dict:
    """What ``knights settings`` writes now, from the imported code."""
    from knights.play import settings

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
    assert "docs/original.md" in paths and "knights/learn/pipeline.py" in paths
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
        {"data": {"folder": "data/full", "test_letters": "j", "rows": 1000}, "evaluation": evaluation,
         "move_networks": moves, "best": {"name": "EL/v8", "mae": 1.2, "vs_material": 0.5}}))
    (res / "training_runs.json").write_text(json.dumps(runs))
    split = {"val": metric, "test": metric}
    members = {"EL/v8": {"kind": "network", **split, "ms_per_decision": 1.0, "mb": 1.7}}
    for name in ("knn", "random_forest", "svr", "linear_svr", "linear"):
        members[name] = {"kind": "learner", **split, "ms_per_decision": 2.0, "mb": 3.0,
                         "fit": {"train_rows": 20_000, "fit_seconds": 4.0}}
    weights = {n: 1 / 6 for n in members}
    blends = {b: {"weights": weights, "how": "x", **split, "ms_per_decision": 9.0, "mb": 12.0, "members": list(members)}
              for b in ("equal", "original", "fitted")}
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
        {"player": "random", "rating": 300.0, "se": 50, "low": 200.0, "high": 400.0, "games": 40, "score": 5,
         "anchor": False, "relative": False, "label": "random", "kind": "opponent", "shipped": False,
         "score_rate": 0.1, "vs": {}},
    ]
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
    (res / "bench.json").write_text(json.dumps({"benchmarks": bench}))
    (res / "dataset.json").write_text(json.dumps({"rows": 1_000_000, "games": 12_000, "seconds": 20_000.0,
                                                  "workers": 2, "stockfish": "Stockfish 15.1"}))
    return res, {"EL": el, "SL": sl}


@pytest.mark.slow
def test_build_with_results_in_producer_shapes(tmp_path, live_settings):
    res, models = fake_results(tmp_path / "in", live_settings)
    b = run_build(tmp_path / "out", results_dir=res, models=models)
    assert not b.placeholders, f"placeholders despite results: {b.placeholders}"
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
    body = re.sub(r"\\(label|ref|input|includegraphics|cmd|texttt)(\[[^\]]*\])?\{[^}]*\}", "", body)
    body = re.sub(r"\[[^\]]*\]", "", body)              # optional arguments: widths, placements, V1 items
    body = re.sub(r"\b(V\d+|EL/v\d+|SL/v\d+|L1)\b", "", body)  # names, not numbers
    body = body.replace("\\itemsep0pt", "")
    digits = [ln.strip() for ln in body.splitlines() if re.search(r"\d", ln)]
    assert not digits, f"numbers typed into report.tex (use a \\num... macro): {digits}"


@pytest.mark.slow
def test_cli_writes_into_out(tmp_path):
    assert rb.main(["--out", str(tmp_path), "--quiet"]) == 0
    assert (tmp_path / "numbers.tex").is_file()
    assert (tmp_path / "tables" / "provenance.tex").is_file()


# -- the PDF (only where LaTeX is installed) ------------------------------------------------------
def section_titles() -> list[str]:
    titles = re.findall(r"\\section\{([^}]*)\}", tex_body())
    return [re.sub(r"\s+", " ", t.replace("'", "’")).strip() for t in titles]


@pytest.mark.slow
def test_pdf_builds_with_sections(tmp_path):
    if not (shutil.which("latexmk") and shutil.which("pdflatex")):
        pytest.skip("latexmk/pdflatex not installed: the PDF is checked by `make report` "
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
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    flat = re.sub(r"\s+", " ", text.replace("'", "’"))
    for title in section_titles():
        assert title in flat, f"section {title!r} not found in the PDF"
