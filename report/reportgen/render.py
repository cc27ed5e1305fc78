"""The one templating step: ``report/report.tex.j2`` and ``report/readme.md.j2`` filled
from the results (:mod:`reportgen.data`) with Jinja2, then checked.

    python report/build.py            # report/build/report.tex and its figures
    python report/build.py --readme   # also rewrite README.md's generated block

Template syntax (LaTeX-safe): ``\\VAR{expr}`` prints a value, ``\\BLOCK{for ...}`` /
``\\BLOCK{endfor}`` is a statement, ``\\#{...}`` a comment. Numbers must go through a
filter that says how to print them (``|f(2)``, ``|n0``, ``|pct``, ``|dur``); strings are
escaped for LaTeX. The build fails, naming the value, when

* a results file or key is missing (:class:`reportgen.data.Missing`) or the template names
  a variable that does not exist (``StrictUndefined``);
* a ``\\BLOCK{do claim(condition, "what the text says")}`` in the template is false: the prose says
  something the results contradict;
* a number taken from one model's record sits in a sentence (or table row) that does not
  name that model (:func:`model_mismatches`).
"""

from __future__ import annotations

import re
import traceback
from pathlib import Path
from typing import Any

import jinja2

from knights.engine.spec import network_of
from knights.lab.arena.elo import anchors_of, elo_difference, expected_score

from . import data, figures, readme

HERE = Path(__file__).resolve().parents[1]
TAG = re.compile(r"\\val\{([^{}]*)\}\{([^{}]*)\}")


class BuildError(Exception):
    """What the strict build refuses, one problem a line."""


class Tex(str):
    """Text that is already LaTeX (not escaped again)."""


def esc(s: Any) -> Tex:
    if isinstance(s, Tex):
        return s
    table = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
             "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
             "<": r"\textless{}", ">": r"\textgreater{}"}
    return Tex("".join(table.get(c, c) for c in str(s)))


def breakable(s: Any) -> Tex:
    """A long identifier escaped for LaTeX, with a line break allowed after each underscore and slash and
    after a dot followed by a letter (a module path; never inside a number).

    >>> print(breakable("quiet_wp/x 0.01 knights.learn"))
    quiet\\_\\allowbreak{}wp/\\allowbreak{}x 0.01 knights.\\allowbreak{}learn
    """
    text = esc(s).replace("\\_", "\\_\\allowbreak{}").replace("/", "/\\allowbreak{}")
    return Tex(re.sub(r"\.(?=[A-Za-z])", ".\\\\allowbreak{}", text))


def number(fmt: Any, tex: bool):  # type: ignore[no-untyped-def]
    """A filter that prints a number with ``fmt`` and, in LaTeX, tags it with its model, if any."""
    def show(x: Any, *args: Any) -> str:
        if x is None:
            raise data.Missing("a value printed by the template is not measured (None)")
        text = fmt(float(x), *args)
        owner = getattr(x, "owner", None)
        if not tex:
            return text.replace("\\%", "%")
        return Tex(f"\\val{{{owner}}}{{{text}}}") if tex and owner else Tex(text)
    return show


def duration(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.0f} min" if s < 7200 else f"{s / 3600:.1f} h"


FORMATS = {
    "f": lambda x, d=2: f"{x:.{d}f}",
    "n0": lambda x: f"{x:,.0f}",
    "pct": lambda x, d=1: f"{100 * x:.{d}f}\\%",
    "dur": duration,
    "rate": lambda x: f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}",
}


def environment(tex: bool = True, folder: Path = HERE) -> jinja2.Environment:
    opts: dict[str, Any] = dict(block_start_string=r"\BLOCK{", block_end_string="}",
                                variable_start_string=r"\VAR{", variable_end_string="}",
                                comment_start_string=r"\#{", comment_end_string="}",
                                line_comment_prefix="%#", trim_blocks=True, lstrip_blocks=True) if tex else \
        {"trim_blocks": True, "lstrip_blocks": True}
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(folder), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, autoescape=False, extensions=["jinja2.ext.do"],
                             finalize=_finalize if tex else _plain,
                             **opts)
    for name, fmt in FORMATS.items():
        env.filters[name] = number(fmt, tex)
    env.filters["tex"] = esc
    env.filters["brk"] = breakable
    env.filters["raw"] = Tex            # text the template itself wrote as LaTeX
    env.tests["startingwith"] = lambda s, prefix: str(s).startswith(prefix)
    env.globals["expected_score"] = expected_score     # the arena's Elo curve, not written again in the template
    env.globals["elo_difference"] = elo_difference     # and its inverse: the rating gap a score stands for
    env.globals["anchors_of"] = anchors_of             # the Stockfish anchors among some players, and their Elo
    env.globals["network_of"] = network_of             # a searching player's network, as the bots read its spec
    return env


def _finalize(value: Any) -> Any:
    if isinstance(value, bool) or (isinstance(value, float) and not isinstance(value, Tex)):
        raise BuildError(f"the template prints the number {value!r} without a format filter (|f, |n0, |pct, |dur)")
    return value if isinstance(value, Tex | int) else esc(value) if isinstance(value, str) else value


def _plain(value: Any) -> Any:
    if isinstance(value, float):
        raise BuildError(f"the README template prints the number {value!r} without a format filter")
    return value


def model_mismatches(tex: str) -> list[str]:
    """Numbers from one model's record in a sentence or table row that does not name that
    model: the defect of an abstract that gave EL/v11's errors to EL/v10.

    >>> model_mismatches(r"EL/v10 errs \\val{EL/v10}{1.48}. EL/v11 errs \\val{EL/v11}{1.49}.")
    []
    >>> model_mismatches(r"The best network, EL/v10, errs \\val{EL/v11}{1.49} on games.")
    ["'1.49' is EL/v11's, in a sentence that names EL/v10 only: The best network, EL/v10, errs 1.49 on games."]
    """
    body = re.sub(r"(?<!\\)%.*", "", tex)
    units = re.split(r"(?<=[.!?])\s+(?=[A-Z\\])|\\\\|\n\s*\n|\\item\b|\\caption\{", body)
    out = []
    for unit in units:
        plain = TAG.sub(lambda m: m.group(2), unit)
        for owner, value in TAG.findall(unit):
            if not re.search(re.escape(owner) + r"(?![\w+])", plain):
                named = re.findall(r"(?:(?:EL|SL)/v\d+|democracy)(?:\+threats|\+qsearch)?", plain)
                names = sorted(set(named)) or ["no model"]
                out.append(f"{value!r} is {owner}'s, in a sentence that names {', '.join(names)} only: "
                           f"{' '.join(plain.split())[:160]}")
    return out


def render(ctx: dict[str, Any], template: str = "report.tex.j2", tex: bool = True,
           folder: Path = HERE) -> tuple[str, list[str]]:
    """The filled template and the claims it makes that the results contradict."""
    contradicted: list[str] = []

    def claim(ok: Any, says: str) -> str:
        if not ok:
            contradicted.append(f"contradicted: the text says {says!r}, the results do not")
        return ""

    env = environment(tex, folder)
    try:
        text = env.get_template(template).render(**ctx, claim=claim, headline_rows=readme.headline_rows)
    except jinja2.TemplateError as exc:
        raise BuildError(f"{template}: {exc}") from None
    except data.Missing as exc:
        raise BuildError(f"{template}: not measured: {exc}") from None
    except (TypeError, ValueError, ArithmeticError, LookupError, AttributeError) as exc:
        line = next((f" (line {t.lineno})" for t in reversed(traceback.extract_tb(exc.__traceback__))
                     if t.filename.endswith(template)), "")
        raise BuildError(f"{template}{line}: {type(exc).__name__}: {exc}") from None
    return text, contradicted


def build(out: Path, results: Path = data.RESULTS, models: Path = data.REPO, readme_path: Path | None = None,
          draw: bool = True) -> Path:
    """Render and check the report into ``out`` (report.tex and figures/); with
    ``readme_path``, rewrite that README's generated block. Raises :class:`BuildError`."""
    try:
        ctx = data.load(results, models)
    except data.Missing as exc:
        raise BuildError(f"not measured: {exc}") from None
    text, problems = render(ctx)
    problems += model_mismatches(text)
    if problems:
        raise BuildError("\n".join(problems))
    out.mkdir(parents=True, exist_ok=True)
    if draw:
        figures.draw_all(ctx, out / "figures")
    (out / "report.tex").write_text("% Generated by report/build.py from report/report.tex.j2: do not edit.\n" + text)
    if readme_path is not None:
        block, problems = render(ctx, "readme.md.j2", tex=False)
        if problems:
            raise BuildError("\n".join(problems))
        readme.write(readme_path, block.strip())
    return out / "report.tex"
