"""Property suite over the readers and converters (issue 12): random and garbled lines
and FENs never raise, every unit read is kept or counted (read = kept + skipped), and
every kept row is a legal position by the one rule (:func:`position_problem`).
Real python-chess, pandas and the real file readers; bounded to a few seconds."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import chess
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knights.board.arrays import boards_from_arrays, position_problem
from knights.data.chunks import read_chunk
from knights.data.convert import convert_file

FENS = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1",
    "4k3/4R3/8/8/8/8/8/4K3 w - - 0 1",                 # opposite check
    "4k3/8/8/8/8/8/8/4K3 w - e6 0 1",                  # impossible en passant
    "QQQQkQQQ/QQQQQQQQ/QQQQQQQQ/8/8/8/8/4K3 w - - 0 1",  # 23 queens
    "4k3/8/8/8/8/8/8/3KK3 w - - 0 1",                  # two white kings
    "4k3/8/8/8/8/8/8/4K2R w KQ - 0 1",                 # castling without the rook
    "R3k3/8/8/8/8/5p2/7q/NNN1K3 b - - 0 1",
    "8/8/8/8/8/8/8/8 w - - 0 1",
    "44/8/8/8/8/8/8/8 w - - 0 1",
]
_SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=30)


@st.composite
def garbled_fen(draw: st.DrawFn) -> str:
    fen = draw(st.sampled_from(FENS))
    how = draw(st.sampled_from(["keep", "cut", "insert", "replace", "random"]))
    if how == "keep":
        return fen
    if how == "random":
        return draw(_text)
    i = draw(st.integers(0, len(fen)))
    piece = draw(st.sampled_from(list("kKqQpP12345678/ -wb\u0663\"x,")))
    if how == "cut":
        return fen[:i]
    if how == "insert":
        return fen[:i] + piece + fen[i:]
    return fen[:i] + piece + fen[i + 1:]


_CP = st.one_of(st.sampled_from(["0.3", "-1.25", "#3", "#-2", "#++3", "#\u0663", "\u0663", "1_000", "", "inf",
                                 "12", "+0.5", ".5", "nan", "#"]), _text)
_BOOL = st.sampled_from(["True", "False", "1", "0", "", "yes", "\u0663"])
_MOVE = st.sampled_from(["e2e4", "", "e7e8q", "zz", "e2e4x", "a1a1"])


def _assert_legal(block: object) -> None:
    for board in boards_from_arrays(block.squares, block.white, block.castling, block.ep):  # type: ignore[attr-defined]
        assert position_problem(board) is None, board.fen()


@_SETTINGS
@given(rows=st.lists(st.tuples(garbled_fen(), _CP, _BOOL, _MOVE, st.booleans()), max_size=25),
       extra=st.lists(_text, max_size=3))
def test_chunk_reader_keeps_or_counts_every_line(rows: list[tuple[str, str, str, str, bool]],
                                                 extra: list[str]) -> None:
    lines = []
    for fen, cp, check, move, quote in rows:
        cell = '"' + fen.replace('"', '""') + '"' if quote else fen
        lines.append(f"{cell},{cp},{check},{move}")
    lines += extra
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "Chess_aa"
        path.write_text("board,cp,is_check,move\n" + "\n".join(lines) + "\n", encoding="utf-8")
        block, report = read_chunk(path)
    nonempty = sum(1 for line in lines if line)
    assert report.rows == len(block)
    assert report.rows + report.total_skipped == nonempty
    _assert_legal(block)


def _read_back(csv_path: Path, rows_written: int) -> None:
    """Every row a converter writes is one the chunk reader keeps (one rule)."""
    if not csv_path.exists():
        return
    block, report = read_chunk(csv_path)
    assert len(block) == rows_written and report.total_skipped == 0, report.examples
    _assert_legal(block)


@_SETTINGS
@given(records=st.lists(st.one_of(
    st.builds(lambda fen, cp, mate, line, depth: json.dumps(
        {"fen": fen, "evals": [{"pvs": [{"cp": cp, "mate": mate, "line": line}], "depth": depth}]}),
        garbled_fen(), st.one_of(st.none(), st.integers(-200_000, 200_000), _CP),
        st.one_of(st.none(), st.integers(-5, 5), _CP), st.sampled_from([None, "e2e4", "e1g1", "xx", ""]),
        st.one_of(st.integers(0, 40), st.none(), st.text(max_size=2))),
    _text), max_size=20))
def test_jsonl_converter_keeps_or_counts_every_record(records: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "e.jsonl"
        src.write_text("\n".join(records) + "\n", encoding="utf-8")
        report = convert_file(src, Path(tmp) / "out.csv", progress=False)
        assert report.records_read == sum(1 for r in records if r.strip())
        assert report.records_read == report.rows_written + report.total_skipped
        _read_back(Path(tmp) / "out.csv", report.rows_written)


@_SETTINGS
@given(rows=st.lists(st.tuples(garbled_fen(), st.sampled_from(["e2e4 e7e5", "", "zz", "e1g1"]),
                               _CP, _CP), max_size=20))
def test_kaggle_converter_keeps_or_counts_every_row(rows: list[tuple[str, str, str, str]]) -> None:
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["fen", "line", "depth", "knodes", "cp", "mate"])
    for fen, line, cp, mate in rows:
        writer.writerow([fen, line, "20", "100", cp, mate])
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.csv"
        src.write_text(buf.getvalue(), encoding="utf-8")
        report = convert_file(src, Path(tmp) / "out.csv", progress=False)
        assert report.records_read == report.rows_written + report.total_skipped
        _read_back(Path(tmp) / "out.csv", report.rows_written)


_SAN = st.sampled_from(["e4", "e5", "Nf3", "Nc6", "Ke3", "Qxf7#", "O-O", "d4", "zz9", "--", "Bb5", "a6", "h4"])


@st.composite
def pgn_game(draw: st.DrawFn) -> str:
    headers = '[Event "x"]\n'
    if draw(st.booleans()):
        headers += f'[FEN "{draw(garbled_fen())}"]\n[SetUp "1"]\n'
    tokens = []
    for i, san in enumerate(draw(st.lists(_SAN, max_size=10))):
        if i % 2 == 0:
            tokens.append(f"{i // 2 + 1}.")
        tokens.append(san)
        if draw(st.booleans()):
            tokens.append(f"{{ [%eval {draw(st.sampled_from(['0.3', '#-2', '-1.5', 'x']))}] }}")
        if draw(st.integers(0, 9)) == 0:
            tokens.append("( 1... d5 2. c4 )")
    return headers + "\n" + " ".join(tokens) + " *\n\n"


@_SETTINGS
@given(games=st.lists(pgn_game(), max_size=5), noise=st.one_of(st.just(""), _text))
def test_pgn_converter_keeps_or_counts_every_ply(games: list[str], noise: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "g.pgn"
        src.write_text("".join(games) + noise, encoding="utf-8")
        report = convert_file(src, Path(tmp) / "out.csv", progress=False)
        assert report.records_read == report.rows_written + report.total_skipped, report
        _read_back(Path(tmp) / "out.csv", report.rows_written)


def test_position_problem_agrees_with_python_chess() -> None:
    for fen in FENS:
        try:
            board = chess.Board(fen)
        except ValueError:
            continue
        assert (position_problem(board) is None) == board.is_valid()


def test_vectorised_legality_is_exactly_the_python_chess_rule() -> None:
    """:func:`parse_legal_fens` clears most rows with bitboard arithmetic; on random game
    positions and random placements (checks, double checks, castling rights without
    their rook, en-passant squares, too many pieces) it must agree row for row with
    ``position_problem(chess.Board(fen))``."""
    import random

    import numpy as np

    from knights.board.arrays import parse_legal_fens

    rng = random.Random(7)
    fens = []
    board = chess.Board()
    for _ in range(2000):
        if board.is_game_over() or rng.random() < 0.02:
            board = chess.Board()
        board.push(rng.choice(list(board.legal_moves)))
        fens.append(board.fen(en_passant="fen"))
    for _ in range(4000):
        placed = chess.Board(None)
        squares = rng.sample(range(64), rng.randint(2, 34))
        placed.set_piece_at(squares[0], chess.Piece(chess.KING, chess.WHITE))
        placed.set_piece_at(squares[1], chess.Piece(chess.KING, chess.BLACK))
        for square in squares[2:]:
            kind = rng.choice([1, 1, 1, 2, 3, 4, 4, 5])
            if not (kind == 1 and chess.square_rank(square) in (0, 7)):
                placed.set_piece_at(square, chess.Piece(kind, rng.random() < 0.5))
        castling = rng.choice(["-", "-", "K", "Q", "k", "q", "KQkq", "Kq"])
        ep = rng.choice(["-", "-", "-", "e3", "d6", "a3", "h6"])
        fens.append(f"{placed.board_fen()} {rng.choice('wb')} {castling} {ep} 0 1")
    truth = []
    for fen in fens:
        try:
            truth.append(position_problem(chess.Board(fen)) is None)
        except ValueError:
            truth.append(False)
    got = parse_legal_fens(fens)["valid"]
    assert got.tolist() == truth
    assert 0 < int(np.sum(got)) < len(fens)
