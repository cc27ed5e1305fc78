"""Convert public evaluation datasets into the CSSLab CSV format.

Three inputs are understood:

``"lichess-jsonl"``
    The Lichess evaluation database (``lichess_db_eval.jsonl`` or its ``.zst``
    download). One JSON object per line::

        {"fen": "...", "evals": [{"pvs": [{"cp": 31, "line": "e2e4 e7e5"}], "depth": 36, ...}]}

    The deepest evaluation is used, and its first principal variation. ``cp`` is in
    centipawns from White's side; ``mate`` counts moves (positive: White mates).
    The FENs have only four fields; the converter accepts four or six.

``"kaggle-csv"``
    The "chess evaluations" CSV with header ``fen,line,depth,knodes,cp,mate``
    (same units as above, one of ``cp`` / ``mate`` empty). Every row is kept, even
    when a FEN repeats.

``"pgn"``
    Games whose moves carry ``[%eval 0.35]`` / ``[%eval #-3]`` comments (pawns, from
    White's side), e.g. the Lichess game database. A move's comment evaluates the
    position *after* it, so the row for a move takes its ``cp`` from the comment of
    the previous move. The first move of a game (and any move after an unevaluated
    one) therefore has no label: it is skipped and counted as ``"unlabelled"``.

Each output row follows :mod:`knights.data.csslab`: ``board`` is the position, ``cp``
its evaluation in pawns from White's side, ``cp_rel`` the same from the side to move,
``move`` the move played (PGN) or the engine's best move (evaluation databases).
Columns the source cannot know are left empty.

Bad input never stops a conversion: a malformed line, row or game is skipped and
counted by reason in :class:`ConvertReport`, with the first few errors kept verbatim
(file and line number) for the user to look at.

>>> report = convert_file("lichess_db_eval.jsonl.zst", "data/raw/lichess_eval.csv")  # doctest: +SKIP
>>> print(report.summary())  # doctest: +SKIP
lichess_db_eval.jsonl.zst (lichess-jsonl): 1000000 rows written to data/raw/lichess_eval.csv, 0 skipped

The input is streamed (never loaded whole) and the output is written to
``dst + ".tmp"`` and renamed to ``dst`` only when the conversion finished, so an
interrupted run never leaves a truncated file behind.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, BinaryIO, Callable, Iterator, Mapping, Sequence

import chess
import chess.pgn

if TYPE_CHECKING:
    import chess.engine

from knights.data.csslab import (
    BLUNDER_CP_PAWNS,
    BLUNDER_WINRATE,
    RowWriter,
    eval_to_pawns,
    format_bool,
    format_eval,
    format_pawns,
    negate_eval,
    position_columns,
    winrate,
)

__all__ = ["FORMATS", "ConvertReport", "convert_file", "detect_format"]

FORMATS: tuple[str, ...] = ("lichess-jsonl", "kaggle-csv", "pgn")
"""The input formats :func:`convert_file` understands."""

_SUFFIXES: tuple[tuple[str, str], ...] = (
    (".jsonl", "lichess-jsonl"),
    (".jsonl.zst", "lichess-jsonl"),
    (".csv", "kaggle-csv"),
    (".csv.zst", "kaggle-csv"),
    (".pgn", "pgn"),
    (".pgn.zst", "pgn"),
)

MAX_FIRST_ERRORS = 10
"""How many error messages a :class:`ConvertReport` keeps verbatim."""

_PROGRESS_EVERY = 2048
"""Records between two updates of the progress bar."""


# --------------------------------------------------------------------------- report


@dataclass
class ConvertReport:
    """What a conversion did.

    ``rows_written`` rows went to ``dst``; every input record that did not become a
    row is counted in ``skipped`` under a short reason (``"bad_json"``,
    ``"bad_fen"``, ``"missing_eval"``, ``"bad_eval"``, ``"illegal_move"``,
    ``"unlabelled"``, ...). ``first_errors`` keeps the first messages, each naming
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
    """Non-empty input lines (JSONL), data rows (CSV) or games (PGN) read."""
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
        if message is not None and len(self.first_errors) < MAX_FIRST_ERRORS:
            self.first_errors.append(message)

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


class _Skip(Exception):
    """Raised by the per-record parsers: the record is skipped under ``reason``."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


# --------------------------------------------------------------------------- public API


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

    converter: Callable[..., None] = {
        "lichess-jsonl": _convert_jsonl,
        "kaggle-csv": _convert_kaggle_csv,
        "pgn": _convert_pgn,
    }[fmt]
    report = ConvertReport(src=str(src_path), dst=str(dst_path), fmt=fmt)
    dst_path.parent.mkdir(parents=True, exist_ok=True)
    tmp_path = Path(str(dst_path) + ".tmp")
    try:
        with _open_input(src_path, newline="" if fmt == "kaggle-csv" else None) as (text, raw), \
                _progress_bar(src_path, enabled=progress) as bar, \
                open(tmp_path, "w", encoding="utf-8", newline="") as out:
            sink = _Sink(RowWriter(out), report, limit, lambda: bar(raw.tell()))
            converter(text, src_path, sink)
            bar(raw.tell())
        os.replace(tmp_path, dst_path)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise
    return report


# --------------------------------------------------------------------------- plumbing


class _LimitReached(Exception):
    """Raised by :class:`_Sink` once ``limit`` rows are written."""


class _Sink:
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
            raise _LimitReached
        self.writer.write(row)
        self.report.rows_written += 1

    def attempt(self, where: str, make_row: Callable[[], Mapping[str, object]]) -> bool:
        """Build one row and write it; a bad record is skipped and counted under its
        reason (anything unexpected as ``malformed``), never raised. Returns False once
        the row limit is reached."""
        try:
            row = make_row()
        except _Skip as skip:
            self.report.skip(skip.reason, f"{where}: {skip.detail}")
            return True
        except Exception as error:  # noqa: BLE001 - bad input must never crash a run
            self.report.skip("malformed", f"{where}: {type(error).__name__}: {error}")
            return True
        try:
            self.write(row)
        except _LimitReached:
            return False
        return True

    def record(self) -> None:
        """One input record read: count it and now and then move the progress bar."""
        self.report.records_read += 1
        self._since_tick += 1
        if self._since_tick >= _PROGRESS_EVERY:
            self._since_tick = 0
            self._tick()


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


def _where(path: Path, line: int) -> str:
    return f"{path}:{line}"


def _short(value: object, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


# --------------------------------------------------------------------------- shared parsing


def _as_int(value: object, what: str) -> int:
    """An integer from JSON or CSV: ``31``, ``31.0``, ``"31"``, ``"-3.0"``.

    Raises :class:`_Skip` (``"bad_eval"``) for anything else, booleans and
    non-finite numbers included.
    """
    if isinstance(value, bool):
        raise _Skip("bad_eval", f"{what} is not a number: {_short(value)}")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            pass
        try:
            value = float(text)
        except ValueError:
            raise _Skip("bad_eval", f"{what} is not a number: {_short(value)}") from None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    raise _Skip("bad_eval", f"{what} is not an integer: {_short(value)}")


_MAX_CP = 100_000
"""Centipawn scores beyond this are not engine output (Stockfish stays far below)."""


def _eval_text(cp: object, mate: object) -> str:
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
            raise _Skip("bad_eval", f"mate out of range: {_short(mate)}")
        return format_eval(mate=n)
    if cp is not None:
        n = _as_int(cp, "cp")
        if abs(n) > _MAX_CP:
            raise _Skip("bad_eval", f"cp out of range: {_short(cp)}")
        return format_eval(cp=n)
    raise _Skip("missing_eval", "neither cp nor mate given")


def _board_from_fen(fen: object) -> chess.Board:
    """A legal standard-chess position from a FEN with 4 or 6 fields."""
    if not isinstance(fen, str):
        raise _Skip("bad_fen", f"fen is not a string: {_short(fen)}")
    fields = fen.split()
    if len(fields) not in (4, 6):
        raise _Skip("bad_fen", f"FEN needs 4 or 6 fields: {_short(fen)}")
    try:
        board = chess.Board(" ".join(fields))
    except ValueError as error:
        raise _Skip("bad_fen", f"bad FEN {_short(fen)}: {error}") from None
    if not board.is_valid():
        raise _Skip("bad_fen", f"impossible position {_short(fen)}: {board.status()!r}")
    return board


def _first_move(board: chess.Board, line: object) -> chess.Move | None:
    """The first move of a principal variation (UCI, space separated), or ``None``."""
    if line is None:
        return None
    if not isinstance(line, str):
        raise _Skip("illegal_move", f"pv line is not a string: {_short(line)}")
    tokens = line.split(maxsplit=1)
    if not tokens:
        return None
    try:
        move = chess.Move.from_uci(tokens[0])
    except ValueError:
        raise _Skip("illegal_move", f"bad UCI move {tokens[0]!r}") from None
    if not board.is_legal(move):
        raise _Skip("illegal_move", f"{tokens[0]} is illegal in {board.fen()}")
    return move


def _eval_row(board: chess.Board, cp_text: str, move: chess.Move | None, kind: str) -> dict[str, str]:
    """A row for an evaluated position (no game around it)."""
    row = position_columns(board)
    row["type"] = kind
    row["cp"] = cp_text
    row["cp_rel"] = cp_text if board.turn == chess.WHITE else negate_eval(cp_text)
    if move is not None:
        row["move"] = move.uci()
        row["is_capture"] = format_bool(board.is_capture(move))
    return row


# --------------------------------------------------------------------------- Lichess JSONL


def _parse_jsonl_record(line: str) -> tuple[chess.Board, str, chess.Move | None]:
    try:
        record = json.loads(line)
    except (ValueError, RecursionError) as error:
        raise _Skip("bad_json", f"not JSON ({error})") from None
    if not isinstance(record, dict):
        raise _Skip("bad_json", f"not a JSON object: {_short(record)}")
    board = _board_from_fen(record.get("fen"))
    evals = record.get("evals")
    if not isinstance(evals, list):
        raise _Skip("missing_eval", "no 'evals' list")
    candidates = [e for e in evals
                  if isinstance(e, dict) and isinstance(e.get("pvs"), list) and e["pvs"]]
    if not candidates:
        raise _Skip("missing_eval", "no evaluation with a principal variation")

    def depth(e: dict[str, Any]) -> float:
        d = e.get("depth")
        ok = isinstance(d, (int, float)) and not isinstance(d, bool) and math.isfinite(d)
        return float(d) if ok else -1.0

    best = max(candidates, key=depth)  # first of the deepest on ties
    pv = best["pvs"][0]
    if not isinstance(pv, dict):
        raise _Skip("missing_eval", f"pv is not an object: {_short(pv)}")
    cp_text = _eval_text(pv.get("cp"), pv.get("mate"))
    return board, cp_text, _first_move(board, pv.get("line"))


def _convert_jsonl(text: IO[str], path: Path, sink: _Sink) -> None:
    for number, line in enumerate(text, start=1):
        if not line.strip():
            continue
        sink.record()
        if not sink.attempt(_where(path, number), lambda: _eval_row(*_parse_jsonl_record(line), "LichessEval")):
            return


# --------------------------------------------------------------------------- Kaggle CSV


def _convert_kaggle_csv(text: IO[str], path: Path, sink: _Sink) -> None:
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
            sink.report.skip("bad_csv", f"{_where(path, reader.line_num)}: {error}")
            continue
        if not fields or (len(fields) == 1 and not fields[0].strip()):
            continue
        sink.record()

        def make_row(fields: Sequence[str] = fields) -> Mapping[str, object]:
            if len(fields) != len(header):
                raise _Skip("bad_csv", f"{len(fields)} fields, the header has {len(header)}")
            board = _board_from_fen(get(fields, "fen"))
            cp_text = _eval_text(get(fields, "cp"), get(fields, "mate"))
            return _eval_row(board, cp_text, _first_move(board, get(fields, "line")), "KaggleEval")

        if not sink.attempt(_where(path, reader.line_num), make_row):
            return


# --------------------------------------------------------------------------- PGN


class _LineCountingReader:
    """Wraps a text stream for :func:`chess.pgn.read_game` (which only calls
    ``readline``) and remembers where the current game starts."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self.line = 0
        self.game_start: int | None = None

    def readline(self) -> str:
        text = self._stream.readline()
        if text:
            self.line += 1
            if self.game_start is None and text.strip():
                self.game_start = self.line
        return text

    def next_game(self) -> None:
        self.game_start = None


class _QuietGameBuilder(chess.pgn.GameBuilder):
    """Collects parsing errors in ``game.errors`` without logging them: the
    converter counts them instead."""

    def handle_error(self, error: Exception) -> None:
        self.game.errors.append(error)


def _white_text(score: chess.engine.PovScore | None) -> str | None:
    """A PGN ``[%eval]`` as the ``cp`` column writes it, or ``None``."""
    if score is None:
        return None
    white = score.white()
    mate = white.mate()
    if mate is not None:
        return None if mate == 0 else format_eval(mate=mate)
    cp = white.score()
    return None if cp is None else format_eval(cp=cp)


def _seconds(value: float | None) -> str | None:
    if value is None:
        return None
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


_RESULTS = {"1-0": (True, False, False), "0-1": (False, True, False), "1/2-1/2": (False, False, True)}


def _game_columns(game: chess.pgn.Game, game_number: int, num_ply: int) -> dict[str, str]:
    """The columns that are the same for every move of ``game``."""
    h = game.headers
    game_id = h.get("GameId") or h.get("ID") or ""
    site = h.get("Site", "")
    if not game_id and "://" in site:
        game_id = site.rstrip("/").rsplit("/", 1)[-1]
    row = {
        "game_id": game_id or str(game_number),
        "type": h.get("Event", ""),
        "result": h.get("Result", ""),
        "white_player": h.get("White", ""),
        "black_player": h.get("Black", ""),
        "white_elo": h.get("WhiteElo", "") if h.get("WhiteElo", "").isdigit() else "",
        "black_elo": h.get("BlackElo", "") if h.get("BlackElo", "").isdigit() else "",
        "time_control": h.get("TimeControl", ""),
        "num_ply": str(num_ply),
        "termination": h.get("Termination", ""),
    }
    outcome = _RESULTS.get(row["result"])
    if outcome is not None:
        row["white_won"], row["black_won"], row["no_winner"] = (format_bool(x) for x in outcome)
    return row


def _convert_pgn(text: IO[str], path: Path, sink: _Sink) -> None:
    reader = _LineCountingReader(text)
    game_number = 0
    while True:
        reader.next_game()
        line_before = reader.line
        try:
            game = chess.pgn.read_game(reader, Visitor=_QuietGameBuilder)  # type: ignore[arg-type]
        except Exception as error:  # noqa: BLE001 - bad input must never crash a run
            if reader.line == line_before:  # nothing consumed: do not loop forever
                raise
            sink.record()
            sink.report.skip("bad_game", f"{_where(path, reader.game_start or reader.line)}: "
                                         f"{type(error).__name__}: {error}")
            continue
        if game is None:
            return
        game_number += 1
        sink.record()
        where = _where(path, reader.game_start or reader.line)
        try:
            _convert_game(game, game_number, where, sink)
        except _LimitReached:
            return
        except Exception as error:  # noqa: BLE001 - bad input must never crash a run
            sink.report.skip("bad_game", f"{where}: game {game_number}: {type(error).__name__}: {error}")


def _convert_game(game: chess.pgn.Game, game_number: int, where: str, sink: _Sink) -> None:
    report = sink.report
    for error in game.errors:
        reason = "illegal_move" if isinstance(error, (chess.IllegalMoveError, chess.InvalidMoveError,
                                                      chess.AmbiguousMoveError)) else "bad_game"
        report.skip(reason, f"{where}: game {game_number}: {error}")
    try:
        board = game.board()
    except ValueError as error:  # bad FEN or Variant header: the parser skipped the game
        if not game.errors:
            report.skip("bad_game", f"{where}: game {game_number}: {error}")
        return

    nodes = list(game.mainline())
    if type(board) is not chess.Board:
        report.skip("unsupported_variant", f"{where}: game {game_number}: variant "
                                           f"{game.headers.get('Variant', '?')!r}", count=len(nodes))
        return
    common = _game_columns(game, game_number, len(nodes))
    outcome = _RESULTS.get(common["result"])
    elo = {chess.WHITE: common["white_elo"], chess.BLACK: common["black_elo"]}

    before = _white_text(game.eval())  # a root comment may evaluate the start position
    clocks: dict[bool, float | None] = {chess.WHITE: None, chess.BLACK: None}
    for ply, node in enumerate(nodes):
        move = node.move
        mover = board.turn
        after = _white_text(node.eval())
        board_after = board.copy(stack=False)
        board_after.push(move)
        if board_after.is_checkmate():
            after = format_eval(mate=1 if mover == chess.WHITE else -1)

        if before is None:
            report.skip("unlabelled", None if ply == 0 else
                        f"{where}: game {game_number}, ply {ply} ({move.uci()}): no [%eval] before it")
        else:
            row: dict[str, object] = dict(common)
            row.update(position_columns(board))
            row["move_ply"] = str(ply)
            row["move"] = move.uci()
            row["is_capture"] = format_bool(board.is_capture(move))
            row["cp"] = before
            row["cp_rel"] = before if mover == chess.WHITE else negate_eval(before)
            row["active_elo"], row["opponent_elo"] = elo[mover], elo[not mover]
            if outcome is not None:
                white_won, black_won, _ = outcome
                row["active_won"] = format_bool(white_won if mover == chess.WHITE else black_won)
            row["clock"], row["opp_clock"] = _seconds(clocks[mover]), _seconds(clocks[not mover])

            sign = 1.0 if mover == chess.WHITE else -1.0
            mover_before = sign * eval_to_pawns(before)
            row["winrate"] = f"{winrate(mover_before):.4f}"
            if after is not None:
                mover_after = sign * eval_to_pawns(after)
                loss = round(max(0.0, mover_before - mover_after), 2)
                row["cp_loss"] = format_pawns(loss)
                row["is_blunder_cp"] = format_bool(loss >= BLUNDER_CP_PAWNS)
                opp_wr = winrate(-mover_after)
                wr_loss = round(max(0.0, winrate(mover_before) - (1.0 - opp_wr)), 4)
                row["opp_winrate"] = f"{opp_wr:.4f}"
                row["winrate_loss"] = f"{wr_loss:.4f}"
                row["is_blunder_wr"] = format_bool(wr_loss >= BLUNDER_WINRATE)
            sink.write(row)

        clocks[mover] = node.clock()
        board = board_after
        before = after
