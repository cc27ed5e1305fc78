"""A static threat term: what the side to move can win at once by one capture.

A one-ply engine judges the positions after its own moves, where the *opponent* is
to move. A learned evaluation that errs by about a pawn does not reliably see that
the opponent can simply take a piece left hanging; this term says so explicitly.
For the side to move it is the best gain over its legal captures, where a capture
on a square the other side attacks after the capture is assumed to lose the
capturing piece back (a one-step static exchange)::

    gain(capture) = value(victim) - (value(capturer) if retaken else 0)
    threat        = max(0, best gain)          (pawns, knights.board.pieces: P=1 N=3 B=3 R=5 Q=9)

:class:`ThreatAwareEvaluator` adds it to any evaluator, from White's side: plus when
White is to move, minus when Black is. The engine evaluates all children in one
batched call, so the term is computed for the whole batch at once from bitboards
(:func:`knights.features.attacks.legal_capture_gains`); no python-chess ``Board`` is
built.

What counts as a capture, and as retaken
----------------------------------------
The attack maps are pseudo-legal, the board's rules are not. A threat the side to
move cannot legally carry out is no threat, and a capture a slider retakes through
the capturer's square is no gain, so the term follows the rules:

==============================  ========================================  ====================
case                            the term                                  pseudo-legal gains
==============================  ========================================  ====================
in check                        only the checker may be taken; in         any capture
                                double check only by the king
a piece pinned to its king      takes only its pinner, along the pin      anything it attacks
the king takes a piece          only one not retaken                      the same (a loss)
a slider behind the capturer    retakes                                   not seen
en passant                      not seen (positions carry no ep square)   not seen
a retaker pinned, or a king     still retakes (one step of exchange)      the same
==============================  ========================================  ====================

``tests/test_threats.py`` checks the term against a python-chess reference (``tests/threat_oracle.py``: legal
captures, retaken when the square is attacked after the capture) on every position of ``data/sample`` and the
children of every 25th.
"""

from __future__ import annotations

import numpy as np

from knights.board.positions import Positions
from knights.evaluate.base import BoardsMixin, Evaluator
from knights.evaluate.names import THREATS_SUFFIX as THREATS_SUFFIX
from knights.features.attacks import legal_capture_gains


def threat_term(positions: Positions) -> np.ndarray:
    """The side to move's capture threat (pawns) from White's side: ``(N,)`` float32,
    positive where White is to move, negative where Black is.

    >>> import chess
    >>> from knights.board.positions import positions_from_boards
    >>> boards = [chess.Board("4k3/8/8/3q4/8/8/8/3QK3 w - - 0 1"),    # Qxd5 wins a queen
    ...           chess.Board("4k3/8/2p5/3n4/8/8/8/3RK3 w - - 0 1"),  # Rxd5 cxd5 loses two
    ...           chess.Board("3qk3/8/8/8/3Q4/8/8/4K3 b - - 0 1")]    # ...Qxd4 wins a queen
    >>> threat_term(positions_from_boards(boards)).tolist()
    [9.0, 0.0, -9.0]
    """
    sign = np.where(np.asarray(positions.white) == 1, 1, -1).astype(np.float32)
    term: np.ndarray = sign * legal_capture_gains(positions.squares, positions.white)
    return term


class ThreatAwareEvaluator(BoardsMixin):
    """``base`` plus ``weight`` x the side to move's capture threat (White's view)."""

    def __init__(self, base: Evaluator, weight: float = 1.0) -> None:
        self.base = base
        self.weight = weight
        self.name = f"{base.name}{THREATS_SUFFIX}"

    def evaluate(self, positions: Positions) -> np.ndarray:
        values = np.asarray(self.base.evaluate(positions), dtype=np.float32)
        return values + np.float32(self.weight) * threat_term(positions)
