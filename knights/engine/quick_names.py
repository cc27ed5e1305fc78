"""The UCI Evaluator option's choices, fast: from the files on disk, without importing torch.

``knights uci`` must answer ``uci`` in about the time python takes to start, so the option
list cannot come from :func:`knights.evaluate.names.available_evaluators` (which imports
torch). :func:`quick_evaluator_names` reads the same answer off the files through the
registry (:mod:`knights.learn.registry`, which names the versions, their paths and the
defaults and imports no torch), and
:func:`quick_default` applies the library's default rule to it (a test checks both agree
with the library):

>>> quick_default(["material", "EL/v3", "material+threats", "EL/v3+threats"], None)
'EL/v3'
>>> quick_default(["material", "EL/v3", "material+threats", "EL/v3+threats"], "el/3+THREATS")
'EL/v3+threats'
>>> quick_default(["material", "EL/v21", "EL/v21+quiesce"], "el/21+Quiesce")
'EL/v21+quiesce'
"""

from __future__ import annotations

import re

from knights.learn import registry
from knights.learn.registry import (
    DEFAULT_EVALUATOR,
    DEFAULT_NETWORK,
    ONE_PLY_EVALUATOR,
    QUIESCE_SUFFIX,
    SEARCH_NETWORK,
    VARIANT_SUFFIXES,
    judged_names,
    split_variant,
)


def quick_evaluator_names() -> list[str]:
    """The Evaluator option's choices from the files on disk, without importing torch (the
    library's :func:`knights.engine.build.play_evaluator_names` does; a test checks they
    agree): ``material``, each ``EL/vN`` with a library and weights, ``democracy`` when
    its manifest is shipped, then each with ``+threats``, then each with ``+qsearch``, then
    each compiled network with ``+quiesce``, then their democracy ``sparse+quiesce``."""
    names = ["material"] + [v.name for v in registry.all_versions("EL") if v.is_trained()]
    if (registry.ENSEMBLE_MODELS / "democracy.json").is_file():
        names.append("democracy")
    return names + [n + suffix for suffix in VARIANT_SUFFIXES for n in names] + judged_names(names)


def quick_default(names: list[str], asked: str | None, depth: int = 1) -> str:
    """The option's default: ``asked`` (``--evaluator``) spelled as in ``names`` when it
    is one of them, else the library's default rule (the registry's ``ONE_PLY_EVALUATOR``, else
    the shipped democracy, else the newest network, else material); a searching bot (``depth`` > 1) asked for
    nothing plays the registry's ``SEARCH_NETWORK`` when it is there, else its
    ``DEFAULT_NETWORK`` (see :func:`knights.engine.search.evaluator_for_depth`)."""
    if depth > 1 and (not asked or asked.strip().lower() in ("", "default")):
        for network in (SEARCH_NETWORK, DEFAULT_NETWORK):
            if network in names:
                return network
    if asked and asked.strip().lower() not in ("", "default"):
        text = asked.strip()
        base, variant = split_variant(text)
        if not variant and text.lower().endswith(QUIESCE_SUFFIX):
            base, variant = text[: -len(QUIESCE_SUFFIX)], QUIESCE_SUFFIX
        match = re.fullmatch(r"(?i)el/v?(\d+)", base)
        if match:
            base = f"EL/v{int(match.group(1))}"
        elif base.lower() == "ensemble":
            base = "democracy"
        wanted = base + variant
        for name in names:
            if name.lower() == wanted.lower():
                return name
    for evaluator in (ONE_PLY_EVALUATOR, DEFAULT_EVALUATOR):
        if evaluator in names:
            return evaluator
    nets = [n for n in names if n.startswith("EL/") and not split_variant(n)[1] and not n.endswith(QUIESCE_SUFFIX)]
    return nets[-1] if nets else "material"
