"""Where a converter's rows go: the output file, the counts and the row limit.

Every converter (one module per input format) reads records and hands each one to a
:class:`Sink` as a function that builds the row. The sink writes the row, or counts
the record as skipped when building it raises :class:`Skip` (or anything else: bad
input never stops a conversion), stops at the row limit and moves the progress bar.
What happened is summed up in a :class:`ConvertReport`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from knights.common import clip, quoted
from knights.data.csslab import RowWriter

MAX_FIRST_ERRORS = 10
"""How many error messages a :class:`ConvertReport` keeps."""
MAX_MESSAGE = 240
"""The longest message kept: a longer one (quoting a huge field of the input) is cut there."""

_PROGRESS_EVERY = 2048
"""Records between two updates of the progress bar."""


@dataclass
class ConvertReport:
    """What a conversion did.

    ``rows_written`` rows went to ``dst``; every input record that did not become a
    row is counted in ``skipped`` under a short reason (``"bad_json"``,
    ``"bad_fen"`` (malformed, or a position :func:`~knights.board.arrays.position_problem`
    rejects), ``"missing_eval"``, ``"bad_eval"``, ``"illegal_move"``, ``"after_illegal_move"``,
    ``"unlabelled"``, ``"no_moves"``, ...). ``first_errors`` keeps the first messages, each naming
    the file and line.

    >>> r = ConvertReport(src="a.jsonl", dst="a.csv", fmt="lichess-jsonl")
    >>> r.rows_written = 3
    >>> r.skip("bad_json", "a.jsonl:2: not JSON")
    >>> r.skipped, r.total_skipped
    ({'bad_json': 1}, 1)
    >>> r.summary()
    'a.jsonl (lichess-jsonl): 3 rows written to a.csv, 1 skipped (bad_json: 1)'
    """

    src: str
    dst: str
    fmt: str
    rows_written: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    first_errors: list[str] = field(default_factory=list)
    records_read: int = 0
    """Non-empty input lines (JSONL), data rows (CSV) or plies (PGN: the main-line moves
    of every game, legal or not; a game without one, or unreadable, counts as one) read.
    Unless the run stopped at the limit, ``records_read == rows_written + total_skipped``."""
    stopped_at_limit: bool = False
    """Whether the conversion stopped early because ``limit`` rows were written."""

    @property
    def total_skipped(self) -> int:
        """Sum of all the ``skipped`` counts."""
        return sum(self.skipped.values())

    def skip(self, reason: str, message: str | None = None, count: int = 1) -> None:
        """Count ``count`` skipped records under ``reason``; keep ``message`` if it is
        among the first :data:`MAX_FIRST_ERRORS`."""
        if count <= 0:
            return
        self.skipped[reason] = self.skipped.get(reason, 0) + count
        if message is not None:
            self.note(message)

    def note(self, message: str) -> None:
        """Keep ``message`` (among the first :data:`MAX_FIRST_ERRORS`, cut to :data:`MAX_MESSAGE`
        characters) without counting a skip."""
        if len(self.first_errors) < MAX_FIRST_ERRORS:
            self.first_errors.append(clip(message, MAX_MESSAGE))

    def summary(self) -> str:
        """One line for a human: source, format, rows written and skips by reason."""
        text = f"{self.src} ({self.fmt}): {self.rows_written} rows written to {self.dst}"
        text += f", {self.total_skipped} skipped"
        if self.skipped:
            reasons = ", ".join(f"{k}: {v}" for k, v in sorted(self.skipped.items()))
            text += f" ({reasons})"
        if self.stopped_at_limit:
            text += ", stopped at the row limit"
        return text


class Skip(Exception):
    """Raised by the per-record parsers: the record is skipped under ``reason``."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


class CorruptInput(ValueError):
    """The input file itself is unreadable (corrupt or truncated compressed data): the
    conversion stops with this error, naming the file; no converter counts it as a skip."""


class LimitReached(Exception):
    """Raised by :class:`Sink` once ``limit`` rows are written."""


class Sink:
    """Where converters send rows and skips; counts, limits and ticks the progress bar."""

    def __init__(self, writer: RowWriter, report: ConvertReport, limit: int | None,
                 tick: Callable[[], None]) -> None:
        self.writer, self.report, self.limit, self._tick = writer, report, limit, tick
        self._since_tick = 0
        if limit == 0:
            report.stopped_at_limit = True

    def done(self) -> bool:
        return self.limit is not None and self.report.rows_written >= self.limit

    def write(self, row: Mapping[str, object]) -> None:
        if self.done():
            self.report.stopped_at_limit = True
            raise LimitReached
        self.writer.write(row)
        self.report.rows_written += 1

    def attempt(self, where: str, make_row: Callable[[], Mapping[str, object]]) -> bool:
        """Build one row and write it; a bad record is skipped and counted under its
        reason (anything unexpected as ``malformed``), never raised. Returns False once
        the row limit is reached."""
        try:
            row = make_row()
        except Skip as skip:
            self.report.skip(skip.reason, f"{where}: {skip.detail}")
            return True
        except Exception as error:  # noqa: BLE001 - bad input must never crash a run
            self.report.skip("malformed", f"{where}: {type(error).__name__}: {error}")
            return True
        try:
            self.write(row)
        except LimitReached:
            return False
        return True

    def record(self, count: int = 1) -> None:
        """``count`` input records read: count them and now and then move the progress bar."""
        self.report.records_read += count
        self._since_tick += count
        if self._since_tick >= _PROGRESS_EVERY:
            self._since_tick = 0
            self._tick()


def at_line(path: Path, line: int) -> str:
    """``path:line``, how every message names the record it is about."""
    return f"{path}:{line}"


def short(value: object, width: int = 60) -> str:
    """``repr(value)`` cut to ``width`` characters, to quote bad input in a message (:func:`knights.common.quoted`)."""
    return quoted(value, width)
