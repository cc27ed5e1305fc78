#!/usr/bin/env python3
"""Check a built report, and that the committed one is what the sources build now.

    python report/check_pdf.py [report/report.pdf] [--log report/build/report.log] [--committed REV]

Fails, naming each problem, when

* a section title of ``report/report.tex.j2`` is missing from the PDF's text (``pdftotext``; a section whose
  template line carries ``%# optional`` is rendered only when its results exist) or LaTeX left an undefined
  reference (``??``) or citation (``[?]``);
* the layout is broken, read from the PDF itself: a word past the margins the template's ``geometry`` sets
  (``pdftotext -bbox``), a page but the last less than half full, as before a page that opens a section (its lowest
  ink, from ``pdftoppm``), or a body (everything before the references) of more than ``MAX_BODY_PAGES`` pages;
* with ``--log``, LaTeX's log shows an overfull box of more than ``MAX_OVERFULL_PT`` points, a float too large for
  its page or a lost float (``make report`` passes the log of the build it just ran);
* with ``--committed REV`` (CI passes ``HEAD`` after ``make report`` has rebuilt the PDF), the text of
  ``report/report.pdf`` as committed at REV differs from the PDF just built: not the bytes, which carry dates and
  font ids, but the words, white space normalised. A difference means someone changed a results file or the
  template without rebuilding and committing the PDF.
"""

from __future__ import annotations

import argparse
import difflib
import html
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEMPLATE = HERE / "report.tex.j2"
LEFTOVERS = ("??", "[?]")
MAX_OVERFULL_PT = 2.0
"""An overfull box up to this many points is invisible in print; beyond it, text runs into the margin."""
MAX_BODY_PAGES = 12
MARGIN_SLACK_PT = 3.0
"""How far a glyph may stand past the margin: microtype's protrusion of punctuation and italic overhang."""
HALF = 0.5
PT_PER_CM = 72 / 2.54


def flat(text: str) -> str:
    """Text with typographic apostrophes, ligatures and runs of white space made plain."""
    text = text.replace("\u2019", "'").replace("\ufb01", "fi").replace("\ufb02", "fl").replace("\x0c", " ")
    return re.sub(r"\s+", " ", text).strip()


def section_titles(tex: str) -> list[str]:
    """The fixed ``\\section{...}`` titles of the template (comments left out), but for sections marked
    ``%# optional``, which are rendered only when their results exist."""
    tex = "\n".join(line for line in tex.splitlines() if not re.search(r"\\section.*%#\s*optional", line))
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


def log_problems(log: str, limit: float = MAX_OVERFULL_PT) -> list[str]:
    """What LaTeX's log says is broken: overfull boxes beyond ``limit`` points, floats too large for their page,
    lost floats.

    >>> log_problems("Overfull \\\\hbox (1.5pt too wide) in paragraph at lines 3--4\\n")
    []
    >>> log_problems("Overfull \\\\hbox (19.2pt too wide) in alignment at lines 496--503\\n")
    ['overfull \\\\hbox by 19.2pt in alignment at lines 496--503 (more than 2.0pt)']
    >>> log_problems("LaTeX Warning: Float too large for page by 44.2pt on input line 812.\\n")
    ['Float too large for page by 44.2pt on input line 812']
    """
    out = []
    for box, size, where in re.findall(r"Overfull \\(hbox|vbox) \(([\d.]+)pt too (?:wide|high)\) (.*)", log):
        if float(size) > limit:
            out.append(f"overfull \\{box} by {float(size):.1f}pt {where.strip()} (more than {limit}pt)")
    out += [m.rstrip(".") for m in re.findall(r"Float too large for page by [\d.]+pt on input line \d+\.?", log)]
    out += ["LaTeX lost a float" for _ in re.findall(r"Float\(s\) lost", log)]
    return out


def log_warnings(log: str) -> int:
    """How many overfull-box and float warnings the log holds, however small (the build aims at none)."""
    return len(re.findall(r"Overfull \\[hv]box|Float too large|Float\(s\) lost", log))


def margin_cm(tex: str) -> float:
    """The margin the template's ``geometry`` sets (``margin=...cm``)."""
    m = re.search(r"\\usepackage\[[^\]]*margin=([\d.]+)cm[^\]]*\]\{geometry\}", tex)
    if not m:
        raise ValueError("the template sets no geometry margin in cm")
    return float(m.group(1))


Word = tuple[float, float, float, float, str]


def pdf_words(pdf: Path) -> list[tuple[float, float, list[Word]]]:
    """Every page's width, height and words with their boxes (``pdftotext -bbox``)."""
    proc = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ValueError(f"pdftotext -bbox could not read {pdf}: {proc.stderr.strip()}")
    pages = []
    for width, height, body in re.findall(r'<page width="([\d.]+)" height="([\d.]+)">(.*?)</page>', proc.stdout,
                                          re.S):
        w, h = float(width), float(height)
        words = [(float(a), float(b), float(c), float(d), html.unescape(t)) for a, b, c, d, t in
                 re.findall(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">(.*?)</word>',
                            body)]
        pages.append((w, h, words))
    return pages


def is_page_number(word: Word, width: float, height: float, margin: float) -> bool:
    x0, y0, x1, _, text = word
    return text.isdigit() and y0 > height - margin and abs((x0 + x1) / 2 - width / 2) < 20


def margin_problems(pages: list[tuple[float, float, list[Word]]], margin: float,
                    slack: float = MARGIN_SLACK_PT) -> list[str]:
    """Words outside the text area (the page number, below it and centred, excepted).

    >>> margin_problems([(600.0, 800.0, [(60.0, 60.0, 540.0, 70.0, "fine"), (300.0, 780.0, 306.0, 788.0, "1")])], 60.0)
    []
    >>> words = [(60.0, 60.0, 560.0, 70.0, "wide"), (100.0, 770.0, 130.0, 778.0, "low"),
    ...          (60.0, 90.0, 550.0, 98.0, "less")]
    >>> for p in margin_problems([(600.0, 800.0, words)], 60.0):
    ...     print(p)
    page 1: 2 word(s) past the right margin, the worst 'wide' by 20.0pt
    page 1: 1 word(s) past the bottom margin, the worst 'low' by 38.0pt
    """
    out = []
    for no, (w, h, words) in enumerate(pages, start=1):
        worst: dict[str, list[tuple[float, str]]] = {}
        for word in words:
            x0, y0, x1, y1, text = word
            if is_page_number(word, w, h, margin):
                continue
            for side, past in (("left", margin - x0), ("right", x1 - (w - margin)), ("top", margin - y0),
                               ("bottom", y1 - (h - margin))):
                if past > slack:
                    worst.setdefault(side, []).append((past, text))
        for side, hits in worst.items():
            past, text = max(hits)
            out.append(f"page {no}: {len(hits)} word(s) past the {side} margin, the worst {text!r} by {past:.1f}pt")
    return out


def page_fill(pdf: Path, pages: int, margin: float) -> list[float]:
    """How far down its text area each page is inked (0 empty, 1 full), from a low-resolution grey rendering
    (``pdftoppm``): figures count as much as text; the page number, below the text area, does not."""
    if not shutil.which("pdftoppm"):
        raise FileNotFoundError("pdftoppm is not installed (Debian: apt-get install poppler-utils)")
    dpi = 36
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["pdftoppm", "-r", str(dpi), "-gray", str(pdf), f"{tmp}/p"], check=True, capture_output=True)
        fills = []
        for path in sorted(Path(tmp).glob("p-*.pgm"))[:pages]:
            width, height, pixels = read_pgm(path.read_bytes())
            top, bottom = margin * dpi / 72, height - (margin - 4) * dpi / 72
            inked = [y for y in range(int(top) - 2, min(int(bottom), height))
                     if min(pixels[y * width:(y + 1) * width]) < 160]
            fills.append(0.0 if not inked else (inked[-1] - top) / (height - 2 * margin * dpi / 72))
        return fills


def read_pgm(data: bytes) -> tuple[int, int, bytes]:
    """Width, height and pixels of a binary (P5) greymap of 8-bit depth."""
    fields = re.match(rb"P5\s+(\d+)\s+(\d+)\s+(\d+)\s", data)
    if not fields:
        raise ValueError("not a binary PGM image")
    w, h = int(fields.group(1)), int(fields.group(2))
    return w, h, data[fields.end():fields.end() + w * h]


def first_line(words: list[Word]) -> str:
    """The text of a page's top line."""
    if not words:
        return ""
    top = min(y0 for _, y0, _, _, _ in words)
    return " ".join(t for x0, y0, _, _, t in sorted(words, key=lambda w: w[0]) if y0 - top < 3)


def opens_section(line: str, titles: list[str]) -> bool:
    """Whether a page's top line is a section heading (``3 Title``, ``A Title`` or a bare title)."""
    rest = flat(re.sub(r"^(?:\d+|[A-Z])\s+(?=[A-Z])", "", line))
    return len(rest) >= 6 and any(t == rest or t.startswith(rest) or rest.startswith(t) for t in titles)


def half_empty_problems(fills: list[float], tops: list[str], titles: list[str]) -> list[str]:
    """Pages less than half full, the last page excepted: a section, a float or a table pushed to the next page
    leaves such a hole (the message says when the next page opens a section).

    >>> half_empty_problems([0.9, 0.3, 0.8, 0.2], ["x", "x", "5 Limitations", "y"], ["Limitations"])
    ['page 2 is 30% full, before a page that opens a section (5 Limitations)']
    >>> half_empty_problems([0.9, 0.3, 0.8], ["x", "x", "Table 3: more"], ["Limitations"])
    ['page 2 is 30% full, before a page that opens with: Table 3: more']
    >>> half_empty_problems([0.9, 0.6, 0.1], ["x", "x", "y"], ["Limitations"])
    []
    """
    out = []
    for i in range(len(fills) - 1):
        if fills[i] < HALF:
            nxt = tops[i + 1]
            why = (f"a page that opens a section ({nxt})" if opens_section(nxt, titles)
                   else f"a page that opens with: {nxt}")
            out.append(f"page {i + 1} is {100 * fills[i]:.0f}% full, before {why}")
    return out


def body_pages(tops_text: list[str]) -> int | None:
    """Pages of the body: those before the references' heading, that page included unless the heading opens it."""
    for no, text in enumerate(tops_text, start=1):
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        if "References" in lines:
            return no - 1 if lines[0] == "References" else no
    return None


def layout_problems(pdf: Path, tex: str, titles: list[str]) -> list[str]:
    """Margins, half-empty pages before a section and the body's length, read from the PDF."""
    margin = margin_cm(tex) * PT_PER_CM
    pages = pdf_words(pdf)
    out = margin_problems(pages, margin)
    fills = page_fill(pdf, len(pages), margin)
    out += half_empty_problems(fills, [first_line(words) for _, _, words in pages], titles)
    texts = [subprocess.run(["pdftotext", "-f", str(n), "-l", str(n), str(pdf), "-"], capture_output=True,
                            text=True, check=False).stdout for n in range(1, len(pages) + 1)]
    body = body_pages(texts)
    if body is None:
        out.append("the PDF has no References heading, so its body cannot be measured")
    elif body > MAX_BODY_PAGES:
        out.append(f"the body (before the references) runs to {body} pages, more than {MAX_BODY_PAGES}")
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
    p.add_argument("--log", type=Path, help="LaTeX's log of the build: fail on overfull boxes and floats too large")
    args = p.parse_args(argv)
    if not args.pdf.is_file():
        print(f"report/check_pdf.py: {args.pdf} not found (build it with `make report`)", file=sys.stderr)
        return 1
    try:
        text = pdf_text(args.pdf)
        tex = TEMPLATE.read_text()
        titles = section_titles(tex)
        found = problems(text, titles)
        found += layout_problems(args.pdf, tex, titles)
        if args.log:
            log = args.log.read_text(errors="replace")
            found += [f"LaTeX: {p}" for p in log_problems(log)]
            print(f"{args.log}: {log_warnings(log)} overfull-box or float warning(s), none beyond {MAX_OVERFULL_PT}pt"
                  if not log_problems(log) else f"{args.log}: {log_warnings(log)} overfull-box or float warning(s)")
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
    print(f"{args.pdf}: every section present, nothing undefined, nothing past a margin, no half-empty page, "
          f"body within {MAX_BODY_PAGES} pages"
          + (f", reads as committed at {args.committed}" if args.committed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
