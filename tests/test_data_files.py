"""Issue 12, "Data and files": inputs are never destroyed, corrupt inputs are errors,
one validity rule for every reader and converter, strict evaluation text, and one-line
errors instead of tracebacks. Real zstandard, python-chess and pandas throughout.

Each test names what the code before the fix did (each was reproduced on main)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import chess
import pytest
import zstandard

from knights.board.arrays import parse_legal_fens, position_problem
from knights.cli import main
from knights.data.chunks import read_chunk
from knights.data.convert import convert_file
from knights.data.convert.evals import eval_text
from knights.data.convert.sink import Skip
from knights.data.csslab import eval_to_pawns

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
OPPOSITE_CHECK = "4k3/4R3/8/8/8/8/8/4K3 w - - 0 1"            # Black, not to move, is in check
BAD_EP = "4k3/8/8/8/8/8/8/4K3 w - e6 0 1"                      # no pawn moved two squares
QUEENS_24 = "QQQQkQQQ/QQQQQQQQ/QQQQQQQQ/8/8/8/8/4K3 w - - 0 1"   # 23 white queens and a king
TWO_WHITE_KINGS = "4k3/8/8/8/8/8/8/3KK3 w - - 0 1"
ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def jsonl(n: int) -> bytes:
    line = json.dumps({"fen": START.rsplit(" ", 2)[0], "evals": [{"pvs": [{"cp": 20, "line": "e2e4"}], "depth": 20}]})
    return ("\n".join([line] * n) + "\n").encode()


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


# -- 1. the converter never truncates its input ---------------------------------------
def test_convert_refuses_an_output_whose_tmp_is_the_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: ``convert X/v.tmp X/v`` opened ``X/v.tmp`` for writing (only ``dst != src``
    was checked) and emptied the input."""
    src = tmp_path / "v.tmp"
    src.write_bytes(jsonl(3))
    code, _out, err = run_cli(["data", "convert", "--format", "lichess-jsonl", "--quiet", str(src),
                               str(tmp_path / "v")], capsys)
    assert code == 2 and "is the input file" in err and err.count("\n") == 1
    assert src.read_bytes() == jsonl(3) and not (tmp_path / "v").exists()


def test_convert_refuses_a_hard_link_and_a_path_spelling_of_the_input(tmp_path: Path) -> None:
    """Before: a hard link or ``a/../v.tmp`` spelling of the input passed the check."""
    src = tmp_path / "in.jsonl"
    src.write_bytes(jsonl(2))
    os.link(src, tmp_path / "out.csv.tmp")
    (tmp_path / "sub").mkdir()
    with pytest.raises(ValueError, match="is the input file"):
        convert_file(src, tmp_path / "out.csv", progress=False)
    with pytest.raises(ValueError, match="is the input file"):
        convert_file(src, tmp_path / "sub" / ".." / "in.jsonl", progress=False)
    assert src.read_bytes() == jsonl(2)


# -- 2. corrupt or truncated compressed input ------------------------------------------
@pytest.mark.parametrize("damage", ["truncated", "flipped"])
def test_corrupt_zst_is_an_error_naming_the_file(tmp_path: Path, damage: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Before: half a .zst converted half its rows, "1 skipped (bad_json)", exit 0; a
    flipped byte gave a ZstdError traceback."""
    whole = zstandard.ZstdCompressor().compress(jsonl(5000))
    data = whole[: len(whole) // 2] if damage == "truncated" else \
        whole[:20] + bytes([whole[20] ^ 0xFF]) + whole[21:]
    src = tmp_path / "evals.jsonl.zst"
    src.write_bytes(data)
    dst = tmp_path / "out.csv"
    code, _out, err = run_cli(["data", "convert", "--quiet", str(src), str(dst)], capsys)
    assert code == 2 and str(src) in err and "zstd" in err and err.count("\n") == 1 and "Traceback" not in err
    assert not dst.exists() and not Path(str(dst) + ".tmp").exists()


def test_multi_frame_zst_still_converts(tmp_path: Path) -> None:
    src = tmp_path / "evals.jsonl.zst"
    src.write_bytes(zstandard.ZstdCompressor().compress(jsonl(3)) + zstandard.ZstdCompressor().compress(jsonl(4)))
    report = convert_file(src, tmp_path / "out.csv", progress=False)
    assert report.rows_written == 7 and report.total_skipped == 0


def test_corrupt_zst_pgn_is_not_counted_as_a_bad_game(tmp_path: Path) -> None:
    """The PGN reader counts any reading error as a bad game; a corrupt file must stop it."""
    pgn = "".join(f'[Event "g{i}"]\n\n1. e4 {{ [%eval 0.2] }} e5 {{ [%eval 0.3] }} *\n\n' for i in range(3000))
    whole = zstandard.ZstdCompressor().compress(pgn.encode())
    src = tmp_path / "g.pgn.zst"
    src.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ValueError, match="truncated zstd"):
        convert_file(src, tmp_path / "out.csv", progress=False)
    assert not (tmp_path / "out.csv").exists()


# -- 3. data check names file and line ------------------------------------------------
def test_data_check_prints_file_and_line_of_bad_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: only the per-file summary was printed, never ``file:line: reason``."""
    chunk = tmp_path / "Chess_aa"
    chunk.write_text(f"board,cp\n{START},0.1\n{START},oops\n{OPPOSITE_CHECK},0.2\n", encoding="utf-8")
    code, out, _err = run_cli(["data", "check", str(tmp_path), "all"], capsys)
    assert code == 0
    assert f"{chunk}:3: bad cp" in out and f"{chunk}:4: illegal position" in out
    assert "1 usable rows" in out


# -- 4. one validity rule ---------------------------------------------------------------
@pytest.mark.parametrize("fen", [OPPOSITE_CHECK, BAD_EP, QUEENS_24, TWO_WHITE_KINGS])
def test_chunk_reader_and_converters_reject_the_same_positions(tmp_path: Path, fen: str) -> None:
    """Before: the chunk reader kept the first three (only kings, pawns and shape were checked)."""
    assert position_problem(chess.Board(fen)) is not None
    chunk = tmp_path / "Chess_aa"
    for quoted in (False, True):   # the column reader and the line reader
        cell = f'"{fen}"' if quoted else fen
        chunk.write_text(f"board,cp\n{START},0.1\n{cell},0.2\n", encoding="utf-8")
        block, report = read_chunk(chunk)
        assert len(block) == 1 and report.total_skipped == 1
    src = tmp_path / "e.jsonl"
    src.write_text(json.dumps({"fen": fen, "evals": [{"pvs": [{"cp": 1}], "depth": 1}]}) + "\n", encoding="utf-8")
    report = convert_file(src, tmp_path / "out.csv", progress=False)
    assert report.rows_written == 0 and report.skipped == {"bad_fen": 1}


@pytest.mark.parametrize("fen", ["r3k2r/8/8/8/8/8/8/R3K2R w qK - 0 1", "r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1",
                                 "4k3/8/8/8/8/8/8/4K3 w - e4 0 1"])
def test_odd_castling_and_en_passant_fields_are_refused_alike(tmp_path: Path, fen: str) -> None:
    """Before: the chunk reader read ``qK``/``HAha`` as no or some rights and ``e4`` as no
    en passant and kept the row, while python-chess (the converters) read them otherwise."""
    chunk = tmp_path / "Chess_aa"
    chunk.write_text(f"board,cp\n{fen},0.2\n", encoding="utf-8")
    block, report = read_chunk(chunk)
    assert len(block) == 0 and dict(report.skipped) == {"bad FEN": 1}
    src = tmp_path / "e.jsonl"
    src.write_text(json.dumps({"fen": fen, "evals": [{"pvs": [{"cp": 1}], "depth": 1}]}) + "\n", encoding="utf-8")
    assert convert_file(src, tmp_path / "out.csv", progress=False).skipped == {"bad_fen": 1}
    pgn = tmp_path / "g.pgn"
    pgn.write_text(f'[FEN "{fen}"]\n[SetUp "1"]\n\n1. Kd2 {{ [%eval 0.1] }} *\n', encoding="utf-8")
    assert convert_file(pgn, tmp_path / "out.csv", progress=False).skipped == {"bad_fen": 1}


def test_pgn_with_an_impossible_fen_header_gives_no_rows(tmp_path: Path) -> None:
    """Before: a [FEN] with two white kings produced rows (python-chess's reader accepts it)."""
    src = tmp_path / "g.pgn"
    src.write_text(f'[Event "x"]\n[FEN "{TWO_WHITE_KINGS}"]\n[SetUp "1"]\n\n'
                   "1. Kd2 { [%eval 0.1] } Kf8 { [%eval 0.1] } 2. Kc3 { [%eval 0.1] } *\n", encoding="utf-8")
    report = convert_file(src, tmp_path / "out.csv", progress=False)
    assert report.rows_written == 0 and report.skipped == {"bad_fen": 3} and report.records_read == 3


def test_pgn_counts_every_ply_after_an_illegal_move(tmp_path: Path) -> None:
    """Before: the plies after an illegal move vanished uncounted (read != kept + skipped)."""
    src = tmp_path / "g.pgn"
    src.write_text('[Event "x"]\n\n1. e4 { [%eval 0.1] } e5 { [%eval 0.2] } 2. Ke3 { [%eval 0.1] } Nc6 '
                   "(2... Nf6 3. Nc3) 3. Nf3 Nf6 { a comment; with 4. d4 } 4. d4 *\n", encoding="utf-8")
    report = convert_file(src, tmp_path / "out.csv", progress=False)
    assert report.rows_written == 1   # e5 (e4 has no eval before it)
    assert report.skipped == {"unlabelled": 1, "illegal_move": 1, "after_illegal_move": 4}  # Nc6 Nf3 Nf6 d4
    assert report.records_read == 7 == report.rows_written + report.total_skipped


def test_parse_legal_fens_syntax_and_legality() -> None:
    out = parse_legal_fens([START, OPPOSITE_CHECK, "4k3/8/8/8/8/8/8/4K3 w Kx - 0 1",
                            "4k3/8/8/8/8/8/8/4K3 w - e4 0 1"])
    assert out["syntax"].tolist() == [True, True, False, False]
    assert out["valid"].tolist() == [True, False, False, False]


# -- 5. strict evaluation text --------------------------------------------------------
@pytest.mark.parametrize("text", ["#++3", "#+-3", "#\u0663", "\u0663", "1_000", "inf", "nan", "#", "1e"])
def test_eval_text_is_ascii_and_strict(tmp_path: Path, text: str) -> None:
    """Before: ``#++3``, ``#+-3``, ``#٣`` were mates and ``٣``, ``1_000`` numbers."""
    with pytest.raises(ValueError):
        eval_to_pawns(text)
    chunk = tmp_path / "Chess_aa"
    for quoted in (False, True):
        cell = f'"{START}"' if quoted else START
        chunk.write_text(f"board,cp\n{cell},{text}\n{cell},0.5\n", encoding="utf-8")
        block, report = read_chunk(chunk)
        assert len(block) == 1 and dict(report.skipped) == {"bad cp": 1}
    if not text.startswith("#"):
        with pytest.raises(Skip):
            eval_text(text, None)
        with pytest.raises(Skip):
            eval_text(None, text)


@pytest.mark.parametrize(("text", "pawns"), [("0.35", 0.35), ("-.5", -0.5), ("+2", 2.0), ("#-0", -10.0),
                                            ("#+3", 10.0), ("#3", 10.0), ("12.5", 9.0)])
def test_eval_text_valid_forms(text: str, pawns: float) -> None:
    assert eval_to_pawns(text) == pytest.approx(pawns)


# -- 6. one-line errors, checked before the work --------------------------------------
def test_convert_into_a_directory_fails_before_reading(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: IsADirectoryError traceback, after the whole input had been converted."""
    src = tmp_path / "e.jsonl"
    src.write_bytes(jsonl(2))
    (tmp_path / "outdir").mkdir()
    code, out, err = run_cli(["data", "convert", "--quiet", str(src), str(tmp_path / "outdir")], capsys)
    assert code == 2 and "is a directory" in err and err.count("\n") == 1 and out == ""
    assert not (tmp_path / "outdir.tmp").exists()


def test_convert_under_a_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: FileExistsError/NotADirectoryError traceback from mkdir."""
    src = tmp_path / "e.jsonl"
    src.write_bytes(jsonl(2))
    (tmp_path / "afile").write_text("x")
    code, _out, err = run_cli(["data", "convert", "--quiet", str(src), str(tmp_path / "afile" / "sub" / "o.csv")],
                              capsys)
    assert code == 2 and "is a file" in err and err.count("\n") == 1


def _as_nobody(args: list[str]) -> subprocess.CompletedProcess[str]:
    """Run the CLI as an unprivileged user (root reads and writes anything)."""
    return subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                           sys.executable, "-m", "knights.cli", *args],
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1], timeout=120,
                          check=False)


def _unprivileged(args: list[str]) -> subprocess.CompletedProcess[str]:
    if ROOT:
        return _as_nobody(args)
    return subprocess.run([sys.executable, "-m", "knights.cli", *args], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1], timeout=120, check=False)


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A folder every user can enter, directly in the system's temporary folder: not under pytest's
    ``pytest-of-<user>``, which every pytest session starting on the machine sets back to 0700 (the
    unprivileged run then could not reach its files: seen once in a clean clone beside other runs)."""
    folder = Path(tempfile.mkdtemp(prefix="knights-nobody-"))
    os.chmod(folder, 0o777)
    try:
        yield folder
    finally:
        for path in (folder, *folder.rglob("*")):
            os.chmod(path, 0o777 if path.is_dir() else 0o666)
        shutil.rmtree(folder)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_unreadable_input_and_unwritable_output_are_one_line(open_tmp: Path) -> None:
    """Before: PermissionError tracebacks (the unwritable directory only after converting)."""
    src = open_tmp / "e.jsonl"
    src.write_bytes(jsonl(2))
    os.chmod(src, 0o000)
    done = _unprivileged(["data", "convert", "--quiet", str(src), str(open_tmp / "o.csv")])
    assert done.returncode == 2 and "not readable" in done.stderr and "Traceback" not in done.stderr
    os.chmod(src, 0o644)
    locked = open_tmp / "locked"
    locked.mkdir(mode=0o555)
    os.chmod(locked, 0o555)
    done = _unprivileged(["data", "convert", "--quiet", str(src), str(locked / "o.csv")])
    assert done.returncode == 2 and "not writable" in done.stderr and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_data_check_on_an_unreadable_chunk_is_one_line(open_tmp: Path) -> None:
    """Before: PermissionError traceback."""
    (open_tmp / "Chess_aa").write_text(f"board,cp\n{START},0.1\n", encoding="utf-8")
    bad = open_tmp / "Chess_ab"
    bad.write_text(f"board,cp\n{START},0.1\n", encoding="utf-8")
    os.chmod(open_tmp / "Chess_aa", 0o644)
    os.chmod(bad, 0o000)
    done = _unprivileged(["data", "check", str(open_tmp), "all"])
    assert done.returncode == 1 and f"cannot read {bad}" in done.stderr and "Traceback" not in done.stderr
    assert "1 usable rows, 1 unreadable" in done.stdout
