"""The static capture-threat term and the evaluator that adds it."""

from __future__ import annotations

import chess
import numpy as np
import pytest

from knights.play.engine import OnePlyEngine
from knights.evaluate.base import MaterialEvaluator
from knights.evaluate.names import load_evaluator
from knights.board.positions import positions_from_boards
from knights.evaluate.threats import ThreatAwareEvaluator, capture_threat


@pytest.mark.parametrize("fen, expected", [
    ("4k3/8/8/3q4/8/8/8/3QK3 w - - 0 1", 9.0),        # queen takes an undefended queen
    ("4k3/8/2p5/3n4/8/8/8/3RK3 w - - 0 1", 0.0),      # rook takes a knight defended by a pawn: loses 2
    ("4k3/8/8/3n4/4P3/8/8/4K3 w - - 0 1", 3.0),       # pawn takes a knight (defended or not: +2 or +3)
    ("4k3/8/2p5/3n4/4P3/8/8/4K3 w - - 0 1", 2.0),     # pawn takes a defended knight: 3 - 1
    ("4k3/8/8/8/8/8/8/4K3 w - - 0 1", 0.0),           # nothing to take
    ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", 1.0),       # en passant
])
def test_capture_threat_values(fen, expected):
    assert capture_threat(chess.Board(fen)) == expected


def test_threat_term_has_the_side_to_moves_sign():
    white_to_move = chess.Board("4k3/8/8/3q4/8/8/8/3QK3 w - - 0 1")   # Qxd5 wins a queen
    black_to_move = chess.Board("3qk3/8/8/8/3Q4/8/8/4K3 b - - 0 1")   # the mirror: ...Qxd4
    ev = ThreatAwareEvaluator(MaterialEvaluator())
    base = MaterialEvaluator().evaluate_boards([white_to_move, black_to_move])
    out = ev.evaluate(positions_from_boards([white_to_move, black_to_move]))
    np.testing.assert_allclose(out - base, [9.0, -9.0])
    assert ev.name == "material+threats"


def test_bot_no_longer_leaves_its_queen_hanging():
    # White's queen on d4 is attacked by the pawn on e5: after White's move nothing
    # worth more than a minor piece may be left to be taken
    board = chess.Board("rnb1kb1r/pppp1ppp/5n2/4p3/3Q4/8/PPP1PPPP/RNB1KBNR w KQkq - 0 4")
    aware = OnePlyEngine(load_evaluator("material+threats"), stochastic=False)
    board.push(aware.choose(board).move)
    assert capture_threat(board) <= 3.0


def test_names_round_trip_through_the_loader():
    ev = load_evaluator("EL/v8+threats")
    assert ev.name == "EL/v8+threats"
    assert np.isfinite(ev.evaluate_boards([chess.Board()])).all()


def test_fallback_is_a_plain_network_never_a_variant(monkeypatch):
    import knights.evaluate.names as ev
    from knights.evaluate.names import select_evaluator

    names = ["material", "EL/v3", "democracy", "material+threats", "EL/v3+threats"]
    assert ev.trained_networks(names) == ["EL/v3"]
    monkeypatch.setattr(ev, "available_evaluators", lambda: ["material", "EL/v3", "material+threats", "EL/v3+threats"])
    notes: list[str] = []
    assert select_evaluator(None, notice=notes.append).name == "EL/v3"
    assert "'EL/v3'" in notes[0]
    # the UCI front end advertises the evaluator the engine will really play
    from knights.play.uci import UciSession

    lines: list[str] = []
    UciSession(lines.append).handle("uci")
    assert "option name Evaluator type combo default EL/v3 " in next(x for x in lines if "Evaluator" in x) + " "
