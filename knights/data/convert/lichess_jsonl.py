"""The Lichess evaluation database (``lichess_db_eval.jsonl`` or its ``.zst`` download).

One JSON object per line::

    {"fen": "...", "evals": [{"pvs": [{"cp": 31, "line": "e2e4 e7e5"}], "depth": 36, ...}]}

The deepest evaluation is used, and its first principal variation. ``cp`` is in
centipawns from White's side; ``mate`` counts moves (positive: White mates).
The FENs have only four fields; the converter accepts four or six.
"""

from __future__ import annotations

import json
import math
from functools import partial
from pathlib import Path
from typing import IO, Any

import chess

from knights.data.convert.evals import board_from_fen, eval_row, eval_text, first_move
from knights.data.convert.sink import Sink, Skip, at_line, short


def _parse_record(line: str) -> tuple[chess.Board, str, chess.Move | None]:
    """The position, its ``cp`` text and best move from one JSON line."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError) as error:
        raise Skip("bad_json", f"not JSON ({error})") from None
    if not isinstance(record, dict):
        raise Skip("bad_json", f"not a JSON object: {short(record)}")
    board = board_from_fen(record.get("fen"))
    evals = record.get("evals")
    if not isinstance(evals, list):
        raise Skip("missing_eval", "no 'evals' list")
    candidates = [e for e in evals
                  if isinstance(e, dict) and isinstance(e.get("pvs"), list) and e["pvs"]]
    if not candidates:
        raise Skip("missing_eval", "no evaluation with a principal variation")

    def depth(e: dict[str, Any]) -> float:
        d = e.get("depth")
        if isinstance(d, (int, float)) and not isinstance(d, bool) and math.isfinite(d):
            return float(d)
        return -1.0

    best = max(candidates, key=depth)  # first of the deepest on ties
    pv = best["pvs"][0]
    if not isinstance(pv, dict):
        raise Skip("missing_eval", f"pv is not an object: {short(pv)}")
    cp_text = eval_text(pv.get("cp"), pv.get("mate"))
    return board, cp_text, first_move(board, pv.get("line"))


def _row(line: str) -> dict[str, str]:
    """The CSSLab row of one JSON line."""
    return eval_row(*_parse_record(line), "LichessEval")


def convert(text: IO[str], path: Path, sink: Sink) -> None:
    """One row per JSON line of ``text`` (read from ``path``), sent to ``sink``."""
    for number, line in enumerate(text, start=1):
        if not line.strip():
            continue
        sink.record()
        if not sink.attempt(at_line(path, number), partial(_row, line)):
            return
