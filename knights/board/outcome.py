"""How a game ends: the project's one rule, on python-chess's ``Board.outcome``.

:func:`outcome` says whether the game on a board is over and how, as a
``chess.Outcome`` (its ``Termination`` and winner). Every part of the project that
asks asks here: the data generator's final labels (:mod:`knights.data.generate`), the
one game loop (:mod:`knights.lab.arena.game`), the front ends' end of game
(:func:`knights.engine.rules.game_over`), the move-quality judge. Two readings:

* ``claim_next_move=False`` (the default): what ends the game *now*: checkmate,
  stalemate, insufficient material, the seventy-five-move and fivefold rules, and the
  draws a player may claim in this position (threefold repetition, fifty moves), which
  lichess applies automatically and the engine scores as draws;
* ``claim_next_move=True``: also the draws a player could claim by announcing its next
  move (``Board.outcome(claim_draw=True)``, the FIDE claim).

>>> outcome(chess.Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")).termination.name
'STALEMATE'
>>> outcome(chess.Board("7k/8/8/8/8/8/8/KR6 w - - 100 80")).termination.name
'FIFTY_MOVES'
>>> outcome(chess.Board()) is None
True

The searches cannot afford python-chess's full answer at every node: they find mate and
stalemate in their own move generation and repetitions by their hashes, and ask
:func:`rule_draw` for the rest (the fast path: two counters, and python-chess only where
they leave a doubt).
"""

from __future__ import annotations

import chess


def outcome(board: chess.Board, *, claim_next_move: bool = False) -> chess.Outcome | None:
    """How the rules end the game on ``board``, or ``None`` while it goes on (see the
    module's two readings for ``claim_next_move``)."""
    if claim_next_move:
        return board.outcome(claim_draw=True)
    found = board.outcome()
    if found is None and board.halfmove_clock >= 100:
        return chess.Outcome(chess.Termination.FIFTY_MOVES, None)
    if found is None and board.is_repetition(3):
        return chess.Outcome(chess.Termination.THREEFOLD_REPETITION, None)
    return found


def rule_draw(board: chess.Board) -> bool:
    """The search's fast path: a draw by the fifty-move rule (unless the last move mated)
    or by insufficient material; checkmate, stalemate and repetitions are the caller's to
    find. Agrees with :func:`outcome` on those two rules.

    >>> rule_draw(chess.Board("7k/8/8/8/8/8/8/K7 w - - 0 1")), rule_draw(chess.Board())
    (True, False)
    """
    return (board.halfmove_clock >= 100 and not board.is_checkmate()) or board.is_insufficient_material()
