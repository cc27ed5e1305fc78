"""Which evaluator names the compiled search plays: the networks of EL/v13's shape.

A name (``EL/v16``, ``el/16``, ``EL/v21+quiesce``, ``sparse+quiesce``) or a loaded evaluator is read
here into the version of :data:`~knights.learn.registry.FAST_NETWORKS` whose weights the compiled
search evaluates incrementally, or ``None`` for every other evaluator.
"""

from __future__ import annotations

from knights.evaluate.base import Evaluator
from knights.learn import registry
from knights.learn.registry import FAST_NETWORKS, QUIESCE_SUFFIX, SEARCH_NETWORK, SPARSE_NAME


def is_fast_network(evaluator: Evaluator | str | None) -> bool:
    """Whether ``evaluator`` (a name or an evaluator) is a network the fast search
    evaluates incrementally (:data:`FAST_NETWORKS`; ``EL/v16``, ``el/v16`` or ``el/16``)."""
    return fast_network_name(evaluator) is not None


def fast_network_name(evaluator: Evaluator | str | None) -> str | None:
    """The version name in :data:`FAST_NETWORKS` that ``evaluator`` names, else ``None``; with
    ``+quiesce`` (:mod:`knights.engine.judged`), the network it judges with (``sparse+quiesce``, a
    democracy of them: :data:`~knights.learn.registry.SEARCH_NETWORK`, the network a deeper search plays)."""
    name = evaluator if isinstance(evaluator, str) else getattr(evaluator, "name", None)
    if not isinstance(name, str):
        return None
    if name.strip().lower().endswith(QUIESCE_SUFFIX):
        name = name.strip()[: -len(QUIESCE_SUFFIX)]
        if name.lower() == SPARSE_NAME:
            name = SEARCH_NETWORK
    try:
        version = registry.get(name).name   # the registry reads the spellings (el/16, EL/v016)
    except ValueError:                      # not a version name (material, democracy, EL/v16+threats)
        return None
    return version if version in FAST_NETWORKS else None
