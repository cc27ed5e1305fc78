"""The capture search on top of an evaluator (knights.evaluate.qsearch): its swing equals a
plain minimax over every capture (no pruning, no ordering) by hand and on sample positions,
the evaluator adds it from White's side, the names reach it, and a one-ply bot with it
stops giving away defended pieces that counting material alone takes."""

from __future__ import annotations

from pathlib import Path

import chess
import numpy as np
import pytest

from knights.board.arrays import boards_from_arrays
from knights.board.pieces import capture_gain
from knights.board.positions import positions_from_boards
from knights.data.chunks import read_chunk
from knights.engine.one_ply import OnePlyEngine
from knights.evaluate.base import MaterialEvaluator
from knights.evaluate.load import load_evaluator
from knights.evaluate.names import canonical_evaluator_name
from knights.evaluate.qsearch import MAX_PLIES, CaptureSearchEvaluator, swing, swing_term

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample"


def minimax_swing(board: chess.Board, plies: int = MAX_PLIES) -> float:
    """The reference: every legal capture and queen promotion tried, best kept, standing pat allowed."""
    if plies == 0:
        return 0.0
    best = 0.0
    for move in list(board.legal_moves):
        if not (board.is_capture(move) or move.promotion == chess.QUEEN) or move.promotion not in (None, chess.QUEEN):
            continue
        gain = capture_gain(board, move)
        board.push(move)
        best = max(best, gain - minimax_swing(board, plies - 1))
        board.pop()
    return best


@pytest.mark.parametrize("fen, expected", [
    ("4k3/8/8/3q4/8/8/8/3QK3 w - - 0 1", 9.0),          # an undefended queen
    ("4k3/8/2p5/3n4/8/8/8/3RK3 w - - 0 1", 0.0),        # Rxd5 cxd5 loses two: stand pat
    ("4k3/8/2p5/3n4/8/1B6/8/3RK3 w - - 0 1", 1.0),      # Bxd5 cxd5 Rxd5: two attackers, one defender
    ("4k3/8/8/3n4/4P3/8/8/4K3 w - - 0 1", 3.0),         # a pawn takes a hanging knight
    ("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", 8.0),           # b8=Q counts as winning eight
    ("1r2k3/P7/8/8/8/8/8/4K3 w - - 0 1", 13.0),         # axb8=Q takes a rook and promotes
    ("4k3/8/8/8/8/8/8/4K3 w - - 0 1", 0.0),             # nothing to take
    ("3qk3/8/8/8/3Q4/8/8/4K3 b - - 0 1", 9.0),          # Black to move: ...Qxd4
])
def test_swing_by_hand(fen: str, expected: float) -> None:
    board = chess.Board(fen)
    assert swing(board) == expected
    assert swing(board) == minimax_swing(board)
    assert board.fen() == chess.Board(fen).fen()        # the board is left as it was


def test_swing_equals_minimax_on_sample_positions() -> None:
    data, _ = read_chunk(SAMPLE / "Sample_a")
    rows = np.arange(0, len(data), 7)[:300]
    boards = boards_from_arrays(data.squares[rows], data.white[rows].astype(bool))
    values = [swing(b, plies=4) for b in boards]          # the reference tries everything: keep it short
    assert values == [minimax_swing(b, 4) for b in boards]
    assert sum(v > 0 for v in values) > 20                 # the sample has captures worth something


def test_evaluator_adds_the_swing_from_whites_side() -> None:
    boards = [chess.Board("4k3/8/8/3q4/4P3/8/8/4K3 w - - 0 1"),    # White takes the queen: +9
              chess.Board("4k3/8/4p3/3Q4/8/8/8/4K3 b - - 0 1")]    # Black takes the queen: -9 more
    positions = positions_from_boards(boards)
    base = MaterialEvaluator().evaluate(positions)
    values = CaptureSearchEvaluator(MaterialEvaluator()).evaluate(positions)
    assert swing_term(positions).tolist() == [9.0, -9.0]
    assert values.tolist() == (base + np.array([9.0, -9.0])).tolist()
    assert values.dtype == np.float32


def test_names_reach_the_capture_search() -> None:
    assert canonical_evaluator_name("Material+QSEARCH") == "material+qsearch"
    assert canonical_evaluator_name("el/8+qsearch") == "EL/v8+qsearch"
    ev = load_evaluator("material+qsearch")
    assert isinstance(ev, CaptureSearchEvaluator) and ev.name == "material+qsearch"


def test_one_ply_bot_stops_taking_defended_pieces() -> None:
    # Rxd5?? cxd5 loses the exchange: counting material alone takes the knight
    board = chess.Board("4k3/8/2p5/3n4/8/8/8/3RK3 w - - 0 1")
    greedy = OnePlyEngine(MaterialEvaluator(), stochastic=False).choose(board).move
    careful = OnePlyEngine(load_evaluator("material+qsearch"), stochastic=False).choose(board).move
    assert greedy == chess.Move.from_uci("d1d5")
    assert careful != chess.Move.from_uci("d1d5")
