"""Players named by **spec** strings: parsed, checked and built.

A spec is a short picklable name, so that every worker process of a match builds
its own players from it::

    >>> check_spec("ours:material:stoch"), check_spec(" ab3 ")
    ('ours:material', 'ab3')

========================  =====================================================
``ours:<evaluator>``      our one-ply engine (:mod:`knights.engine.one_ply`) with any
                          evaluator :func:`knights.engine.build.play_evaluator_names`
                          lists (``EL/v8``, ``material``, ``democracy``,
                          ``default``); stochastic openings on. ``:det`` at the
                          end (``ours:material:det``) plays deterministically.
                          A compiled network with ``+quiesce`` (``ours:EL/v21+quiesce``)
                          is judged where the captures end
                          (:mod:`knights.engine.judged`).
``search:<evaluator>``    the same evaluator behind the alpha-beta search
                          (:mod:`knights.engine.search`): ``movetime_ms`` a move when
                          the settings give one, else depth 3; ``search<D>:...``
                          searches exactly to depth D; ``...@<ms>`` (at the end)
                          thinks that many milliseconds a move whatever the
                          settings say; ``:det`` as for ``ours``
``random``                a random mover
``greedy``                one-ply material counter
``ab<N>``                 material alpha-beta to depth N + capture search (ab2, ab3)
``sf-nodes:<N>``          Stockfish, Skill Level 0, N nodes a move (1, 10, 100)
``sf-elo:<E>``            Stockfish, UCI_LimitStrength, UCI_Elo E (>= 1350)
``sf-depth:<D>``          Stockfish at full strength to depth D
``uci:<command>``         any UCI engine started by ``command`` (python-chess)
``sunfish[@<ms>]``        sunfish (PyPI ``sunfish``: pure Python, a hand-written
                          piece-square table), its ``sunfish-uci`` executable;
                          ``movetime_ms`` a move (default 1000), ``@<ms>`` to fix it
========================  =====================================================

Per-move limits: our engine and the material players search a fixed depth,
``sf-nodes`` its nodes; ``sf-elo`` and ``uci:`` engines take ``nodes`` /
``movetime_ms`` from :class:`~knights.lab.arena.game.Settings` (``sf-elo`` defaults to
20,000 nodes, enough for Stockfish 15.1 to reach the depth, 1 + its skill level, at
which it picks its weakened move).
"""

from __future__ import annotations

import os
import re

from knights.engine.build import cached_play_evaluator, resolve_play_name
from knights.engine.clock import PLAY_DEPTH
from knights.engine.compiled_search import make_engine, search_engine
from knights.engine.networks import is_fast_network
from knights.engine.search import evaluator_for_depth
from knights.evaluate.base import Evaluator
from knights.evaluate.names import DEFAULT_NETWORK
from knights.lab.arena.game import Settings
from knights.lab.arena.peers import sunfish_command
from knights.lab.arena.players import (
    AlphaBetaPlayer,
    EnginePlayer,
    GreedyPlayer,
    Player,
    RandomPlayer,
    StockfishPlayer,
    UciPlayer,
)
from knights.learn.registry import ONE_PLY_EVALUATOR

SPEC_HELP = ("ours:<evaluator>[:det], search[<D>]:<evaluator>[:det], random, greedy, ab<N>, sf-nodes:<N>, "
             "sf-elo:<E>, sf-depth:<D>, uci:<command>, sunfish[@<ms>]")
SUNFISH_MOVETIME_MS = 1000
SEARCH_DEPTH = 3
"""The depth of a ``search:`` player when the match gives no movetime."""
_SEARCH = re.compile(r"search(\d*):")


def canonical(spec: str) -> str:
    """The one spelling of a spec (``ours`` / ``ours:default`` name the default
    evaluator; ``:stoch`` is the default and is dropped)."""
    spec = spec.strip()
    if spec == "ours" or spec.startswith("ours:"):
        evaluator, stochastic = parse_ours(spec)
        return f"ours:{evaluator}" + ("" if stochastic else ":det")
    found = _SEARCH.match(spec)
    if found:
        rest, at, ms = spec[found.end():].partition("@")
        evaluator, stochastic = parse_ours("ours:" + rest)
        if rest.split(":")[0] in ("", "default"):     # the searching bot's own default
            evaluator = evaluator_for_depth(None, SEARCH_DEPTH) or DEFAULT_NETWORK
        depth = str(int(found.group(1))) if found.group(1) else ""
        return f"search{depth}:{evaluator}" + ("" if stochastic else ":det") + (f"@{ms}" if at else "")
    return spec


def parse_ours(spec: str) -> tuple[str, bool]:
    """``ours:EL/v8:det`` -> ``("EL/v8", False)``: the evaluator and whether the
    opening is stochastic."""
    rest = spec[len("ours:"):] if spec.startswith("ours:") else ""
    stochastic = True
    for suffix, value in ((":det", False), (":stoch", True)):
        if rest.endswith(suffix) or rest == suffix[1:]:
            rest, stochastic = rest[: -len(suffix)] if rest.endswith(suffix) else "", value
    return (ONE_PLY_EVALUATOR if rest in ("", "default") else rest), stochastic


def check_spec(spec: str) -> str:
    """``spec`` in canonical form; ``ValueError`` if it names no player."""
    spec = canonical(spec)
    found = _SEARCH.match(spec)
    if found and found.group(1) and not 1 <= int(found.group(1)) <= PLAY_DEPTH:
        raise ValueError(f"{spec!r}: a search depth is from 1 to {PLAY_DEPTH}")
    if found and "@" in spec and not re.fullmatch(r"[1-9]\d*", spec.partition("@")[2]):
        raise ValueError(f"{spec!r}: '@' is followed by the milliseconds a move, e.g. search:EL/v10@1000")
    if found and found.group(1) and "@" in spec:
        raise ValueError(f"{spec!r}: a search has a fixed depth (search3:...) or a time (...@1000), not both")
    if spec in ("random", "greedy") or spec.startswith(("ours:", "uci:")) or found:
        if spec == "uci:":
            raise ValueError("uci: needs a command, e.g. 'uci:/usr/games/stockfish'")
        return spec
    if re.fullmatch(r"ab[1-9]", spec) or re.fullmatch(r"sf-(nodes|elo|depth):\d+", spec):
        return spec
    if re.fullmatch(r"sunfish(@[1-9]\d*)?", spec):
        return spec
    raise ValueError(f"unknown player {spec!r}; players are: {SPEC_HELP}")


def shared_evaluator(name: str) -> Evaluator:
    """The evaluator ``name`` asks for (:func:`~knights.engine.build.resolve_play_name`: ``EL/v21+quiesce``
    too), loaded once per process (:func:`~knights.engine.build.cached_play_evaluator`); in an arena worker
    process (``KNIGHTS_ARENA_WORKER`` set) torch first gets one thread, as each worker has a core."""
    if os.environ.get("KNIGHTS_ARENA_WORKER"):
        import torch

        torch.set_num_threads(1)
    return cached_play_evaluator(resolve_play_name(name))


def build_player(spec: str, settings: Settings | None = None, seed: int | None = None) -> Player:
    """A fresh player for ``spec`` (see the table above), seeded with ``seed``; the
    per-move limits of ``settings`` (default :class:`~knights.lab.arena.game.Settings`)."""
    spec = check_spec(spec)
    settings = settings or Settings()
    if spec.startswith("ours:"):
        evaluator, stochastic = parse_ours(spec)
        chosen = shared_evaluator(evaluator)
        return EnginePlayer(make_engine(chosen, stochastic=stochastic, seed=seed), spec)
    found = _SEARCH.match(spec)
    if found:
        rest, at, ms = spec[found.end():].partition("@")
        evaluator, stochastic = parse_ours("ours:" + rest)
        if found.group(1):
            depth, movetime = int(found.group(1)), None
        elif at:
            depth, movetime = PLAY_DEPTH, int(ms) / 1000
        elif settings.movetime_ms:
            depth, movetime = PLAY_DEPTH, settings.movetime_ms / 1000
        else:
            depth, movetime = SEARCH_DEPTH, None
        name = resolve_play_name(evaluator)
        search = search_engine(name if is_fast_network(name) else shared_evaluator(name), depth=depth,
                               movetime=movetime, stochastic=stochastic, seed=seed)
        return EnginePlayer(search, spec)
    if spec == "random":
        return RandomPlayer(seed)
    if spec == "greedy":
        return GreedyPlayer(seed)
    if spec.startswith("ab"):
        return AlphaBetaPlayer(int(spec[2:]), seed)
    kind, _, value = spec.partition(":")
    if kind == "sf-nodes":
        return StockfishPlayer(nodes=int(value), skill=0, name=spec)
    if kind == "sf-elo":
        return StockfishPlayer(elo=int(value), nodes=settings.nodes, movetime_ms=settings.movetime_ms, name=spec)
    if kind == "sf-depth":
        return StockfishPlayer(depth=int(value), name=spec)
    if spec.startswith("sunfish"):
        fixed = spec.partition("@")[2]
        movetime_ms = int(fixed) if fixed else settings.movetime_ms or SUNFISH_MOVETIME_MS
        return UciPlayer(sunfish_command(), movetime_ms=movetime_ms, name=spec)
    # uci:<command>, the one kind check_spec lets through that is left
    return UciPlayer(value, movetime_ms=settings.movetime_ms, nodes=settings.nodes, name=spec)
