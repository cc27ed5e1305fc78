"""The independent test sets: built with real Stockfish, de-duplicated, read tolerantly,
and tabled by |eval| bucket (knights.data.independent, knights.lab.arena.testsets,
knights.lab.results.tables, knights.lab.results.independent)."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import chess
import numpy as np
import pytest

from knights.data import csslab, independent
from knights.data.chunks import read_chunk
from knights.data.generate import rel_text
from knights.data.independent import Assembler, EndgameSource, TrainingKeys, label, position_key, random_placement
from knights.data.stockfish import Stockfish
from knights.lab.arena.testsets import BOOK, GamesSource, build
from knights.lab.results.independent import load_set, set_table
from knights.lab.results.tables import BUCKETS, MATES, bucket_metrics, letter_table


def test_position_key_ignores_move_counters_and_an_en_passant_square_no_pawn_can_use():
    a = chess.Board("4k3/8/8/8/4P3/8/8/4K3 b - e3 0 1")      # e3 written, but no black pawn can take
    b = chess.Board("4k3/8/8/8/4P3/8/8/4K3 b - - 7 40")
    assert position_key(a) == position_key(b) == "4k3/8/8/8/4P3/8/8/4K3 b - -"
    c = chess.Board("4k3/8/8/8/3pP3/8/8/4K3 b - e3 0 1")     # ...dxe3 is legal: the square counts
    assert position_key(c).endswith(" e3")


def test_every_book_line_is_legal_and_endgame_placements_are_playable():
    for opening in BOOK:
        assert len(opening.board().move_stack) == len(opening.moves)
    rng = random.Random(5)
    for config, _ in independent.ENDGAMES:
        board = random_placement(config, rng)
        assert board.is_valid() and not board.is_game_over()
        strong, weak = independent.parse_material(config)
        assert sorted(p.piece_type for p in board.piece_map().values()) == sorted(strong + weak)


def test_start_keys_hold_the_positions_near_the_start():
    keys = independent.start_keys(2)
    board = chess.Board()
    board.push_san("Nf3")
    board.push_san("d5")
    assert position_key(board) in keys and position_key(chess.Board()) in keys
    board.push_san("g3")
    assert position_key(board) not in keys
    assert len(keys) == 1 + 20 + 400


def _row(set_name: str, fen: str) -> dict[str, str]:
    return {"type": f"independent:{set_name}", "board": fen, "cp": "0.10"}


def test_assembler_drops_training_positions_near_start_and_repeats_and_counts_each():
    train_fen = "8/8/3k4/8/8/3K4/3R4/8 w - - 0 1"
    training = TrainingKeys(keys={"train.csv": {position_key(chess.Board(train_fen))}}, rows={"train.csv": 1},
                            unreadable={"train.csv": 0})
    after_e4 = chess.Board()
    after_e4.push_san("e4")
    start = independent.start_keys(1)
    earlier = {"games": {position_key(chess.Board("8/8/3k4/8/8/3K4/3Q4/8 b - - 0 1"))}}
    asm = Assembler({"endgames": 3}, training, start, earlier)
    kept = asm.add([
        _row("endgames", "8/8/3k4/8/8/3K4/3R4/8 w - - 12 60"),   # the training position, other counters
        _row("endgames", after_e4.fen()),                        # one ply from the start
        _row("endgames", "8/8/3k4/8/8/3K4/3Q4/8 b - - 0 1"),     # in an earlier set
        _row("endgames", "8/8/3k4/8/8/3K4/3B4/8 w - - 0 1"),     # new
        _row("endgames", "8/8/3k4/8/8/3K4/3B4/8 w - - 5 9"),     # the same again
        _row("endgames", "8/8/3k4/8/8/3K4/3N4/8 b - - 0 1"),     # new
        _row("endgames", "8/8/3k4/8/8/3K4/4N3/8 b - - 0 1"),     # new: the target is reached
        _row("endgames", "8/8/3k4/8/8/3K4/5N2/8 b - - 0 1"),     # beyond the target
    ])
    tally = asm.tally["endgames"]
    assert kept == 3 and asm.done()
    assert [r["board"] for r in tally.rows] == ["8/8/3k4/8/8/3K4/3B4/8 w - - 0 1", "8/8/3k4/8/8/3K4/3N4/8 b - - 0 1",
                                                "8/8/3k4/8/8/3K4/4N3/8 b - - 0 1"]
    assert tally.dropped == {"in training data train.csv": 1, "within 4 plies of the start": 1,
                             "in independent set games": 1, "repeated in this set": 1}
    assert tally.candidates == 7 and tally.beyond_target == 1


@pytest.mark.stockfish
def test_a_tiny_build_with_real_stockfish_labels_dedups_and_resumes(tmp_path: Path, stockfish: str):
    # A training file holding the first endgame candidate (other move counters): it must be dropped.
    first = EndgameSource(seed=3, per_part=6).candidates(0)[0].board
    train = tmp_path / "train.csv"
    with open(train, "w", newline="") as fh:
        csslab.RowWriter(fh).write({"board": first.fen().replace(" 0 1", " 3 30"), "cp": "0.00"})
    kwargs = dict(depth=4, seed=3, work_dir=tmp_path / "work", training_sources=(str(train),),
                  stockfish_path=stockfish, progress=False, games_per_part=1, endgames_per_part=6, start_plies=2)
    written = build(["games", "tactics", "endgames"], 4, out_dir=tmp_path / "out", **kwargs)
    assert sorted(p.name for p in written) == sorted(f"{s}.{e}" for s in ("games", "tactics", "endgames")
                                                     for e in ("csv", "json"))
    for name in ("games", "tactics", "endgames"):
        data, report = read_chunk(tmp_path / "out" / f"{name}.csv")
        side = json.loads((tmp_path / "out" / f"{name}.json").read_text())
        assert len(data) == side["rows"] == 4 and report.total_skipped == 0
        assert side["label"]["depth"] == 4 and side["label"]["engine"].startswith("Stockfish")
        assert side["recipe"]["seed"] == 3
        assert np.all(np.abs(data.target) <= csslab.MATE_PAWNS)
    end = json.loads((tmp_path / "out" / "endgames.json").read_text())
    assert end["dropped"] == {f"in training data {train}": 1}
    fens = list(independent.fens_of(tmp_path / "out" / "endgames.csv"))
    assert position_key(first) not in {position_key(chess.Board(f)) for f in fens}
    with open(tmp_path / "out" / "games.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert all(int(r["move_ply"]) >= GamesSource().min_ply for r in rows)
    with Stockfish(stockfish) as sf:   # every label is Stockfish's at depth 4, cp from White's side
        for r in rows:
            board = chess.Board(r["board"])
            expect = rel_text(label(sf, board, 4))
            assert r["cp_rel"] == expect
            assert r["cp"] == (expect if board.turn == chess.WHITE else csslab.negate_eval(expect))
    with open(tmp_path / "out" / "tactics.csv", newline="") as fh:
        for r in csv.DictReader(fh):   # the move played there captures or checks
            board = chess.Board(r["board"])
            assert board.is_capture(chess.Move.from_uci(r["move"])) or board.gives_check(chess.Move.from_uci(r["move"]))
    # A rerun reuses every labelled part and writes the same files; fresh parts give the same labels.
    again = build(["games", "tactics", "endgames"], 4, out_dir=tmp_path / "again", **kwargs)
    assert [p.read_bytes() for p in again if p.suffix == ".csv"] == \
        [p.read_bytes() for p in written if p.suffix == ".csv"]
    fresh = build(["endgames"], 4, out_dir=tmp_path / "fresh", **{**kwargs, "work_dir": tmp_path / "work2"})
    assert fresh[0].read_bytes() == (tmp_path / "out" / "endgames.csv").read_bytes()


def test_buckets_sum_to_the_rows_and_mates_stand_apart():
    target = np.array([0.0, -0.5, 1.0, -2.9, 3.0, 5.5, -6.0, 9.0, 10.0, -10.0], dtype=np.float32)
    pred = np.zeros_like(target)
    table = bucket_metrics(pred, target)
    assert [b["bucket"] for b in table] == [b[0] for b in BUCKETS] + [MATES]
    assert [b["bucket"] for b in table] == ["< 1", "1-3", "3-6", ">= 6", "mate"]
    assert [b["rows"] for b in table] == [2, 2, 2, 2, 2]
    assert sum(b["rows"] for b in table) == len(target)
    assert [b["mae"] for b in table] == pytest.approx([0.25, 1.95, 4.25, 7.5, 10.0])


def _small_set(folder: Path, rows: int = 12) -> Path:
    rng = random.Random(1)
    path = folder / "endgames.csv"
    with open(path, "w", newline="") as fh:
        w = csslab.RowWriter(fh)
        for i in range(rows):
            board = random_placement("KRPvKR", rng)
            w.write({"board": board.fen(), "cp": f"{(i % 7) - 3:.2f}" if i != 5 else "#3"})
    return path


def test_a_malformed_row_is_skipped_counted_and_named(tmp_path: Path):
    path = _small_set(tmp_path)
    lines = path.read_text().splitlines()
    cells = lines[3].split(",")
    cells[csslab.COLUMNS.index("cp")] = "abc"                          # data line 3 is file line 4
    lines[3] = ",".join(cells)
    lines[6] = lines[6] + ",extra"                                     # a column too many (file line 7)
    path.write_text("\n".join(lines) + "\n")
    said: list[str] = []
    data, report = load_set(path, said.append)
    assert len(data) == 10 and report.total_skipped == 2
    assert report.skipped == {"bad cp": 1, "wrong column count": 1}
    assert said[0].startswith(f"{path}: 10 rows kept, 2 malformed rows skipped")
    assert f"  {path}:4: bad cp" in said and f"  {path}:7: wrong column count" in said
    table = set_table(path, [], None, with_stockfish=False, progress=False)
    assert table["rows"] == 10 and table["skipped"]["total"] == 2
    material = table["evaluation"][0]
    assert material["name"] == "material" and sum(b["rows"] for b in material["buckets"]) == 10


@pytest.mark.stockfish
def test_set_table_puts_stockfish_depth1_beside_material_on_the_same_rows(tmp_path: Path, stockfish: str):
    path = _small_set(tmp_path, rows=8)
    table = set_table(path, [], None, with_stockfish=True, progress=False)
    names = [r["name"] for r in table["evaluation"]]
    assert names == ["material", "stockfish depth 1", "stockfish depth 1, hash kept"]
    assert all(r["rows"] == 8 and sum(b["rows"] for b in r["buckets"]) == 8 for r in table["evaluation"])
    assert [b["rows"] for b in table["evaluation"][0]["buckets"]][-1] == 1    # the one "#3" row


def test_stockfish_depth1_sees_each_position_alone(stockfish: str):
    # the headline's depth 1 clears the hash before every position, so its value of a position does not depend on
    # the rows searched before it (the same positions of one game, in either order, get the same values)
    from knights.lab.results.tables import stockfish_values

    board = chess.Board()
    boards = []
    line = ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "d2d3", "f8c5",
            "c2c3", "d7d6", "e1g1", "e8g8", "b1d2", "a7a6"]
    for uci in line:
        board.push_uci(uci)
        boards.append(board.copy())
    forward = stockfish_values(boards, 1, clear_hash=True, progress=False)
    backward = stockfish_values(boards[::-1], 1, clear_hash=True, progress=False)
    assert list(forward) == list(backward[::-1])


def test_the_headline_depth1_row_is_the_one_that_clears_the_hash(tmp_path: Path, stockfish: str):
    from knights.data.chunks import read_chunk
    from knights.lab.results.tables import stockfish_depth1

    path = tmp_path / "one_game.csv"         # one game's positions: with the hash kept, order changes the values
    board = chess.Board()
    with open(path, "w", newline="") as fh:
        w = csslab.RowWriter(fh)
        for uci in ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "d2d3", "f8c5", "c2c3", "d7d6", "e1g1", "e8g8"]:
            board.push_uci(uci)
            w.write({"board": board.fen(), "cp": "0.00"})
    data = read_chunk(path)[0]
    reverse = np.arange(len(data))[::-1]
    backward = stockfish_depth1(data.take(reverse), progress=False)
    assert list(stockfish_depth1(data, progress=False)) == list(backward[::-1])


def test_letter_table_reads_back_the_earlier_figures_when_the_data_is_not_here(tmp_path: Path):
    earlier = tmp_path / "networks.json"
    earlier.write_text(json.dumps({"data": {"folder": "data/full", "test_letters": "j", "rows": 3},
                                   "evaluation": [], "move_networks": []}))
    table = letter_table(tmp_path / "no-such-folder", "j", earlier=earlier)
    assert table is not None and table["measured"] == "earlier" and table["data"]["rows"] == 3
    assert letter_table(tmp_path / "no-such-folder", "j", earlier=tmp_path / "none.json") is None


def test_a_rerun_keeps_the_earlier_rows_of_versions_whose_weights_are_not_here(tmp_path: Path):
    # a fresh clone has no archived version's weights: rerunning the tables must not drop the rows measured
    # when they were here, and must say which rows were carried over
    from knights.lab.results.independent import independent_markdown, with_earlier_rows
    from knights.lab.results.tables import archived_here
    from knights.learn import registry

    path = _small_set(tmp_path, rows=8)
    now = set_table(path, [], None, with_stockfish=False, progress=False)
    then = json.loads(json.dumps(now))
    archived = {**then["evaluation"][0], "name": "EL/v2", "mae": 7.5}
    then["evaluation"].insert(1, archived)                                  # right after material
    then["evaluation"].append({**then["evaluation"][0], "name": "EL/v99", "mae": 0.1})   # not archived: dropped
    earlier = tmp_path / "independent.json"
    earlier.write_text(json.dumps({"sets": [then]}))

    [kept] = with_earlier_rows([json.loads(json.dumps(now))], earlier, absent={"EL/v2"})
    assert [(r["name"], r.get("measured")) for r in kept["evaluation"]] == [("material", None), ("EL/v2", "earlier")]
    assert kept["evaluation"][1]["mae"] == 7.5
    assert "| EL/v2 (measured earlier) |" in independent_markdown(kept)

    other = {**then, "rows": then["rows"] + 1}                              # another set's positions: nothing carried
    earlier.write_text(json.dumps({"sets": [other]}))
    [fresh] = with_earlier_rows([json.loads(json.dumps(now))], earlier, absent={"EL/v2"})
    assert [r["name"] for r in fresh["evaluation"]] == ["material"]
    # only archived versions are carried: a shipped version's weights are in git, and a missing one is an error
    assert all(not registry.entry(name).in_git and not registry.get(name).is_trained() for name in archived_here())
