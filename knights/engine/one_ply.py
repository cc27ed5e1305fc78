"""The bot: one ply, done right.

Every legal move's resulting position is evaluated in **one** batched call of an
:class:`~knights.evaluate.base.Evaluator`; White takes the highest value, Black the
lowest. Positions that end the game are scored exactly, never by the model::

    engine = OnePlyEngine(select_evaluator("EL/v8"), seed=1)
    decision = engine.choose(chess.Board())
    decision.move, decision.score, decision.candidates[:3]

Scores are pawns from White's side throughout (centipawns appear only in the UCI
front end). The rules behind them are answered for all moves at once: the positions
after every move and check in :mod:`knights.board.children`, mate and the draws in
:mod:`knights.engine.rules`; this module turns them into scores and picks the move.

Terminal positions
------------------
==========================================  =================================
the position after the move                 score (pawns, White's side)
==========================================  =================================
checkmate (the mover wins)                  ``+MATE_SCORE`` / ``-MATE_SCORE``
stalemate                                   ``0``
insufficient material (python-chess)        ``0``
threefold repetition (this move repeats)    ``0``
fifty-move rule (the clock reaches 100)     ``0``
the opponent can mate with its reply        ``-MATE_SCORE`` / ``+MATE_SCORE``
anything else                               the evaluator's value, clipped to
                                            ``+-EVAL_LIMIT`` (+ capture bonus)
==========================================  =================================

``MATE_SCORE`` is 100 pawns: the training targets put a forced mate at 10, and the
margin (model values are clipped to +-99) makes a mate in one beat every other
move. Draws are exactly 0, so the bot steers into one only when every other move
is valued worse than 0 for it. A position after which the *opponent* can claim a
draw with its reply (its move would repeat a position a third time, or reach the
hundredth half-move) is worth at most 0 to the mover: the opponent takes the draw
when that is better for it (``min(value, 0)`` for White, ``max(value, 0)`` for
Black). So a winning bot does not let the opponent repeat its way out, and a losing
one gains nothing from it. Every draw here is one lichess applies automatically.

A move after which the opponent mates at once (:func:`~knights.engine.rules.opponent_mates`)
is scored as the loss it is, so the bot plays one only when every move allows it. This
looks at the opponent's replies, as the draw claims do, but only at the few that can
give check, and it asks nothing of the evaluator. Why it is a rule and not left to the
model: in 200 games one ply ahead against sf-elo:1350 the shipped bot walked into an
avoidable mate in one in 65, and scored 0 in all of them (:mod:`knights.lab.arena.pool` reads
the games; ``report/results/one_ply_mate_guard.json``). ``mate_guard=False`` turns it off
(the test-set generator's material player keeps it off, and its games keep the old draw
rule, so the committed sets stay what its code makes).

Stochastic opening (the paper's table)
--------------------------------------
With ``stochastic=True`` the move is drawn by rank among the model-scored moves:

=====  ======  =========================================================
rank   weight  offered while ``board.fullmove_number`` is
=====  ======  =========================================================
1      65%     always (and it takes the weight of every row not offered)
2      20%     <= 7
3      10%     <= 5
4       5%     <= 3
=====  ======  =========================================================

"until move 7" therefore means *up to and including* the game's own move 7
(``board.fullmove_number <= 7``, the same for White's and Black's move): moves
1-3 draw 65/20/10/5, moves 4-5 70/20/10, moves 6-7 80/20, from move 8 on the best
move is always played. With fewer candidates than offered rows the weights of the
existing ranks are renormalised proportionally (2 legal moves at move 1:
0.65/0.85 and 0.20/0.85). A move that ends the game is never a random
alternative: when the best move ends the game (a mate in one, or a draw that is
better than everything else) it is played; draws ranked lower are left out of the
draw, and so are moves after which the opponent mates. Each engine has its own seeded
``numpy.random.Generator``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import chess
import numpy as np

from knights.board.children import Children, expand
from knights.board.positions import PlayedPositions, castling_after, castling_code
from knights.engine.constants import DRAW, EVAL_LIMIT, MATE_SCORE
from knights.engine.rules import CHECKMATE, opponent_claims, opponent_mates, recent_placements, terminal_outcomes
from knights.engine.user_input import EngineError, board_from_fen, check_position
from knights.evaluate.base import Evaluator, finite_evaluations
from knights.evaluate.load import select_evaluator

ORIGINAL_CAPTURE_BONUS = 0.15
"""The shipped bot's bonus to captures, pawns, for the side to move (off by default)."""

OPENING_TABLE: tuple[tuple[float, int | None], ...] = ((0.65, None), (0.20, 7), (0.10, 5), (0.05, 3))
"""(weight, last fullmove number it is offered at, inclusive) for ranks 1-4."""
OPENING_MOVES = max(last for _, last in OPENING_TABLE if last is not None)
"""The last move number (inclusive) at which the stochastic opening may play another move than the best: 7."""


# -- the stochastic opening ------------------------------------------------------------
def opening_weights(fullmove_number: int, n_candidates: int) -> np.ndarray:
    """Probabilities of playing the 1st, 2nd, ... ranked move at this move number.

    >>> opening_weights(1, 20).round(2).tolist()
    [0.65, 0.2, 0.1, 0.05]
    >>> opening_weights(6, 20).round(2).tolist()
    [0.8, 0.2]
    >>> opening_weights(1, 2).round(4).tolist()
    [0.7647, 0.2353]
    """
    if n_candidates < 1:
        raise EngineError("no candidate moves to choose from")
    offered = [w for w, last in OPENING_TABLE[1:] if last is None or fullmove_number <= last]
    # rows are nested (7 > 5 > 3), so the offered ones are a prefix of ranks 2-4
    weights = np.array([1.0 - sum(offered), *offered])[:n_candidates]
    return weights / weights.sum()


# -- the engine ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Decision:
    """What the engine chose, and why."""

    move: chess.Move
    score: float                               # pawns, White's side, of the position after ``move``
    candidates: list[tuple[chess.Move, float]]  # every candidate, best first for the side to move
    rank: int = 0                              # index of ``move`` in ``candidates`` (0 = the best)
    outcomes: dict[chess.Move, str] = field(default_factory=dict)   # candidates that end the game
    claims: dict[chess.Move, str] = field(default_factory=dict)     # after which the opponent can claim a draw
    depth: int = 1                             # plies searched (1: the one-ply bot)
    seldepth: int = 1                          # the longest line looked at, quiescence included
    nodes: int = 0                             # positions the search visited (0: one ply, see candidates)
    pv: tuple[chess.Move, ...] = ()            # the line the search expects, ``move`` first (searched only)
    mate_in: int | None = None                 # moves to a forced mate (negative: being mated), if seen

    @property
    def mates(self) -> bool:
        """Whether ``move`` checkmates."""
        return self.outcomes.get(self.move) == CHECKMATE

    def score_for(self, color: chess.Color) -> float:
        """``score`` from ``color``'s side."""
        return self.score if color == chess.WHITE else -self.score


class OnePlyEngine:
    """Evaluate every legal move's resulting position in one batch; pick by the
    paper's stochastic opening or, from move 8 (or with ``stochastic=False``), the best.

    ``evaluator``: an :class:`~knights.evaluate.base.Evaluator`, or a name for
    :func:`select_evaluator` (``None``: the default, with its fallback).
    ``capture_bonus``: pawns added to captures for the side to move (the shipped bot
    used :data:`ORIGINAL_CAPTURE_BONUS`; 0 by default).
    ``mate_guard``: score a move after which the opponent mates at once as lost (on by default).
    """

    def __init__(self, evaluator: Evaluator | str | None = None, *, stochastic: bool = True,
                 seed: int | None = None, capture_bonus: float = 0.0, mate_guard: bool = True) -> None:
        if evaluator is None or isinstance(evaluator, str):
            evaluator = select_evaluator(evaluator)
        if not callable(getattr(evaluator, "evaluate", None)):
            raise EngineError(f"{evaluator!r} is not an evaluator (it has no evaluate(positions) method)")
        self.evaluator = evaluator
        self.stochastic = bool(stochastic)
        self.capture_bonus = float(capture_bonus)
        self.mate_guard = bool(mate_guard)
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    @property
    def name(self) -> str:
        return str(getattr(self.evaluator, "name", type(self.evaluator).__name__))

    def reseed(self, seed: int | None) -> None:
        """Restart the opening randomness (``None``: fresh entropy)."""
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    # -- scoring -------------------------------------------------------------------------
    def score_children(self, board: chess.Board, children: Children
                       ) -> tuple[np.ndarray, list[str | None], list[str | None], np.ndarray]:
        """Scores (pawns, White's side) of the children, their game-ending outcomes, the
        draws the opponent could claim after them (see :func:`opponent_claims`) and the
        scores as they were before a move the opponent answers with mate was scored lost
        (:func:`opponent_mates`; they order the lost moves among themselves, so a bot with
        only such moves plays the one its evaluator likes best). The evaluator is called
        once, on the children that do not end the game."""
        n = len(children)
        history = recent_placements(board)
        outcomes = terminal_outcomes(board, children, history)
        claims = opponent_claims(board, children, outcomes, history)
        scores = np.zeros(n, np.float64)
        sign = 1.0 if board.turn == chess.WHITE else -1.0
        open_ = np.array([o is None for o in outcomes], bool)
        idx = np.flatnonzero(open_)
        if len(idx):
            positions = PlayedPositions(
                squares=np.ascontiguousarray(children.squares[idx]),
                white=np.full(len(idx), 0 if board.turn == chess.WHITE else 1, np.int8),
                check=children.check[idx].astype(np.int8),
                capture=np.zeros(len(idx), np.int8),
                ep=children.ep[idx],
                castling=castling_after(castling_code(board), [children.moves[i] for i in idx]))
            values = np.asarray(self.evaluator.evaluate(positions), dtype=np.float64).reshape(-1)
            if values.shape[0] != len(idx):
                raise EngineError(f"evaluator {self.name} returned {values.shape[0]} values "
                                  f"for {len(idx)} positions")
            values = finite_evaluations(values, self.name)   # never a NaN read as 0.00
            if self.capture_bonus:
                values = values + sign * self.capture_bonus * children.capture[idx]
            scores[idx] = np.clip(values, -EVAL_LIMIT, EVAL_LIMIT)
        for i, outcome in enumerate(outcomes):
            if outcome == CHECKMATE:
                scores[i] = sign * MATE_SCORE
            elif outcome is not None:
                scores[i] = DRAW
            elif claims[i] is not None:   # the opponent may take a draw instead: at most 0 for us
                scores[i] = min(scores[i], DRAW) if sign > 0 else max(scores[i], DRAW)
        judged = scores.copy()
        if self.mate_guard:
            scores[opponent_mates(board, children, outcomes)] = -sign * MATE_SCORE
        return scores, outcomes, claims, judged

    # -- choosing --------------------------------------------------------------------------
    def choose(self, board: chess.Board, root_moves: Sequence[chess.Move] | None = None) -> Decision:
        """The move to play on ``board`` (not modified). ``root_moves``, when a
        non-empty list, restricts the candidates (its legal moves; all legal moves
        if none of them is legal)."""
        check_position(board)
        moves = list(board.legal_moves)
        if not moves:
            why = "checkmate" if board.is_check() else "stalemate"
            raise EngineError(f"no legal moves: the game is over ({why}) in {board.fen()}")
        if root_moves:
            allowed = set(root_moves)
            restricted = [m for m in moves if m in allowed]
            moves = restricted or moves
        children = expand(board, moves)
        scores, outcomes, claims, judged = self.score_children(board, children)
        sign = 1.0 if board.turn == chess.WHITE else -1.0
        order = np.lexsort((-sign * judged, -sign * scores))   # by score, ties by the score before the mate rule
        lost = [outcomes[i] is None and sign * scores[i] <= -MATE_SCORE for i in range(len(moves))]
        rank = self._pick_rank(board, order, outcomes, lost)
        chosen = int(order[rank])
        candidates = [(moves[i], float(scores[i])) for i in order]
        terminal = {moves[i]: o for i, o in enumerate(outcomes) if o is not None}
        claimable = {moves[i]: c for i, c in enumerate(claims) if c is not None}
        return Decision(moves[chosen], float(scores[chosen]), candidates, rank, terminal, claimable,
                        mate_in=-1 if lost[chosen] else None)

    def _pick_rank(self, board: chess.Board, order: np.ndarray, outcomes: list[str | None],
                   lost: list[bool]) -> int:
        if not self.stochastic or outcomes[int(order[0])] is not None or lost[int(order[0])]:
            return 0
        pool = [r for r, i in enumerate(order) if outcomes[int(i)] is None and not lost[int(i)]]
        weights = opening_weights(board.fullmove_number, len(pool))
        if len(weights) == 1:
            return pool[0]
        return pool[int(self.rng.choice(len(weights), p=weights))]

    def choose_fen(self, fen: str, moves: Iterable[str] = ()) -> Decision:
        """:meth:`choose` for a FEN (or ``"startpos"``) and moves played from it."""
        return self.choose(board_from_fen(fen, moves))

    def best_move(self, board: chess.Board) -> chess.Move:
        return self.choose(board).move
