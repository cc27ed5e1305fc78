"""An evaluator searched one ply (knights.lab.results.depth_one) and where the results tables put it."""

from __future__ import annotations

from pathlib import Path

import chess
import numpy as np
import pytest

from knights.board.positions import positions_from_boards
from knights.data.chunks import Encoded, read_chunk
from knights.data.csslab import MATE_PAWNS
from knights.engine.judged import QuiescenceEvaluator
from knights.evaluate.base import MaterialEvaluator
from knights.lab.results.depth_one import DepthOneEvaluator

FENS = [
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "r1bq1rk1/3nnpb1/p3p1p1/1pp1P2p/5B1P/PPNB1N2/2P2PP1/R2Q1RK1 w - - 0 1",
    "2b2rk1/r1qnnpb1/p3p1p1/1pp1P2p/P3BB1P/1PN2N2/2P2PP1/R2QR1K1 b - - 0 1",
    "8/5k2/8/3P4/8/8/5K2/8 b - - 0 1",
]


def best_child(inner: QuiescenceEvaluator, board: chess.Board) -> float:
    """The inner evaluator's value of the mover's best child, built move by move with python-chess."""
    values = []
    for move in board.legal_moves:
        child = board.copy(stack=False)
        child.push(move)
        values.append(float(inner.evaluate_boards([child])[0]))
    return max(values) if board.turn == chess.WHITE else min(values)


def test_the_value_is_the_inner_evaluators_value_of_the_best_child(tmp_path: Path) -> None:
    inner = QuiescenceEvaluator("EL/v25", mate_pawns=MATE_PAWNS)
    searched = DepthOneEvaluator(inner)
    boards = [chess.Board(f) for f in FENS]
    got = searched.evaluate_boards(boards)
    want = [best_child(inner, b) for b in boards]
    assert np.allclose(got, want, atol=1e-4), (got, want)
    # a data set's rows (their castling rights kept) give the same values as the boards
    path = tmp_path / "rows.csv"
    path.write_text("board,cp\n" + "".join(f"{f},0.00\n" for f in FENS))
    rows, report = read_chunk(path)
    assert report.total_skipped == 0 and int(rows.castling[0]) == 15
    assert np.allclose(searched.evaluate(rows), got, atol=1e-4)
    # and it is not the inner evaluator's value of the position itself: it looked one move further
    assert not np.allclose(got, inner.evaluate_boards(boards), atol=1e-3)
    assert searched.name == "EL/v25+quiesce depth 1"


def test_finished_games_and_mates_read_as_the_labels_read_them() -> None:
    searched = DepthOneEvaluator(MaterialEvaluator())
    stalemate = chess.Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")
    white_mated = chess.Board("8/8/8/8/8/5k2/6q1/7K w - - 0 1")
    mate_in_one_for_black = chess.Board("r5k1/8/8/8/8/8/5PPP/7K b - - 0 1")   # Ra1 mates
    values = searched.evaluate_boards([stalemate, white_mated, mate_in_one_for_black])
    assert values.tolist() == [0.0, -MATE_PAWNS, -MATE_PAWNS]
    assert DepthOneEvaluator(MaterialEvaluator(), mate_pawns=7.0).evaluate_boards([white_mated]).tolist() == [-7.0]


def test_a_rows_en_passant_square_is_searched() -> None:
    """exd6 en passant wins a pawn only where the row says d5 was just played."""
    searched = DepthOneEvaluator(MaterialEvaluator())
    board = chess.Board("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1")
    assert searched.evaluate_boards([board]).tolist() == [1.0]
    p = positions_from_boards([board])

    def row(ep: int) -> Encoded:
        return Encoded(squares=p.squares, white=p.white, check=p.check, capture=p.capture,
                       target=np.zeros(1, np.float32), move=np.full(1, -1, np.int16), castling=np.zeros(1, np.int8),
                       ep=np.array([ep], np.int8))

    assert searched.evaluate(row(chess.D6)).tolist() == [1.0]
    assert searched.evaluate(row(-1)).tolist() == [0.0]


def test_a_searched_row_is_measured_but_neither_best_nor_asked_for_a_one_ply_choice(tmp_path: Path) -> None:
    from knights.lab.results import independent as ir

    path = tmp_path / "games.csv"           # the move-quality set's name
    searched = DepthOneEvaluator(MaterialEvaluator())
    labels = searched.evaluate_boards([chess.Board(f) for f in FENS])     # labels the searched row gets exactly right
    rows = ["board,cp"] + [f"{f},{v:.2f}" for f, v in zip(FENS, labels, strict=True)]
    path.write_text("\n".join(rows) + "\n")
    asked: list[list[str]] = []

    def quality(data, measured):            # what knights results passes is Stockfish's; here, who is asked
        asked.append([ev.name for _, ev in measured])
        return {"positions": 0, "depth": 10, "rows": []}

    table = ir.set_table(path, [("network", MaterialEvaluator()), (ir.SEARCH, searched)], None,
                         with_stockfish=False, progress=False, move_quality=quality)
    names = {r["name"]: r for r in table["evaluation"]}
    assert names["material depth 1"]["kind"] == ir.SEARCH and names["material depth 1"]["rows"] == len(FENS)
    assert asked == [["material"]]
    assert names["material depth 1"]["mae"] == 0.0 < names["material"]["mae"]     # it would be the best
    assert table["best"]["name"] == "material"


@pytest.mark.stockfish
def test_every_measured_row_is_paired_with_stockfish_on_the_same_rows(tmp_path: Path, stockfish: str) -> None:
    from knights.lab.results import independent as ir

    path = tmp_path / "tactics.csv"
    path.write_text("board,cp\n" + "".join(f"{f},{v:.2f}\n" for f, v in zip(FENS, (0.3, -0.2, 0.5, 0.0), strict=True)))
    table = ir.set_table(path, [("network", DepthOneEvaluator(MaterialEvaluator()))], None, with_stockfish=True,
                         progress=False)
    rows = {r["name"]: r for r in table["evaluation"]}
    paired = rows["material depth 1"]["quiet_level_vs_stockfish"]
    ours, theirs = rows["material depth 1"], rows[ir.STOCKFISH_DEPTH1]
    assert paired["rows"] == ours["quiet_level_rows"] == theirs["quiet_level_rows"] >= 2
    assert paired["difference"] == pytest.approx(ours["quiet_level_mae"] - theirs["quiet_level_mae"])
    assert paired["standard_error"] >= 0.0
