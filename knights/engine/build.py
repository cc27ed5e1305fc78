"""Every route's bot, from an evaluator name as a user gives it.

``knights play``, ``knights uci`` (and lichess-bot through it), the web page and the arena's
players read evaluator names here. The names are those of
:func:`knights.evaluate.names.available_evaluators` and, for each trained network the compiled
search evaluates (:data:`~knights.learn.registry.FAST_NETWORKS`), the same name with ``+quiesce``:
the network judged where the captures end (:mod:`knights.engine.judged`), and ``sparse+quiesce``,
the democracy of those networks so judged (the one-ply bot's default,
:data:`~knights.learn.registry.ONE_PLY_EVALUATOR`). Only this layer can build them, as the compiled
search lives here; the evaluate layer spells, checks and loads every other name.

    >>> resolve_play_name("el/21+QUIESCE", ["material", "EL/v21", "EL/v21+quiesce"])
    'EL/v21+quiesce'

Searching deeper than one ply, ``X+quiesce`` is ``X``'s compiled search, which plays the captures
out and asks the network at every leaf already (:func:`~knights.engine.compiled_search.search_engine`);
``sparse+quiesce`` is the search's own network's (:data:`~knights.learn.registry.SEARCH_NETWORK`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from knights.engine.compiled_search import FastSearchEngine, search_engine
from knights.engine.judged import JudgedDemocracy, QuiescenceEvaluator, split_quiesce
from knights.engine.networks import fast_network_name
from knights.engine.one_ply import OnePlyEngine
from knights.engine.search import SearchEngine, evaluator_for_depth
from knights.evaluate import names
from knights.evaluate.base import Evaluator, probe
from knights.evaluate.names import (
    EvaluatorError,
    canonical_evaluator_name,
    default_evaluator_name,
    is_default,
    load_evaluator,
    resolve_name,
    tell_fallback,
)
from knights.learn.registry import ONE_PLY_EVALUATOR, QUIESCE_SUFFIX, SPARSE_NAME, judged_names

SPARSE = f"{SPARSE_NAME}{QUIESCE_SUFFIX}"
"""The democracy of the compiled networks, each judged where the captures end (:class:`JudgedDemocracy`)."""


def play_evaluator_names() -> list[str]:
    """The evaluator names a bot plays with here: :func:`~knights.evaluate.names.available_evaluators`,
    then :func:`~knights.learn.registry.judged_names` of them."""
    loaded = names.available_evaluators()
    return loaded + judged_names(loaded)


def play_default(available: list[str]) -> str:
    """What the one-ply bot plays with when not told: :data:`~knights.learn.registry.ONE_PLY_EVALUATOR`
    when it is among ``available``, else the evaluate layer's default rule
    (:func:`~knights.evaluate.names.default_evaluator_name`: the democracy, the newest network, material).

    >>> play_default(["material", "EL/v21", "EL/v21+quiesce", "sparse+quiesce"]), play_default(["material", "EL/v3"])
    ('sparse+quiesce', 'EL/v3')
    """
    return ONE_PLY_EVALUATOR if ONE_PLY_EVALUATOR in available else default_evaluator_name(available)


def resolve_play_name(name: str | None, available: list[str] | None = None) -> str:
    """The canonical name of the evaluator ``name`` asks for, checked against ``available`` (default:
    :func:`play_evaluator_names`), as :func:`~knights.evaluate.names.resolve_name` does for the names
    it knows; ``+quiesce`` after a network is spelled and checked too. :class:`EvaluatorError` lists
    what is available. The default (``None``, ``"default"``) is :func:`play_default`."""
    available = play_evaluator_names() if available is None else available
    if is_default(name):
        return play_default(available)
    network = split_quiesce(str(name).strip())
    if network is None:
        return resolve_name(name, available)
    sparse = network.strip().lower() == SPARSE_NAME
    canonical = SPARSE if sparse else canonical_evaluator_name(network) + QUIESCE_SUFFIX
    if canonical not in available:
        trained = sparse or fast_network_name(canonical) is not None
        why = ("its networks' weights are not all here" if trained else
               "only the compiled sparse networks and their democracy, sparse+quiesce, take it")
        raise EvaluatorError(f"evaluator {canonical!r} is not available here ({why}); "
                             f"available: {', '.join(available)}")
    return canonical


def load_play_evaluator(name: str) -> Evaluator:
    """The evaluator ``name`` (canonical, as :func:`resolve_play_name` spells it), tried on a few positions
    (:func:`~knights.evaluate.base.probe`) before it plays."""
    network = split_quiesce(name)
    if network is None:
        return load_evaluator(name)
    return probe(JudgedDemocracy() if name == SPARSE else QuiescenceEvaluator(network))


_LOADED: dict[str, Evaluator] = {}
_LOADING = threading.Lock()


def cached_play_evaluator(name: str) -> Evaluator:
    """:func:`load_play_evaluator`, once per name and process (the web page's games and the arena's
    players share them; every evaluator here may be asked from several threads)."""
    with _LOADING:
        if name not in _LOADED:
            _LOADED[name] = load_play_evaluator(name)
        return _LOADED[name]


def select_play_evaluator(name: str | None = None, *,
                          notice: Callable[[str], None] | None = None) -> Evaluator:
    """The evaluator to play with: :func:`resolve_play_name`, loaded. When the default falls back
    (its files are missing), ``notice`` gets one line saying so."""
    chosen = resolve_play_name(name)
    tell_fallback(name, ONE_PLY_EVALUATOR, chosen, notice)
    return load_play_evaluator(chosen)


def searcher_for(asked: str | None, *, depth: int, movetime: float | None = None,
                 notice: Callable[[str], None] | None = None, **options: Any) -> SearchEngine:
    """The searching bot for an evaluator name as a user gives it (``None`` or ``"default"``:
    the default for ``depth``, :func:`knights.engine.search.evaluator_for_depth`), as every
    route builds it: a network of :data:`~knights.learn.registry.FAST_NETWORKS` (or one with ``+quiesce``)
    searched compiled (its weights packed, no torch evaluator loaded), any other evaluator loaded by name
    and searched in Python (:func:`~knights.engine.compiled_search.search_engine`, as the UCI engine builds it).
    ``depth`` 1 is the one-ply bot's decision (``+quiesce``: judged where the captures end)."""
    wanted = evaluator_for_depth(asked, depth)
    if depth > 1 and wanted is not None:
        fast = fast_network_name(resolve_play_name(wanted))
        if fast is not None:
            return FastSearchEngine(net=fast, depth=depth, movetime=movetime, **options)
    return search_engine(select_play_evaluator(wanted, notice=notice), depth=depth, movetime=movetime, **options)


def bot_for(asked: str | None, *, depth: int, movetime: float | None = None,
            notice: Callable[[str], None] | None = None, **options: Any) -> OnePlyEngine | SearchEngine:
    """:func:`searcher_for`, but the plain :class:`OnePlyEngine` at ``depth`` 1."""
    if depth <= 1:
        return OnePlyEngine(select_play_evaluator(evaluator_for_depth(asked, depth), notice=notice), **options)
    return searcher_for(asked, depth=depth, movetime=movetime, notice=notice, **options)
