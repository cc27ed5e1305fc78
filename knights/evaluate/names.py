"""The one place that turns an evaluator name into an evaluator.

Names: ``"material"``, any trained EL version (``"EL/v8"``), ``"democracy"`` (the
shipped ensemble), each optionally with ``"+threats"`` or ``"+qsearch"``; ``"default"`` (or nothing)
is :data:`DEFAULT_EVALUATOR`, falling back on a fresh clone to the newest trained
network (the defaults are named in :mod:`knights.learn.registry`, beside the files).
The benchmarks, ``knights results`` and the play layer resolve names here; the bot's routes (the
terminal, UCI, lichess-bot, the web page, the arena) go through :mod:`knights.engine.build`, which adds
the names only the compiled search can build (``EL/v21+quiesce``, ``sparse+quiesce``) and the one-ply
bot's default (``ONE_PLY_EVALUATOR``), and asks here for every other name.

>>> canonical_evaluator_name("Material+THREATS"), canonical_evaluator_name("el/8")
('material+threats', 'EL/v8')
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from knights.evaluate import democracy
from knights.evaluate.base import Evaluator, MaterialEvaluator, network_evaluator, probe
from knights.evaluate.qsearch import CaptureSearchEvaluator
from knights.evaluate.threats import ThreatAwareEvaluator
from knights.learn import registry
from knights.learn.registry import DEFAULT_EVALUATOR as DEFAULT_EVALUATOR
from knights.learn.registry import DEFAULT_NETWORK as DEFAULT_NETWORK
from knights.learn.registry import DEMOCRACY_NETWORKS as DEMOCRACY_NETWORKS
from knights.learn.registry import QSEARCH_SUFFIX as QSEARCH_SUFFIX
from knights.learn.registry import QUIESCE_SUFFIX, VARIANT_SUFFIXES, split_variant
from knights.learn.registry import THREATS_SUFFIX as THREATS_SUFFIX


class EvaluatorError(ValueError):
    """An evaluator name that is unknown, or whose files are not here: one clear line."""


def available_evaluators() -> list[str]:
    """Names :func:`load_evaluator` accepts that have trained files on disk."""
    names = ["material"] + [v.name for v in registry.all_versions("EL") if v.is_trained()]
    if democracy.is_shipped() or democracy.is_damaged():   # damaged: loading it says why
        names.append("democracy")
    return names + [f"{n}{suffix}" for suffix in VARIANT_SUFFIXES for n in names]


def trained_networks(names: list[str]) -> list[str]:
    """The plain EL versions among evaluator ``names`` (no variants, no ``+quiesce``), oldest first."""
    return [n for n in names if n.startswith("EL/") and not split_variant(n)[1]
            and not n.lower().endswith(QUIESCE_SUFFIX)]


def default_evaluator_name(available: list[str]) -> str:
    """What the bot plays with when not told: :data:`DEFAULT_EVALUATOR` when its files
    are among ``available``; otherwise (a fresh clone) the newest trained EL version,
    else ``"material"``."""
    if DEFAULT_EVALUATOR in available:
        return DEFAULT_EVALUATOR
    trained = trained_networks(available)
    return trained[-1] if trained else "material"


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


KINDS = ("the evaluators are material, democracy and the trained networks EL/vN, each optionally with +qsearch or "
         "+threats, and the compiled networks with +quiesce or their democracy sparse+quiesce")
"""What an evaluator name may be, for the errors that refuse one."""


def _stderr_notice(text: str) -> None:
    print(text, file=sys.stderr)


def canonical_evaluator_name(name: str) -> str:
    """``"material"``, ``"democracy"`` or a version name such as ``"EL/v8"``."""
    text = name.strip()
    base, variant = split_variant(text)
    if variant:
        if split_variant(base)[1] or base.lower().endswith(QUIESCE_SUFFIX):
            raise EvaluatorError(f"unknown evaluator {name!r}: one suffix at most ({KINDS})")
        return canonical_evaluator_name(base) + variant
    if text.lower() in ("material", "democracy", "ensemble"):
        return "democracy" if text.lower() == "ensemble" else text.lower()
    try:
        version = registry.get(text)
    except ValueError as exc:               # not a version name, or a version not in source_EL/
        why = str(exc) if str(exc).startswith("unknown version") else KINDS
        raise EvaluatorError(f"unknown evaluator {name!r}: {why}") from None
    if version.family != "EL":
        raise EvaluatorError(f"{version.name} is a move network (it predicts the move, not the evaluation), "
                             f"not an evaluator: {KINDS}")
    return version.name


def is_default(name: str | None) -> bool:
    """Whether ``name`` asks for the default evaluator (``None``, ``""``, ``"default"``)."""
    return name is None or name.strip().lower() in ("", "default")


def resolve_name(name: str | None, available: list[str] | None = None) -> str:
    """The canonical name of the evaluator that ``name`` asks for, checked against
    ``available`` (default: :func:`available_evaluators`).

    The default (see :func:`is_default`) is :data:`DEFAULT_EVALUATOR`, or on a checkout
    without its files the newest trained network, else ``"material"``; any other name is
    spelled canonically and must be available, or :class:`EvaluatorError` lists what is.

    >>> resolve_name("Material+threats", ["material", "material+threats"])
    'material+threats'
    >>> resolve_name("default", ["material", "EL/v3", "material+threats"])
    'EL/v3'
    """
    available = available_evaluators() if available is None else available
    if is_default(name):
        return default_evaluator_name(available)
    assert name is not None
    canonical = canonical_evaluator_name(name)
    if canonical not in available:
        base = split_variant(canonical)[0]
        archived = base in registry.archived()     # its weights are not in git: the one command that rebuilds them
        why = registry.missing_weights(base) if archived else "not trained or not shipped"
        raise EvaluatorError(f"evaluator {canonical!r} is not available here ({why}); "
                             f"available: {', '.join(available)}")
    return canonical


def select_evaluator(name: str | None = None, *,
                     notice: Callable[[str], None] | None = _stderr_notice) -> Evaluator:
    """The evaluator to play with: :func:`resolve_name`, loaded. When the default
    falls back (its files are missing), ``notice`` gets one line saying so."""
    chosen = resolve_name(name)
    tell_fallback(name, DEFAULT_EVALUATOR, chosen, notice)
    return load_evaluator(chosen)


def tell_fallback(asked: str | None, default: str, chosen: str, notice: Callable[[str], None] | None) -> None:
    """When ``asked`` is the default and ``chosen`` is not ``default`` (its files are missing), one line to
    ``notice`` saying which evaluator plays instead."""
    if is_default(asked) and chosen != default and notice is not None:
        notice(f"note: {default} has no trained weights yet (models_EL/ is empty "
               f"or incomplete); playing with the '{chosen}' evaluator instead")
