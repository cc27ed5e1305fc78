"""A capture search on top of any evaluator: the value once the exchanges are played out.

A one-ply engine judges the positions after its own moves, where the opponent is to
move, and a static evaluation cannot see that the opponent simply takes a piece left
hanging, or that an exchange under way ends a piece down. Stockfish never evaluates
such a position as it stands: its depth 1 is one ply and a *quiescence search*, the
captures played out until the position is quiet. :class:`CaptureSearchEvaluator` gives
any evaluator the same: its value of a position is the evaluator's value there plus
what the side to move wins by the best sequence of captures, each side free to stop
capturing ("stand pat") whenever that is better::

    swing(position) = max(0, max over legal captures c of (gain(c) - swing(position after c)))

``gain`` is the piece taken plus what a promotion adds (:func:`knights.board.pieces.capture_gain`;
pawns: P=1 N=3 B=3 R=5 Q=9); pushing a pawn to queen without a capture counts as a capture
gaining 8. Along the line only material changes: the evaluator is asked once, for the
position itself, as the search (:mod:`knights.engine.search`) does in its own capture
search. The swing is searched with alpha-beta, the most valuable victim first, at most
:data:`MAX_PLIES` captures deep.

Why add the material rather than judge the position where the captures end: that was tried.
Judging the end of the capture line with the democracy lowered its error over every position of
the independent sets but played worse one ply ahead against sf-elo:1350 on the same openings (measured by hand;
not in a results file).
What the bot needs from the term is the exchange, counted exactly; the network's second opinion
of an unfamiliar position after it cost more than it gave. A network trained on quiet positions
only is another matter: the ends of a capture search are quiet, and a compiled sparse network judged
there (:mod:`knights.engine.judged`, ``EL/v21+quiesce``) played better than democracy+qsearch on the same
openings (report/results/one_ply_quiesce.json), the democracy of six such networks better still
(one_ply_sparse.json).

Where it differs from :mod:`knights.evaluate.threats` (one capture, retaken if the square
is attacked): a whole exchange is played out, so a defended piece attacked by a smaller
one, an overloaded defender or a capture that loses the capturer to a second attacker
are judged right. In check the side to move still may stand pat (the term is about
material, not mate) and takes only what python-chess lets it take legally.

    >>> import chess
    >>> from knights.evaluate.base import MaterialEvaluator
    >>> ev = CaptureSearchEvaluator(MaterialEvaluator())
    >>> boards = [chess.Board("4k3/8/8/3q4/8/8/8/3QK3 w - - 0 1"),     # level; Qxd5 wins the queen
    ...           chess.Board("4k3/8/2p5/3n4/8/8/8/3RK3 w - - 0 1"),   # 1 up; Rxd5 cxd5 loses 2: stand pat
    ...           chess.Board("4k3/8/2p5/3n4/8/1B6/8/3RK3 w - - 0 1")] # 4 up; Bxd5 cxd5 Rxd5 wins 1 more
    >>> ev.evaluate_boards(boards).tolist()
    [9.0, 1.0, 5.0]
"""

from __future__ import annotations

import chess
import numpy as np

from knights.board.arrays import boards_from_arrays
from knights.board.pieces import PAWNS, capture_gain
from knights.board.positions import Positions
from knights.evaluate.base import BoardsMixin, Evaluator
from knights.evaluate.names import QSEARCH_SUFFIX as QSEARCH_SUFFIX

MAX_PLIES = 10
"""Captures deep at most (exchanges run out long before)."""


def _captures(board: chess.Board) -> list[tuple[int, chess.Move]]:
    """Legal captures and queen promotions with what each wins at once, biggest victim first
    (and, among equal victims, the least valuable capturer first)."""
    promoting = board.pawns & board.occupied_co[board.turn] & (chess.BB_RANK_7 if board.turn else chess.BB_RANK_2)
    moves = list(board.generate_legal_captures())
    if promoting:
        moves += [m for m in board.generate_legal_moves(from_mask=promoting)
                  if m.promotion == chess.QUEEN and not board.is_capture(m)]
    scored = [(capture_gain(board, m), -PAWNS[board.piece_type_at(m.from_square) or 0], m) for m in moves
              if m.promotion in (None, chess.QUEEN)]
    scored.sort(key=lambda s: (s[0], s[1]), reverse=True)
    return [(gain, m) for gain, _, m in scored]


def swing(board: chess.Board, alpha: float = -1e9, beta: float = 1e9, plies: int = MAX_PLIES) -> float:
    """Pawns the side to move wins by capturing, at best, when either side may stop
    (>= 0; ``board`` is left as it was).

    >>> swing(chess.Board("4k3/8/8/3q4/4P3/8/8/4K3 w - - 0 1")), swing(chess.Board())
    (9.0, 0.0)
    """
    best = 0.0
    if best >= beta or plies == 0:
        return best
    alpha = max(alpha, best)
    for gain, move in _captures(board):
        if gain <= alpha:              # even keeping all of it cannot do better than standing pat
            break
        board.push(move)
        try:
            value = gain - swing(board, gain - beta, gain - alpha, plies - 1)
        finally:
            board.pop()
        if value > best:
            best = value
            if value > alpha:
                alpha = value
                if value >= beta:
                    break
    return best


def swing_term(positions: Positions) -> np.ndarray:
    """:func:`swing` of every position, from White's side (plus where White is to move):
    ``(N,)`` float32."""
    boards = boards_from_arrays(positions.squares, positions.white.astype(bool), [0] * len(positions),
                                [-1] * len(positions))
    return np.array([swing(b) if b.turn == chess.WHITE else -swing(b) for b in boards], dtype=np.float32)


class CaptureSearchEvaluator(BoardsMixin):
    """``base``'s value plus the side to move's capture :func:`swing` (White's view)."""

    def __init__(self, base: Evaluator) -> None:
        self.base = base
        self.name = f"{base.name}{QSEARCH_SUFFIX}"

    def evaluate(self, positions: Positions) -> np.ndarray:
        values: np.ndarray = np.asarray(self.base.evaluate(positions), dtype=np.float32) + swing_term(positions)
        return values
