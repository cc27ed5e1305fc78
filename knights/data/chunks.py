"""Chunk files: choose them by suffix letters, read them tolerantly, cache them encoded.

The original split its CSV into chunks ``Chess_Jan_aa``, ``Chess_Jan_ab``, ... and
chose training and validation sets by the *first letter of the suffix*: train on
``a-d``, validate on ``e,f``. :func:`select_chunks` speaks that language::

    "a-d"              chunks whose suffix starts with a, b, c or d
    "e,f"              e and f
    "a-c,h"            ranges and letters mixed
    "all"              every chunk
    "every 4th"        every 4th chunk file in sorted order (the 4th, 8th, ...)
    "a-p except every 4th"   a set minus another

:func:`read_chunk` turns one chunk into an :class:`Encoded` block of arrays, skipping
malformed rows and *counting* them (bad FEN, bad cp, wrong column count, bad
boolean). :class:`ChunkCache` stores each chunk's arrays on disk under the chunk's
SHA-1, so training epochs never parse a FEN again, and :func:`iter_batches` streams
shuffled mini-batches from the cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import string
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Literal, Sequence

import numpy as np

from knights.board import parse_fens
from knights.data import csslab

REQUIRED_COLUMNS = ("board", "cp")
_TRUE = {"True": 1, "true": 1, "1": 1, "False": 0, "false": 0, "0": 0, "": 0}
_LETTERS = string.ascii_lowercase


# -- targets ---------------------------------------------------------------------
def cp_to_target(values: Sequence[str], units: Literal["pawns", "centipawns"] = "pawns") -> np.ndarray:
    """Training targets from ``cp`` strings (White's side, pawns): mates to +-10,
    everything else clipped to +-9 (ORIGINAL.md), returned in ``units``.

    Raises ``ValueError`` on a malformed value; :func:`read_chunk` skips and
    counts such rows instead.
    """
    pawns = np.array([csslab.eval_to_pawns(v) for v in values], dtype=np.float32)
    if units == "pawns":
        return pawns
    if units == "centipawns":
        return pawns * 100.0
    raise ValueError(f"unknown units {units!r}: use 'pawns' or 'centipawns'")


# -- selection -------------------------------------------------------------------
def chunk_files(folder: str | Path, prefix: str | None = None) -> list[Path]:
    """All chunk files in ``folder`` (names ``PREFIX`` + lowercase letters), sorted.

    Without ``prefix`` the folder must hold chunks of exactly one prefix.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"chunk folder not found: {folder}")
    found: dict[str, list[Path]] = {}
    for path in folder.iterdir():
        name = path.name
        if not path.is_file() or name.startswith(".") or "." in name:
            continue
        stem = name.rstrip(_LETTERS)
        if stem == name or (prefix is not None and stem != prefix):
            continue
        found.setdefault(stem, []).append(path)
    if prefix is None and len(found) > 1:
        raise ValueError(f"{folder} holds chunks of several prefixes {sorted(found)}: pass prefix=")
    files = sorted(p for group in found.values() for p in group)
    if not files:
        raise FileNotFoundError(f"no chunk files{' ' + prefix + '*' if prefix else ''} in {folder}")
    return files


def _suffix(path: Path, prefix_len: int) -> str:
    return path.name[prefix_len:]


def select_chunks(folder: str | Path, spec: str, prefix: str | None = None) -> list[Path]:
    """Chunk files of ``folder`` chosen by ``spec`` (see the module docstring)."""
    files = chunk_files(folder, prefix)
    stem_len = len(files[0].name.rstrip(_LETTERS))
    chosen = _select(files, spec.strip().lower(), stem_len)
    if not chosen:
        raise ValueError(f"chunk selection {spec!r} matches no file in {folder}")
    return chosen


def _select(files: list[Path], spec: str, stem_len: int) -> list[Path]:
    if " except " in spec:
        keep, drop = spec.split(" except ", 1)
        dropped = set(_select(files, drop.strip(), stem_len))
        return [f for f in _select(files, keep.strip(), stem_len) if f not in dropped]
    if spec == "all":
        return list(files)
    every = re.fullmatch(r"every (\d+)(?:st|nd|rd|th)?", spec)
    if every:
        n = int(every.group(1))
        if n < 1:
            raise ValueError(f"bad chunk selection {spec!r}")
        return [f for i, f in enumerate(files) if i % n == n - 1]
    letters: set[str] = set()
    for term in spec.replace(" ", "").split(","):
        if re.fullmatch(r"[a-z]", term):
            letters.add(term)
        elif re.fullmatch(r"[a-z]-[a-z]", term) and term[0] <= term[2]:
            letters.update(_LETTERS[_LETTERS.index(term[0]): _LETTERS.index(term[2]) + 1])
        else:
            raise ValueError(f"bad chunk selection term {term!r} in {spec!r}: "
                             'use letters "a-d", "e,f", "all", "every 4th", "X except Y"')
    return [f for f in files if _suffix(f, stem_len)[:1] in letters]


# -- reading ---------------------------------------------------------------------
@dataclass
class Encoded:
    """One block of encoded positions (parallel arrays of length N)."""

    squares: np.ndarray   # int8 (N, 64) signed piece codes, a8..h1
    white: np.ndarray     # int8 (N,) 1 if White is to move
    check: np.ndarray     # int8 (N,) 1 if the side to move is in check
    capture: np.ndarray   # int8 (N,) 1 if the move played from here captures
    target: np.ndarray    # float32 (N,) evaluation in pawns, White's side, mates +-10, clipped +-9

    FIELDS = ("squares", "white", "check", "capture", "target")

    def __len__(self) -> int:
        return len(self.target)

    def take(self, index: np.ndarray | slice) -> "Encoded":
        return Encoded(*(np.asarray(getattr(self, f)[index]) for f in self.FIELDS))

    @staticmethod
    def concat(blocks: Sequence["Encoded"]) -> "Encoded":
        return Encoded(*(np.concatenate([getattr(b, f) for b in blocks]) for f in Encoded.FIELDS))


@dataclass
class ReadReport:
    """What reading a file kept and what it skipped, by reason."""

    path: str
    rows: int = 0
    skipped: Counter = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)

    @property
    def total_skipped(self) -> int:
        return sum(self.skipped.values())

    def skip(self, reason: str, line_no: int, count: int = 1) -> None:
        self.skipped[reason] += count
        if len(self.examples) < 5:
            self.examples.append(f"{self.path}:{line_no}: {reason}")

    def summary(self) -> str:
        if not self.skipped:
            return f"{self.path}: {self.rows:,} rows, none skipped"
        reasons = ", ".join(f"{n} {r}" for r, n in self.skipped.most_common())
        return f"{self.path}: {self.rows:,} rows kept, {self.total_skipped:,} malformed rows skipped ({reasons})"


def _split_line(line: str) -> list[str]:
    if '"' in line:
        import csv
        return next(csv.reader([line]))
    return line.split(",")


def read_chunk(path: str | Path) -> tuple[Encoded, ReadReport]:
    """Parse one CSSLab chunk (any column subset holding ``board`` and ``cp``).

    ``white_active`` is taken from the FEN; ``is_check`` and ``is_capture`` from
    their columns when present (else 0). A missing required column is an error
    naming the file; a malformed row is skipped and counted in the report.
    """
    path = Path(path)
    report = ReadReport(str(path))
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        header_line = fh.readline()
        header = [h.strip() for h in _split_line(header_line.rstrip("\r\n"))]
        missing = [c for c in REQUIRED_COLUMNS if c not in header]
        if not header_line or missing:
            raise ValueError(f"{path}: missing required columns {missing or list(REQUIRED_COLUMNS)} "
                             f"(header: {header_line.strip()[:120]!r})")
        ncols = len(header)
        i_board, i_cp = header.index("board"), header.index("cp")
        i_check = header.index("is_check") if "is_check" in header else None
        i_capture = header.index("is_capture") if "is_capture" in header else None
        fens: list[str] = []
        targets: list[float] = []
        checks: list[int] = []
        captures: list[int] = []
        lines: list[int] = []
        to_pawns = csslab.eval_to_pawns
        for line_no, line in enumerate(fh, start=2):
            line = line.rstrip("\r\n")
            if not line:
                continue
            parts = _split_line(line)
            if len(parts) != ncols:
                report.skip("wrong column count", line_no)
                continue
            try:
                target = to_pawns(parts[i_cp])
            except ValueError:
                report.skip("bad cp", line_no)
                continue
            try:
                check = _TRUE[parts[i_check].strip()] if i_check is not None else 0
                capture = _TRUE[parts[i_capture].strip()] if i_capture is not None else 0
            except KeyError:
                report.skip("bad boolean", line_no)
                continue
            fens.append(parts[i_board])
            targets.append(target)
            checks.append(check)
            captures.append(capture)
            lines.append(line_no)
    squares, white, valid = parse_fens(fens)
    if not valid.all():
        for i in np.flatnonzero(~valid):
            report.skip("bad FEN", lines[i])
    keep = valid
    block = Encoded(
        squares=squares[keep],
        white=white[keep].astype(np.int8),
        check=np.asarray(checks, dtype=np.int8)[keep],
        capture=np.asarray(captures, dtype=np.int8)[keep],
        target=np.asarray(targets, dtype=np.float32)[keep],
    )
    report.rows = len(block)
    return block, report


# -- cache -----------------------------------------------------------------------
def file_checksum(path: str | Path) -> str:
    h = hashlib.sha1()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class ChunkCache:
    """Encoded chunks on disk, one folder per chunk content (SHA-1), as ``.npy``
    arrays opened memory-mapped. A chunk whose content changes gets a new key."""

    VERSION = 1

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root or os.environ.get("KNIGHTS_CACHE", "data/cache"))

    def path_for(self, checksum: str) -> Path:
        return self.root / f"v{self.VERSION}-{checksum}"

    def load(self, chunk: str | Path, report: Callable[[str], None] | None = None) -> Encoded:
        """The encoded arrays of ``chunk``, parsing and caching it on first use."""
        folder = self.path_for(file_checksum(chunk))
        if not (folder / "meta.json").exists():
            block, rep = read_chunk(chunk)
            if report and rep.skipped:
                report(rep.summary())
            self._store(folder, block, rep)
        return Encoded(*(np.load(folder / f"{f}.npy", mmap_mode="r") for f in Encoded.FIELDS))

    def _store(self, folder: Path, block: Encoded, rep: ReadReport) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=self.root, prefix=".tmp-"))
        try:
            for f in Encoded.FIELDS:
                np.save(tmp / f"{f}.npy", np.ascontiguousarray(getattr(block, f)))
            (tmp / "meta.json").write_text(json.dumps(
                {"source": rep.path, "rows": rep.rows, "skipped": dict(rep.skipped)}))
            try:
                os.replace(tmp, folder)
            except OSError:  # another process cached it first
                shutil.rmtree(tmp, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise


def read_chunks(files: Sequence[str | Path], *, batch_rows: int = 100_000,
                report: Callable[[str], None] | None = None) -> Iterator[Encoded]:
    """Stream the chunks' rows in file order, in blocks of up to ``batch_rows``,
    without the cache. Each file's skip summary goes to ``report``."""
    for path in files:
        block, rep = read_chunk(path)
        if report and rep.skipped:
            report(rep.summary())
        for start in range(0, len(block), batch_rows):
            yield block.take(slice(start, start + batch_rows))


def load_encoded(files: Sequence[str | Path], cache: ChunkCache | None = None, *,
                 progress: bool = False, report: Callable[[str], None] | None = None) -> Encoded:
    """All rows of ``files`` as one in-memory block, through the cache."""
    from tqdm import tqdm

    cache = cache or ChunkCache()
    blocks = [cache.load(f, report) for f in tqdm(files, desc="chunks", unit="file", disable=not progress)]
    return Encoded.concat(blocks)


def iter_batches(data: Encoded, batch_size: int, *, shuffle: bool = True,
                 seed: int = 0, drop_last: bool = False) -> Iterator[Encoded]:
    """Mini-batches of an in-memory block, reshuffled by ``seed`` (pass the epoch)."""
    n = len(data)
    order = np.random.default_rng(seed).permutation(n) if shuffle else None
    for start in range(0, n, batch_size):
        stop = min(start + batch_size, n)
        if drop_last and stop - start < batch_size:
            break
        index = order[start:stop] if order is not None else slice(start, stop)
        yield data.take(index)
