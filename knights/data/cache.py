"""Encoded chunks on their way to training: cached on disk, loaded, streamed, batched.

Parsing a chunk's FENs (:func:`~knights.data.chunks.read_chunk`) is the slow part of
reading it, so it is done once per chunk *content*: :class:`ChunkCache` stores each
chunk's :class:`~knights.data.chunks.Encoded` arrays as one ``.npy`` file named by the
chunk's SHA-1, and later reads memory-map it. Training then holds the rows it needs
in memory and draws shuffled mini-batches from them::

    files = select_chunks("data/chunks", "a-d")
    data = load_encoded(files)                  # every row, parsed once, cached
    for batch in iter_batches(data, 15_000, seed=epoch):
        ...

:func:`read_chunks` streams the rows of files in blocks instead, without the cache
(one pass over data too large, or too rarely read, to keep).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

from knights.data.chunks import Encoded, read_chunk


def file_checksum(path: str | Path, algorithm: str = "sha1") -> str:
    """Hex digest of a file's bytes, read in 1 MiB blocks."""
    h = hashlib.new(algorithm)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class ChunkCache:
    """Encoded chunks on disk: one structured ``.npy`` array per chunk content
    (SHA-1), opened memory-mapped. A chunk whose content changes gets a new key."""

    VERSION = 6   # 5: placements with adjacent digits ("44") are malformed; 6: impossible positions
                  # (python-chess status), bad castling/en-passant fields and non-ASCII numbers are dropped
    RECORD = np.dtype([("squares", np.int8, (64,)), ("white", np.int8), ("check", np.int8),
                       ("capture", np.int8), ("target", np.float32), ("move", np.int16),
                       ("castling", np.int8), ("ep", np.int8)])

    def __init__(self, root: str | Path | None = None) -> None:
        # default: the repository's data/cache, whatever the current directory (a notebook's own folder)
        self.root = Path(root or os.environ.get("KNIGHTS_CACHE") or Path(__file__).resolve().parents[2] / "data/cache")
        self.checksums: dict[str, str] = {}
        """The SHA-1 of every chunk read through :meth:`records` (by path, as of that read)."""

    def path_for(self, checksum: str) -> Path:
        return self.root / f"v{self.VERSION}-{checksum}.npy"

    def records(self, chunk: str | Path, report: Callable[[str], None] | None = None) -> np.ndarray:
        """The chunk's rows as a memory-mapped structured array, parsing and caching
        the chunk on first use."""
        checksum = self.checksums[str(chunk)] = file_checksum(chunk)
        path = self.path_for(checksum)
        if not path.exists():
            block, rep = read_chunk(chunk)
            if report and rep.skipped:
                report(rep.summary())
            self._store(path, block)
        records: np.ndarray = np.load(path, mmap_mode="r")
        return records

    def load(self, chunk: str | Path, report: Callable[[str], None] | None = None) -> Encoded:
        """The encoded arrays of ``chunk``."""
        return self.split(self.records(chunk, report))

    @staticmethod
    def split(records: np.ndarray) -> Encoded:
        return Encoded(*(np.ascontiguousarray(records[f]) for f in Encoded.FIELDS))

    def _store(self, path: Path, block: Encoded) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        records = np.empty(len(block), dtype=self.RECORD)
        for f in Encoded.FIELDS:
            records[f] = getattr(block, f)
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".tmp-", suffix=".npy")
        try:
            with os.fdopen(fd, "wb") as fh:
                np.save(fh, records)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
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
    records = [cache.records(f, report) for f in tqdm(files, desc="chunks", unit="file", disable=not progress)]
    records = records or [np.empty(0, ChunkCache.RECORD)]
    # field by field: one copy of the data, not a joined record array and then its fields
    return Encoded(*(np.concatenate([r[f] for r in records]) for f in Encoded.FIELDS))


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
