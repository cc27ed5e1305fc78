"""The one builder: a :class:`~knights.engine.spec.BotSpec` becomes an engine.

Every route (``knights play``, ``knights uci`` and lichess-bot through it, lichess-bot's homemade engine, the web
page, the arena's players, the benchmarks) builds its bot here::

    engine = build("ours:sparse+quiesce")            # or build(BotSpec(...)), build(None): the default bot
    decision = engine.choose(chess.Board())

What comes back is a search (:class:`~knights.engine.search.SearchEngine`): the compiled one
(:class:`~knights.engine.compiled_search.FastSearchEngine`) when the evaluator is a compiled sparse network or
one judged where the captures end, the Python one over any other evaluator. At depth 1 either returns the one-ply
bot's decision (the paper's bot): the evaluator judges the position after every legal move.

:func:`resolve` says what the default is and checks that a name's files are here, looking at the files once;
:func:`available` lists every evaluator name a bot can play here, without importing torch.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from knights.engine.constants import UNLIMITED_DEPTH
from knights.engine.spec import ONE_PLY_EVALUATOR, SEARCH_NETWORK, SPARSE_DEMOCRACY, BotSpec, SpecError, parse
from knights.evaluate import names
from knights.evaluate.names import QUIESCE_SUFFIX, SPARSE_NAME, EvaluatorError
from knights.learn import registry

Notice = Callable[[str], None]


# -- names --------------------------------------------------------------------------------------------------------
def judged_names(static: list[str]) -> list[str]:
    """``X+quiesce`` for each compiled network ``X`` among ``static``, then ``sparse+quiesce`` when its members and
    :data:`SEARCH_NETWORK` (which a deeper search asked for it plays) are all there.

    >>> judged_names(["material", "EL/v10", "EL/v21"])
    ['EL/v21+quiesce']
    """
    judged = [f"{n}{QUIESCE_SUFFIX}" for n in static if n in registry.FAST_NETWORKS]
    needed = (*SPARSE_DEMOCRACY, SEARCH_NETWORK)
    return judged + ([f"{SPARSE_NAME}{QUIESCE_SUFFIX}"] if all(m in static for m in needed) else [])


def available() -> list[str]:
    """Every evaluator name a bot can play here (the files are looked at once; no torch):
    :func:`knights.evaluate.names.available_evaluators`, then :func:`judged_names` of them."""
    static = names.available_evaluators()
    return static + judged_names(static)


def default_evaluator(depth: int, names_here: list[str]) -> str:
    """The evaluator a bot searching ``depth`` plies plays when none is named: :data:`ONE_PLY_EVALUATOR` at depth 1,
    :data:`SEARCH_NETWORK` deeper; when its files are missing, the evaluate layer's default rule
    (:func:`knights.evaluate.names.default_evaluator_name`: the democracy, the newest network, material)."""
    own = ONE_PLY_EVALUATOR if depth <= 1 else SEARCH_NETWORK
    return own if own in names_here else names.default_evaluator_name(names_here)


def compiled_network(evaluator: str) -> str | None:
    """The compiled sparse network a search plays for the canonical ``evaluator`` name (``EL/v21``,
    ``EL/v21+quiesce``; ``sparse+quiesce``: :data:`SEARCH_NETWORK`), or ``None`` for every other evaluator."""
    base = evaluator[: -len(QUIESCE_SUFFIX)] if evaluator.endswith(QUIESCE_SUFFIX) else evaluator
    base = SEARCH_NETWORK if base == SPARSE_NAME else base
    return base if base in registry.FAST_NETWORKS else None


def resolve(spec: BotSpec, names_here: list[str] | None = None, notice: Notice | None = None) -> BotSpec:
    """``spec`` with its evaluator named and checked against the files here (``names_here``: default
    :func:`available`): the default for its depth (``notice`` hears when the bot's own is missing and another
    plays); :class:`~knights.evaluate.names.EvaluatorError` lists what is here when the name is not."""
    names_here = available() if names_here is None else names_here
    if spec.evaluator is None:
        chosen = default_evaluator(spec.depth, names_here)
        own = ONE_PLY_EVALUATOR if spec.one_ply else SEARCH_NETWORK
        if notice is not None and chosen != own:
            notice(f"note: {own} is not here (its weights are missing); playing {chosen} instead")
        return spec.with_options(evaluator=chosen)
    if spec.evaluator not in names_here:
        raise EvaluatorError(names.missing(spec.evaluator, names_here))
    return spec


# -- evaluators ---------------------------------------------------------------------------------------------------
_LOADED: dict[tuple[str, tuple[tuple[str, str], ...]], object] = {}
_LOADING = threading.Lock()


def evaluator(name: str):
    """The evaluator of the canonical ``name``, loaded once per process (the web page's games and the arena's
    players share them; every evaluator may be asked from several threads) and tried on a few positions first.
    Kept by name and by the model folders it was read from (a process that points a family elsewhere loads anew)."""
    key = (name, tuple((family, str(models)) for family, (_, models) in sorted(registry.FAMILIES.items())))
    with _LOADING:
        if key not in _LOADED:
            _LOADED[key] = _load(name)
        return _LOADED[key]


def _load(name: str):
    from knights.evaluate.base import probe

    if not name.endswith(QUIESCE_SUFFIX):
        from knights.evaluate.load import load_evaluator

        return load_evaluator(name)
    from knights.engine.judged import JudgedDemocracy, QuiescenceEvaluator

    network = name[: -len(QUIESCE_SUFFIX)]
    return probe(JudgedDemocracy(SPARSE_DEMOCRACY) if network == SPARSE_NAME else QuiescenceEvaluator(network))


# -- the builder --------------------------------------------------------------------------------------------------
def build(spec: BotSpec | str | None = None, *, notice: Notice | None = None,
          names_here: list[str] | None = None):
    """The engine ``spec`` names (a :class:`BotSpec`, a name :func:`knights.engine.spec.parse` reads, or ``None``:
    the default bot, searching as deep as its clock allows). A compiled network, or one judged where the captures
    end, is searched compiled (no torch); any other evaluator by the Python search. At depth 1 the evaluator
    named judges each move's position: the one-ply bot."""
    if not isinstance(spec, BotSpec):
        spec = parse(spec)
    spec = resolve(spec, names_here, notice)
    assert spec.evaluator is not None
    network = compiled_network(spec.evaluator)
    if network is None:
        from knights.engine.search import SearchEngine

        return SearchEngine(evaluator(spec.evaluator), depth=spec.depth, movetime=spec.movetime,
                            stochastic=spec.stochastic, seed=spec.seed, capture_bonus=spec.capture_bonus)
    from knights.engine.compiled_search import FastSearchEngine

    # one ply: the evaluator named judges each move (a plain network: compiled, as the search evaluates it, no torch);
    # deeper: the network's own search, which plays the captures out and asks the network at every leaf
    stage = evaluator(spec.evaluator) if spec.one_ply and spec.evaluator.endswith(QUIESCE_SUFFIX) else None
    return FastSearchEngine(stage, net=network, depth=spec.depth, movetime=spec.movetime, stochastic=spec.stochastic,
                            seed=spec.seed, capture_bonus=spec.capture_bonus)


__all__ = [
    "ONE_PLY_EVALUATOR",
    "SEARCH_NETWORK",
    "SPARSE_DEMOCRACY",
    "UNLIMITED_DEPTH",
    "BotSpec",
    "SpecError",
    "available",
    "build",
    "compiled_network",
    "default_evaluator",
    "evaluator",
    "judged_names",
    "resolve",
]
