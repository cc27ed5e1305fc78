"""The web page's settings, read, checked and made a bot.

:class:`EngineSettings` reads and checks what the page sends (evaluator, stochastic opening, seed, search depth,
movetime in seconds); :func:`engine_for` makes the bot with the one builder (:func:`knights.engine.build.build`),
as every other route does: ``"default"`` (what a request that names no evaluator gets) is the bot's own for the
depth; a request without a depth gets the bot's own, as deep as :data:`SEARCH_MOVETIME` allows. The names are
those :func:`knights.engine.build.available` lists; loaded evaluators are kept, one per name, so a new game does
not load the same networks again.

>>> EngineSettings.from_json({"evaluator": "material", "depth": 1}).as_json()["evaluator"]
'material'
>>> EngineSettings.from_json({}).as_json()["evaluator"]
'default'
>>> EngineSettings.from_json({"depth": "deep"})
Traceback (most recent call last):
...
knights.frontends.web.errors.RequestError: depth must be a whole number from 1 to 64, not 'deep'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import chess

from knights.common import quoted
from knights.engine.build import available, build, default_evaluator, resolve
from knights.engine.constants import UNLIMITED_DEPTH
from knights.engine.one_ply import Decision
from knights.engine.spec import PLAY_MOVETIME, BotSpec, parse
from knights.evaluate.names import EvaluatorError, is_default
from knights.frontends.web.errors import RequestError

DEFAULT = "default"
"""The evaluator name that asks for the bot's own (as ``knights play`` and ``knights uci`` do)."""
MAX_DEPTH = UNLIMITED_DEPTH
"""The deepest search the API accepts (the page offers :data:`PAGE_DEPTHS`)."""
DEFAULT_DEPTH = UNLIMITED_DEPTH
"""The depth of a request that gives none: the bot's own, as deep as the time allows."""
PAGE_DEPTHS = (1, 2, 3, 4, UNLIMITED_DEPTH)
"""Search depths the page's select offers; 1 is the one-ply bot, 64 the bot as it plays elsewhere."""
SEARCH_MOVETIME = PLAY_MOVETIME
"""Seconds a deeper search may think when the page gives no movetime (the terminal's)."""
MAX_MOVETIME = 600.0
"""The longest movetime the API accepts, seconds (ten minutes)."""
MAX_SEED = 2**32 - 1
MAX_NAME = 64
"""The longest evaluator name the API reads (``EL/v26+quiesce`` is 14 characters)."""

SETTINGS_FIELDS = ("evaluator", "stochastic", "seed", "depth", "movetime")


class Engine(Protocol):
    """What the web games play with: the one-ply engine, or a search with its contract."""

    def choose(self, board: chess.Board) -> Decision: ...


def _whole(value: Any, name: str, low: int, high: int) -> int:
    """``value`` as an int in ``[low, high]`` (JSON booleans are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise RequestError(f"{name} must be a whole number from {low} to {high}, not {quoted(value)}")
    return value


def _seconds(value: Any, name: str, high: float) -> float:
    """``value`` as seconds in ``(0, high]``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= high:
        raise RequestError(f"{name} must be a number of seconds above 0 and at most {high:g}, not {quoted(value)}")
    return float(value)


@dataclass(frozen=True)
class EngineSettings:
    """The bot's settings for one game, checked. ``evaluator`` is a canonical name
    (:func:`~knights.engine.build.resolve`) or :data:`DEFAULT`; ``movetime`` is
    seconds per move for a search (``None``: :data:`SEARCH_MOVETIME`; the one-ply bot
    ignores it)."""

    evaluator: str
    stochastic: bool = True
    seed: int | None = None
    depth: int = DEFAULT_DEPTH
    movetime: float | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any], available: list[str] | None = None) -> EngineSettings:
        """Settings from a request's fields (missing ones take their defaults: the bot's own
        evaluator, :data:`DEFAULT`, and depth, :data:`DEFAULT_DEPTH`).
        :class:`~knights.frontends.web.errors.RequestError` (400) names the first bad field."""
        name = data.get("evaluator")
        if name is not None and not isinstance(name, str):
            raise RequestError(f"evaluator must be a name such as 'material', not {quoted(name)}")
        if name is not None and len(name) > MAX_NAME:
            raise RequestError(f"unknown evaluator {quoted(name)}: see /api/options for the names")
        try:
            evaluator = DEFAULT if is_default(name) else str(resolve(parse(name), available).evaluator)
        except EvaluatorError as exc:
            raise RequestError(str(exc)) from None
        stochastic = data.get("stochastic", True)
        if not isinstance(stochastic, bool):
            raise RequestError(f"stochastic must be true or false, not {quoted(stochastic)}")
        seed = data.get("seed")
        seed = None if seed is None else _whole(seed, "seed", 0, MAX_SEED)
        depth = _whole(data.get("depth", DEFAULT_DEPTH), "depth", 1, MAX_DEPTH)
        movetime = data.get("movetime")
        movetime = None if movetime is None else _seconds(movetime, "movetime", MAX_MOVETIME)
        return cls(evaluator, stochastic, seed, depth, movetime)

    def as_json(self) -> dict[str, Any]:
        return {"evaluator": self.evaluator, "stochastic": self.stochastic, "seed": self.seed,
                "depth": self.depth, "movetime": self.movetime}


def spec_for(settings: EngineSettings) -> BotSpec:
    """A game's :class:`EngineSettings` as a :class:`~knights.engine.spec.BotSpec` (a search without a movetime
    thinks :data:`SEARCH_MOVETIME` a move)."""
    return BotSpec(None if settings.evaluator == DEFAULT else settings.evaluator, depth=settings.depth,
                   movetime=settings.movetime or SEARCH_MOVETIME, stochastic=settings.stochastic, seed=settings.seed)


def engine_for(settings: EngineSettings) -> Engine:
    """The bot of a game's :class:`EngineSettings`, from the one builder."""
    try:
        return build(spec_for(settings))   # type: ignore[no-any-return]
    except EvaluatorError as exc:
        raise RequestError(str(exc)) from None


def page_options() -> dict[str, Any]:
    """What the page's settings offer: the evaluators on disk after :data:`DEFAULT` (the
    bot's own, the default), the search depths and the default one, the default movetime."""
    names = available()
    return {"evaluators": [DEFAULT, *names], "default_evaluator": DEFAULT, "default_evaluator_is": {
                "1": default_evaluator(1, names), "search": default_evaluator(UNLIMITED_DEPTH, names)},
            "depths": list(PAGE_DEPTHS), "default_depth": DEFAULT_DEPTH, "search_available": True,
            "default_movetime": SEARCH_MOVETIME, "max_movetime": MAX_MOVETIME}
