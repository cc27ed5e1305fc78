"""The CSSLab "monthly chess CSV" format: one row per move played, 47 columns.

Every dataset in this project, generated or converted, is written in exactly this
format, so that ``data/split.sh`` and the chunk reader work on the original Lichess
files and on ours alike.

Conventions (see ``docs/original.md``):

* ``board`` is the FEN of the position *before* ``move`` (UCI) is played.
* ``cp`` is the engine evaluation of ``board`` from White's side **in pawns** with
  two decimals (``"0.35"``, ``"-1.20"``); a forced mate is ``"#N"`` (White mates in
  N) or ``"#-N"`` (Black mates in N).
* ``cp_rel`` is the same evaluation from the side to move.
* Booleans are written ``True`` / ``False``; unknowable values are left empty.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterable, Mapping
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    import chess

COLUMNS: tuple[str, ...] = (
    "game_id", "type", "result", "white_player", "black_player", "white_elo",
    "black_elo", "time_control", "num_ply", "termination", "white_won",
    "black_won", "no_winner", "move_ply", "move", "cp", "cp_rel",
    "cp_loss", "is_blunder_cp", "winrate", "winrate_elo", "winrate_loss",
    "is_blunder_wr", "opp_winrate", "white_active", "active_elo",
    "opponent_elo", "active_won", "is_capture", "clock", "opp_clock",
    "clock_percent", "opp_clock_percent", "low_time", "board",
    "active_bishop_count", "active_knight_count", "active_pawn_count",
    "active_queen_count", "active_rook_count", "is_check",
    "num_legal_moves", "opp_bishop_count", "opp_knight_count",
    "opp_pawn_count", "opp_queen_count", "opp_rook_count",
)
"""The 47 columns, in the original order."""

KEPT_FIELDS: tuple[int, ...] = (6, 7, 15, 16, 17, 18, 19, 25, 29, 35, 41)
"""1-based field numbers the original kept with ``cut -d , -f ...``."""

KEPT_COLUMNS: tuple[str, ...] = tuple(COLUMNS[i - 1] for i in KEPT_FIELDS)
"""white_elo, black_elo, move, cp, cp_rel, cp_loss, is_blunder_cp, white_active,
is_capture, board, is_check."""

HEADER_LINE = ",".join(COLUMNS)

MATE_PAWNS = 10.0
"""Target value of a forced mate, in pawns (docs/original.md: mates become +-10)."""
CLIP_PAWNS = 9.0
"""Every non-mate evaluation is clipped to +-9 pawns."""

BLUNDER_CP_PAWNS = 2.0
"""A move that loses at least this many pawns is flagged ``is_blunder_cp``."""
BLUNDER_WINRATE = 0.10
"""A move that loses at least this much win probability is flagged ``is_blunder_wr``."""


def format_bool(value: bool | None) -> str:
    """``True``/``False`` as the CSSLab files write them; ``None`` -> empty."""
    if value is None:
        return ""
    return "True" if value else "False"


def format_pawns(pawns: float) -> str:
    """Pawns with two decimals, never ``-0.00``."""
    text = f"{pawns:.2f}"
    return "0.00" if text == "-0.00" else text


def format_eval(*, cp: int | None = None, mate: int | None = None) -> str:
    """An engine score as the ``cp`` column writes it.

    ``cp`` is in centipawns and ``mate`` in moves, both from the point of view the
    column needs (White's side for ``cp``, the mover's for ``cp_rel``).

    >>> format_eval(cp=35), format_eval(cp=-120), format_eval(mate=3), format_eval(mate=-2)
    ('0.35', '-1.20', '#3', '#-2')
    """
    if mate is not None:
        if mate == 0:
            raise ValueError("mate in 0 is not a score: the game is over")
        return f"#{mate}"
    if cp is None:
        raise ValueError("a score needs cp or mate")
    return format_pawns(cp / 100.0)


def negate_eval(text: str) -> str:
    """The same score from the other side: ``"0.35"`` <-> ``"-0.35"``, ``"#3"`` <-> ``"#-3"``."""
    if text.startswith("#"):
        n = int(text[1:])
        return f"#{-n}"
    return format_pawns(-float(text))


MATE_TEXT = re.compile(r"#[+-]?[0-9]+", re.ASCII)
"""A mate score as the format writes it: ``#3``, ``#-3``, ``#+3`` (ASCII digits, one sign at most)."""
NUMBER_TEXT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
"""A pawn score: an ASCII decimal number (no ``_`` separators, no non-ASCII digits, no inf/nan)."""


def eval_to_pawns(text: str) -> float:
    """Parse one ``cp`` value into a training target in pawns.

    Mates become +-10 by side (``"#-0"`` style mate-now values count by their sign),
    everything else is clipped to +-9. Raises ``ValueError`` on empty or non-numeric
    text, so callers can count the row as malformed.

    >>> eval_to_pawns("0.35"), eval_to_pawns("#-2"), eval_to_pawns("12.5")
    (0.35, -10.0, 9.0)
    """
    text = text.strip()
    if not text:
        raise ValueError("empty evaluation")
    if text[0] == "#":
        if not MATE_TEXT.fullmatch(text):
            raise ValueError(f"bad mate score {text!r}")
        return -MATE_PAWNS if text[1] == "-" else MATE_PAWNS
    if not NUMBER_TEXT.fullmatch(text):
        raise ValueError(f"not a number {text!r}")
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"non-finite evaluation {text!r}")
    return max(-CLIP_PAWNS, min(CLIP_PAWNS, value))


def winrate(pawns_for_mover: float) -> float:
    """Win probability for the side whose evaluation this is, from the logistic
    curve Lichess uses for its accuracy figures (centipawns scaled by 0.00368208)."""
    centipawns = max(-1000.0, min(1000.0, pawns_for_mover * 100.0))
    return 1.0 / (1.0 + math.exp(-0.00368208 * centipawns))


class RowWriter:
    """Writes rows (mappings from column name to text) in column order.

    Missing keys are written empty; an unknown key is a programming error.
    """

    def __init__(self, stream: IO[str], *, header: bool = True) -> None:
        self._writer = csv.writer(stream, lineterminator="\n")
        if header:
            self._writer.writerow(COLUMNS)

    def write(self, row: Mapping[str, object]) -> None:
        unknown = set(row) - set(COLUMNS)
        if unknown:
            raise KeyError(f"not CSSLab columns: {sorted(unknown)}")
        self._writer.writerow(["" if row.get(c) is None else row.get(c) for c in COLUMNS])

    def write_all(self, rows: Iterable[Mapping[str, object]]) -> int:
        n = 0
        for row in rows:
            self.write(row)
            n += 1
        return n


def position_columns(board: chess.Board) -> dict[str, str]:
    """The columns that follow from the position alone: ``board`` (FEN),
    ``white_active``, ``is_check`` (the side to move is in check),
    ``num_legal_moves`` and the piece counts of the active side and its opponent."""
    import chess

    active, opp = board.turn, not board.turn
    row = {
        "board": board.fen(),
        "white_active": format_bool(board.turn == chess.WHITE),
        "is_check": format_bool(board.is_check()),
        "num_legal_moves": str(board.legal_moves.count()),
    }
    for name, piece in (("bishop", chess.BISHOP), ("knight", chess.KNIGHT), ("pawn", chess.PAWN),
                        ("queen", chess.QUEEN), ("rook", chess.ROOK)):
        row[f"active_{name}_count"] = str(len(board.pieces(piece, active)))
        row[f"opp_{name}_count"] = str(len(board.pieces(piece, opp)))
    return row
