"""The capture-threat term written out with python-chess, one position at a time:
the reference :func:`knights.features.attacks.legal_capture_gains` is checked
against (tests only; the engine never builds a Board per position for it).

For the side to move, the best gain over its legal captures, where a capture on a
square the other side attacks *after* the capture loses the capturer back::

    gain(capture) = value(victim) - (value(capturer) if retaken else 0)
    threat        = max(0, best gain)

With ``after_capture=False`` "retaken" is read on the board *before* the capture,
so a defender x-raying through the capturer is missed: the term the bot played with
until the threat term was vectorised (kept to measure what changed).

>>> import chess
>>> board = chess.Board("4k3/7p/6P1/8/8/3q4/8/4K3 w - - 0 1")   # gxh7, and the queen retakes through g6
>>> capture_threat(board), capture_threat(board, after_capture=False)
(0.0, 1.0)
"""

from __future__ import annotations

import chess

from knights.board.pieces import PAWNS


def capture_threat(board: chess.Board, *, after_capture: bool = True) -> float:
    """Best immediate capture gain (pawns, >= 0) for the side to move, over its legal
    captures (en passant included when the board has its square)."""
    best = 0.0
    them = not board.turn
    for move in board.generate_legal_captures():
        victim = PAWNS[chess.PAWN] if board.is_en_passant(move) else PAWNS[board.piece_type_at(move.to_square)]
        capturer = PAWNS[board.piece_type_at(move.from_square)]
        if after_capture:
            board.push(move)
            retaken = board.is_attacked_by(them, move.to_square)
            board.pop()
        else:
            retaken = board.is_attacked_by(them, move.to_square)
        best = max(best, float(victim - (capturer if retaken else 0)))
    return best
