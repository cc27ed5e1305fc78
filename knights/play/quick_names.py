"""The UCI Evaluator option's choices, fast: from the files on disk, without importing torch.

``knights uci`` must answer ``uci`` in about the time python takes to start, so the option
list cannot come from :func:`knights.evaluate.names.available_evaluators` (which imports
torch). :func:`quick_evaluator_names` reads the same answer off the files, and
:func:`quick_default` applies the library's default rule to it (a test checks both agree
with the library):

>>> quick_default(["material", "EL/v3", "material+threats", "EL/v3+threats"], None)
'EL/v3'
>>> quick_default(["material", "EL/v3", "material+threats", "EL/v3+threats"], "el/3+THREATS")
'EL/v3+threats'
"""

from __future__ import annotations

import re
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_EVALUATOR = "democracy"           # knights.evaluate.names.DEFAULT_EVALUATOR (a test checks they agree)
SEARCH_EVALUATOR = "EL/v10"               # knights.evaluate.names.DEFAULT_NETWORK: the searching bot's default
THREATS = "+threats"


def quick_evaluator_names(root: Path = REPO_ROOT) -> list[str]:
    """The Evaluator option's choices from the files on disk, without importing torch (the
    library's :func:`knights.evaluate.names.available_evaluators` does; a test checks they
    agree): ``material``, each ``EL/vN`` with a library and weights, ``democracy`` when
    its manifest is shipped, then each with ``+threats``."""
    numbers = sorted(int(lib.parent.name[1:]) for lib in (root / "source_EL").glob("v*/library.py")
                     if lib.parent.name[1:].isdigit() and (root / "models_EL" / f"{lib.parent.name}.pt").is_file())
    names = ["material"] + [f"EL/v{n}" for n in numbers]
    if (root / "ensemble" / "models" / "democracy.json").is_file():
        names.append("democracy")
    return names + [n + THREATS for n in names]


def quick_default(names: list[str], asked: str | None, depth: int = 1) -> str:
    """The option's default: ``asked`` (``--evaluator``) spelled as in ``names`` when it
    is one of them, else the library's default rule (the shipped democracy,
    else the newest network, else material); a searching bot (``depth`` > 1) asked for
    nothing plays :data:`SEARCH_EVALUATOR` when it is there (see
    :func:`knights.play.search.evaluator_for_depth`)."""
    if depth > 1 and (not asked or asked.strip().lower() in ("", "default")) and SEARCH_EVALUATOR in names:
        return SEARCH_EVALUATOR
    if asked and asked.strip().lower() not in ("", "default"):
        text = asked.strip()
        threats = text.lower().endswith(THREATS)
        base = text[: -len(THREATS)] if threats else text
        match = re.fullmatch(r"(?i)el/v?(\d+)", base)
        if match:
            base = f"EL/v{int(match.group(1))}"
        elif base.lower() == "ensemble":
            base = "democracy"
        wanted = base + (THREATS if threats else "")
        for name in names:
            if name.lower() == wanted.lower():
                return name
    if DEFAULT_EVALUATOR in names:
        return DEFAULT_EVALUATOR
    nets = [n for n in names if n.startswith("EL/") and not n.endswith(THREATS)]
    return nets[-1] if nets else "material"
