"""What the front ends are given, checked: a FEN, moves, a position.

:func:`board_from_fen`, :func:`parse_move` and :func:`check_position` turn user
input into a board or a move, or raise one clear :class:`EngineError`:

>>> board_from_fen("startpos", ["e4", "e7e5"]).fen()
'rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2'
>>> parse_move(chess.Board(), "e5")
Traceback (most recent call last):
...
knights.engine.user_input.EngineError: illegal move 'e5' in rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import chess

from knights.common import quoted


class EngineError(ValueError):
    """Bad input to the engine (no legal move, an invalid FEN or position): one clear line."""


_FATAL_STATUS = (chess.STATUS_EMPTY | chess.STATUS_NO_WHITE_KING | chess.STATUS_NO_BLACK_KING
                 | chess.STATUS_TOO_MANY_KINGS | chess.STATUS_PAWNS_ON_BACKRANK | chess.STATUS_OPPOSITE_CHECK)


def _status_text(status: int) -> str:
    names = [name[len("STATUS_"):].lower().replace("_", " ") for name in dir(chess)
             if name.startswith("STATUS_") and name != "STATUS_VALID" and status & getattr(chess, name)]
    return ", ".join(sorted(names))


def board_from_fen(fen: str, moves: Iterable[str] = ()) -> chess.Board:
    """A board from a FEN (or ``"startpos"``) and UCI or SAN moves, with a clear
    :class:`EngineError` for a bad FEN, an impossible position or an illegal move."""
    text = (fen or "").strip()
    try:
        board = chess.Board() if text in ("startpos", "start") else chess.Board(text)
    except ValueError as exc:
        raise EngineError(f"invalid FEN {quoted(fen, 120)}: {exc}") from None
    check_position(board)
    for token in moves:
        board.push(parse_move(board, token))
    return board


def parse_move(board: chess.Board, text: str) -> chess.Move:
    """A legal move of ``board`` from UCI (``e2e4``, ``e7e8q``) or SAN (``Nf3``, ``O-O``);
    :class:`EngineError` otherwise (a null move included)."""
    token = text.strip()
    if re.fullmatch(r"[oO0](-[oO0]){1,2}[+#]?", token):    # castling as people type it: o-o, 0-0-0
        token = token.upper().replace("0", "O")
    for parse in (board.parse_uci, board.parse_san):
        try:
            move = parse(token)
        except ValueError:
            continue
        if move and move in board.legal_moves:
            return move
    raise EngineError(f"illegal move {quoted(token)} in {board.fen()}")


def check_position(board: chess.Board) -> None:
    """Raise :class:`EngineError` if ``board`` is not a position the engine can play."""
    if not isinstance(board, chess.Board):
        raise EngineError(f"expected a chess.Board, got {type(board).__name__}")
    if board.uci_variant != "chess":
        raise EngineError(f"only standard chess is supported, not {board.uci_variant}")
    status = board.status()
    if status & _FATAL_STATUS:
        raise EngineError(f"impossible position ({_status_text(status & _FATAL_STATUS)}): {board.fen()}")


