#!/usr/bin/env python3
"""Check a built report, and that the committed one is what the sources build now.

    python report/check_pdf.py [report/report.pdf] [--committed REV]

Reads the PDF's text with ``pdftotext`` (poppler-utils) and fails, naming each problem, when
a section title of ``report/report.tex.j2`` is missing or LaTeX left an undefined reference
(``??``) or citation (``[?]``). With ``--committed REV`` (CI passes ``HEAD`` after
``make report`` has rebuilt the PDF) it also compares the text of ``report/report.pdf`` as
committed at REV with the PDF just built: not the bytes, which carry dates and font ids, but
the words, white space normalised. A difference means someone changed a results file or the
template without rebuilding and committing the PDF.
"""

from __future__ import annotations

import argparse
import difflib
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEMPLATE = HERE / "report.tex.j2"
LEFTOVERS = ("??", "[?]")


def flat(text: str) -> str:
    """Text with typographic apostrophes, ligatures and runs of white space made plain."""
    text = text.replace("\u2019", "'").replace("\ufb01", "fi").replace("\ufb02", "fl").replace("\x0c", " ")
    return re.sub(r"\s+", " ", text).strip()


def section_titles(tex: str) -> list[str]:
    """The fixed ``\\section{...}`` titles of the template (comments left out)."""
    body = re.sub(r"(?<!\\)%.*", "", tex)
    titles = [t for t in re.findall(r"\\section\*?\{([^}]*)\}", body) if "\\VAR" not in t]
    return [flat(t.replace("\\&", "&").replace("\\_", "_")) for t in titles] + ["References"]


def pdf_text(pdf: Path) -> str:
    if not shutil.which("pdftotext"):
        raise FileNotFoundError("pdftotext is not installed (Debian: apt-get install poppler-utils)")
    proc = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ValueError(f"pdftotext could not read {pdf}: {proc.stderr.strip()}")
    return proc.stdout


def problems(text: str, titles: list[str]) -> list[str]:
    plain = flat(text)
    out = [f"section {t!r} is not in the PDF" for t in titles if t not in plain]
    for mark in LEFTOVERS:
        if mark in plain:
            at = plain.index(mark)
            out.append(f"{plain.count(mark)} x {mark!r} in the PDF, first in: ...{plain[max(0, at - 60):at + 20]}...")
    return out


def committed_pdf(rev: str, dest: Path) -> Path | None:
    """``report/report.pdf`` as committed at ``rev``, written to ``dest``; None if absent."""
    proc = subprocess.run(["git", "-C", str(HERE.parent), "show", f"{rev}:report/report.pdf"],
                          capture_output=True, check=False)
    if proc.returncode != 0:
        return None
    dest.write_bytes(proc.stdout)
    return dest


def text_difference(committed: str, built: str) -> list[str]:
    """Where two PDFs' texts differ, word by word (empty when they read the same)."""
    a, b = flat(committed).split(" "), flat(built).split(" ")
    if a == b:
        return []
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            around = " ".join(a[max(0, i1 - 6):i1])
            out.append(f"...{around} [committed: {' '.join(a[i1:i2])!r} | built: {' '.join(b[j1:j2])!r}]")
    return out[:10] + ([f"... and {len(out) - 10} more"] if len(out) > 10 else [])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("pdf", nargs="?", type=Path, default=HERE / "report.pdf")
    p.add_argument("--committed", metavar="REV", help="compare with report/report.pdf as committed at REV")
    args = p.parse_args(argv)
    if not args.pdf.is_file():
        print(f"report/check_pdf.py: {args.pdf} not found (build it with `make report`)", file=sys.stderr)
        return 1
    try:
        text = pdf_text(args.pdf)
        found = problems(text, section_titles(TEMPLATE.read_text()))
        if args.committed:
            with tempfile.TemporaryDirectory() as tmp:
                old = committed_pdf(args.committed, Path(tmp) / "committed.pdf")
                if old is None:
                    found.append(f"report/report.pdf is not committed at {args.committed}")
                else:
                    diff = text_difference(pdf_text(old), text)
                    if diff:
                        found.append(f"the committed report/report.pdf ({args.committed}) does not read like the one "
                                     "the sources build now: run `make report` and commit report/report.pdf")
                        found += [f"  {d}" for d in diff]
    except (FileNotFoundError, ValueError) as exc:
        print(f"report/check_pdf.py: {exc}", file=sys.stderr)
        return 1
    if found:
        print(f"report/check_pdf.py: {args.pdf}: {len(found)} problem(s):", file=sys.stderr)
        for line in found:
            print(f"  - {line}", file=sys.stderr)
        return 1
    print(f"{args.pdf}: every section present, nothing undefined"
          + (f", reads as committed at {args.committed}" if args.committed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
