"""The one place the web page's settings become a bot.

:class:`EngineSettings` reads and checks what the page sends (evaluator, stochastic
opening, seed, search depth, movetime in seconds); :func:`build_engine` turns them into an
engine with ``choose(board) -> Decision``: depth 1 is today's one-ply bot
(:class:`~knights.play.engine.OnePlyEngine`), a deeper search comes from
``knights.play.search.SearchEngine`` when that module exists, and is refused with a
clear 4xx while it does not. Loaded evaluators are kept, one per name, so a new
game does not load the same networks again.

>>> EngineSettings.from_json({"evaluator": "material", "depth": 1}).as_json()["evaluator"]
'material'
>>> EngineSettings.from_json({"depth": "deep"})
Traceback (most recent call last):
...
knights.web.errors.RequestError: depth must be a whole number from 1 to 8, not 'deep'
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import chess

from knights.evaluate.base import Evaluator
from knights.evaluate.names import EvaluatorError, available_evaluators, load_evaluator, resolve_name
from knights.play.engine import Decision
from knights.play.fast.engine import make_engine
from knights.web.errors import RequestError

MAX_DEPTH = 8
"""The deepest search the API accepts (the page offers :data:`PAGE_DEPTHS`)."""
PAGE_DEPTHS = (1, 2, 3, 4)
"""Search depths the page's select offers; 1 is the one-ply bot."""
SEARCH_MOVETIME = 2.0
"""Seconds a deeper search may think when the page gives no movetime."""
MAX_MOVETIME = 600.0
"""The longest movetime the API accepts, seconds (ten minutes)."""
MAX_SEED = 2**32 - 1

SETTINGS_FIELDS = ("evaluator", "stochastic", "seed", "depth", "movetime")


class Engine(Protocol):
    """What the web games play with: the one-ply engine, or a search with its contract."""

    def choose(self, board: chess.Board) -> Decision: ...


def _whole(value: Any, name: str, low: int, high: int) -> int:
    """``value`` as an int in ``[low, high]`` (JSON booleans are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise RequestError(f"{name} must be a whole number from {low} to {high}, not {value!r}")
    return value


def _seconds(value: Any, name: str, high: float) -> float:
    """``value`` as seconds in ``(0, high]``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= high:
        raise RequestError(f"{name} must be a number of seconds above 0 and at most {high:g}, not {value!r}")
    return float(value)


@dataclass(frozen=True)
class EngineSettings:
    """The bot's settings for one game, checked. ``evaluator`` is a canonical name
    (:func:`~knights.evaluate.names.resolve_name`); ``movetime`` is seconds per move
    for a search (``None``: no limit; the one-ply bot ignores it)."""

    evaluator: str
    stochastic: bool = True
    seed: int | None = None
    depth: int = 1
    movetime: float | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any], available: list[str] | None = None) -> EngineSettings:
        """Settings from a request's fields (missing ones take their defaults; the
        evaluator's default is the bot's, see :func:`~knights.evaluate.names.resolve_name`).
        :class:`~knights.web.errors.RequestError` (400) names the first bad field."""
        name = data.get("evaluator")
        if name is not None and not isinstance(name, str):
            raise RequestError(f"evaluator must be a name such as 'material', not {name!r}")
        try:
            evaluator = resolve_name(name, available)
        except EvaluatorError as exc:
            raise RequestError(str(exc)) from None
        stochastic = data.get("stochastic", True)
        if not isinstance(stochastic, bool):
            raise RequestError(f"stochastic must be true or false, not {stochastic!r}")
        seed = data.get("seed")
        seed = None if seed is None else _whole(seed, "seed", 0, MAX_SEED)
        depth = _whole(data.get("depth", 1), "depth", 1, MAX_DEPTH)
        movetime = data.get("movetime")
        movetime = None if movetime is None else _seconds(movetime, "movetime", MAX_MOVETIME)
        return cls(evaluator, stochastic, seed, depth, movetime)

    def as_json(self) -> dict[str, Any]:
        return {"evaluator": self.evaluator, "stochastic": self.stochastic, "seed": self.seed,
                "depth": self.depth, "movetime": self.movetime}


# -- evaluators, loaded once per name --------------------------------------------------
_loaded: dict[str, Evaluator] = {}
_loading = threading.Lock()


def cached_evaluator(name: str) -> Evaluator:
    """The evaluator ``name`` (canonical), loaded on first use and kept."""
    with _loading:
        if name not in _loaded:
            _loaded[name] = load_evaluator(name)
        return _loaded[name]


def build_engine(evaluator_name: str | None, stochastic: bool = True, seed: int | None = None,
                 depth: int = 1, movetime: float | None = None) -> Engine:
    """The bot for one game: every engine the web app plays with is built here.

    ``evaluator_name``: any name :func:`~knights.evaluate.names.available_evaluators`
    lists (``None``: the bot's default); ``depth`` 1 is the one-ply
    :class:`~knights.play.engine.OnePlyEngine` (``movetime`` unused); a deeper depth is a
    :class:`~knights.play.search.SearchEngine` that stops at that depth or after
    ``movetime`` seconds (default :data:`SEARCH_MOVETIME`), whichever comes first."""
    try:
        name = resolve_name(evaluator_name)
    except EvaluatorError as exc:
        raise RequestError(str(exc)) from None
    depth = _whole(depth, "depth", 1, MAX_DEPTH)
    evaluator = cached_evaluator(name)
    return make_engine(evaluator, depth=depth, movetime=movetime or SEARCH_MOVETIME, stochastic=stochastic,
                       seed=seed)


def engine_for(settings: EngineSettings) -> Engine:
    """:func:`build_engine` with a game's :class:`EngineSettings`."""
    return build_engine(settings.evaluator, settings.stochastic, settings.seed, settings.depth, settings.movetime)


def page_options() -> dict[str, Any]:
    """What the page's settings offer: the evaluators on disk (and the default one),
    the search depths, and whether search exists yet."""
    names = available_evaluators()
    return {"evaluators": names, "default_evaluator": resolve_name(None, names),
            "depths": list(PAGE_DEPTHS), "search_available": True,
            "max_movetime": MAX_MOVETIME}
