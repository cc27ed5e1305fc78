"""Tests for data/split.sh (chunking a CSSLab CSV the way the original project did)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from knights.data.csslab import COLUMNS, KEPT_COLUMNS, KEPT_FIELDS

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "data" / "split.sh"
FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
HEADER = ",".join(COLUMNS)


def make_row(i: int) -> str:
    """A 47-field row whose every value says which row and column it came from
    (the board column holds a real FEN, with spaces)."""
    return ",".join(FEN if name == "board" else f"r{i}_{name}" for name in COLUMNS)


def write_csv(path: Path, n_rows: int, *, header: str = HEADER, newline: str = "\n",
              final_newline: bool = True) -> list[str]:
    rows = [make_row(i) for i in range(n_rows)]
    text = newline.join([header, *rows])
    if final_newline:
        text += newline
    path.write_bytes(text.encode())
    return rows


def run(*args: object, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if k not in ("CUT", "FORCE")}
    full_env.update(env or {})
    return subprocess.run(["bash", str(SCRIPT), *map(str, args)], cwd=ROOT, env=full_env,
                          capture_output=True, text=True, timeout=120, check=False)


def chunk_names(outdir: Path) -> list[str]:
    return sorted(p.name for p in outdir.iterdir())


def read_chunk(path: Path) -> tuple[str, list[str]]:
    data = path.read_bytes().decode()
    assert data.endswith("\n")
    assert "\r" not in data
    header, *body = data[:-1].split("\n")
    return header, body


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file under directory (relative path -> content), dot-files included."""
    return {str(p.relative_to(directory)): (p.read_bytes() if p.is_file() else b"<dir>")
            for p in sorted(directory.rglob("*"))}


# ---------------------------------------------------------------- normal runs

def test_chunks_names_headers_and_rows(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    rows = write_csv(src, 25)
    out = tmp_path / "out"
    res = run(src, out, "Chess_Jan_", 10)
    assert res.returncode == 0, res.stderr
    assert chunk_names(out) == ["Chess_Jan_aa", "Chess_Jan_ab", "Chess_Jan_ac"]
    bodies = []
    for name, size in zip(chunk_names(out), (10, 10, 5), strict=False):
        header, body = read_chunk(out / name)
        assert header == HEADER
        assert len(body) == size
        bodies += body
    assert bodies == rows
    # one summary line: rows, chunks, outdir
    summary = res.stdout.strip().splitlines()
    assert len(summary) == 1
    assert "25 rows" in summary[0] and "3 chunks" in summary[0] and str(out) in summary[0]
    # nothing besides OUTDIR was left next to it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "out"]


def test_exact_multiple_of_lines(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    rows = write_csv(src, 20)
    out = tmp_path / "out"
    res = run(src, out, "P_", 10)
    assert res.returncode == 0, res.stderr
    assert chunk_names(out) == ["P_aa", "P_ab"]
    assert read_chunk(out / "P_ab")[1] == rows[10:]


def test_defaults_prefix_and_100000_lines(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    n = 100_001
    # short rows keep the file small: only the row count matters here
    src.write_text("board,cp\n" + "".join(f"{i},x\n" for i in range(n)))
    out = tmp_path / "out"
    res = run(src, out)
    assert res.returncode == 0, res.stderr
    assert chunk_names(out) == ["Chess_Jan_aa", "Chess_Jan_ab"]
    header, body = read_chunk(out / "Chess_Jan_aa")
    assert header == "board,cp" and len(body) == 100_000 and body[0] == "0,x"
    assert read_chunk(out / "Chess_Jan_ab") == ("board,cp", [f"{n - 1},x"])


def test_suffix_len_one(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    rows = write_csv(src, 7)
    out = tmp_path / "out"
    res = run(src, out, "Sample_", 3, 1)
    assert res.returncode == 0, res.stderr
    assert chunk_names(out) == ["Sample_a", "Sample_b", "Sample_c"]
    assert [b for n in chunk_names(out) for b in read_chunk(out / n)[1]] == rows


def test_existing_outdir_without_chunks_is_used(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    write_csv(src, 3)
    out = tmp_path / "out"
    out.mkdir()
    (out / "README").write_text("keep me\n")
    (out / "Other_aa").write_text("other prefix\n")
    res = run(src, out, "P_", 2)
    assert res.returncode == 0, res.stderr
    assert chunk_names(out) == ["Other_aa", "P_aa", "P_ab", "README"]
    assert (out / "README").read_text() == "keep me\n"


# ---------------------------------------------------------------- --cut

@pytest.mark.parametrize("how", ["option", "env"])
def test_cut_keeps_the_eleven_original_columns(tmp_path: Path, how: str) -> None:
    src = tmp_path / "in.csv"
    write_csv(src, 5)
    out = tmp_path / "out"
    res = run("--cut", src, out, "C_", 2) if how == "option" else run(src, out, "C_", 2, env={"CUT": "1"})
    assert res.returncode == 0, res.stderr
    assert chunk_names(out) == ["C_aa", "C_ab", "C_ac"]
    bodies = []
    for name in chunk_names(out):
        header, body = read_chunk(out / name)
        assert header.split(",") == list(KEPT_COLUMNS)
        bodies += body
    assert len(bodies) == 5
    for i, line in enumerate(bodies):
        full = make_row(i).split(",")
        assert line.split(",") == [full[k - 1] for k in KEPT_FIELDS]
    values = dict(zip(KEPT_COLUMNS, bodies[3].split(","), strict=False))
    assert values["white_elo"] == "r3_white_elo"
    assert values["board"] == FEN
    assert values["is_check"] == "r3_is_check"


def test_cut_looks_columns_up_by_name(tmp_path: Path) -> None:
    """A header with the 47 columns in another order still cuts the right values."""
    order = list(reversed(COLUMNS))
    src = tmp_path / "in.csv"
    src.write_text(",".join(order) + "\n" + ",".join(f"v_{c}" for c in order) + "\n")
    out = tmp_path / "out"
    res = run("--cut", src, out)
    assert res.returncode == 0, res.stderr
    assert read_chunk(out / "Chess_Jan_aa") == (
        ",".join(KEPT_COLUMNS), [",".join(f"v_{c}" for c in KEPT_COLUMNS)])


def test_cut_without_cut_keeps_all_columns(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    rows = write_csv(src, 2)
    out = tmp_path / "out"
    res = run(src, out, env={"CUT": "0"})
    assert res.returncode == 0, res.stderr
    assert read_chunk(out / "Chess_Jan_aa") == (HEADER, rows)


def test_cut_refuses_a_non_csslab_header(tmp_path: Path) -> None:
    src = tmp_path / "odd.csv"
    src.write_text("a,b,c\n1,2,3\n")
    out = tmp_path / "out"
    res = run("--cut", src, out)
    assert res.returncode != 0
    assert str(src) in res.stderr and "CSSLab" in res.stderr
    assert not out.exists()


# ---------------------------------------------------------------- line endings

def test_missing_final_newline_keeps_last_row(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    rows = write_csv(src, 5, final_newline=False)
    out = tmp_path / "out"
    res = run(src, out, "N_", 2)
    assert res.returncode == 0, res.stderr
    bodies = [b for n in chunk_names(out) for b in read_chunk(out / n)[1]]
    assert bodies == rows
    assert "5 rows" in res.stdout


def test_crlf_input(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    rows = write_csv(src, 5, newline="\r\n")
    out = tmp_path / "out"
    res = run(src, out, "W_", 2)
    assert res.returncode == 0, res.stderr
    names = chunk_names(out)
    assert names == ["W_aa", "W_ab", "W_ac"]
    for name in names:
        assert read_chunk(out / name)[0] == HEADER  # read_chunk also asserts no '\r'
    assert [b for n in names for b in read_chunk(out / n)[1]] == rows


def test_crlf_with_cut_and_no_final_newline(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    write_csv(src, 3, newline="\r\n", final_newline=False)
    out = tmp_path / "out"
    res = run("--cut", src, out)
    assert res.returncode == 0, res.stderr
    header, body = read_chunk(out / "Chess_Jan_aa")
    assert header == ",".join(KEPT_COLUMNS)
    assert len(body) == 3
    assert body[2].split(",")[-1] == "r2_is_check"


# ---------------------------------------------------------------- refusals

def assert_refused(res: subprocess.CompletedProcess[str], name: Path | str) -> None:
    assert res.returncode != 0
    assert str(name) in res.stderr, res.stderr
    assert res.stdout == ""


def test_refuses_missing_input(tmp_path: Path) -> None:
    src = tmp_path / "nope.csv"
    out = tmp_path / "out"
    res = run(src, out)
    assert_refused(res, src)
    assert "no such file" in res.stderr
    assert sorted(tmp_path.iterdir()) == []


def test_refuses_empty_input(tmp_path: Path) -> None:
    src = tmp_path / "empty.csv"
    src.write_text("")
    out = tmp_path / "out"
    res = run(src, out)
    assert_refused(res, src)
    assert "empty" in res.stderr
    assert not out.exists()


@pytest.mark.parametrize("text", [HEADER + "\n", HEADER, HEADER + "\r\n", HEADER + "\n\n"])
def test_refuses_header_only_input(tmp_path: Path, text: str) -> None:
    src = tmp_path / "header.csv"
    src.write_text(text, newline="")
    out = tmp_path / "out"
    res = run(src, out)
    assert_refused(res, src)
    assert "no rows" in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["header.csv"]


@pytest.mark.parametrize("cut", [False, True])
def test_refuses_a_file_without_its_header_line(tmp_path: Path, cut: bool) -> None:
    """Before: exit 0, "49 rows -> 5 chunks", the first data row made the header of every chunk."""
    src = tmp_path / "rows.csv"
    rows = write_csv(src, 50)
    src.write_text("\n".join(rows[1:]) + "\n")       # the header line left out: rows[1] comes first
    out = tmp_path / "out"
    res = run(*(["--cut"] if cut else []), src, out, "Chess_Jan_", 10)
    assert_refused(res, src)
    assert res.returncode == 1 and len(res.stderr.splitlines()) == 1, res.stderr
    assert "the first line is not a CSSLab header: 'r1_game_id' is not one of the 47 column names" in res.stderr
    assert "header line missing" in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.csv"]


@pytest.mark.parametrize(("header", "says"), [
    ("game_id,board,cp,nonsense", "'nonsense' is not one of the 47 column names"),
    ("board,cp," + "x" * 5000, "'" + "x" * 40 + "...' is not one of"),
    ("board,,cp", "'' is not one of"),
    ("move,cp", "the header has no 'board' column"),
    ("board,move", "the header has no 'cp' column")])
def test_refuses_a_header_of_other_names(tmp_path: Path, header: str, says: str) -> None:
    src = tmp_path / "odd.csv"
    src.write_text(f"{header}\n" + ",".join("1" for _ in header.split(",")) + "\n")
    res = run(src, tmp_path / "out")
    assert_refused(res, src)
    assert says in res.stderr and len(res.stderr) < 300, res.stderr
    assert not (tmp_path / "out").exists()


def test_a_header_of_some_csslab_columns_is_split(tmp_path: Path) -> None:
    """The eleven columns --cut keeps (a file cut before) split as they are."""
    src = tmp_path / "kept.csv"
    header = ",".join(KEPT_COLUMNS)
    src.write_text(f"{header}\n" + "\n".join(",".join(f"{i}" for _ in KEPT_COLUMNS) for i in range(3)) + "\n")
    res = run(src, tmp_path / "out", "K_", 2)
    assert res.returncode == 0, res.stderr
    assert read_chunk(tmp_path / "out" / "K_aa") == (header, ["0," * 10 + "0", "1," * 10 + "1"])


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root can read any file")
def test_refuses_unreadable_input(tmp_path: Path) -> None:
    src = tmp_path / "secret.csv"
    write_csv(src, 2)
    src.chmod(0)
    try:
        res = run(src, tmp_path / "out")
    finally:
        src.chmod(0o644)
    assert_refused(res, src)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("lines", ["0", "abc", "-5", "10x", "", "1.5"])
def test_refuses_bad_lines(tmp_path: Path, lines: str) -> None:
    src = tmp_path / "in.csv"
    write_csv(src, 3)
    out = tmp_path / "out"
    res = run(src, out, "P_", lines)
    assert_refused(res, src)
    assert "LINES" in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def test_refuses_too_many_chunks_for_suffix_len(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    write_csv(src, 27)
    out = tmp_path / "out"
    res = run(src, out, "T_", 1, 1)
    assert_refused(res, src)
    assert "too many chunks" in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]
    # 26 rows fit exactly
    write_csv(src, 26)
    res = run(src, out, "T_", 1, 1)
    assert res.returncode == 0, res.stderr
    assert len(chunk_names(out)) == 26 and chunk_names(out)[-1] == "T_z"


def test_refuses_existing_chunks_unless_force(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    rows = write_csv(src, 3)
    out = tmp_path / "out"
    out.mkdir()
    # stale chunks from an earlier run with another suffix length
    (out / "P_a").write_text("old\n")
    (out / "P_b").write_text("old\n")
    (out / "notes.txt").write_text("keep\n")
    before = snapshot(tmp_path)
    res = run(src, out, "P_", 2)
    assert_refused(res, src)
    assert "already" in res.stderr and "--force" in res.stderr
    assert snapshot(tmp_path) == before

    res = run("--force", src, out, "P_", 2)
    assert res.returncode == 0, res.stderr
    assert chunk_names(out) == ["P_aa", "P_ab", "notes.txt"]  # no mixing of old and new
    assert [b for n in ("P_aa", "P_ab") for b in read_chunk(out / n)[1]] == rows
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "out"]


def test_failure_midway_leaves_no_leftovers(tmp_path: Path) -> None:
    """A row that breaks --cut near the end: the chunks already written go away,
    OUTDIR keeps exactly what it had, and no temporary directory remains."""
    src = tmp_path / "in.csv"
    rows = write_csv(src, 30)
    with src.open("a") as f:
        f.write("only,three,fields\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("keep\n")
    before = snapshot(tmp_path)
    res = run("--cut", src, out, "F_", 5)
    assert_refused(res, src)
    assert "line 32" in res.stderr
    assert snapshot(tmp_path) == before
    assert len(rows) == 30


def test_failure_with_new_outdir_creates_nothing(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    write_csv(src, 4)
    with src.open("a") as f:
        f.write("x,y\n")
    out = tmp_path / "new" / "out"
    res = run("--cut", src, out, "F_", 1)
    assert_refused(res, src)
    assert not out.exists()
    assert list((tmp_path / "new").iterdir()) == []


def test_usage_errors(tmp_path: Path) -> None:
    res = run()
    assert res.returncode != 0 and "Usage" in res.stderr
    res = run("--bogus", tmp_path / "in.csv", tmp_path / "out")
    assert res.returncode != 0 and "--bogus" in res.stderr
    res = run("--help")
    assert res.returncode == 0 and "Usage" in res.stdout


def test_script_is_executable_bash() -> None:
    assert os.access(SCRIPT, os.X_OK)
    text = SCRIPT.read_text()
    assert text.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in text
