"""Tests for knights.data.convert: Lichess eval JSONL (plain and .zst), Kaggle eval CSV
and PGN with [%eval] comments into the CSSLab CSV."""

from __future__ import annotations

import csv
import json
import tempfile
from pathlib import Path

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knights.data.convert import ConvertReport, convert_file, detect_format
from knights.data.csslab import COLUMNS, winrate

START4 = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"
START6 = START4 + " 0 1"
AFTER_E4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
FOOLS = "rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2"  # ...Qh4# next


def read_rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader)
        assert tuple(header) == COLUMNS
        rows = [dict(zip(header, r, strict=False)) for r in reader]
    assert all(len(r) == len(COLUMNS) for r in rows)
    return rows


def record(fen: str, *evals: dict) -> str:
    return json.dumps({"fen": fen, "evals": list(evals)})


def pv_eval(depth: int, *pvs: dict) -> dict:
    return {"pvs": list(pvs), "knodes": 1000, "depth": depth}


GOOD_JSONL = [
    # the deepest evaluation wins, and its first pv
    record(START4, pv_eval(20, {"cp": 18, "line": "e2e4 e7e5"}),
           pv_eval(36, {"cp": 31, "line": "d2d4 d7d5"}, {"cp": 20, "line": "e2e4"}),
           pv_eval(30, {"cp": 25, "line": "g1f3"})),
    record(AFTER_E4, pv_eval(25, {"cp": 35, "line": "c7c5 g1f3"})),
    record(FOOLS, pv_eval(40, {"mate": -1, "line": "d8h4"})),
]


def write_jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# --------------------------------------------------------------------------- JSONL


def check_good_jsonl_rows(rows: list[dict[str, str]]) -> None:
    assert len(rows) == 3
    start, e4, mate = rows
    assert start["board"] == START6
    assert (start["cp"], start["cp_rel"], start["move"]) == ("0.31", "0.31", "d2d4")
    assert start["type"] == "LichessEval"
    assert (start["white_active"], start["is_capture"], start["is_check"]) == ("True", "False", "False")
    assert start["num_legal_moves"] == "20"
    assert (start["active_pawn_count"], start["opp_queen_count"]) == ("8", "1")
    # Black to move: cp_rel is the other side's view
    assert e4["board"] == AFTER_E4
    assert (e4["cp"], e4["cp_rel"], e4["move"], e4["white_active"]) == ("0.35", "-0.35", "c7c5", "False")
    assert (mate["cp"], mate["cp_rel"], mate["move"]) == ("#-1", "#1", "d8h4")
    for row in rows:  # nothing a bare evaluation cannot know
        for column in ("game_id", "white_elo", "cp_loss", "is_blunder_cp", "winrate", "clock", "move_ply"):
            assert row[column] == ""


def test_jsonl_values(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "evals.jsonl", GOOD_JSONL)
    report = convert_file(src, tmp_path / "out.csv", progress=False)
    assert report.rows_written == 3 and report.skipped == {}
    check_good_jsonl_rows(read_rows(tmp_path / "out.csv"))
    assert not (tmp_path / "out.csv.tmp").exists()


def test_jsonl_zst_is_streamed_the_same(tmp_path: Path) -> None:
    plain = "\n".join(GOOD_JSONL * 2) + "\n"
    src = tmp_path / "lichess_db_eval.jsonl.zst"
    # two frames, like a concatenated download: both must be read
    half = len(GOOD_JSONL[0]) + 1
    src.write_bytes(zstandard.ZstdCompressor().compress(plain[:half].encode())
                    + zstandard.ZstdCompressor().compress(plain[half:].encode()))
    assert detect_format(src) == "lichess-jsonl"
    report = convert_file(src, tmp_path / "out.csv", progress=True)
    assert report.rows_written == 6 and report.skipped == {}
    rows = read_rows(tmp_path / "out.csv")
    check_good_jsonl_rows(rows[:3])
    assert rows[3:] == rows[:3]


def test_jsonl_malformed_lines_are_counted(tmp_path: Path) -> None:
    lines = [
        *GOOD_JSONL,
        "this is not json",                                                    # bad_json
        "[1, 2, 3]",                                                           # bad_json
        "",                                                                    # blank: ignored
        record("rnbqkbnr/pppppppp/8/8 w KQkq -", pv_eval(1, {"cp": 1})),       # bad_fen
        record("8/8/8/8/8/8/8/8 w - -", pv_eval(1, {"cp": 1})),                # bad_fen (no kings)
        record(START4),                                                        # missing_eval
        record(START4, pv_eval(10, {"line": "e2e4"})),                         # missing_eval
        record(START4, pv_eval(10, {"cp": "abc"})),                            # bad_eval
        record(START4, pv_eval(10, {"cp": 1.5})),                              # bad_eval
        record(START4, pv_eval(10, {"cp": 10, "line": "e2e5"})),               # illegal_move
        json.dumps({"fen": START4, "evals": [{"pvs": [{"cp": 3}], "depth": 5}]}) + "   ",  # good, no move
    ]
    src = write_jsonl(tmp_path / "evals.jsonl", lines)
    report = convert_file(src, tmp_path / "out.csv", progress=False)
    assert report.rows_written == 4
    assert report.skipped == {"bad_json": 2, "bad_fen": 2, "missing_eval": 2, "bad_eval": 2,
                              "illegal_move": 1}
    assert report.records_read == 13
    assert report.first_errors[0].startswith(f"{src}:4: ")
    assert len(report.first_errors) == 9
    rows = read_rows(tmp_path / "out.csv")
    assert (rows[-1]["cp"], rows[-1]["move"], rows[-1]["is_capture"]) == ("0.03", "", "")
    summary = report.summary()
    assert str(src) in summary and "4 rows" in summary and "bad_json: 2" in summary
    assert "\n" not in summary


def test_limit_stops_early(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "evals.jsonl", GOOD_JSONL)
    report = convert_file(src, tmp_path / "out.csv", progress=False, limit=2)
    assert report.rows_written == 2 and report.stopped_at_limit
    assert len(read_rows(tmp_path / "out.csv")) == 2


garbage_text = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\r\n"), max_size=40)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=8,
)
near_records = st.builds(
    lambda fen, depth, cp, mate, line: json.dumps(
        {"fen": fen, "evals": [{"pvs": [{"cp": cp, "mate": mate, "line": line}], "depth": depth}]}),
    st.sampled_from([START4, START6, AFTER_E4, FOOLS, "8/8/8/8/8/8/8/8 w - -", "junk"]) | garbage_text,
    st.integers(-5, 60) | json_values,
    st.none() | st.integers() | st.floats() | st.text(max_size=5),
    st.none() | st.integers(-5, 5) | st.text(max_size=4),
    st.sampled_from(["e2e4", "d8h4", "c7c5 g1f3", "", "zz", "a1a1"]) | json_values,
)
garbage_line = garbage_text | json_values.map(json.dumps) | near_records


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(garbage_line, max_size=8))
def test_jsonl_garbage_never_crashes(lines: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        src = write_jsonl(Path(tmp) / "g.jsonl", lines)
        report = convert_file(src, Path(tmp) / "out.csv", progress=False)
        non_empty = sum(1 for line in lines if line.strip())
        assert report.rows_written + report.total_skipped == non_empty
        assert len(read_rows(Path(tmp) / "out.csv")) == report.rows_written


# --------------------------------------------------------------------------- Kaggle CSV


def test_kaggle_csv(tmp_path: Path) -> None:
    src = tmp_path / "chessData.csv"
    src.write_text(
        "fen,line,depth,knodes,cp,mate\n"
        f"{START4},e2e4 e7e5,30,100,31,\n"
        f"{START4},,22,50,25,\n"                       # same fen again: kept
        f"{AFTER_E4},d7d5,40,10,,-2\n"
        f"{START4},e2e4,10,10,,\n"                     # missing_eval
        f"{START4},e2e4,10,10,x,\n"                    # bad_eval
        "not a fen,e2e4,10,10,5,\n"                    # bad_fen
        f"{START4},e2e4,10,10\n"                       # bad_csv (4 fields)
        "\n"                                           # blank: ignored
        f"{AFTER_E4},c7c5,12,10,-40.0,\n",             # integral float accepted
        encoding="utf-8",
    )
    report = convert_file(src, tmp_path / "out.csv", progress=False)
    assert report.rows_written == 4
    assert report.skipped == {"missing_eval": 1, "bad_eval": 1, "bad_fen": 1, "bad_csv": 1}
    assert report.first_errors[0].startswith(f"{src}:5: ")
    rows = read_rows(tmp_path / "out.csv")
    assert [(r["cp"], r["cp_rel"], r["move"]) for r in rows] == [
        ("0.31", "0.31", "e2e4"), ("0.25", "0.25", ""), ("#-2", "#2", "d7d5"), ("-0.40", "0.40", "c7c5")]
    assert {r["type"] for r in rows} == {"KaggleEval"}
    assert rows[0]["board"] == START6


def test_kaggle_csv_header_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("fen,line,depth\n" + f"{START4},e2e4,3\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.csv.*cp or mate"):
        convert_file(bad, tmp_path / "out.csv", progress=False)
    bad.write_text("position,cp\nx,1\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.csv.*fen"):
        convert_file(bad, tmp_path / "out.csv", progress=False)
    # the failed run leaves nothing behind
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "out.csv.tmp").exists()


# --------------------------------------------------------------------------- PGN

PGN = """\
[Event "Rated Blitz game"]
[Site "https://lichess.org/abcd1234"]
[White "alice"]
[Black "bob"]
[Result "1-0"]
[WhiteElo "1500"]
[BlackElo "1600"]
[TimeControl "180+0"]
[Termination "Normal"]

1. e4 { [%eval 0.3] [%clk 0:03:00] } 1... e5 { [%eval 0.25] [%clk 0:02:58] }
2. Qh5 { [%eval -0.5] [%clk 0:02:55] } 2... Nc6 { [%clk 0:02:50] } 3. Bc4 { [%eval -0.45] }
3... Nf6?? { [%eval 5.2] } 4. Qxf7# 1-0

[Event "Casual"]
[White "x"]
[Black "y"]
[Result "*"]

1. d4 { [%eval 0.1] } 1... d5 { [%eval #-3] } 2. c4 *

[Event "Broken"]
[Result "*"]

1. e4 { [%eval 0.3] } 1... e5 { [%eval 0.3] } 2. Ke3 { [%eval 0.2] } *
"""


def test_pgn(tmp_path: Path) -> None:
    src = tmp_path / "games.pgn"
    src.write_text(PGN, encoding="utf-8")
    report = convert_file(src, tmp_path / "out.csv", progress=False)
    # game 1: 7 plies, e4 and Bc4 lack a preceding eval; game 2: 3 plies, d4 unlabelled;
    # game 3: e4 unlabelled, e5 kept, Ke3 illegal
    assert report.rows_written == 5 + 2 + 1
    assert report.skipped == {"unlabelled": 4, "illegal_move": 1}
    assert report.records_read == 13 == report.rows_written + report.total_skipped  # plies, not games
    assert any(e.startswith(f"{src}:22: ") and "Ke3" in e for e in report.first_errors)

    rows = read_rows(tmp_path / "out.csv")
    g1 = rows[:5]
    assert [r["move_ply"] for r in g1] == ["1", "2", "3", "5", "6"]
    assert [r["move"] for r in g1] == ["e7e5", "d1h5", "b8c6", "g8f6", "h5f7"]
    assert [r["cp"] for r in g1] == ["0.30", "0.25", "-0.50", "-0.45", "5.20"]
    assert [r["cp_rel"] for r in g1] == ["-0.30", "0.25", "0.50", "0.45", "5.20"]
    assert [r["cp_loss"] for r in g1] == ["0.00", "0.75", "", "5.65", "0.00"]
    assert [r["is_blunder_cp"] for r in g1] == ["False", "False", "", "True", "False"]
    for r in g1:
        assert (r["game_id"], r["type"], r["result"], r["num_ply"]) == ("abcd1234", "Rated Blitz game", "1-0", "7")
        players = (r["white_player"], r["black_player"], r["white_elo"], r["black_elo"])
        assert players == ("alice", "bob", "1500", "1600")
        assert (r["time_control"], r["termination"]) == ("180+0", "Normal")
        assert (r["white_won"], r["black_won"], r["no_winner"]) == ("True", "False", "False")

    blunder = g1[3]  # 3...Nf6?? allows Qxf7#
    assert blunder["board"] == "r1bqkbnr/pppp1ppp/2n5/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR b KQkq - 3 3"
    assert (blunder["white_active"], blunder["active_won"]) == ("False", "False")
    assert (blunder["active_elo"], blunder["opponent_elo"]) == ("1600", "1500")
    assert blunder["winrate"] == f"{winrate(0.45):.4f}"
    assert blunder["opp_winrate"] == f"{winrate(5.2):.4f}"
    assert blunder["winrate_loss"] == f"{winrate(0.45) - winrate(-5.2):.4f}"
    assert blunder["is_blunder_wr"] == "True"
    mate = g1[4]
    assert (mate["is_capture"], mate["active_won"], mate["white_active"]) == ("True", "True", "True")
    assert g1[0]["is_capture"] == "False"
    # clocks: the mover's and the opponent's time left before the move
    assert (g1[0]["clock"], g1[0]["opp_clock"]) == ("", "180")
    assert (g1[1]["clock"], g1[1]["opp_clock"]) == ("180", "178")

    g2 = rows[5:7]
    assert [(r["move"], r["cp"], r["cp_rel"], r["cp_loss"]) for r in g2] == [
        ("d7d5", "0.10", "-0.10", "0.00"), ("c2c4", "#-3", "#-3", "")]
    assert (g2[0]["game_id"], g2[0]["white_won"], g2[0]["active_won"]) == ("2", "", "")
    assert [(r["move"], r["game_id"]) for r in rows[7:]] == [("e7e5", "3")]


def test_pgn_zst_and_explicit_format(tmp_path: Path) -> None:
    src = tmp_path / "games.pgn.zst"
    src.write_bytes(zstandard.ZstdCompressor().compress(PGN.encode()))
    assert convert_file(src, tmp_path / "a.csv", progress=False).rows_written == 8
    other = tmp_path / "games.txt"
    other.write_text(PGN, encoding="utf-8")
    with pytest.raises(ValueError, match=r"games\.txt"):
        convert_file(other, tmp_path / "b.csv", progress=False)
    report = convert_file(other, tmp_path / "b.csv", fmt="pgn", progress=False)
    assert report.rows_written == 8
    assert read_rows(tmp_path / "a.csv") == read_rows(tmp_path / "b.csv")


# --------------------------------------------------------------------------- errors


def test_missing_input_names_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(FileNotFoundError, match=r"nope\.jsonl"):
        convert_file(missing, tmp_path / "out.csv", progress=False)
    with pytest.raises(ValueError, match="unknown format"):
        convert_file(write_jsonl(tmp_path / "e.jsonl", GOOD_JSONL), tmp_path / "out.csv", fmt="xml")


def test_report_summary() -> None:
    report = ConvertReport(src="in.pgn", dst="out.csv", fmt="pgn", rows_written=5,
                           skipped={"unlabelled": 2})
    assert report.summary() == "in.pgn (pgn): 5 rows written to out.csv, 2 skipped (unlabelled: 2)"


def test_pgn_bad_games_are_counted(tmp_path: Path) -> None:
    src = tmp_path / "odd.pgn"
    src.write_text('[Event "a"]\n[FEN "not a fen"]\n\n1. e4 { [%eval 0.3] } e5 *\n\n'
                   '[Event "b"]\n[Variant "Atomic"]\n\n1. e4 { [%eval 0.3] } e5 { [%eval 0.3] } *\n',
                   encoding="utf-8")
    report = convert_file(src, tmp_path / "out.csv", progress=False)
    assert report.rows_written == 0
    assert report.skipped == {"bad_fen": 2, "unsupported_variant": 2}  # every ply counted
    assert report.records_read == 4
    assert report.first_errors[0].startswith(f"{src}:1: ") and report.first_errors[1].startswith(f"{src}:6: ")


def test_interrupted_run_keeps_the_old_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from knights.data.convert import evals

    src = write_jsonl(tmp_path / "evals.jsonl", GOOD_JSONL)
    dst = tmp_path / "out.csv"
    dst.write_text("previous\n", encoding="utf-8")

    def interrupted(board: object) -> dict[str, str]:
        raise KeyboardInterrupt

    monkeypatch.setattr(evals, "position_columns", interrupted)
    with pytest.raises(KeyboardInterrupt):
        convert_file(src, dst, progress=False)
    assert dst.read_text(encoding="utf-8") == "previous\n"
    assert not (tmp_path / "out.csv.tmp").exists()


# --------------------------------------------------------------------------- outputs that are not files (issue 25)


def test_an_output_that_is_not_a_regular_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A FIFO (or a character device such as /dev/full) used to be replaced by a regular
    file, exit 0; now the conversion is refused before any work, naming the path."""
    import os
    import stat

    from knights import cli

    src = write_jsonl(tmp_path / "g.jsonl", GOOD_JSONL)
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=rf"{fifo}.*not a regular file.*FIFO"):
        convert_file(src, fifo, progress=False)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert cli.main(["data", "convert", str(src), str(fifo), "--quiet"]) == 2
    assert str(fifo) in capsys.readouterr().err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and not Path(f"{fifo}.tmp").exists()
    with pytest.raises(ValueError, match=r"/dev/null.*not a regular file.*character device"):
        convert_file(src, "/dev/null", progress=False)
    tmp_fifo = tmp_path / "out.csv.tmp"      # the temporary name taken by something else
    os.mkfifo(tmp_fifo)
    with pytest.raises(ValueError, match=r"out\.csv\.tmp.*not a regular file"):
        convert_file(src, tmp_path / "out.csv", progress=False)
    assert stat.S_ISFIFO(os.stat(tmp_fifo).st_mode)


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP"])
def test_a_terminated_conversion_leaves_no_tmp_file(tmp_path: Path, signame: str) -> None:
    """SIGTERM or SIGHUP during a conversion used to leave ``DST.tmp`` behind."""
    import signal
    import subprocess
    import sys
    import time

    src = write_jsonl(tmp_path / "g.jsonl", GOOD_JSONL * 50)
    dst = tmp_path / "out.csv"
    code = ("import sys, time\n"
            "from knights.data.convert import evals\n"
            "real = evals.position_columns\n"
            "def slow(board):\n"
            "    time.sleep(0.05)\n"
            "    return real(board)\n"
            "evals.position_columns = slow\n"
            "from knights.cli import main\n"
            f"sys.exit(main(['data', 'convert', {str(src)!r}, {str(dst)!r}, '--quiet']))\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
    tmp = Path(f"{dst}.tmp")
    for _ in range(600):              # until the conversion has started writing (bounded: 60 s)
        if tmp.exists() or proc.poll() is not None:
            break
        time.sleep(0.1)
    assert tmp.exists(), proc.communicate()
    proc.send_signal(getattr(signal, signame))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0, err
    assert not tmp.exists() and not dst.exists(), err


# --------------------------------------------------------------------------- what the command says (issue 51)


def test_the_command_names_the_missing_input_not_the_output(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Before: ``o2.csv: input file not found: nope.csv``; a folder given as the input was "not found"."""
    from knights import cli

    assert cli.main(["data", "convert", str(tmp_path / "nope.csv"), str(tmp_path / "o2.csv"), "--quiet"]) == 2
    assert capsys.readouterr().err == f"knights data convert: error: input file not found: {tmp_path / 'nope.csv'}\n"
    assert cli.main(["data", "convert", str(tmp_path), str(tmp_path / "o2.csv"), "--quiet"]) == 2
    assert capsys.readouterr().err == f"knights data convert: error: input {tmp_path} is a folder: name the file " \
                                      "to convert\n"
    assert list(tmp_path.iterdir()) == []


def test_an_output_folder_that_does_not_exist_is_refused_not_made(tmp_path: Path) -> None:
    """Before: ``data convert k.csv /nonexistent/x.csv`` made every missing folder up to the root."""
    src = write_jsonl(tmp_path / "g.jsonl", GOOD_JSONL)
    missing = tmp_path / "no" / "such"
    with pytest.raises(ValueError, match=rf"cannot write {missing}/x\.csv: the folder {missing} does not exist"):
        convert_file(src, missing / "x.csv", progress=False)
    assert not (tmp_path / "no").exists()
    with pytest.raises(ValueError, match=rf"cannot write {src}/x\.csv: {src} is a file, not a folder"):
        convert_file(src, src / "x.csv", progress=False)
    assert convert_file(src, tmp_path / "x.csv", progress=False).rows_written == 3     # a folder that is there


def test_long_bad_input_is_quoted_by_a_short_prefix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: a 5,000-character bad move (or PGN header) was echoed whole in the report."""
    from knights import cli

    long_move = "e2e4" + "x" * 5000
    src = write_jsonl(tmp_path / "g.jsonl", [record(START4, pv_eval(20, {"cp": 10, "line": long_move}))])
    pgn = tmp_path / "g.pgn"
    pgn.write_text(f'[Event "a"]\n[Variant "{"V" * 5000}"]\n\n1. e4 {{ [%eval 0.3] }} *\n\n'
                   f'[Event "b"]\n[FEN "{"F" * 5000}"]\n\n1. e4 {{ [%eval 0.3] }} *\n', encoding="utf-8")
    said = {}
    for path in (src, pgn):
        assert cli.main(["data", "convert", str(path), str(tmp_path / "out.csv"), "--quiet"]) == 0
        said[path] = capsys.readouterr().out.splitlines()[1:]     # the lines under the summary
        assert len(said[path]) == 2 - (path == src), said[path]
        assert all(len(line) < 250 and str(path) in line and line.endswith(("...", "\u2026"))
                   for line in said[path]), said[path]
    assert "bad UCI move 'e2e4xxx" in said[src][0]
    assert "variant: VVV" in said[pgn][0] and "fen: 'FFF" in said[pgn][1]
