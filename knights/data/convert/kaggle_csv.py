"""The "chess evaluations" CSV from Kaggle.

Its header is ``fen,line,depth,knodes,cp,mate``: the units are those of the Lichess
database (centipawns or a mate count, White's side), one of ``cp`` / ``mate`` is
empty, ``line`` is the principal variation. Every row is kept, even when a FEN
repeats. A header without ``fen`` and ``cp`` or ``mate`` is an error; a bad row is
skipped and counted.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from knights.data.convert.evals import board_from_fen, eval_row, eval_text, first_move
from knights.data.convert.sink import Sink, Skip, at_line


def convert(text: IO[str], path: Path, sink: Sink) -> None:
    """One row per CSV row of ``text`` (read from ``path``), sent to ``sink``."""
    reader = csv.reader(text)
    try:
        header = next(reader)
    except StopIteration:
        raise ValueError(f"{path}: empty file, expected a CSV header with fen and cp/mate") from None
    except csv.Error as error:
        raise ValueError(f"{path}: unreadable CSV header: {error}") from None
    header = [h.strip().lstrip("\ufeff").strip().lower() for h in header]
    missing = [c for c in ("fen",) if c not in header]
    if "cp" not in header and "mate" not in header:
        missing.append("cp or mate")
    if missing:
        raise ValueError(f"{path}: CSV header lacks the column(s) {', '.join(missing)} "
                         f"(found: {', '.join(header) or 'nothing'})")
    index = {name: i for i, name in reversed(list(enumerate(header)))}

    def get(fields: Sequence[str], name: str) -> str | None:
        i = index.get(name)
        return None if i is None else fields[i]

    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            sink.record()
            sink.report.skip("bad_csv", f"{at_line(path, reader.line_num)}: {error}")
            continue
        if not fields or (len(fields) == 1 and not fields[0].strip()):
            continue
        sink.record()

        def make_row(fields: Sequence[str] = fields) -> Mapping[str, object]:
            if len(fields) != len(header):
                raise Skip("bad_csv", f"{len(fields)} fields, the header has {len(header)}")
            board = board_from_fen(get(fields, "fen"))
            cp_text = eval_text(get(fields, "cp"), get(fields, "mate"))
            return eval_row(board, cp_text, first_move(board, get(fields, "line")), "KaggleEval")

        if not sink.attempt(at_line(path, reader.line_num), make_row):
            return
