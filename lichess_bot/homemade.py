"""The Knights and Kernels bot as a lichess-bot "homemade" engine.

Copy this file over ``homemade.py`` in a lichess-bot checkout (or append the class
to it), install the ``knights`` package into lichess-bot's Python environment
(``pip install -e /path/to/knights-and-kernels``) and set in ``config.yml``::

    engine:
      protocol: "homemade"
      name: "KnightsKernels"
      homemade_options:        # all optional
        Evaluator: "default"   # democracy+threats (or its fallback); material, democracy, EL/vN, +threats
        Stochastic: true       # the paper's stochastic opening
        Seed: -1               # -1: fresh randomness
        CaptureBonus: 0        # centipawns added to captures (the original: 15)

The class is thin: every decision is :meth:`knights.play.engine.OnePlyEngine.choose`.
It is one ply (a few milliseconds a move), so the clock (``time_limit``) never
needs managing; ``ponder`` is ignored; a non-empty ``root_moves`` list (moves
suggested by lichess-bot's endgame tablebase sources) restricts the candidates; a
draw offer is accepted when the bot's own evaluation is below zero (it steers into
draws only when it is worse, on the board too).
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
if os.environ.get("KNIGHTS_HOME") and os.environ["KNIGHTS_HOME"] not in sys.path:
    sys.path.insert(0, os.environ["KNIGHTS_HOME"])

try:
    from knights.evaluate.names import select_evaluator
    from knights.play.engine import OnePlyEngine
except ImportError as exc:  # pragma: no cover - a setup problem, said clearly
    raise ImportError("KnightsKernels needs the 'knights' package in lichess-bot's environment: "
                      "pip install -e /path/to/knights-and-kernels (or set KNIGHTS_HOME to the checkout)") from exc

logger = logging.getLogger(__name__)


def _option(options: Any, name: str, default: Any) -> Any:
    """A homemade option by case-insensitive name."""
    for key, value in dict(options or {}).items():
        if str(key).lower() == name.lower() and value is not None:
            return value
    return default


class KnightsKernels(MinimalEngine):
    """KS_ChessAI rebuilt: one ply over a trained evaluator, the stochastic opening."""

    def __init__(self, commands: Any, options: Any, stderr: Any, draw_or_resign: Any,
                 game: Any = None, name: str | None = None, **popen_args: Any) -> None:
        super().__init__(commands, options, stderr, draw_or_resign, game, name, **popen_args)
        evaluator = _option(options, "Evaluator", None)
        seed = int(_option(options, "Seed", -1))
        stochastic = _option(options, "Stochastic", True)
        if isinstance(stochastic, str):
            stochastic = stochastic.strip().lower() in ("1", "true", "yes", "on")
        bonus = float(_option(options, "CaptureBonus", 0)) / 100.0
        self.knights = OnePlyEngine(select_evaluator(evaluator, notice=logger.warning), stochastic=bool(stochastic),
                                    seed=None if seed < 0 else seed, capture_bonus=bonus)
        logger.info(f"KnightsKernels plays with {self.knights.name}")

    def search(self, board: chess.Board, time_limit: Limit, ponder: bool, draw_offered: bool,
               root_moves: Any) -> PlayResult:
        """One ply; ``time_limit`` and ``ponder`` need nothing (a decision takes milliseconds)."""
        restrict = root_moves if isinstance(root_moves, list) and root_moves else None
        decision = self.knights.choose(board, root_moves=restrict)
        own = decision.score_for(board.turn)
        score = PovScore(Mate(1), board.turn) if decision.mates else PovScore(Cp(round(own * 100)), board.turn)
        info = {"score": score, "depth": 1, "nodes": len(decision.candidates), "pv": [decision.move]}
        return PlayResult(decision.move, None, info, draw_offered=bool(draw_offered and own < 0))
