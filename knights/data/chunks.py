"""Chunk files: choose them by suffix letters, read them tolerantly into arrays.

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
boolean). Reading is the slow step; :mod:`knights.data.cache` does it once per chunk
and keeps the arrays on disk for every later epoch.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from knights.board.arrays import parse_legal_fens
from knights.board.positions import Positions
from knights.data import csslab

REQUIRED_COLUMNS = ("board", "cp")
_TRUE = {"True": 1, "true": 1, "1": 1, "False": 0, "false": 0, "0": 0, "": 0}
_LETTERS = string.ascii_lowercase


# -- targets ---------------------------------------------------------------------
def cp_to_target(values: Sequence[str], units: Literal["pawns", "centipawns"] = "pawns") -> np.ndarray:
    """Training targets from ``cp`` strings (White's side, pawns): mates to +-10,
    everything else clipped to +-9 (docs/original.md), returned in ``units``.

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
        raise FileNotFoundError(f"{folder} is a file, not a chunk folder" if folder.exists()
                                else f"chunk folder not found: {folder}")
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
class Encoded(Positions):
    """One block of encoded positions (parallel arrays of length N): the
    :class:`~knights.board.positions.Positions` arrays (squares, side to move, check,
    capture) plus the label, the move played and what FEN adds."""

    target: np.ndarray    # float32 (N,) evaluation in pawns, White's side, mates +-10, clipped +-9
    move: np.ndarray      # int16 (N,) move played, from * 64 + to (python-chess squares, a1 = 0); -1 if none
    castling: np.ndarray  # int8 (N,) castling rights bitmask K=1 Q=2 k=4 q=8
    ep: np.ndarray        # int8 (N,) en-passant square (a1 = 0), -1 if none

    FIELDS = ("squares", "white", "check", "capture", "target", "move", "castling", "ep")

    def __len__(self) -> int:
        return len(self.target)

    def take(self, index: np.ndarray | slice) -> Encoded:
        return Encoded(*(np.asarray(getattr(self, f)[index]) for f in self.FIELDS))

    def mirrored(self, rows: np.ndarray | None = None) -> Encoded:
        """The colour-flipped positions: board upside down, White and Black swapped,
        side to move, castling rights, en-passant square and move mirrored, and the
        evaluation negated (it is from White's side). A position and its mirror are the
        same chess, so an evaluation must agree on both; training on mirrors is free data.
        ``rows``: a boolean mask of the rows to flip (default: all)."""
        flipped = Encoded(
            squares=-np.asarray(self.squares).reshape(-1, 8, 8)[:, ::-1, :].reshape(-1, 64),
            white=(1 - np.asarray(self.white)).astype(np.asarray(self.white).dtype),
            check=self.check, capture=self.capture, target=-np.asarray(self.target),
            move=np.where(self.move >= 0, self.move ^ (56 * 64 + 56), self.move).astype(self.move.dtype),
            castling=(((self.castling & 3) << 2) | ((self.castling >> 2) & 3)).astype(self.castling.dtype),
            ep=np.where(self.ep >= 0, self.ep ^ 56, self.ep).astype(self.ep.dtype))
        return flipped if rows is None else self._rows_from(flipped, np.asarray(rows, dtype=bool))

    def file_flipped(self, rows: np.ndarray | None = None) -> Encoded:
        """The positions seen in a mirror held beside the board: files a-h reversed, the
        en-passant square and the move likewise, colours, side to move and evaluation
        unchanged. Only castling tells a position from its mirror, so only the rows
        without castling rights flip (the others are returned as they are); for those
        it is the same chess, and training on both is free data.
        ``rows``: a boolean mask of the rows that may flip (default: all)."""
        flipped = Encoded(
            squares=np.asarray(self.squares).reshape(-1, 8, 8)[:, :, ::-1].reshape(-1, 64),
            white=self.white, check=self.check, capture=self.capture, target=self.target,
            move=np.where(self.move >= 0, self.move ^ (7 * 64 + 7), self.move).astype(self.move.dtype),
            castling=self.castling,
            ep=np.where(self.ep >= 0, self.ep ^ 7, self.ep).astype(self.ep.dtype))
        mask = np.asarray(self.castling) == 0
        if rows is not None:
            mask = mask & np.asarray(rows, dtype=bool)
        return self._rows_from(flipped, mask)

    def _rows_from(self, other: Encoded, mask: np.ndarray) -> Encoded:
        """These rows, with those where ``mask`` is true taken from ``other`` (same length)."""
        return Encoded(*(np.where(mask.reshape(-1, *([1] * (np.ndim(getattr(self, f)) - 1))),
                                  getattr(other, f), getattr(self, f)) for f in self.FIELDS))

    @staticmethod
    def concat(blocks: Sequence[Encoded]) -> Encoded:
        return Encoded(*(np.concatenate([getattr(b, f) for b in blocks]) for f in Encoded.FIELDS))


@dataclass
class ReadReport:
    """What reading a file kept and what it skipped, by reason."""

    path: str
    rows: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)

    @property
    def total_skipped(self) -> int:
        return sum(self.skipped.values())

    def skip(self, reason: str, line_no: int) -> None:
        self.skipped[reason] += 1
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


def move_index(uci: str) -> int:
    """``from * 64 + to`` of a UCI move (python-chess square numbers, a1 = 0);
    -1 for an empty field, -2 for text that is not a move."""
    if not uci:
        return -1
    if len(uci) not in (4, 5) or not (uci[0] in "abcdefgh" and uci[2] in "abcdefgh"
                                     and uci[1] in "12345678" and uci[3] in "12345678"):
        return -2
    if len(uci) == 5 and uci[4] not in "qrbn":
        return -2
    src = (ord(uci[0]) - 97) + 8 * (ord(uci[1]) - 49)
    dst = (ord(uci[2]) - 97) + 8 * (ord(uci[3]) - 49)
    return src * 64 + dst


def read_chunk(path: str | Path) -> tuple[Encoded, ReadReport]:
    """Parse one CSSLab chunk (any column subset holding ``board`` and ``cp``).

    ``white_active`` is taken from the FEN; ``is_check`` and ``is_capture`` from
    their columns when present (else 0). A missing required column is an error
    naming the file; a malformed row is skipped and counted in the report, by
    reason, in this order of precedence: wrong column count, bad cp, bad boolean,
    bad move, bad FEN, illegal position (a well-formed FEN of a position that cannot
    occur: :func:`~knights.board.arrays.position_problem`, the rule every converter
    applies too). Every non-empty data line is either kept or counted:
    ``report.rows + report.total_skipped`` is the number of non-empty data lines.

    Files without quotes (every CSSLab file) are parsed column-wise with NumPy:
    field boundaries come from the comma positions of the whole file at once.
    A file with quoted fields takes the line-by-line reader, with the same result.
    """
    path = Path(path)
    raw = path.read_bytes()
    if b'"' in raw:
        return _read_chunk_lines(path)
    return _read_chunk_columns(path, raw)


RESULT_SCORES = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}
"""White's score by the PGN result a chunk's ``result`` column holds."""


def game_results(path: str | Path) -> np.ndarray:
    """White's score (1, 0.5 or 0, float32) in the game each data row of a chunk comes from, in the file's order:
    its ``result`` column. A file without the column, or a row whose result is none of :data:`RESULT_SCORES` (a
    game cut short, ``*``), is an error naming the file and the row; rows line up with :func:`read_chunk`'s only
    when it skipped none, which the caller checks."""
    import pandas as pd

    path = Path(path)
    try:
        text = pd.read_csv(path, usecols=["result"], dtype=str, na_filter=False)["result"].str.strip()
    except ValueError as err:
        raise ValueError(f"{path}: no result column ({err})") from None
    scores = text.map(RESULT_SCORES)
    bad = np.flatnonzero(scores.isna().to_numpy())
    if len(bad):
        raise ValueError(f"{path}: data row {bad[0] + 1} has result {text.iloc[bad[0]]!r}, not one of "
                         f"{sorted(RESULT_SCORES)}")
    return scores.to_numpy(dtype=np.float32)


def _read_chunk_lines(path: Path) -> tuple[Encoded, ReadReport]:
    """The careful reader: one line at a time through the csv module where needed."""
    report = ReadReport(str(path))
    events: list[tuple[int, str]] = []
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        header = _read_header(path, fh.readline())
        ncols = len(header)
        i_board, i_cp = header.index("board"), header.index("cp")
        i_check = header.index("is_check") if "is_check" in header else None
        i_capture = header.index("is_capture") if "is_capture" in header else None
        i_move = header.index("move") if "move" in header else None
        fens: list[str] = []
        targets: list[float] = []
        checks: list[int] = []
        captures: list[int] = []
        moves: list[int] = []
        lines: list[int] = []
        to_pawns = csslab.eval_to_pawns
        for line_no, line in enumerate(fh, start=2):
            line = line.rstrip("\r\n")
            if not line:
                continue
            parts = _split_line(line)
            if len(parts) != ncols:
                events.append((line_no, "wrong column count"))
                continue
            try:
                target = to_pawns(parts[i_cp])
            except ValueError:
                events.append((line_no, "bad cp"))
                continue
            try:
                check = _TRUE[parts[i_check]] if i_check is not None else 0
                capture = _TRUE[parts[i_capture]] if i_capture is not None else 0
            except KeyError:
                events.append((line_no, "bad boolean"))
                continue
            move = move_index(parts[i_move]) if i_move is not None else -1
            if move == -2:
                events.append((line_no, "bad move"))
                continue
            fens.append(parts[i_board])
            moves.append(move)
            targets.append(target)
            checks.append(check)
            captures.append(capture)
            lines.append(line_no)
    fen = parse_legal_fens(fens)
    events += [(lines[i], "bad FEN") for i in np.flatnonzero(~fen["syntax"])]
    events += [(lines[i], "illegal position") for i in np.flatnonzero(fen["syntax"] & ~fen["legal"])]
    for line_no, reason in sorted(events):
        report.skip(reason, line_no)
    return _block(fen, np.asarray(checks), np.asarray(captures), np.asarray(targets, dtype=np.float32),
                  np.asarray(moves), report)


def _block(fen: dict[str, np.ndarray], check: np.ndarray, capture: np.ndarray, target: np.ndarray, move: np.ndarray,
           report: ReadReport) -> tuple[Encoded, ReadReport]:
    keep = fen["valid"]
    block = Encoded(
        squares=fen["squares"][keep],
        white=fen["white"][keep].astype(np.int8),
        check=check.astype(np.int8)[keep],
        capture=capture.astype(np.int8)[keep],
        target=target.astype(np.float32)[keep],
        move=move.astype(np.int16)[keep],
        castling=fen["castling"][keep],
        ep=fen["ep"][keep],
    )
    report.rows = len(block)
    return block, report


def _read_header(path: Path, header_line: str) -> list[str]:
    header = [h.strip() for h in _split_line(header_line.rstrip("\r\n").lstrip("\ufeff"))]
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if not header_line.strip() or missing:
        raise ValueError(f"{path}: missing required columns {missing or list(REQUIRED_COLUMNS)} "
                         f"(header: {header_line.strip()[:120]!r})")
    return header


_BOOL_TRUE = [text for text, value in _TRUE.items() if value]       # the line reader's words, as str
_BOOL_FALSE = [text for text, value in _TRUE.items() if not value]
_REASONS = {1: "wrong column count", 2: "bad cp", 3: "bad boolean", 4: "bad move", 5: "bad FEN",
            6: "illegal position"}


def _read_chunk_columns(path: Path, raw: bytes) -> tuple[Encoded, ReadReport]:
    """Column-wise reader for files without quotes.

    Every line's comma count is checked at once with NumPy; a file with any
    line of the wrong width goes to the line reader, which names each bad line.
    Otherwise pandas' C tokenizer extracts the five columns we need and every
    column is validated vectorised (cp, booleans, move, FEN)."""
    import io

    import pandas as pd

    if b"\0" in raw:  # NUL bytes: NumPy strings would drop trailing ones; the line reader counts them
        return _read_chunk_lines(path)
    raw = raw.replace(b"\r", b"")
    if not raw.endswith(b"\n"):
        raw += b"\n"
    header_end = raw.index(b"\n")
    header = _read_header(path, raw[:header_end].decode("utf-8", "replace"))
    buf = np.frombuffer(raw, dtype=np.uint8)
    newline = np.flatnonzero(buf == 10)
    starts, ends = newline[:-1] + 1, newline[1:]
    # commas per data line: sums of the comma mask between consecutive line starts
    commas = np.add.reduceat((buf == 44).view(np.uint8), newline[:-1] + 1, dtype=np.int32) if len(starts) else starts
    nonempty = ends > starts
    if (commas[nonempty] != len(header) - 1).any():
        return _read_chunk_lines(path)
    line_no = np.arange(2, len(newline) + 1)[nonempty]
    report = ReadReport(str(path))
    wanted = [c for c in ("board", "cp", "is_check", "is_capture", "move") if c in header]
    # header names are matched stripped, as _read_header does
    df = pd.read_csv(io.BytesIO(raw), usecols=lambda c: c.strip() in wanted, dtype=str, na_filter=False,
                     engine="c", skip_blank_lines=True, encoding_errors="replace")
    df.columns = [c.strip() for c in df.columns]
    n = len(df)
    if n != len(line_no):  # pandas saw the lines differently: let the careful reader decide
        return _read_chunk_lines(path)
    reason = np.zeros(n, dtype=np.int8)

    cp = df["cp"].to_numpy()
    # only the ASCII numbers the format defines take the fast path (NaN marks the rest, which go to
    # eval_to_pawns), each distinct text parsed once: a chunk's cp column repeats a few thousand values
    number = {text: float(text) if csslab.NUMBER_TEXT.fullmatch(text.strip()) else np.nan for text in set(cp)}
    values = np.fromiter(map(number.__getitem__, cp), dtype=np.float64, count=len(cp))
    target = np.clip(np.nan_to_num(values, nan=0.0), -csslab.CLIP_PAWNS, csslab.CLIP_PAWNS).astype(np.float32)
    for i in np.flatnonzero(~np.isfinite(values)):   # mates, and anything that is not a number
        try:
            target[i] = csslab.eval_to_pawns(cp[i])
        except ValueError:
            reason[i] = 2

    flags = {}
    for name in ("is_check", "is_capture"):
        if name in df:
            # compared as str, exactly: non-ASCII text must not raise
            is_true = df[name].isin(_BOOL_TRUE).to_numpy()
            is_false = df[name].isin(_BOOL_FALSE).to_numpy()
            reason[(reason == 0) & ~(is_true | is_false)] = 3
            flags[name] = is_true
        else:
            flags[name] = np.zeros(n, dtype=bool)

    move = np.full(n, -1, dtype=np.int16)
    if "move" in df:
        # as code points (non-ASCII text must not raise), capped so none aliases ASCII
        chars = np.minimum(df["move"].to_numpy(dtype="U7").view(np.uint32).reshape(n, 7), 255)
        move = _move_indices(chars, (chars != 0).sum(axis=1))
        reason[(reason == 0) & (move == -2)] = 4

    fen = parse_legal_fens(df["board"].tolist())
    reason[(reason == 0) & ~fen["syntax"]] = 5
    reason[(reason == 0) & ~fen["legal"]] = 6
    fen["valid"] = reason == 0
    for i in np.flatnonzero(reason):
        report.skip(_REASONS[int(reason[i])], int(line_no[i]))
    return _block(fen, flags["is_check"], flags["is_capture"], target, move, report)


def _move_indices(text: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Vectorised :func:`move_index` over a (N, 6) matrix of UCI text."""
    t = text.astype(np.int16)
    files_ok = (t[:, 0] >= 97) & (t[:, 0] <= 104) & (t[:, 2] >= 97) & (t[:, 2] <= 104)
    ranks_ok = (t[:, 1] >= 49) & (t[:, 1] <= 56) & (t[:, 3] >= 49) & (t[:, 3] <= 56)
    promo_ok = (length == 4) | ((length == 5) & np.isin(t[:, 4], [ord(c) for c in "qrbn"]))
    ok = files_ok & ranks_ok & promo_ok & ((length == 4) | (length == 5))
    index = ((t[:, 0] - 97) + 8 * (t[:, 1] - 49)) * 64 + (t[:, 2] - 97) + 8 * (t[:, 3] - 49)
    return np.where(length == 0, -1, np.where(ok, index, -2)).astype(np.int16)
