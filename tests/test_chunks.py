"""Tests for knights/data/chunks.py (targets, chunk selection, tolerant reading) and
knights/data/cache.py (the encoded cache, loading, streaming, batches)."""

from __future__ import annotations

import csv
import io
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knights.board.arrays import parse_fens
from knights.data import chunks
from knights.data.cache import ChunkCache, file_checksum, iter_batches, load_encoded, read_chunks
from knights.data.chunks import Encoded, chunk_files, cp_to_target, read_chunk, select_chunks
from knights.data.csslab import COLUMNS, HEADER_LINE, KEPT_COLUMNS, RowWriter

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
AFTER_E4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1"
AFTER_E4_E5 = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq e6 0 2"
ENDGAME = "R3k3/8/8/8/8/5p2/7q/NNN1K3 b - - 0 1"
CHECKED = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"


# -- cp_to_target ------------------------------------------------------------------
def test_cp_to_target_exact_values():
    got = cp_to_target(["0.35", "#3", "#-2", "12.5", "-30", "-1.20", "0", "9", "-9.00", " 2.5 "])
    assert got.dtype == np.float32
    expected = np.array([0.35, 10, -10, 9, -9, -1.2, 0, 9, -9, 2.5], dtype=np.float32)
    np.testing.assert_array_equal(got, expected)


def test_cp_to_target_centipawns():
    got = cp_to_target(["0.35", "#3", "#-2", "12.5", "-30", "-1.20"], units="centipawns")
    np.testing.assert_allclose(got, [35, 1000, -1000, 900, -900, -120], rtol=1e-6)
    assert got.dtype == np.float32


def test_cp_to_target_empty_list():
    got = cp_to_target([])
    assert got.shape == (0,) and got.dtype == np.float32


def test_cp_to_target_bad_units():
    with pytest.raises(ValueError, match="units"):
        cp_to_target(["0.35"], units="millipawns")  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["", "   ", "abc", "#", "#-", "#x", "#3.5", "nan", "NaN", "inf",
                                 "-inf", "0.3.5", "1,5"])
def test_cp_to_target_rejects_malformed(bad):
    with pytest.raises(ValueError):
        cp_to_target(["0.35", bad])


# -- selection -----------------------------------------------------------------------
HEADER = HEADER_LINE + "\n"


def make_folder(folder: Path, names: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_text(HEADER)
    return folder


CHESS = [f"Chess_Jan_{a}{b}" for a in "abcdef" for b in "abc"]   # 18 files, 3 per letter
SAMPLE = [f"Sample_{a}" for a in "abcdefghijkl"]                 # 12 files


@pytest.fixture
def chess_folder(tmp_path: Path) -> Path:
    folder = make_folder(tmp_path / "chess", CHESS)
    # things that are not chunks: a file with a dot, a hidden file, a sub-folder
    (folder / "Chess_Jan_aa.csv").write_text(HEADER)
    (folder / ".DS_Store").write_text("x")
    (folder / "Chess_Jan_zz").mkdir()
    return folder


@pytest.fixture
def sample_folder(tmp_path: Path) -> Path:
    return make_folder(tmp_path / "sample", SAMPLE)


def names(paths: list[Path]) -> list[str]:
    return [p.name for p in paths]


def suffixes(paths: list[Path], prefix: str) -> list[str]:
    assert all(p.name.startswith(prefix) for p in paths)
    return [p.name[len(prefix):] for p in paths]


def test_chunk_files_sorted_and_filtered(chess_folder):
    files = chunk_files(chess_folder)
    assert names(files) == sorted(CHESS)
    assert all(isinstance(p, Path) and p.parent == chess_folder for p in files)


@pytest.mark.parametrize("spec,expected", [
    ("a-d", [f"{a}{b}" for a in "abcd" for b in "abc"]),
    ("e,f", ["ea", "eb", "ec", "fa", "fb", "fc"]),
    ("a-c,f", [f"{a}{b}" for a in "abcf" for b in "abc"]),
    ("b", ["ba", "bb", "bc"]),
    ("f-f", ["fa", "fb", "fc"]),
    (" A-B ", ["aa", "ab", "ac", "ba", "bb", "bc"]),
    ("a - b", ["aa", "ab", "ac", "ba", "bb", "bc"]),
    ("all", [f"{a}{b}" for a in "abcdef" for b in "abc"]),
    ("every 4th", ["ba", "cb", "dc", "fa"]),
    ("every 4", ["ba", "cb", "dc", "fa"]),
    ("every 1st", [f"{a}{b}" for a in "abcdef" for b in "abc"]),
    ("every 6th", ["bc", "dc", "fc"]),
    ("a-f except every 4th",
     [s for s in (f"{a}{b}" for a in "abcdef" for b in "abc") if s not in ("ba", "cb", "dc", "fa")]),
    ("all except e,f", [f"{a}{b}" for a in "abcd" for b in "abc"]),
    ("a-d except b", [f"{a}{b}" for a in "acd" for b in "abc"]),
])
def test_select_chunks_chess(chess_folder, spec, expected):
    assert suffixes(select_chunks(chess_folder, spec), "Chess_Jan_") == expected


@pytest.mark.parametrize("spec,expected", [
    ("a-d", list("abcd")),
    ("e,f", list("ef")),
    ("a-c,f", list("abcf")),
    ("all", list("abcdefghijkl")),
    ("every 4th", list("dhl")),
    ("every 3rd", list("cfil")),
    ("every 2nd", list("bdfhjl")),
    ("a-f except every 4th", list("abcef")),
    ("all except every 4th", list("abcefgijk")),
    ("h,a-b,l", list("abhl")),
])
def test_select_chunks_single_letter(sample_folder, spec, expected):
    assert suffixes(select_chunks(sample_folder, spec), "Sample_") == expected


def test_train_and_validation_sets_are_disjoint(chess_folder):
    train = set(select_chunks(chess_folder, "a-d"))
    val = set(select_chunks(chess_folder, "e,f"))
    assert not train & val
    assert train | val == set(select_chunks(chess_folder, "all"))


@pytest.mark.parametrize("spec", ["d-a", "a-", "-a", "ab", "aa-b", "1-3", "every 0th", "every",
                                  "every fourth", "", "a;b", "a,,b", "a-d except", "a-d except 4",
                                  "A-Z1", "all,a", "é"])
def test_select_chunks_bad_spec(chess_folder, spec):
    with pytest.raises(ValueError, match="bad chunk selection"):
        select_chunks(chess_folder, spec)


@pytest.mark.parametrize("spec", ["z", "g-z", "a except all", "a-c except a-c"])
def test_select_chunks_no_match(chess_folder, spec):
    with pytest.raises(ValueError, match="matches no file"):
        select_chunks(chess_folder, spec)


def test_mixed_prefixes_need_prefix(tmp_path):
    folder = make_folder(tmp_path / "mixed", CHESS + SAMPLE)
    with pytest.raises(ValueError, match="prefix"):
        select_chunks(folder, "a-d")
    with pytest.raises(ValueError, match="prefix"):
        chunk_files(folder)
    assert suffixes(select_chunks(folder, "a-d", prefix="Sample_"), "Sample_") == list("abcd")
    assert suffixes(select_chunks(folder, "every 4th", prefix="Sample_"), "Sample_") == list("dhl")
    assert suffixes(select_chunks(folder, "e,f", prefix="Chess_Jan_"), "Chess_Jan_") == [
        "ea", "eb", "ec", "fa", "fb", "fc"]
    with pytest.raises(FileNotFoundError):
        select_chunks(folder, "all", prefix="Chess_Feb_")


def test_missing_folder(tmp_path):
    with pytest.raises(FileNotFoundError):
        select_chunks(tmp_path / "nope", "all")
    # a path that is a file, not a folder
    (tmp_path / "file").write_text("x")
    with pytest.raises(FileNotFoundError):
        select_chunks(tmp_path / "file", "all")


def test_folder_without_chunks(tmp_path):
    folder = tmp_path / "empty"
    folder.mkdir()
    (folder / "notes.txt").write_text("x")
    with pytest.raises(FileNotFoundError):
        select_chunks(folder, "all")


# -- reading -------------------------------------------------------------------------
def good_row(board: str, cp: str, *, check: str = "False", capture: str = "False",
             white_active: str = "True", move: str = "e2e4") -> dict[str, str]:
    return {"game_id": "g1", "white_elo": "1500", "black_elo": "1600", "move": move,
            "board": board, "cp": cp, "cp_rel": cp, "cp_loss": "0.00", "is_blunder_cp": "False",
            "white_active": white_active, "is_capture": capture, "is_check": check}


GOOD = [
    # (row, expected target, check, capture, white-to-move from the FEN, move index)
    (good_row(START, "0.35", move="e2e4"), 0.35, 0, 0, 1, 12 * 64 + 28),
    (good_row(AFTER_E4, "#3", white_active="False", move="e7e5"), 10.0, 0, 0, 0, 52 * 64 + 36),
    (good_row(AFTER_E4_E5, "-12.5", capture="True", move="g1f3"), -9.0, 0, 1, 1, 6 * 64 + 21),
    (good_row(ENDGAME, "#-1", white_active="False", move="e8e7"), -10.0, 0, 0, 0, 60 * 64 + 52),
    # checkmated: no move played, empty move field -> -1
    (good_row(CHECKED, "-1.20", check="True", capture="False", move=""), -1.2, 1, 0, 1, -1),
    # white_active contradicts the FEN: the FEN wins; a promotion move
    (good_row(AFTER_E4, "0.00", white_active="True", check="false", capture="1", move="a7a8q"),
     0.0, 0, 1, 0, 48 * 64 + 56),
]


def write_mixed_chunk(path: Path) -> dict[int, str]:
    """A 47-column chunk: good rows and malformed ones. Returns {line number: reason}."""
    buf = io.StringIO()
    writer = RowWriter(buf)                                       # line 1: header
    writer.write(GOOD[0][0])                                      # 2
    writer.write(good_row("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1", "0.10"))  # 3 bad FEN
    writer.write(GOOD[1][0])                                      # 4
    writer.write(good_row(START, ""))                             # 5 empty cp
    writer.write(GOOD[2][0])                                      # 6
    writer.write(good_row(START, "abc"))                          # 7 non-numeric cp
    buf.write("\n")                                               # 8 empty line: ignored
    writer.write(GOOD[3][0])                                      # 9
    buf.write(_row_text(GOOD[0][0]).rstrip("\n") + ",extra\n")   # 10 wrong column count
    writer.write(GOOD[4][0])                                      # 11
    writer.write(good_row(START, "0.20", check="maybe"))          # 12 bad boolean
    writer.write(GOOD[5][0])                                      # 13
    writer.write(good_row(START, "0.20", move="e9e4"))            # 14 bad move
    path.write_text(buf.getvalue(), encoding="utf-8")
    return {3: "bad FEN", 5: "bad cp", 7: "bad cp", 10: "wrong column count", 12: "bad boolean",
            14: "bad move"}


def _row_text(row: dict[str, str]) -> str:
    buf = io.StringIO()
    RowWriter(buf, header=False).write(row)
    return buf.getvalue()


def expected_block() -> Encoded:
    fens = [r["board"] for r, *_ in GOOD]
    squares, _, _ = parse_fens(fens)
    return Encoded(
        squares=squares,
        white=np.array([g[4] for g in GOOD], np.int8),
        check=np.array([g[2] for g in GOOD], np.int8),
        capture=np.array([g[3] for g in GOOD], np.int8),
        target=np.array([g[1] for g in GOOD], np.float32),
        move=np.array([g[5] for g in GOOD], np.int16),
        # castling bitmask K=1 Q=2 k=4 q=8 and en-passant square (a1 = 0) from the FEN
        castling=np.array([15, 15, 15, 0, 15, 15], np.int8),
        ep=np.array([-1, 20, 44, -1, -1, 20], np.int8),
    )


def assert_blocks_equal(a: Encoded, b: Encoded) -> None:
    for f in Encoded.FIELDS:
        x, y = np.asarray(getattr(a, f)), np.asarray(getattr(b, f))
        assert x.dtype == y.dtype, f
        np.testing.assert_array_equal(x, y, err_msg=f)


def test_read_chunk_counts_and_examples(tmp_path):
    path = tmp_path / "Chess_Jan_aa"
    bad = write_mixed_chunk(path)
    block, report = read_chunk(path)
    assert len(block) == report.rows == len(GOOD)
    assert report.skipped == Counter({"bad cp": 2, "bad FEN": 1, "wrong column count": 1,
                                      "bad boolean": 1, "bad move": 1})
    assert report.total_skipped == 6
    # at most five examples, in line order
    assert report.examples == [f"{path}:{n}: {bad[n]}" for n in sorted(bad)[:5]]
    assert report.path == str(path)
    summary = report.summary()
    assert str(path) in summary and "6 malformed rows skipped" in summary and "2 bad cp" in summary
    assert_blocks_equal(block, expected_block())
    assert block.squares.shape == (6, 64) and block.squares.dtype == np.int8
    assert block.target.tolist() == pytest.approx([0.35, 10, -9, -10, -1.2, 0], abs=1e-6)
    assert block.move.dtype == np.int16
    assert block.move.tolist() == [796, 3364, 405, 3892, -1, 3128]
    assert block.castling.tolist() == [15, 15, 15, 0, 15, 15]
    assert block.ep.tolist() == [-1, 20, 44, -1, -1, 20]


def test_read_chunk_keeps_at_most_five_examples(tmp_path):
    path = tmp_path / "Chess_Jan_ab"
    buf = io.StringIO()
    writer = RowWriter(buf)
    for _ in range(8):
        writer.write(good_row(START, "x"))
    writer.write(GOOD[0][0])
    path.write_text(buf.getvalue())
    _block, report = read_chunk(path)
    assert report.rows == 1 and report.skipped == Counter({"bad cp": 8})
    assert report.examples == [f"{path}:{n}: bad cp" for n in range(2, 7)]


def test_read_chunk_clean_file_summary(tmp_path):
    path = tmp_path / "Chess_Jan_ac"
    buf = io.StringIO()
    RowWriter(buf).write_all(r for r, *_ in GOOD)
    path.write_text(buf.getvalue())
    block, report = read_chunk(path)
    assert report.rows == 6 and not report.skipped and report.examples == []
    assert "none skipped" in report.summary()
    assert_blocks_equal(block, expected_block())


def test_read_chunk_crlf_line_endings(tmp_path):
    path = tmp_path / "Chess_Jan_ad"
    buf = io.StringIO()
    RowWriter(buf).write_all(r for r, *_ in GOOD)
    path.write_bytes(buf.getvalue().replace("\n", "\r\n").encode())
    block, report = read_chunk(path)
    assert report.rows == 6 and not report.skipped
    assert_blocks_equal(block, expected_block())


def write_cut_chunk(path: Path, rows: list[dict[str, str]], columns=KEPT_COLUMNS) -> None:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(columns)
        for row in rows:
            w.writerow([row.get(c, "") for c in columns])


def test_read_cut_format_reads_the_same(tmp_path):
    full = tmp_path / "full" / "Chess_Jan_aa"
    cut = tmp_path / "cut" / "Chess_Jan_aa"
    full.parent.mkdir()
    cut.parent.mkdir()
    write_mixed_chunk(full)
    # the same rows, cut to the 11 kept columns (as the original's `cut -f ...` did)
    with open(full, newline="") as fh:
        lines = fh.read().split("\n")
    keep = [COLUMNS.index(c) for c in KEPT_COLUMNS]
    out = [",".join(KEPT_COLUMNS)]
    for line in lines[1:]:
        if not line:
            out.append(line)
            continue
        parts = line.split(",")
        out.append(",".join(parts[i] for i in keep) + ("," + parts[-1] if len(parts) != 47 else ""))
    cut.write_text("\n".join(out))
    assert len(KEPT_COLUMNS) == 11
    a, rep_a = read_chunk(full)
    b, rep_b = read_chunk(cut)
    assert_blocks_equal(a, b)
    assert rep_a.skipped == rep_b.skipped
    assert [e.split(":", 1)[1] for e in rep_a.examples] == [e.split(":", 1)[1] for e in rep_b.examples]


def test_read_minimal_columns(tmp_path):
    path = tmp_path / "Min_a"
    # columns in another order, no is_check/is_capture: those read as 0
    write_cut_chunk(path, [r for r, *_ in GOOD], columns=("cp", "board"))
    block, report = read_chunk(path)
    assert report.rows == 6 and not report.skipped
    expected = expected_block()
    np.testing.assert_array_equal(block.squares, expected.squares)
    np.testing.assert_array_equal(block.target, expected.target)
    np.testing.assert_array_equal(block.white, expected.white)
    assert not block.check.any() and not block.capture.any()
    assert block.move.tolist() == [-1] * 6


@pytest.mark.parametrize("header", ["white_elo,black_elo,move,cp_rel,board,is_check",
                                    "white_elo,cp,move", "", "\n"])
def test_missing_required_column_names_the_file(tmp_path, header):
    path = tmp_path / "Chess_Jan_zz"
    path.write_text(header + ("\n1500,1600,e2e4\n" if header.strip() else ""))
    with pytest.raises(ValueError) as err:
        read_chunk(path)
    assert str(path) in str(err.value)


def test_read_chunk_header_only(tmp_path):
    path = tmp_path / "Chess_Jan_aa"
    path.write_text(HEADER)
    block, report = read_chunk(path)
    assert len(block) == 0 and report.rows == 0 and not report.skipped
    assert block.squares.shape == (0, 64)


def write_uniform_chunk(path: Path) -> dict[int, str]:
    """Like :func:`write_mixed_chunk` but every line has 47 fields and no quotes,
    so that the whole file can be read column-wise."""
    bad = write_mixed_chunk(path)
    lines = path.read_text().split("\n")
    lines[9] = lines[9].rsplit(",", 1)[0]                           # line 10: drop ",extra"
    lines[9] = lines[9].replace(START, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1")
    path.write_text("\n".join(lines))
    bad[10] = "bad FEN"
    return bad


def with_quoted_line(path: Path) -> Path:
    """A copy of ``path`` with one more line, holding a quote (a wrong column count):
    it sends the whole file through the careful line-by-line reader."""
    other = path.with_name(path.name + "q")
    text = path.read_text()
    other.write_text(text + ("" if text.endswith("\n") else "\n") + '"quoted",x\n')
    return other


def assert_same_reading(path: Path) -> tuple[Encoded, chunks.ReadReport]:
    """``path`` read as is and through the line reader give the same rows, counts
    and examples (but for the one extra line)."""
    block, report = read_chunk(path)
    other = with_quoted_line(path)
    block2, report2 = read_chunk(other)
    assert_blocks_equal(block, block2)
    extra = report2.skipped.copy()
    extra.subtract({"wrong column count": 1})
    assert +extra == +report.skipped
    strip = [e.split(":", 1)[1] for e in report.examples]
    strip2 = [e.split(":", 1)[1] for e in report2.examples]
    assert strip2[:len(strip)] == strip
    return block, report


def test_column_and_line_readers_agree(tmp_path):
    path = tmp_path / "Chess_Jan_aa"
    bad = write_uniform_chunk(path)
    assert b'"' not in path.read_bytes()
    block, report = assert_same_reading(path)
    assert report.skipped == Counter(bad.values())
    assert report.examples == [f"{path}:{n}: {bad[n]}" for n in sorted(bad)[:5]]
    assert_blocks_equal(block, expected_block())


def test_header_variants(tmp_path):
    rows = "".join(f"{r['board']},{r['cp']},{r['move']},{r['is_check']}\n" for r, *_ in GOOD)
    expected = expected_block()
    for name, header in [("plain", "board,cp,move,is_check"), ("bom", "\ufeffboard,cp,move,is_check"),
                         ("spaces", "board, cp , move,is_check "), ("crlf", "board,cp,move,is_check\r")]:
        path = tmp_path / f"Hdr_{name}"
        path.write_text(header + "\n" + rows, encoding="utf-8")
        block, report = assert_same_reading(path)
        assert report.rows == 6 and not report.skipped, name
        np.testing.assert_array_equal(block.squares, expected.squares)
        np.testing.assert_array_equal(block.move, expected.move)
        np.testing.assert_array_equal(block.check, expected.check)
        np.testing.assert_array_equal(block.target, expected.target)


def test_non_ascii_fields_are_counted_not_raised(tmp_path):
    path = tmp_path / "Odd_a"
    lines = ["board,cp,move,is_check,is_capture",
             f"{START},0.10,e2e4,False,False",           # 2 good
             f"{START},0.10,é2e4,False,False",           # 3 bad move
             f"{START},0.10,e2e4,Trué,False",            # 4 bad boolean
             f"{START},0.10,e2e4,False,Fals\u00e9",      # 5 bad boolean
             f"{START},0.1€,e2e4,False,False",           # 6 bad cp
             f"{START}é,0.10,e2e4,False,False",          # 7 good: the FEN's 7th field is not read
             "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNé w KQkq - 0 1,0.10,e2e4,False,False",  # 8 bad FEN
             f"{START},0.10,\U00010065\U00010032e4,False,False",  # 9 bad move (not 'e2' in disguise)
             f"{START},0.10,e7e8\U0001F600,False,False",  # 10 bad move
             f"{START},0.10,,,",                          # 11 good: empty move and booleans
             f"{START},0.10,e2e4,Truest,False",           # 12 bad boolean
             ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    assert b'"' not in path.read_bytes() and b"\0" not in path.read_bytes()
    block, report = assert_same_reading(path)
    assert report.skipped == Counter({"bad move": 3, "bad boolean": 3, "bad cp": 1, "bad FEN": 1})
    assert report.rows == 3
    assert block.move.tolist() == [796, 796, -1]
    assert block.check.tolist() == [0, 0, 0]


def test_nul_bytes_are_counted_not_raised(tmp_path):
    path = tmp_path / "Odd_b"
    lines = ["board,cp,move,is_check,is_capture",
             f"{START},0.10,e2e4,False,False",           # 2 good
             f"{START},0.10,e2e4\x00,False,False",       # 3 bad move
             f"{START},0.10,e2e4,True\x00,False",        # 4 bad boolean
             f"{START},0.10\x00,e2e4,False,False",       # 5 bad cp
             f"\x00{START},0.10,e2e4,False,False",       # 6 bad FEN
             "\x00,\x00,\x00,\x00,\x00",                  # 7 bad cp
             ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    block, report = assert_same_reading(path)
    assert report.skipped == Counter({"bad move": 1, "bad boolean": 1, "bad cp": 2, "bad FEN": 1})
    assert report.rows == 1 and block.move.tolist() == [796]


@st.composite
def uniform_line(draw) -> str:
    """A line with exactly 47 fields and no quote: a good row with some of its
    fields replaced by random text (no comma, quote or line break)."""
    parts = draw(st.sampled_from(GOOD_LINES)).split(",")
    field_text = st.text(st.characters(exclude_categories=("Cs",), exclude_characters='\r\n,"'),
                         max_size=12)
    for _ in range(draw(st.integers(0, 3))):
        col = draw(st.sampled_from(["cp", "board", "is_check", "is_capture", "move", "white_active",
                                    "game_id"]))
        value = draw(st.one_of(field_text, st.sampled_from(
            ["", "#3", "#-1", "#", "1e3", "nan", "inf", "-0", "True", "1", "0", "e7e8q", "e2e4",
             "a1a1", "h8h9", "0000", START, AFTER_E4.replace("b", "w", 1)])))
        parts[COLUMNS.index(col)] = value
    return ",".join(parts)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(uniform_line(), st.just("")), max_size=25))
def test_column_reader_matches_line_reader(lines):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "Chess_Jan_aa"
        path.write_text("\n".join([HEADER_LINE, *lines]) + "\n", encoding="utf-8")
        _block, report = assert_same_reading(path)
    assert report.rows + report.total_skipped == sum(1 for line in lines if line)


# -- property: read_chunk never raises -------------------------------------------------
GOOD_LINES = [_row_text(r).rstrip("\n") for r, *_ in GOOD]
TEXT = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\r\n"), max_size=30)


@st.composite
def chunk_line(draw) -> tuple[str, bool]:
    """One data line and whether it is an untouched good row."""
    kind = draw(st.sampled_from(["good", "field", "fields", "text", "empty"]))
    if kind == "good":
        return draw(st.sampled_from(GOOD_LINES)), True
    if kind == "empty":
        return "", False
    if kind == "text":
        return draw(TEXT), False
    if kind == "field":
        # a good row with its cp or board (or a boolean) replaced by random text
        parts = draw(st.sampled_from(GOOD_LINES)).split(",")
        col = draw(st.sampled_from(["cp", "board", "is_check", "is_capture", "white_active", "move"]))
        parts[COLUMNS.index(col)] = draw(TEXT)
        return ",".join(parts), False
    # random fields: extra, missing, or random unicode values
    parts = draw(st.sampled_from(GOOD_LINES)).split(",")
    n = draw(st.integers(0, 60))
    fields = [draw(TEXT) if draw(st.booleans()) else parts[i % 47] for i in range(n)]
    return ",".join(fields), False


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(chunk_line(), max_size=40), st.sampled_from(["\n", "\r\n"]))
def test_read_chunk_never_raises(lines, newline):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "Chess_Jan_aa"
        body = newline.join([HEADER_LINE, *(text for text, _ in lines)]) + newline
        path.write_bytes(body.encode("utf-8"))
        block, report = read_chunk(path)
    non_empty = sum(1 for text, _ in lines if text)
    assert report.rows + report.total_skipped == non_empty
    assert report.rows >= sum(good for _, good in lines)
    assert len(block) == report.rows
    for f in Encoded.FIELDS:
        assert len(getattr(block, f)) == report.rows
    assert np.isfinite(block.target).all() and (np.abs(block.target) <= 10).all()
    assert set(np.unique(block.check).tolist()) <= {0, 1}
    assert set(np.unique(block.capture).tolist()) <= {0, 1}
    # every kept position has one king per side
    assert ((block.squares == 6).sum(axis=1) == 1).all()
    assert ((block.squares == -6).sum(axis=1) == 1).all()


# -- cache ---------------------------------------------------------------------------
def cache_entries(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if not p.name.startswith("."))


def test_chunk_cache_stores_and_memory_maps(tmp_path, monkeypatch):
    chunk = tmp_path / "Chess_Jan_aa"
    write_mixed_chunk(chunk)
    root = tmp_path / "cache"
    cache = ChunkCache(root)
    messages: list[str] = []
    first = cache.load(chunk, messages.append)
    assert len(messages) == 1 and "6 malformed rows skipped" in messages[0] and str(chunk) in messages[0]
    entry = cache.path_for(file_checksum(chunk))
    assert cache_entries(root) == [entry]
    assert entry.name.startswith(f"v{ChunkCache.VERSION}-{file_checksum(chunk)}")
    assert not [p for p in root.iterdir() if p.name.startswith(".tmp-")]   # no temporary left over
    assert_blocks_equal(first, expected_block())

    # the second load must come from disk, without parsing the chunk again
    def no_parse(path):
        raise AssertionError(f"chunk {path} parsed again")

    monkeypatch.setattr("knights.data.cache.read_chunk", no_parse)
    again = ChunkCache(root)
    second = again.load(chunk, messages.append)
    assert len(messages) == 1                       # nothing new to report: nothing was read
    assert_blocks_equal(second, expected_block())
    records = again.records(chunk)
    assert isinstance(records, np.memmap) and not records.flags.writeable
    assert len(records) == 6
    for f in Encoded.FIELDS:
        np.testing.assert_array_equal(records[f], getattr(expected_block(), f), err_msg=f)
    assert cache_entries(root) == [entry]


def test_chunk_cache_new_content_new_entry(tmp_path):
    chunk = tmp_path / "Chess_Jan_aa"
    buf = io.StringIO()
    RowWriter(buf).write_all(r for r, *_ in GOOD)
    chunk.write_text(buf.getvalue())
    root = tmp_path / "cache"
    cache = ChunkCache(root)
    before = cache.load(chunk)
    assert len(before) == 6
    old_entry = cache.path_for(file_checksum(chunk))

    buf = io.StringIO()
    RowWriter(buf).write_all(r for r, *_ in GOOD[:2])
    chunk.write_text(buf.getvalue())                        # same name, new content
    new_entry = cache.path_for(file_checksum(chunk))
    assert new_entry != old_entry
    after = cache.load(chunk)
    assert len(after) == 2
    np.testing.assert_array_equal(after.target, expected_block().target[:2])
    assert cache_entries(root) == sorted([old_entry, new_entry])
    # the same content under another name shares the entry
    twin = tmp_path / "Chess_Jan_zz"
    twin.write_bytes(chunk.read_bytes())
    assert len(cache.load(twin)) == 2
    assert cache_entries(root) == sorted([old_entry, new_entry])


def test_chunk_cache_all_rows_malformed(tmp_path):
    chunk = tmp_path / "Chess_Jan_aa"
    buf = io.StringIO()
    RowWriter(buf).write(good_row(START, "nope"))
    chunk.write_text(buf.getvalue())
    cache = ChunkCache(tmp_path / "cache")
    for _ in range(2):
        block = cache.load(chunk)
        assert len(block) == 0 and block.squares.shape == (0, 64)


def test_chunk_cache_root_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("KNIGHTS_CACHE", str(tmp_path / "env-cache"))
    assert ChunkCache().root == tmp_path / "env-cache"
    assert ChunkCache(tmp_path / "explicit").root == tmp_path / "explicit"


def three_chunks(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, (lo, hi) in zip(["Chess_Jan_aa", "Chess_Jan_ab", "Chess_Jan_ba"], [(0, 3), (1, 5), (3, 6)], strict=False):
        buf = io.StringIO()
        RowWriter(buf).write_all(r for r, *_ in GOOD[lo:hi])
        (folder / name).write_text(buf.getvalue())
        paths.append(folder / name)
    return paths


def test_load_encoded_and_read_chunks(tmp_path):
    files = three_chunks(tmp_path / "chunks")
    sizes = [len(read_chunk(f)[0]) for f in files]
    assert sizes == [3, 4, 3]
    expected = Encoded.concat([read_chunk(f)[0] for f in files])
    loaded = load_encoded(files, ChunkCache(tmp_path / "cache"))
    assert_blocks_equal(loaded, expected)
    # read_chunks: file order, blocks never span files
    blocks = list(read_chunks(files, batch_rows=2))
    assert [len(b) for b in blocks] == [2, 1, 2, 2, 2, 1]
    assert_blocks_equal(Encoded.concat(blocks), expected)
    messages: list[str] = []
    assert sum(len(b) for b in read_chunks(files, report=messages.append)) == 10
    assert messages == []


# -- batches ---------------------------------------------------------------------------
def numbered(n: int) -> Encoded:
    """A block whose row i is recognisable in every field."""
    i = np.arange(n)
    fields = {
        "squares": np.repeat((i % 7).astype(np.int8)[:, None], 64, axis=1),
        "white": (i % 2).astype(np.int8),
        "check": np.zeros(n, np.int8),
        "capture": np.ones(n, np.int8),
        "target": i.astype(np.float32),
        "move": (i * 3).astype(np.int16),
        "castling": (i % 16).astype(np.int8),
        "ep": (i % 64 - 1).astype(np.int8),
    }
    assert set(fields) == set(Encoded.FIELDS)
    return Encoded(**fields)


def test_iter_batches_covers_every_row_once():
    data = numbered(103)
    batches = list(iter_batches(data, 10, seed=3))
    assert [len(b) for b in batches] == [10] * 10 + [3]
    seen = np.concatenate([b.target for b in batches])
    assert sorted(seen.tolist()) == list(range(103))
    assert seen.tolist() != list(range(103))          # shuffled
    # fields stay aligned within a row
    for b in batches:
        idx = b.target.astype(int)
        np.testing.assert_array_equal(b.white, idx % 2)
        np.testing.assert_array_equal(b.squares[:, 0], idx % 7)
        np.testing.assert_array_equal(b.move, idx * 3)
        np.testing.assert_array_equal(b.castling, idx % 16)
        np.testing.assert_array_equal(b.ep, idx % 64 - 1)


def test_iter_batches_seeds():
    data = numbered(50)

    def order(seed):
        return np.concatenate([b.target for b in iter_batches(data, 7, seed=seed)]).tolist()

    assert order(1) == order(1)
    assert order(1) != order(2)
    assert order(0) == order(0)


def test_iter_batches_without_shuffle_and_drop_last():
    data = numbered(10)
    plain = list(iter_batches(data, 3, shuffle=False))
    assert [b.target.tolist() for b in plain] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    dropped = list(iter_batches(data, 3, shuffle=False, drop_last=True))
    assert [b.target.tolist() for b in dropped] == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    shuffled = list(iter_batches(data, 3, seed=5, drop_last=True))
    assert [len(b) for b in shuffled] == [3, 3, 3]
    assert len(set(np.concatenate([b.target for b in shuffled]).tolist())) == 9
    exact = list(iter_batches(data, 5, drop_last=True))
    assert [len(b) for b in exact] == [5, 5]
    assert list(iter_batches(numbered(0), 4)) == []
    assert list(iter_batches(numbered(2), 4, drop_last=True)) == []


def test_encoded_take_and_concat():
    data = numbered(6)
    part = data.take(np.array([4, 1]))
    assert part.target.tolist() == [4, 1] and len(part) == 2
    both = Encoded.concat([part, data.take(slice(0, 2))])
    assert both.target.tolist() == [4, 1, 0, 1]
    assert both.squares.shape == (4, 64)


@pytest.mark.parametrize("uci,expected", [
    ("e2e4", 12 * 64 + 28), ("a1h8", 63), ("h8a1", 63 * 64), ("a7a8q", 48 * 64 + 56),
    ("b2b1n", 9 * 64 + 1), ("g1f3", 6 * 64 + 21), ("", -1),
    ("e2e9", -2), ("i2e4", -2), ("e2e", -2), ("e7e8k", -2), ("E2E4", -2), ("e2e4e5", -2), ("é2e4", -2),
])
def test_move_index(uci, expected):
    assert chunks.move_index(uci) == expected
