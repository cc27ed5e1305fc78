"""The report: one Jinja2 template filled from the results, strictly.

* On the committed results the template fills, every claim holds and every number sits in a
  sentence that names its model; the committed README block is what the template writes now.
* A missing results file, a missing key, a contradicted claim, a number printed without a
  format and a number in a sentence naming another model each fail the build, naming it.
* No number is typed into the template: outside ``\\VAR{}``/``\\BLOCK{}`` only names, LaTeX
  dimensions and table layout hold digits.
* ``report/results/settings.json`` is what ``knights settings`` writes now; every repository
  path the template names exists.
* The PDF check finds missing sections and a committed PDF whose text differs from a build;
  with LaTeX installed, the PDF built now reads exactly like the committed ``report/report.pdf``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "report"
sys.path.insert(0, str(REPORT))

import check_pdf  # noqa: E402

from reportgen import data, readme, render  # noqa: E402

TEMPLATE = (REPORT / "report.tex.j2").read_text()


def copy_results(tmp_path: Path) -> Path:
    out = tmp_path / "results"
    shutil.copytree(REPORT / "results", out)
    return out


def edit(results: Path, name: str, change) -> None:  # type: ignore[no-untyped-def]
    path = results / name
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def build_problems(results: Path, tmp_path: Path) -> str:
    with pytest.raises(render.BuildError) as err:
        render.build(tmp_path / "out", results=results, draw=False)
    return str(err.value)


# -- the committed state ------------------------------------------------------------------------
def test_the_template_fills_from_the_committed_results(tmp_path):
    tex = render.build(tmp_path / "out", draw=False).read_text()
    assert "\\VAR" not in tex and "\\BLOCK" not in tex
    assert render.model_mismatches(tex) == []
    assert "\\val{EL/v10}" in tex          # model numbers are tagged, so the check has something to check


def test_readme_block_is_what_the_template_writes_now():
    block, problems = render.render(data.load(), "readme.md.j2", tex=False)
    assert not problems
    committed = readme.current((ROOT / "README.md").read_text())
    assert committed == block.strip(), "README.md's results block is stale: run `python report/build.py --readme`"


def test_settings_json_is_what_the_code_says_now():
    from knights.lab import settings

    committed = json.loads((REPORT / "results" / "settings.json").read_text())
    assert committed == settings.collect(), "report/results/settings.json is stale: run `knights settings`"


def test_every_path_the_template_names_exists():
    paths = {p.replace("\\_", "_") for p in re.findall(r"\\(?:cmd|texttt)\{([^{}\s\\]*(?:\\_[^{}\s\\]*)*/[^{}\s]*)\}",
                                                        TEMPLATE)}
    assert "notebooks/inside_the_networks.ipynb" in paths
    # the democracy study's results file is named (as the place its final-set experiment is reported) before it exists
    optional = {"report/results/democracy.json"}
    missing = [p for p in sorted(paths - optional) if not any(ROOT.glob(p.replace("vN", "v*").rstrip("/")))]
    # folders a make target generates (data/full, data/more) are ignored by git and absent from
    # a fresh clone: they must be ignored, not committed; every other path must exist
    def ignored(path: str) -> bool:      # as a file or as a folder (a missing folder matches "data/full/" only so)
        return any(subprocess.run(["git", "check-ignore", "-q", form], check=False, cwd=ROOT).returncode == 0
                   for form in (path.rstrip("/"), path.rstrip("/") + "/"))

    generated = [p for p in missing if ignored(p)]
    assert not sorted(set(missing) - set(generated)), missing


def test_no_number_is_typed_into_the_template():
    body = TEMPLATE[TEMPLATE.index("\\begin{document}"):TEMPLATE.index("\\begin{thebibliography}")]
    body = re.sub(r"(?m)^\s*%.*$", "", body)
    body = re.sub(r"\\(?:VAR|BLOCK)\{(?:[^{}]|\{[^{}]*\})*\}", "", body)
    allowed = [r"(?:EL|SL)/v\d+", r"\bV\d+\b", r"\bL1\b", r"95\\%", r"\d+(?:\.\d+)?(?:cm|pt|em)",
               r"[\d.]+\\linewidth", r"\\begin\{tabular\}\{[^\n]*", r"\\multicolumn\{\d+\}",
               r"\\cmidrule\([lr]*\)\{\d+-\d+\}", r"\\itemsep0pt", r"\bsound[23]\b",
               r"\bRQ[12]\b", r"SHA-256", r"(?:sparse\+quiesce |``)depth 1\b"]        # names, not measurements
    for pattern in allowed:
        body = re.sub(pattern, "", body)
    typed = [m.group() for m in re.finditer(r".{0,30}\d.{0,10}", body)]
    assert not typed, f"numbers typed into report.tex.j2 (take them from a results file): {typed}"


# -- what the strict build refuses --------------------------------------------------------------
def test_a_missing_results_file_is_named(tmp_path):
    results = copy_results(tmp_path)
    (results / "ablation.json").unlink()
    assert "results/ablation.json is missing" in build_problems(results, tmp_path)


def test_a_missing_value_is_named_with_its_file_and_key(tmp_path):
    results = copy_results(tmp_path)
    edit(results, "dataset.json", lambda d: d.pop("games"))
    assert "results/dataset.json: 'games' is not measured" in build_problems(results, tmp_path)


def test_a_missing_search_value_is_named(tmp_path):
    results = copy_results(tmp_path)

    def drop_rating(doc: dict) -> None:
        runs = doc["runs"]
        first = next(iter(runs.values())) if isinstance(runs, dict) else runs[0]
        first.pop("rating")
    edit(results, "search_strength.json", drop_rating)
    assert "search_strength.json: runs." in build_problems(results, tmp_path)


def test_a_contradicted_claim_fails(tmp_path):
    results = copy_results(tmp_path)

    def more_data_hurts(doc: dict) -> None:
        doc["variants"]["quiet_wp_more"]["sets"]["games"]["quiet_level_mae"] = 9.0
    edit(results, "ablation.json", more_data_hurts)
    assert "contradicted: the text says \"games' quiet-level error fell at each step of the data curve\"" in \
        build_problems(results, tmp_path)


def test_a_number_from_another_model_is_refused(tmp_path):
    """The defect this check exists for: an abstract that named EL/v10 and gave EL/v11's errors."""
    (tmp_path / "t.tex.j2").write_text(
        "The best network, \\VAR{best}, errs by \\VAR{by_model['EL/v11'].games.mae|f} pawns on games.\n\n"
        "EL/v11 errs by \\VAR{by_model['EL/v11'].games.mae|f} pawns.\n")
    ctx = {**data.load(), "best": "EL/v10"}
    text, _ = render.render(ctx, "t.tex.j2", folder=tmp_path)
    problems = render.model_mismatches(text)
    assert len(problems) == 1 and "is EL/v11's, in a sentence that names EL/v10 only" in problems[0]


def test_a_number_printed_without_a_format_is_refused(tmp_path):
    (tmp_path / "t.tex.j2").write_text("EL/v10 errs by \\VAR{by_model['EL/v10'].games.mae}.\n")
    with pytest.raises(render.BuildError, match="without a format filter"):
        render.render(data.load(), "t.tex.j2", folder=tmp_path)


def test_an_undefined_name_is_refused(tmp_path):
    (tmp_path / "t.tex.j2").write_text("\\VAR{no_such_result.x}\n")
    with pytest.raises(render.BuildError, match="no_such_result"):
        render.render(data.load(), "t.tex.j2", folder=tmp_path)


def test_strings_from_results_are_escaped_for_latex(tmp_path):
    (tmp_path / "t.tex.j2").write_text("\\VAR{s}\n")
    text, _ = render.render({"s": "a_b & 5% #1"}, "t.tex.j2", folder=tmp_path)
    assert text.strip() == r"a\_b \& 5\% \#1"


# -- the PDF ------------------------------------------------------------------------------------
def test_pdf_check_names_missing_sections_and_leftovers():
    titles = check_pdf.section_titles(TEMPLATE)
    assert "Reproducibility" in titles and "References" in titles
    found = check_pdf.problems("Objective ?? Data", ["Objective", "Reproducibility"])
    assert any("'Reproducibility'" in f for f in found) and any("'??'" in f for f in found)


def test_pdf_text_difference_ignores_layout_not_words():
    assert check_pdf.text_difference("EL/v10 errs\n by 1.48\x0c pawns", "EL/v10  errs by 1.48 pawns") == []
    diff = check_pdf.text_difference("EL/v10 errs by 1.48 pawns", "EL/v10 errs by 1.49 pawns")
    assert diff and "'1.48'" in diff[0] and "'1.49'" in diff[0]


@pytest.mark.slow
@pytest.mark.skipif(not (shutil.which("latexmk") and shutil.which("pdftotext")), reason="needs latexmk and pdftotext")
def test_the_committed_pdf_reads_like_a_build_now(tmp_path):
    out = tmp_path / "build"
    render.build(out)
    subprocess.run(["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error", "report.tex"], cwd=out,
                   check=True, capture_output=True)
    built = check_pdf.pdf_text(out / "report.pdf")
    assert not check_pdf.problems(built, check_pdf.section_titles(TEMPLATE))
    committed = check_pdf.pdf_text(REPORT / "report.pdf")
    diff = check_pdf.text_difference(committed, built)
    assert not diff, "report/report.pdf is stale: run `make report` and commit it\n" + "\n".join(diff)


def test_the_seed_spread_and_the_soak_fill_their_parts_when_measured(tmp_path):
    """seeds.json (make seeds) and soak.json (make soak) are optional: the report says a spread was
    not measured until it is, then shows it, calls ties, and lists both commands' times."""
    results = copy_results(tmp_path)
    for name in ("seeds.json", "soak.json"):
        (results / name).unlink(missing_ok=True)
    without = render.build(tmp_path / "a", results=results, draw=False).read_text()
    assert "No seed-to-seed spread was measured" in without and "make seeds" not in without
    spread = {"test_mae": {"min": 0.771, "max": 0.789, "range": 0.018}}
    (results / "seeds.json").write_text(json.dumps({
        "quick": False, "seconds": 5400.0,
        "seeds": {"EL/v10": {"seeds": [{"measured": {"games": {"quiet_level_mae": q}}} for q in (0.912, 0.934, 0.956)],
                             "spread": spread, "seconds": 2400.0}},
        "comparison": {"pairs": [{"from": "EL/v9", "to": "EL/v10", "test_mae": {"label": "tie"}},
                                 {"from": "EL/v10", "to": "EL/v11", "test_mae": {"label": "EL/v11 better"}}]}}))
    (results / "soak.json").write_text(json.dumps({
        "clocks": ["3s+0s"], "opponent": "sf-elo:1350",
        "rows": [{"seconds": 60.0, "route": "uci", "clock": "3s+0s", "games": 125, "time_losses": 2},
                 {"seconds": 30.0, "route": "homemade", "clock": "3s+0s", "games": 125, "time_losses": 0}],
        "totals": {"games": 250, "illegal": 0, "errors": 1, "time_losses": 2}}))
    text = render.build(tmp_path / "b", results=results, draw=False).read_text()
    assert "No seed-to-seed spread" not in text
    assert "\\val{EL/v10}{0.018}" in text and "are ties on the\ntest MAE, the steps to EL/v10." in text
    assert "\\val{EL/v10}{0.912} & \\val{EL/v10}{0.956}" in text     # the games quiet-level range of the seeds
    assert "played 250 games with 0 illegal moves, 1 errors" in text
    assert "2 of the 125 games on the uci route at 3s+0s, none elsewhere" in text
    assert "\\cmd{make seeds} & the seed spread" in text and "90 s" in text and "40 min" in text


def test_a_template_error_names_its_line(tmp_path):
    (tmp_path / "t.tex.j2").write_text("fine\n\\VAR{meta(1)}\n")
    with pytest.raises(render.BuildError, match=r"t.tex.j2 \(line 2\): TypeError"):
        render.render(data.load(), "t.tex.j2", folder=tmp_path)


def test_the_examples_in_the_machinery_hold():
    import doctest

    for module in (data, render, check_pdf):
        failed, tried = doctest.testmod(module)
        assert tried and not failed, module.__name__


def test_the_depth_figure_draws_stockfish_by_depth_against_the_one_ply_bot(tmp_path):
    from reportgen import figures

    def share(best, quiet):
        return {"best_move_share": best, "mean_cp_loss": 10.0,
                "by_best_kind": {"capture": {"best_move_share": 0.9, "positions": 2},
                                 "quiet": {"best_move_share": quiet, "positions": 8}}}

    quality = {"stockfish_by_depth": [{"depth": d, **share(0.4 + 0.05 * d, 0.3 + 0.05 * d)} for d in (1, 2, 3)],
               "by_best_kind": {"bot": {"capture": {"best_move_share": 1.0, "positions": 2},
                                        "quiet": {"best_move_share": 0.25, "positions": 8}}}}
    out = tmp_path / "depth.pdf"
    figures.move_depth(quality, "bot", out)
    assert out.read_bytes().startswith(b"%PDF") and out.stat().st_size > 1000
    with pytest.raises(KeyError):
        figures.move_depth(quality, "a player not measured", tmp_path / "none.pdf")
