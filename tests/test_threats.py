"""The static capture-threat term and the evaluator that adds it: the vectorised term
equals its python-chess reference (tests/threat_oracle.py) by hand and on every
sample position and the children of some."""

from __future__ import annotations

from pathlib import Path

import chess
import numpy as np
import pytest
from threat_oracle import capture_threat

from knights.board.arrays import boards_from_arrays
from knights.board.children import expand
from knights.board.positions import Positions, positions_from_boards
from knights.data.chunks import Encoded, read_chunk
from knights.engine.one_ply import OnePlyEngine
from knights.evaluate.base import MaterialEvaluator
from knights.evaluate.load import load_evaluator
from knights.evaluate.threats import ThreatAwareEvaluator, threat_term

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample"


@pytest.mark.parametrize("fen, expected", [
    ("4k3/8/8/3q4/8/8/8/3QK3 w - - 0 1", 9.0),         # queen takes an undefended queen
    ("4k3/8/2p5/3n4/8/8/8/3RK3 w - - 0 1", 0.0),       # rook takes a knight defended by a pawn: loses 2
    ("4k3/8/8/3n4/4P3/8/8/4K3 w - - 0 1", 3.0),        # pawn takes a knight (defended or not: +2 or +3)
    ("4k3/8/2p5/3n4/4P3/8/8/4K3 w - - 0 1", 2.0),      # pawn takes a defended knight: 3 - 1
    ("4k3/8/8/8/8/8/8/4K3 w - - 0 1", 0.0),            # nothing to take
    ("3qk3/8/8/8/3Q4/8/8/4K3 b - - 0 1", 9.0),         # Black to move: ...Qxd4
    ("k7/4r3/8/8/q3R3/8/8/4K3 w - - 0 1", 5.0),        # the pinned rook may take its pinner, not the queen
    ("4k3/8/8/8/8/5b2/4P3/3K4 w - - 0 1", 3.0),        # a pawn pinned on a diagonal takes its pinner
    ("4k3/4r3/8/8/8/3b4/4P3/4K3 w - - 0 1", 0.0),      # a pawn pinned on a file takes nothing
    ("4k3/8/8/3q4/4P3/3n4/4P3/4K3 w - - 0 1", 2.0),    # in check: exd3 (defended), not exd5
    ("4r2k/8/b7/8/8/3n4/Q7/4K3 w - - 0 1", 0.0),       # double check: Qxa6 is illegal
    ("4k3/8/8/8/8/1n6/3p4/4K3 w - - 0 1", 0.0),        # the king may not take a defended pawn
    ("4k3/8/4r3/8/8/4K3/4p3/8 w - - 0 1", 0.0),        # ... nor one the checking rook sees through it
    ("4k3/7p/6P1/8/8/3q4/8/4K3 w - - 0 1", 0.0),       # gxh7 Qxh7: the queen retakes through g6
])
def test_threat_by_hand(fen, expected):
    board = chess.Board(fen)
    assert capture_threat(board) == expected
    sign = 1 if board.turn else -1
    assert threat_term(positions_from_boards([board])).tolist() == [sign * expected]
    assert threat_term(positions_from_boards([board.mirror()])).tolist() == [-sign * expected]


def test_reference_sees_en_passant_the_term_does_not():
    board = chess.Board("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1")
    assert capture_threat(board) == 1.0
    assert threat_term(positions_from_boards([board])).tolist() == [0.0]   # positions carry no ep square


def test_term_equals_the_reference_on_the_sample_and_its_children():
    """Every position of data/sample (no en-passant square, like the engine's
    children) and the children of every 25th, in one batch each."""
    data = Encoded.concat([read_chunk(path)[0] for path in sorted(SAMPLE.glob("Sample_*"))])
    parents = boards_from_arrays(data.squares, data.white, data.castling)
    kids = [(board, expand(board)) for board in parents[::25] if board.is_valid() and not board.is_game_over()]
    squares = np.concatenate([c.squares for _, c in kids])
    white = np.concatenate([np.full(len(c), not board.turn, np.int8) for board, c in kids])
    for batch in (data, Positions(squares, white, np.zeros_like(white), np.zeros_like(white))):
        boards = boards_from_arrays(batch.squares, batch.white)
        expected = [capture_threat(b) * (1 if b.turn else -1) for b in boards]
        np.testing.assert_array_equal(threat_term(batch), expected)
    assert len(data) > 30_000 and len(squares) > 30_000


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
    from knights.evaluate.load import select_evaluator

    names = ["material", "EL/v3", "democracy", "material+threats", "EL/v3+threats"]
    assert ev.trained_networks(names) == ["EL/v3"]
    monkeypatch.setattr(ev, "available_evaluators", lambda: ["material", "EL/v3", "material+threats", "EL/v3+threats"])
    notes: list[str] = []
    assert select_evaluator(None, notice=notes.append).name == "EL/v3"
    assert "'EL/v3'" in notes[0]
    # the UCI front end advertises the evaluator the engine will really play
    from knights.frontends.uci import UciSession

    lines: list[str] = []
    UciSession(lines.append).handle("uci")
    assert "option name Evaluator type combo default EL/v3 " in next(x for x in lines if "Evaluator" in x) + " "
