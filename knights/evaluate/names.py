"""Evaluator names: the one grammar.

A name is ``"material"``, a trained EL version (``"EL/v8"``, any case, ``v`` optional), ``"democracy"`` (the
shipped ensemble; ``"ensemble"`` is read as it), each optionally with ``"+threats"`` (the static capture-threat
term) or ``"+qsearch"`` (the captures played out); or a compiled sparse network with ``"+quiesce"`` (judged where
the captures end) and ``"sparse+quiesce"`` (their democracy). ``None``, ``""`` and ``"default"`` ask for the
default. :func:`canonical_evaluator_name` spells a name, :func:`available_evaluators` lists the static ones whose
files are here; neither imports torch, so ``knights uci`` lists its options at once.
:func:`knights.evaluate.load.load_evaluator` loads a static evaluator; the engine's builder
(:mod:`knights.engine.build`) loads the judged ones and adds a bot's depth and time (:mod:`knights.engine.spec`).

>>> canonical_evaluator_name("Material+THREATS"), canonical_evaluator_name("el/8")
('material+threats', 'EL/v8')
>>> canonical_evaluator_name("Sparse+QUIESCE")
'sparse+quiesce'
"""

from __future__ import annotations

from collections.abc import Callable

from knights.learn import registry

THREATS_SUFFIX = "+threats"
"""An evaluator's name with the static capture-threat term added (:mod:`knights.evaluate.threats`)."""
QSEARCH_SUFFIX = "+qsearch"
"""An evaluator's name with the captures played out by a capture search (:mod:`knights.evaluate.qsearch`)."""
QUIESCE_SUFFIX = "+quiesce"
"""A compiled sparse network judged where the captures end (:mod:`knights.engine.judged`)."""
VARIANT_SUFFIXES = (THREATS_SUFFIX, QSEARCH_SUFFIX)
"""What may follow any static evaluator's name (one of them at most)."""
SPARSE_NAME = "sparse"
"""The democracy of the compiled networks, always with ``+quiesce``: ``sparse+quiesce``."""
DEFAULT_NETWORK = "EL/v10"
"""The best network alone by held-out MAE (models_EL/RESULTS.md): what "network alone" benchmarks time and the
ensemble's main member."""
DEFAULT_EVALUATOR = "democracy+qsearch"
"""What :func:`load_evaluator` loads unless told otherwise (the benchmarks): the shipped democracy with the
captures played out."""
DEMOCRACY_NETWORKS = ("EL/v10", "EL/v11", "EL/v13", "EL/v14", "EL/v15", "EL/v16", "EL/v17", "EL/v18")
"""The networks ``knights ensemble`` offers the democracy (those trained)."""


def split_variant(name: str) -> tuple[str, str]:
    """``"EL/v19+qsearch"`` -> ``("EL/v19", "+qsearch")``; a name without a variant -> ``(name, "")``.
    The suffix is matched in any case and returned as spelled in :data:`VARIANT_SUFFIXES`.

    >>> split_variant("democracy+THREATS"), split_variant("material")
    (('democracy', '+threats'), ('material', ''))
    """
    for suffix in VARIANT_SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)], suffix
    return name, ""


class EvaluatorError(ValueError):
    """An evaluator name that is unknown, or whose files are not here: one clear line."""


def available_evaluators() -> list[str]:
    """Names :func:`load_evaluator` accepts that have trained files on disk."""
    names = ["material"] + [v.name for v in registry.all_versions("EL") if v.is_trained()]
    if (registry.ENSEMBLE_MODELS / "democracy.json").is_file():   # damaged or incomplete: loading it says why
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


KINDS = ("the evaluators are material, democracy and the trained networks EL/vN, each optionally with +qsearch or "
         "+threats, and the compiled networks with +quiesce or their democracy sparse+quiesce")
"""What an evaluator name may be, for the errors that refuse one."""


def canonical_evaluator_name(name: str) -> str:
    """``"material"``, ``"democracy"`` or a version name such as ``"EL/v8"``."""
    text = name.strip()
    if text.lower().endswith(QUIESCE_SUFFIX):
        network = text[: -len(QUIESCE_SUFFIX)].strip()
        if network.lower() == SPARSE_NAME:
            return SPARSE_NAME + QUIESCE_SUFFIX
        base = canonical_evaluator_name(network) if network else network
        if base not in registry.FAST_NETWORKS:
            raise EvaluatorError(f"evaluator {name.strip()!r}: only the compiled sparse networks and their democracy, "
                                 f"{SPARSE_NAME}{QUIESCE_SUFFIX}, take {QUIESCE_SUFFIX} ({KINDS})")
        return base + QUIESCE_SUFFIX
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
        raise EvaluatorError(missing(canonical, available))
    return canonical


def missing(canonical: str, available: list[str]) -> str:
    """Why the evaluator ``canonical`` is not among ``available``, and what is: one line (for an archived version,
    the one command that rebuilds its weights)."""
    base = split_variant(canonical)[0]
    base = base[: -len(QUIESCE_SUFFIX)] if base.endswith(QUIESCE_SUFFIX) else base
    if base in registry.archived():     # its weights are not in git: the one command that rebuilds them
        why = registry.missing_weights(base)
    elif canonical == SPARSE_NAME + QUIESCE_SUFFIX:
        why = "its networks' weights are not all here"
    else:
        why = "not trained or not shipped"
    return f"evaluator {canonical!r} is not available here ({why}); available: {', '.join(available)}"


def tell_fallback(asked: str | None, default: str, chosen: str, notice: Callable[[str], None] | None) -> None:
    """When ``asked`` is the default and ``chosen`` is not ``default`` (its files are missing), one line to
    ``notice`` saying which evaluator plays instead."""
    if is_default(asked) and chosen != default and notice is not None:
        notice(f"note: {default} has no trained weights yet (models_EL/ is empty "
               f"or incomplete); playing with the '{chosen}' evaluator instead")
