"""The report's layout checks and its democracy section.

* ``report/check_pdf.py`` fails a build whose LaTeX log shows an overfull box of more than a few points or a float
  too large for its page, whose PDF has text past a margin or a half-empty page before a section, or whose body
  runs past twelve pages; each is shown on a small document LaTeX builds here, beside a clean one that passes.
* The section "Does the democracy beat its best member?" is rendered from ``report/results/democracy.json`` once
  that file holds the final test set's figures; until then the report says where the experiment is reported, and
  the PDF check does not ask for the section.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "report"
sys.path.insert(0, str(REPORT))

import check_pdf  # noqa: E402

from reportgen import render  # noqa: E402

TEMPLATE = (REPORT / "report.tex.j2").read_text()
HAVE_TEX = all(shutil.which(t) for t in ("pdflatex", "pdftotext", "pdftoppm"))
needs_tex = pytest.mark.skipif(not HAVE_TEX, reason="needs pdflatex, pdftotext and pdftoppm")

PREAMBLE = r"""\documentclass[10pt,a4paper]{article}
\usepackage[margin=2.2cm]{geometry}
\begin{document}
"""
FILL = "A sentence of ordinary words that fills the line and the page below it. " * 12 + "\n\n"


REFERENCES = "\\begin{thebibliography}{9}\\bibitem{a} A. Author. A title. 2024.\\end{thebibliography}\n"


def latex(tmp_path: Path, body: str) -> tuple[Path, str, str]:
    """A small document built with pdflatex: its PDF, its source and its log (references added where the body
    has none, as the report's body ends with them)."""
    tex = PREAMBLE + body + ("" if "thebibliography" in body else REFERENCES) + "\n\\end{document}\n"
    (tmp_path / "doc.tex").write_text(tex)
    subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"], cwd=tmp_path,
                   capture_output=True, check=True)
    return tmp_path / "doc.pdf", tex, (tmp_path / "doc.log").read_text(errors="replace")


def layout(pdf: Path, tex: str) -> list[str]:
    return check_pdf.layout_problems(pdf, tex, ["Limitations", "Results"])


# -- the log ------------------------------------------------------------------------------------------------------
def test_the_log_check_allows_a_hair_and_refuses_more():
    assert check_pdf.log_problems("Overfull \\hbox (0.8pt too wide) in paragraph at lines 1--2\n") == []
    assert check_pdf.log_problems("Overfull \\vbox (3.5pt too high) has occurred while \\output is active\n")
    assert check_pdf.log_problems("LaTeX Warning: Float too large for page by 12.0pt on input line 7.\n")
    assert check_pdf.log_problems("! LaTeX Error: Float(s) lost.\n")
    assert check_pdf.log_warnings("Overfull \\hbox (0.8pt too wide)\nFloat too large for page by 1pt\n") == 2


@needs_tex
def test_an_overfull_line_fails_the_build(tmp_path):
    _, _, log = latex(tmp_path, "\\noindent\\rule{20cm}{1pt}\n\n" + FILL)
    found = check_pdf.log_problems(log)
    assert found and "overfull \\hbox" in found[0]


@needs_tex
def test_a_float_too_large_for_its_page_fails_the_build(tmp_path):
    _, _, log = latex(tmp_path, FILL + "\\begin{figure}[htbp]\\rule{1pt}{40cm}\\caption{tall}\\end{figure}\n" + FILL)
    assert any("Float too large" in p for p in check_pdf.log_problems(log))


# -- the PDF ------------------------------------------------------------------------------------------------------
@needs_tex
def test_a_clean_document_passes(tmp_path):
    pdf, tex, log = latex(tmp_path, "\\section{Results}\n" + FILL * 8 + "\\section{Limitations}\n" + FILL)
    assert check_pdf.log_problems(log) == [] and layout(pdf, tex) == []


@needs_tex
def test_text_past_a_margin_fails_even_without_a_warning(tmp_path):
    # a box LaTeX thinks fits (no overfull warning) whose text it was told to set beyond the right margin
    past = "\\noindent\\makebox[\\textwidth][l]{\\hspace{\\textwidth}\\hspace{1cm}PAST}\n\n"
    pdf, tex, log = latex(tmp_path, FILL + past + FILL)
    assert check_pdf.log_problems(log) == []
    found = layout(pdf, tex)
    assert len(found) == 1 and "past the right margin" in found[0] and "'PAST'" in found[0]


@needs_tex
def test_a_half_empty_page_before_a_section_fails(tmp_path):
    pdf, tex, _ = latex(tmp_path, "\\section{Results}\n" + FILL * 2 + "\\clearpage\n\\section{Limitations}\n" + FILL)
    found = layout(pdf, tex)
    assert len(found) == 1 and found[0].startswith("page 1 is") and "opens a section (2 Limitations)" in found[0]


@needs_tex
def test_a_body_longer_than_twelve_pages_fails(tmp_path):
    pdf, tex, _ = latex(tmp_path, "\\section{Results}\n" + FILL * 120)
    found = layout(pdf, tex)
    assert any(f"more than {check_pdf.MAX_BODY_PAGES}" in p for p in found)


def test_the_committed_pdf_has_no_layout_problem():
    if not HAVE_TEX:
        pytest.skip("needs pdftotext and pdftoppm")
    titles = check_pdf.section_titles(TEMPLATE)
    assert check_pdf.layout_problems(REPORT / "report.pdf", TEMPLATE, titles) == []


# -- the democracy section ----------------------------------------------------------------------------------------
BOT = "bot|judged|equal|pawns|endings"
CHOSEN = "all|judged|fitted|win_probability"


def figures(wp: float, mae: float, level: float) -> dict:
    return {"win_probability_error": wp, "mae": mae, "quiet_level_mae": level,
            "quiet_level_win_probability_error": round(wp * 0.9, 4)}


def paired(d: float, se: float) -> dict:
    return {"difference": d, "standard_error": se, "rows": 5000, "beats_by_more_than_se": -d > se}


def democracy_json(final: bool) -> dict:
    """The democracy study's results file as its module writes it, with or without the final stage."""
    doc: dict = {
        "generated": "2026-12-02T02:00:00+00:00", "command": "python -m knights.arena.democracy_study",
        "selection": {"sets": ["games", "tactics", "endgames"], "rows": 15000, "folds": 5},
        "families": {"all": "all: every network the project ships, the bag and every classical learner",
                     "bot": "the current one-ply bot"},
        "members": {"EL/v25|judged": {"name": "EL/v25+quiesce", "judged": True},
                    "EL/v24|judged": {"name": "EL/v24+quiesce", "judged": True}},
        "ensembles": {CHOSEN: {"family": "all", "mode": "judged", "weighting": "fitted", "space": "win_probability",
                               "members": ["EL/v25", "EL/v24"], "best_member": "EL/v25+quiesce",
                               "best_member_key": "EL/v25|judged"},
                      BOT: {"family": "bot", "mode": "judged", "weighting": "equal", "space": "pawns",
                            "members": ["EL/v24"], "best_member": "EL/v24+quiesce",
                            "best_member_key": "EL/v24|judged"}},
        "choice": {"key": CHOSEN}}
    if final:
        pair = {"reference": "EL/v25+quiesce", "overall": paired(-0.0029, 0.0004),
                "quiet_level": paired(-0.001, 0.0008), "quiet": paired(-0.002, 0.0005)}
        doc["final"] = {
            "set": {"file": "data/final/final.csv", "rows": 5000, "quiet_rows": 3000, "quiet_level_rows": 1500},
            "baselines": {"always level": figures(0.11, 2.5, 0.41), "material": figures(0.14, 2.4, 0.9),
                          "stockfish depth 1": figures(0.05, 1.1, 0.6)},
            "members": {"EL/v25|judged": figures(0.061, 1.2, 0.65), "EL/v24|judged": figures(0.063, 1.25, 0.66)},
            "ensembles": {CHOSEN: {"final": figures(0.0581, 1.15, 0.63)}, BOT: {"final": figures(0.0592, 1.18, 0.64)}},
            "chosen": {"key": CHOSEN, "figures": figures(0.0581, 1.15, 0.63), "best_member_on_final": "EL/v25+quiesce",
                       "paired_wp": {"best member on the selection sets": pair, "best member on the final set": pair,
                                     "the current one-ply bot": {**pair, "reference": "sparse+quiesce",
                                                                 "overall": paired(0.00001, 0.0002)}},
                       "beats_every_shipped_network_overall_and_quiet_level_by_more_than_se": False,
                       "shipped_networks_not_beaten_so": ["shipped network EL/v10"]},
            "bot": {"key": BOT, "figures": figures(0.0592, 1.18, 0.64),
                    "paired_wp": {"best member on the selection sets": {**pair, "reference": "EL/v24+quiesce"}}}}
    return doc


def build_with(tmp_path: Path, doc: dict | None) -> str:
    results = tmp_path / "results"
    shutil.copytree(REPORT / "results", results)
    (results / "democracy.json").unlink(missing_ok=True)
    if doc is not None:
        (results / "democracy.json").write_text(json.dumps(doc))
    return render.build(tmp_path / "out", results=results, draw=False).read_text()


@pytest.mark.parametrize("doc", [None, democracy_json(final=False)], ids=["absent", "choice only"])
def test_without_the_final_figures_the_report_says_where_they_will_be(tmp_path, doc):
    text = build_with(tmp_path, doc)
    assert "Does the democracy beat its best member?" not in text
    assert "is the experiment reported in \\cmd{report/results/democracy.json}" in text
    assert "\\label{tab:democracy}" not in text


def test_with_the_final_figures_the_section_renders_them(tmp_path):
    text = build_with(tmp_path, democracy_json(final=True))
    assert "\\section{Does the democracy beat its best member?}" in text
    assert "0.0581 & 1.15 & 0.63" in text                      # the chosen democracy's row on the final set
    assert "$-0.0029$ $\\pm$ 0.0004 against its best member on the selection sets" in text
    assert "(lower by 7.2 standard errors)" in text                # the gap in standard errors, not a bound
    assert "The fitted weights bought nothing over equal ones" in text
    assert "$+0.0000 \\pm 0.0002$" in text                        # the paired column of the final-set table
    abstract = text.split("\\begin{abstract}")[1].split("\\end{abstract}")[0]
    assert "Yes, by a small margin: on a final test set that no choice was made on, the democracy" in abstract
    assert "0.0029 $\\pm$ 0.0004" in abstract and "always level" in abstract    # with the final-set baselines
    assert "Yes, it does" in text.split("RQ2: Does a democracy beat its best member?")[1][:400]


def test_the_pdf_check_asks_for_the_democracy_section_only_when_it_is_rendered():
    titles = check_pdf.section_titles(TEMPLATE)
    assert "Does the democracy beat its best member?" not in titles
    assert {"Introduction", "Limitations", "Conclusion", "Reproducibility"} <= set(titles)
