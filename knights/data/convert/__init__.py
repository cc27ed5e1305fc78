"""Convert public evaluation datasets into the CSSLab CSV format.

Three inputs are understood, each read by its own module:

=================  ==========================================  =====================
``fmt``            the input                                   read by
=================  ==========================================  =====================
``lichess-jsonl``  the Lichess evaluation database (JSONL)     :mod:`.lichess_jsonl`
``kaggle-csv``     the Kaggle "chess evaluations" CSV          :mod:`.kaggle_csv`
``pgn``            games with ``[%eval]`` comments             :mod:`.pgn`
=================  ==========================================  =====================

Each output row follows :mod:`knights.data.csslab`: ``board`` is the position, ``cp``
its evaluation in pawns from White's side, ``cp_rel`` the same from the side to move,
``move`` the move played (PGN) or the engine's best move (evaluation databases).
Columns the source cannot know are left empty.

Bad input never stops a conversion: a malformed line, row or game is skipped and
counted by reason in :class:`ConvertReport`, with the first few errors kept verbatim
(file and line number) for the user to look at (:mod:`.sink`).

>>> report = convert_file("lichess_db_eval.jsonl.zst", "data/raw/lichess_eval.csv")  # doctest: +SKIP
>>> print(report.summary())  # doctest: +SKIP
lichess_db_eval.jsonl.zst (lichess-jsonl): 1000000 rows written to data/raw/lichess_eval.csv, 0 skipped

The input is streamed (never loaded whole) and the output is written to
``dst + ".tmp"`` and renamed to ``dst`` only when the conversion finished, so an
interrupted run never leaves a truncated file behind.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, BinaryIO

from knights.data.convert import kaggle_csv, lichess_jsonl, pgn
from knights.data.convert.sink import ConvertReport, Sink
from knights.data.csslab import RowWriter

__all__ = ["FORMATS", "ConvertReport", "convert_file", "detect_format"]

_CONVERTERS: dict[str, Callable[[IO[str], Path, Sink], None]] = {
    "lichess-jsonl": lichess_jsonl.convert,
    "kaggle-csv": kaggle_csv.convert,
    "pgn": pgn.convert,
}

FORMATS: tuple[str, ...] = tuple(_CONVERTERS)
"""The input formats :func:`convert_file` understands."""

_SUFFIXES: tuple[tuple[str, str], ...] = (
    (".jsonl", "lichess-jsonl"),
    (".jsonl.zst", "lichess-jsonl"),
    (".csv", "kaggle-csv"),
    (".csv.zst", "kaggle-csv"),
    (".pgn", "pgn"),
    (".pgn.zst", "pgn"),
)


def detect_format(path: str | os.PathLike[str]) -> str:
    """The input format implied by a file name.

    >>> detect_format("lichess_db_eval.jsonl.zst"), detect_format("evals.csv"), detect_format("g.pgn")
    ('lichess-jsonl', 'kaggle-csv', 'pgn')
    """
    name = Path(path).name.lower()
    for suffix, fmt in sorted(_SUFFIXES, key=lambda s: -len(s[0])):
        if name.endswith(suffix):
            return fmt
    known = ", ".join(s for s, _ in _SUFFIXES)
    raise ValueError(f"cannot tell the format of {str(path)!r} from its name (known: {known}); "
                     f"pass fmt= one of {', '.join(FORMATS)}")


def convert_file(src: str | os.PathLike[str], dst: str | os.PathLike[str], fmt: str | None = None,
                 *, progress: bool = True, limit: int | None = None) -> ConvertReport:
    """Convert ``src`` (a Lichess eval JSONL, a Kaggle eval CSV or a PGN file, plain or
    ``.zst``) into the CSSLab CSV ``dst``, header included.

    ``fmt`` is one of :data:`FORMATS`; by default it is read from the file name (see
    :func:`detect_format`). ``limit`` stops after that many rows have been written.
    ``progress`` shows a progress bar over the bytes read.

    Raises :class:`FileNotFoundError` if ``src`` does not exist and
    :class:`ValueError` for an unknown format or a CSV without the needed columns.
    Anything wrong *inside* the data is counted in the returned
    :class:`ConvertReport`, never raised.
    """
    src_path, dst_path = Path(src), Path(dst)
    if not src_path.is_file():
        raise FileNotFoundError(f"input file not found: {src_path}")
    fmt = detect_format(src_path) if fmt is None else fmt
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    if dst_path.exists() and dst_path.resolve() == src_path.resolve():
        raise ValueError(f"output {dst_path} is the input file")

    report = ConvertReport(src=str(src_path), dst=str(dst_path), fmt=fmt)
    dst_path.parent.mkdir(parents=True, exist_ok=True)
    tmp_path = Path(str(dst_path) + ".tmp")
    try:
        with _open_input(src_path, newline="" if fmt == "kaggle-csv" else None) as (text, raw), \
                _progress_bar(src_path, enabled=progress) as bar, \
                open(tmp_path, "w", encoding="utf-8", newline="") as out:
            sink = Sink(RowWriter(out), report, limit, lambda: bar(raw.tell()))
            _CONVERTERS[fmt](text, src_path, sink)
            bar(raw.tell())
        os.replace(tmp_path, dst_path)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise
    return report


@contextmanager
def _open_input(path: Path, *, newline: str | None) -> Iterator[tuple[IO[str], BinaryIO]]:
    """Open ``path`` as UTF-8 text, decompressing ``.zst`` on the fly.

    Yields the text stream and the raw file (whose ``tell()`` is the number of bytes
    read so far, for the progress bar). Undecodable bytes become U+FFFD, so that the
    record holding them is skipped as malformed instead of stopping the run.
    """
    with open(path, "rb") as raw:
        binary: Any = raw
        if path.name.lower().endswith(".zst"):
            import zstandard

            binary = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True,
                                                                closefd=False)
        text = io.TextIOWrapper(binary, encoding="utf-8", errors="replace", newline=newline)
        try:
            yield text, raw
        finally:
            text.close()  # closes the zstd reader too, which leaves ``raw`` to the with


@contextmanager
def _progress_bar(path: Path, *, enabled: bool) -> Iterator[Callable[[int], None]]:
    """A tqdm bar over the bytes of ``path``; yields ``update(bytes_read_so_far)``."""
    if not enabled:
        yield lambda _pos: None
        return
    from tqdm import tqdm

    with tqdm(total=path.stat().st_size, unit="B", unit_scale=True, unit_divisor=1024,
              desc=path.name, dynamic_ncols=True) as bar:
        def update(pos: int) -> None:
            if pos > bar.n:
                bar.update(pos - bar.n)
        yield update
