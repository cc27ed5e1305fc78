"""Loading the static evaluators by name: ``material``, the trained networks, the shipped democracy, each
optionally with the threat term or the captures played out (the names are :mod:`knights.evaluate.names`'s).

>>> load_evaluator("material+qsearch").name
'material+qsearch'
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from knights.evaluate import democracy
from knights.evaluate.base import Evaluator, MaterialEvaluator, network_evaluator, probe
from knights.evaluate.names import (
    DEFAULT_EVALUATOR,
    QSEARCH_SUFFIX,
    QUIESCE_SUFFIX,
    THREATS_SUFFIX,
    EvaluatorError,
    resolve_name,
    split_variant,
    tell_fallback,
)
from knights.evaluate.qsearch import CaptureSearchEvaluator
from knights.evaluate.threats import ThreatAwareEvaluator


def load_evaluator(name: str | None = None) -> Evaluator:
    """An evaluator by name: ``"EL/v8"`` (any trained EL version), ``"democracy"``
    (the shipped ensemble) or ``"material"`` (counting material), each optionally with
    ``"+threats"`` (plus the static capture-threat term, :mod:`knights.evaluate.threats`) or
    ``"+qsearch"`` (the captures played out, :mod:`knights.evaluate.qsearch`);
    ``None`` gives :data:`DEFAULT_EVALUATOR`. Names are taken as spelled
    (:func:`resolve_name` spells and checks them). Every evaluator is tried on a few
    positions first (:func:`~knights.evaluate.base.probe`): one that answers NaN or infinity
    is refused here, not played."""
    return probe(_load(name or DEFAULT_EVALUATOR))


def _load(name: str) -> Evaluator:
    if name.lower().endswith(QUIESCE_SUFFIX):
        raise EvaluatorError(f"{name}: the captures judged by the network where they end are played by the "
                             f"compiled search (knights.engine.judged); in a match, ours:{name}")
    base, variant = split_variant(name)
    if variant == THREATS_SUFFIX:
        return ThreatAwareEvaluator(_load(base))
    if variant == QSEARCH_SUFFIX:
        return CaptureSearchEvaluator(_load(base))
    if name == "material":
        return MaterialEvaluator()
    if name in ("democracy", "ensemble"):
        return democracy.load_shipped()
    return network_evaluator(name)


def _stderr_notice(text: str) -> None:
    print(text, file=sys.stderr)


def select_evaluator(name: str | None = None, *,
                     notice: Callable[[str], None] | None = _stderr_notice) -> Evaluator:
    """The evaluator to play with: :func:`resolve_name`, loaded. When the default
    falls back (its files are missing), ``notice`` gets one line saying so."""
    chosen = resolve_name(name)
    tell_fallback(name, DEFAULT_EVALUATOR, chosen, notice)
    return load_evaluator(chosen)


