"""Players named by **spec** strings: parsed, checked and built.

A spec is a short picklable name, so that every worker process of a match builds
its own players from it::

    >>> check_spec("ours:material:stoch"), check_spec(" ab3 ")
    ('ours:material', 'ab3')

Our bots parse into a :class:`~knights.engine.spec.BotSpec` (:mod:`knights.engine.spec` has the grammar) and are
built by the one builder (:func:`knights.engine.build.build`):

========================  =====================================================
``ours:<evaluator>``      the one-ply bot with any evaluator
                          (:func:`knights.engine.build.available` lists them);
                          ``:det`` at the end plays deterministically
``search[<D>]:<evaluator>``  the search: ``movetime_ms`` a move when the settings
                          give one, else depth 3; ``search<D>:...`` exactly D
                          plies; ``...@<ms>`` that many milliseconds a move
``ab<N>``                 the search over material, N plies (ab2, ab3)
``random``                a random mover
``greedy``                one-ply material counter
``sf-nodes:<N>``          Stockfish, Skill Level 0, N nodes a move (1, 10, 100)
``sf-elo:<E>``            Stockfish, UCI_LimitStrength, UCI_Elo E (>= 1350)
``sf-depth:<D>``          Stockfish at full strength to depth D
``uci:<command>``         any UCI engine started by ``command`` (python-chess)
``sunfish[@<ms>]``        sunfish (PyPI ``sunfish``: pure Python), its
                          ``sunfish-uci`` executable; ``movetime_ms`` a move
                          (default 1000), ``@<ms>`` to fix it
========================  =====================================================

Per-move limits: our bots search a fixed depth or time,
``sf-nodes`` its nodes; ``sf-elo`` and ``uci:`` engines take ``nodes`` /
``movetime_ms`` from :class:`~knights.lab.arena.game.Settings` (``sf-elo`` defaults to
20,000 nodes, enough for Stockfish 15.1 to reach the depth, 1 + its skill level, at
which it picks its weakened move).
"""

from __future__ import annotations

import os
import re

from knights.engine import spec as bot
from knights.engine.build import build, resolve
from knights.engine.constants import UNLIMITED_DEPTH
from knights.lab.arena.game import Settings
from knights.lab.arena.peers import sunfish_command
from knights.lab.arena.players import EnginePlayer, GreedyPlayer, Player, RandomPlayer, StockfishPlayer, UciPlayer

SPEC_HELP = ("ours:<evaluator>[:det], search[<D>]:<evaluator>[:det][@<ms>], random, greedy, ab<N>, sf-nodes:<N>, "
             "sf-elo:<E>, sf-depth:<D>, uci:<command>, sunfish[@<ms>]")
SUNFISH_MOVETIME_MS = 1000
_SEARCH = re.compile(r"search(\d*):")


def canonical(spec: str) -> str:
    """The one spelling of a spec: ``ours`` / ``ours:default`` name the one-ply bot's default evaluator (without
    looking at the files), ``search:default`` the search's (the files decide: :func:`knights.engine.build.resolve`);
    ``:stoch`` is the default and is dropped; evaluator names are spelled canonically."""
    spec = spec.strip()
    if not bot.is_bot(spec) or re.fullmatch(r"ab[1-9]", spec):
        return spec
    parsed = bot.parse(spec)
    det = "" if parsed.stochastic else ":det"
    if parsed.one_ply and spec.startswith("ours"):
        return f"ours:{parsed.evaluator or bot.ONE_PLY_EVALUATOR}{det}"
    found = _SEARCH.match(spec)
    assert found is not None
    evaluator = parsed.evaluator or resolve(parsed).evaluator
    at = f"@{round(parsed.movetime * 1000)}" if parsed.movetime is not None else ""
    return f"search{(found.group(1) and int(found.group(1))) or ''}:{evaluator}{det}{at}"


def check_spec(spec: str) -> str:
    """``spec`` in canonical form; ``ValueError`` if it names no player."""
    try:
        spec = canonical(spec)
    except ValueError as exc:
        raise ValueError(f"{spec.strip()!r}: {exc}") from None
    if spec in ("random", "greedy") or bot.is_bot(spec) or spec.startswith("uci:"):
        if spec == "uci:":
            raise ValueError("uci: needs a command, e.g. 'uci:/usr/games/stockfish'")
        return spec
    if re.fullmatch(r"sf-(nodes|elo|depth):\d+", spec) or re.fullmatch(r"sunfish(@[1-9]\d*)?", spec):
        return spec
    raise ValueError(f"unknown player {spec!r}; players are: {SPEC_HELP}")


def arena_threads() -> None:
    """In an arena worker process (``KNIGHTS_ARENA_WORKER`` set) torch gets one thread: each worker has a core."""
    if os.environ.get("KNIGHTS_ARENA_WORKER"):
        import torch

        torch.set_num_threads(1)


def build_player(spec: str, settings: Settings | None = None, seed: int | None = None) -> Player:
    """A fresh player for ``spec`` (see the table above), seeded with ``seed``; the
    per-move limits of ``settings`` (default :class:`~knights.lab.arena.game.Settings`)."""
    spec = check_spec(spec)
    settings = settings or Settings()
    if bot.is_bot(spec):
        arena_threads()
        wanted = bot.parse(spec, seed=seed)
        if spec.startswith("search:") and wanted.movetime is None and settings.movetime_ms:
            wanted = wanted.with_options(depth=UNLIMITED_DEPTH, movetime=settings.movetime_ms / 1000)
        return EnginePlayer(build(wanted), spec)
    if spec == "random":
        return RandomPlayer(seed)
    if spec == "greedy":
        return GreedyPlayer(seed)
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
