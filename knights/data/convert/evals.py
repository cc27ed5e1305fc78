"""Rows from evaluation databases: a FEN, an engine score and its principal variation.

The Lichess JSONL and the Kaggle CSV describe a position the same way (a FEN of four
or six fields, a centipawn score or a mate count from White's side, a principal
variation in UCI); these parsers turn those fields into a CSSLab row or raise
:class:`~knights.data.convert.sink.Skip` with the reason.

>>> eval_text("31", None), eval_text(None, -3)
('0.31', '#-3')
"""

from __future__ import annotations

import math
import re

import chess

from knights.board.arrays import fen_fields_problem, position_problem
from knights.data.convert.sink import Skip, short
from knights.data.csslab import format_bool, format_eval, negate_eval, position_columns

_INT_TEXT = re.compile(r"[+-]?[0-9]+(?:\.0*)?", re.ASCII)
"""An integer as text: ``31``, ``-3``, ``31.0`` (ASCII digits)."""


def _as_int(value: object, what: str) -> int:
    """An integer from JSON or CSV: ``31``, ``31.0``, ``"31"``, ``"-3.0"``.

    Raises :class:`Skip` (``"bad_eval"``) for anything else, booleans and
    non-finite numbers included.
    """
    if isinstance(value, bool):
        raise Skip("bad_eval", f"{what} is not a number: {short(value)}")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip()
        if not _INT_TEXT.fullmatch(text):   # ASCII only: no "1_000", no non-ASCII digits
            raise Skip("bad_eval", f"{what} is not an integer: {short(value)}")
        return int(text.split(".")[0])
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    raise Skip("bad_eval", f"{what} is not an integer: {short(value)}")


_MAX_CP = 100_000
"""Centipawn scores beyond this are not engine output (Stockfish stays far below)."""


def eval_text(cp: object, mate: object) -> str:
    """The ``cp`` column from a centipawn score or a mate count (White's side).

    ``None`` or blank text means absent; a mate wins over a centipawn score.
    """
    if isinstance(mate, str) and not mate.strip():
        mate = None
    if isinstance(cp, str) and not cp.strip():
        cp = None
    if mate is not None:
        n = _as_int(mate, "mate")
        if n == 0 or abs(n) > _MAX_CP:
            raise Skip("bad_eval", f"mate out of range: {short(mate)}")
        return format_eval(mate=n)
    if cp is not None:
        n = _as_int(cp, "cp")
        if abs(n) > _MAX_CP:
            raise Skip("bad_eval", f"cp out of range: {short(cp)}")
        return format_eval(cp=n)
    raise Skip("missing_eval", "neither cp nor mate given")


def board_from_fen(fen: object) -> chess.Board:
    """A legal standard-chess position from a FEN with 4 or 6 fields."""
    if not isinstance(fen, str):
        raise Skip("bad_fen", f"fen is not a string: {short(fen)}")
    fields = fen.split()
    if len(fields) not in (4, 6):
        raise Skip("bad_fen", f"FEN needs 4 or 6 fields: {short(fen)}")
    problem = fen_fields_problem(fields[2], fields[3])   # the rule the chunk reader applies too
    if problem is not None:
        raise Skip("bad_fen", f"bad FEN {short(fen)}: {problem}")
    try:
        board = chess.Board(" ".join(fields))
    except ValueError as error:
        raise Skip("bad_fen", f"bad FEN {short(fen)}: {error}") from None
    problem = position_problem(board)   # the one rule the chunk reader applies too
    if problem is not None:
        raise Skip("bad_fen", f"impossible position {short(fen)}: {problem}")
    return board


def first_move(board: chess.Board, line: object) -> chess.Move | None:
    """The first move of a principal variation (UCI, space separated), or ``None``."""
    if line is None:
        return None
    if not isinstance(line, str):
        raise Skip("illegal_move", f"pv line is not a string: {short(line)}")
    tokens = line.split(maxsplit=1)
    if not tokens:
        return None
    try:
        move = chess.Move.from_uci(tokens[0])
    except ValueError:
        raise Skip("illegal_move", f"bad UCI move {short(tokens[0])}") from None
    if not board.is_legal(move):
        raise Skip("illegal_move", f"{tokens[0]} is illegal in {board.fen()}")
    return move


def eval_row(board: chess.Board, cp_text: str, move: chess.Move | None, kind: str) -> dict[str, str]:
    """A row for an evaluated position (no game around it)."""
    row = position_columns(board)
    row["type"] = kind
    row["cp"] = cp_text
    row["cp_rel"] = cp_text if board.turn == chess.WHITE else negate_eval(cp_text)
    if move is not None:
        row["move"] = move.uci()
        row["is_capture"] = format_bool(board.is_capture(move))
    return row
