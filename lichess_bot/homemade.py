"""The Knights and Kernels bot as a lichess-bot "homemade" engine.

Keep lichess-bot's own ``homemade.py`` (its tests import ``ExampleEngine`` from it):
save this file next to it as ``knights_homemade.py`` and add one line at the end of
lichess-bot's ``homemade.py``::

    from knights_homemade import KnightsKernels  # noqa: E402,F401

``python lichess_bot/install.py LICHESS_BOT_DIR`` does both (and nothing twice). The
``knights`` package must be importable in lichess-bot's Python environment
(``pip install -e /path/to/knights-and-kernels``, or ``KNIGHTS_HOME`` pointing to the
checkout with the package's dependencies installed). In ``config.yml``::

    engine:
      protocol: "homemade"
      name: "KnightsKernels"
      homemade_options:        # all optional
        Evaluator: "default"   # EL/v25 when searching (compiled), sparse+quiesce at Depth 1 (or their fallback);
                               # or material, democracy, EL/vN, each optionally +qsearch or +threats;
                               # or a compiled network (EL/v13, EL/v15-v26) +quiesce, or sparse+quiesce
        Stochastic: true       # the paper's stochastic opening
        Seed: -1               # -1: fresh randomness
        CaptureBonus: 0        # centipawns added to captures (the original: 15)
        Depth: 64              # the deepest search; 1: the paper's one-ply bot

The class is thin: every decision is :meth:`knights.engine.search.SearchEngine.choose`
(with ``Depth: 1``, exactly :meth:`knights.engine.one_ply.OnePlyEngine.choose`), built by
:func:`knights.engine.build.build` as ``knights uci`` builds it: EL/v25 by default,
searched by the compiled search (no torch call per move). The
search takes its time from lichess-bot's ``time_limit`` as ``knights uci`` takes it from
``go`` (:func:`knights.engine.clock.move_budget`: a share of the clock plus most of the
increment); when that share is less than a one-ply decision costs (timed when the engine is built, then the
median of the last few decisions, :class:`knights.engine.clock.DecisionCost`, as ``knights uci`` keeps it), the move is
:func:`knights.engine.clock.quick_move`'s static choice (``info["depth"]`` 0), as ``knights
uci`` answers; ``ponder`` is ignored; a non-empty ``root_moves`` list (moves suggested by
lichess-bot's endgame tablebase sources) restricts the candidates.
Draws and resignation are lichess-bot's: every move returns its score (``info["score"]``),
and the configured ``draw_or_resign`` rules decide, exactly as for a UCI engine; the
class never offers, accepts or resigns on its own.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

import chess
from chess.engine import Cp, Limit, Mate, PlayResult, PovScore
from lib.engine_wrapper import MinimalEngine

# A checkout of the project can also be found through $KNIGHTS_HOME instead of an install.
_HOME = os.environ.get("KNIGHTS_HOME")
if _HOME and _HOME not in sys.path:
    sys.path.insert(0, _HOME)

try:
    from knights.engine.build import build
    from knights.engine.clock import (
        ONE_PLY_FLOOR,
        DecisionCost,
        GoLimits,
        move_budget,
        quick_move,
        search_deadlines,
    )
    from knights.engine.constants import UNLIMITED_DEPTH
    from knights.engine.search import SearchLimits
    from knights.engine.spec import parse
except ImportError as exc:  # a setup problem, said clearly (with the import that failed)
    if exc.name is not None and exc.name.split(".")[0] == "knights":
        where = (f"KNIGHTS_HOME={_HOME} holds no knights/ package" if _HOME else
                 "install it (pip install -e /path/to/knights-and-kernels) or set KNIGHTS_HOME to the checkout")
    else:
        where = (f"a dependency of the knights package is missing from this Python ({sys.executable}): "
                 "pip install -e /path/to/knights-and-kernels installs them all")
    raise ImportError(f"KnightsKernels cannot import the knights package ({exc}); {where}",
                      name=exc.name) from exc

logger = logging.getLogger(__name__)


def _option(options: Any, name: str, default: Any) -> Any:
    """A homemade option by case-insensitive name."""
    for key, value in dict(options or {}).items():
        if str(key).lower() == name.lower() and value is not None:
            return value
    return default


def _whole(options: Any, name: str, default: int, low: int, high: int, rule: str = "") -> int:
    """The integer option ``name``, from ``low`` to ``high``; a ValueError naming it otherwise."""
    value = _option(options, name, default)
    try:
        number = int(str(value).strip())
    except ValueError:
        number = None
    if number is None or not low <= number <= high:
        raise ValueError(f"KnightsKernels: the {name} option must be an integer from {low} to {high}{rule}, "
                         f"not {value!r}")
    return number


def _flag(options: Any, name: str, default: bool) -> bool:
    """The true/false option ``name``; a ValueError naming it for any other value."""
    value = _option(options, name, default)
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "false", "yes", "no", "on", "off", "1", "0"):
        raise ValueError(f"KnightsKernels: the {name} option must be true or false, not {value!r}")
    return text in ("true", "yes", "on", "1")


COST_MARGIN = 1.5
"""A one-ply decision is started only when the move's budget exceeds this times what a decision costs (the median
of the last few, :class:`knights.engine.clock.DecisionCost`); below, the static quick move answers. ``knights uci``
keeps a rule of the same kind (its own margin, :data:`knights.frontends.uci.COST_MARGIN`, and a fallback time)."""


def _limits(limit: Limit, turn: chess.Color, cost: float = 0.0) -> SearchLimits | None:
    """lichess-bot's ``time_limit`` (python-chess seconds) as the search's limits; ``None``
    when the clock leaves less than a one-ply decision costs (``cost``, seconds): then the
    quick move must answer."""
    def ms(seconds: float | None) -> int | None:
        return None if seconds is None else round(seconds * 1000)

    go = GoLimits(wtime=ms(limit.white_clock), btime=ms(limit.black_clock), winc=ms(limit.white_inc),
                  binc=ms(limit.black_inc), movestogo=limit.remaining_moves, movetime=ms(limit.time))
    budget = move_budget(go, turn)
    if budget is None:
        return SearchLimits(depth=limit.depth, nodes=limit.nodes, soft=None if limit.depth or limit.nodes else 0.5,
                            hard=None if limit.depth or limit.nodes else 1.0)
    if budget < COST_MARGIN * cost:
        return None if COST_MARGIN * cost > ONE_PLY_FLOOR or budget < cost else SearchLimits(depth=0)
    soft, hard = search_deadlines(budget, now=0.0)
    return SearchLimits(depth=limit.depth, nodes=limit.nodes, soft=soft, hard=hard)


class KnightsKernels(MinimalEngine):
    """KS_ChessAI rebuilt: a trained evaluator behind an alpha-beta search (one ply with
    ``Depth: 1``), the stochastic opening."""

    def __init__(self, commands: Any, options: Any, stderr: Any, draw_or_resign: Any,
                 game: Any, debug: bool, **popen_args: Any) -> None:
        super().__init__(commands, options, stderr, draw_or_resign, game, debug, **popen_args)
        evaluator = _option(options, "Evaluator", None)
        seed = _whole(options, "Seed", -1, -1, 2**31 - 1, " (-1: fresh randomness)")
        stochastic = _flag(options, "Stochastic", True)
        bonus = _whole(options, "CaptureBonus", 0, 0, 100, " (centipawns)") / 100.0
        depth = _whole(options, "Depth", UNLIMITED_DEPTH, 1, UNLIMITED_DEPTH, " (1: the one-ply bot)")
        self.knights = build(parse(evaluator, depth=depth, stochastic=bool(stochastic), seed=None if seed < 0 else seed,
                                   capture_bonus=bonus), notice=logger.warning)
        logger.info(f"KnightsKernels plays with {self.knights.name}")
        self.decision_cost = DecisionCost()
        # timed now, before the game's clock runs: the first use loads and compiles what a decision needs
        self.decision_cost.note(self.knights.measure_one_ply())

    def search(self, board: chess.Board, time_limit: Limit, ponder: bool, draw_offered: bool,
               root_moves: Any) -> PlayResult:
        """Search within ``time_limit``; ``ponder`` and ``draw_offered`` need nothing here
        (draws are decided by lichess-bot's rules)."""
        restrict = root_moves if isinstance(root_moves, list) and root_moves else None
        limits = _limits(time_limit, board.turn, self.decision_cost.seconds or 0.0)
        if limits is None:     # no time for a decision: the static material move, as knights uci answers
            move = quick_move(board, restrict)
            return PlayResult(move, None, {"depth": 0, "pv": [move]})
        decision = self.knights.choose(board, root_moves=restrict, limits=limits)
        self.decision_cost.note(self.knights.one_ply_seconds)
        own = decision.score_for(board.turn)
        if decision.mate_in is not None:
            score = PovScore(Mate(decision.mate_in), board.turn)
        elif decision.mates:
            score = PovScore(Mate(1), board.turn)
        else:
            score = PovScore(Cp(round(own * 100)), board.turn)
        info = {"score": score, "depth": decision.depth, "nodes": decision.nodes or len(decision.candidates),
                "pv": list(decision.pv) or [decision.move]}
        result = PlayResult(decision.move, None, info)
        # What lichess-bot's EngineWrapper.search does for UCI and XBoard engines: keep the
        # score, then let the configured draw_or_resign rules set draw_offered / resigned.
        scores = getattr(self, "scores", None)
        if isinstance(scores, list):
            scores.append(score)
        decide = getattr(self, "offer_draw_or_resign", None)
        return decide(result, board) if callable(decide) else result
