#!/usr/bin/env python3
"""Check a built report: every section of report.tex is in the PDF, and nothing unfinished is.

    python report/check_pdf.py [report/report.pdf]

Reads the PDF's text with ``pdftotext`` (poppler-utils) and fails, naming each problem,
when a section title of ``report/report.tex`` (and the references) is missing, when a
placeholder of the build is left (``n/m``, ``not yet measured``), or when LaTeX left an
undefined reference or citation (``??``, ``[?]``). CI runs it after ``make report``;
``tests/test_report.py`` runs it on a PDF it builds.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEX = HERE / "report.tex"
PLACEHOLDERS = ("n/m", "not yet measured", "??", "[?]")
"""What the build's placeholders print (``\\notyet``, ``\\pending``, ``\\notyetlong``) and
what LaTeX prints for an undefined reference (``??``) or citation (``[?]``)."""


def flat(text: str) -> str:
    """Text with typographic apostrophes and runs of white space made plain, for matching."""
    return re.sub(r"\s+", " ", text.replace("\u2019", "'")).strip()


def section_titles(tex: str) -> list[str]:
    """The ``\\section{...}`` titles of a LaTeX source (comments left out), as the PDF prints them."""
    body = re.sub(r"(?<!\\)%.*", "", tex)
    titles = re.findall(r"\\section\*?\{([^}]*)\}", body)
    if "\\begin{thebibliography}" in body:
        titles.append("References")
    return [flat(t.replace("\\&", "&").replace("\\_", "_")) for t in titles]


def pdf_text(pdf: Path) -> str:
    if not shutil.which("pdftotext"):
        raise FileNotFoundError("pdftotext is not installed (Debian: apt-get install poppler-utils)")
    proc = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ValueError(f"pdftotext could not read {pdf}: {proc.stderr.strip().splitlines()[-1:] or proc.returncode}")
    return proc.stdout


def problems(text: str, titles: list[str]) -> list[str]:
    """What is wrong with a report whose text is ``text``: missing titles, leftovers."""
    plain = flat(text)
    out = [f"section {t!r} is not in the PDF" for t in titles if t not in plain]
    for mark in PLACEHOLDERS:
        count = plain.count(mark)
        if count:
            at = plain.index(mark)
            out.append(f"{count} x {mark!r} left in the PDF, first in: ...{plain[max(0, at - 60):at + 20]}...")
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    pdf = Path(args[0]) if args else HERE / "report.pdf"
    if not pdf.is_file():
        print(f"report/check_pdf.py: {pdf} not found (build it with `make report`)", file=sys.stderr)
        return 1
    try:
        text = pdf_text(pdf)
    except (FileNotFoundError, ValueError) as exc:
        print(f"report/check_pdf.py: {exc}", file=sys.stderr)
        return 1
    titles = section_titles(TEX.read_text())
    found = problems(text, titles)
    if found:
        print(f"report/check_pdf.py: {pdf}: {len(found)} problem(s):", file=sys.stderr)
        for line in found:
            print(f"  - {line}", file=sys.stderr)
        return 1
    print(f"{pdf}: {len(titles)} sections, no placeholder left")
    return 0


if __name__ == "__main__":
    sys.exit(main())
