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

from knights.common import exit_on_termination, not_a_regular_file
from knights.data.convert import kaggle_csv, lichess_jsonl, pgn
from knights.data.convert.sink import ConvertReport, CorruptInput, Sink
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
    :class:`ValueError` for an unknown format, a CSV without the needed columns, a
    corrupt or truncated ``.zst`` (:class:`~.sink.CorruptInput`; no output is left), and,
    before any work, for an output that would overwrite the input (``dst`` or its
    ``.tmp`` naming the input, hard links included), is a directory or anything else
    that is not a regular file (a FIFO, a device), or cannot be created or written (its
    folder must exist: none is made), and for an unreadable input or one that is a folder.
    SIGTERM and SIGHUP end the run as an interruption does: the ``.tmp`` file is removed.
    Anything wrong *inside* the data is counted in the returned
    :class:`ConvertReport`, never raised.
    """
    src_path, dst_path = Path(src), Path(dst)
    if src_path.is_dir():
        raise ValueError(f"input {src_path} is a folder: name the file to convert")
    if not src_path.is_file():
        raise FileNotFoundError(f"input file not found: {src_path}")
    fmt = detect_format(src_path) if fmt is None else fmt
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    tmp_path = Path(str(dst_path) + ".tmp")
    _check_paths(src_path, dst_path, tmp_path)

    report = ConvertReport(src=str(src_path), dst=str(dst_path), fmt=fmt)
    try:
        with exit_on_termination(), _open_input(src_path, newline="" if fmt == "kaggle-csv" else None) as (text, raw), \
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


def _same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name one file (same resolved path, or a hard link / bind of it)."""
    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _check_paths(src: Path, dst: Path, tmp: Path) -> None:
    """Refuse, before any work, every output that could not be written or that would
    overwrite the input: nothing the converter writes (``dst`` or its ``.tmp``) may be ``src``."""
    for out in (dst, tmp):
        if _same_file(out, src):
            raise ValueError(f"output {out} is the input file {src}: choose another output name")
    if dst.is_dir():
        raise ValueError(f"output {dst} is a directory: name the CSV file to write")
    if tmp.is_dir():
        raise ValueError(f"temporary output {tmp} is a directory: remove it or choose another output name")
    for out, what in ((dst, "output"), (tmp, "temporary output")):
        kind = not_a_regular_file(out)
        if kind is not None:   # never replaced by the CSV (as root, /dev/full would be)
            raise ValueError(f"{what} {out} is not a regular file but {kind}: name a CSV file to write")
    if not os.access(src, os.R_OK):
        raise ValueError(f"input {src} is not readable (permission denied)")
    try:
        with open(src, "rb"):
            pass
    except OSError as error:
        raise ValueError(f"cannot read input {src}: {error.strerror or error}") from None
    folder = dst.parent
    if not folder.is_dir():   # never made here: a typo would otherwise build folders up to the root
        there = next(p for p in (folder, *folder.parents) if p.exists())
        if not there.is_dir():
            raise ValueError(f"cannot write {dst}: {there} is a file, not a folder")
        raise ValueError(f"cannot write {dst}: the folder {folder} does not exist (create it first, or name "
                         "another output)")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"cannot write {dst}: the folder {folder} is not writable")


class _ZstdReader(io.RawIOBase):
    """Zstandard frames of ``raw`` decompressed, strictly: corrupt data and a stream
    that ends inside a frame (a truncated download) raise ``ValueError`` naming ``path``
    instead of passing for a shorter file (:class:`CorruptInput`, a ``ValueError``)."""

    def __init__(self, raw: BinaryIO, path: Path) -> None:
        import zstandard

        self._zstd = zstandard
        self._raw, self._path = raw, path
        self._obj = zstandard.ZstdDecompressor().decompressobj()
        self._pending = b""
        self._in_frame = False   # bytes of an unfinished frame were fed
        self._eof = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        while not self._pending and not self._eof:
            self._fill()
        n = min(len(view), len(self._pending))
        view[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def _fill(self) -> None:
        data = self._raw.read(1 << 16)
        if not data:
            self._eof = True
            if self._in_frame:
                raise CorruptInput(f"{self._path}: truncated zstd data (the file ends inside a frame)")
            return
        while data:
            try:
                self._pending += self._obj.decompress(data)
            except self._zstd.ZstdError as error:
                raise CorruptInput(f"{self._path}: corrupt zstd data ({error})") from None
            self._in_frame = not self._obj.eof
            if not self._obj.eof:
                return
            data = self._obj.unused_data
            self._obj = self._zstd.ZstdDecompressor().decompressobj()


@contextmanager
def _open_input(path: Path, *, newline: str | None) -> Iterator[tuple[IO[str], BinaryIO]]:
    """Open ``path`` as UTF-8 text, decompressing ``.zst`` on the fly (strictly: see
    :class:`_ZstdReader`).

    Yields the text stream and the raw file (whose ``tell()`` is the number of bytes
    read so far, for the progress bar). Undecodable bytes become U+FFFD, so that the
    record holding them is skipped as malformed instead of stopping the run.
    """
    with open(path, "rb") as raw:
        binary: Any = raw
        if path.name.lower().endswith(".zst"):
            binary = io.BufferedReader(_ZstdReader(raw, path), buffer_size=1 << 16)
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
