"""Attack maps and capture gains, checked square by square against python-chess;
the legal gains against their python-chess reference (tests/threat_oracle.py); the
colour mirror of encoded positions; the inputs built from them."""

from __future__ import annotations

import chess
import numpy as np
import pytest
from test_board import random_positions
from threat_oracle import capture_threat

from knights.board.arrays import boards_from_arrays, material_balance, parse_fens, squares_from_board
from knights.board.pieces import PAWNS
from knights.data.chunks import Encoded
from knights.features.attacks import KING_AS_ATTACKER, attack_maps, capture_gains, legal_capture_gains
from knights.features.inputs import InputSpec

VALUE = {**dict(enumerate(PAWNS)), chess.KING: KING_AS_ATTACKER}
OUR_TO_CHESS = [(7 - i // 8) * 8 + i % 8 for i in range(64)]


def encoded(boards: list[chess.Board]) -> Encoded:
    n = len(boards)
    return Encoded(squares=np.stack([squares_from_board(b) for b in boards]),
                   white=np.array([b.turn for b in boards], np.int8),
                   check=np.array([b.is_check() for b in boards], np.int8),
                   capture=np.zeros(n, np.int8), target=np.linspace(-3, 3, n).astype(np.float32),
                   move=np.array([m.from_square * 64 + m.to_square if m else -1
                                  for m in (next(iter(b.legal_moves), None) for b in boards)], np.int16),
                   castling=np.array([(b.has_kingside_castling_rights(chess.WHITE) * 1
                                       | b.has_queenside_castling_rights(chess.WHITE) * 2
                                       | b.has_kingside_castling_rights(chess.BLACK) * 4
                                       | b.has_queenside_castling_rights(chess.BLACK) * 8) for b in boards], np.int8),
                   ep=np.array([b.ep_square if b.ep_square is not None else -1 for b in boards], np.int8))


@pytest.fixture(scope="module")
def boards():
    return random_positions(400, seed=77)


def test_attack_maps_agree_with_python_chess(boards):
    sq = np.stack([squares_from_board(b) for b in boards])
    counts, cheapest = attack_maps(sq)
    assert counts.shape == cheapest.shape == (len(boards), 2, 64) and counts.dtype == np.int8
    for i, b in enumerate(boards):
        for ours, theirs in enumerate(OUR_TO_CHESS):
            for side, colour in ((0, chess.WHITE), (1, chess.BLACK)):
                attackers = b.attackers(colour, theirs)
                assert counts[i, side, ours] == len(attackers), (b.fen(), chess.square_name(theirs))
                expected = min((VALUE[b.piece_type_at(a)] for a in attackers), default=0)
                assert cheapest[i, side, ours] == expected, (b.fen(), chess.square_name(theirs))
    assert counts.max() >= 3          # batteries and crowded squares occur in the sample


@pytest.mark.parametrize("fen, gains", [
    ("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1", [1, 1]),        # two pawns attack each other, both undefended
    ("4k3/2p5/3r4/8/8/3Q4/8/4K3 w - - 0 1", [0, 9]),      # Qxd6 loses the queen to c7 (5 - 9 < 0); Rxd3 wins it
    ("4k3/8/3r4/8/8/3Q4/8/4K3 b - - 0 1", [5, 9]),         # both hang: each side may take
    ("4k3/8/8/8/8/8/3q4/3QK3 w - - 0 1", [9, 0]),          # d2 hangs; d1 is defended by the king (9 - 9)
    ("8/8/8/8/8/2k5/3q4/3QK3 w - - 0 1", [0, 0]),          # d2 defended too: Qxd2 only trades, Kxd2 loses
])
def test_capture_gains_by_hand(fen, gains):
    sq, _, ok = parse_fens([fen])
    assert ok.all()
    assert capture_gains(sq)[0].tolist() == gains


def test_legal_gains_are_the_reference(boards):
    """Exactly the python-chess reference, wherever it cannot take en passant (the
    arrays carry no en-passant square)."""
    sq = np.stack([squares_from_board(b) for b in boards])
    legal = legal_capture_gains(sq, np.array([b.turn for b in boards], np.int8))
    rebuilt = boards_from_arrays(sq, [b.turn for b in boards])      # the same boards, no ep square
    np.testing.assert_array_equal(legal, [capture_threat(b) for b in rebuilt])
    assert legal.max() >= 5 and sum(b.is_check() for b in boards) >= 10


def test_pseudo_legal_gains_bound_the_legal_ones(boards):
    """Legality and x-rays only take captures away or make them cost, so the
    pseudo-legal gain is never below the legal one; they differ mostly in check."""
    sq = np.stack([squares_from_board(b) for b in boards])
    turn = np.array([b.turn for b in boards], np.int8)
    legal = legal_capture_gains(sq, turn)
    pseudo = np.where(turn == 1, *capture_gains(sq).T)
    assert (pseudo >= legal).all()
    quiet = np.array([not b.is_check() for b in boards])
    assert np.mean(pseudo[quiet] == legal[quiet]) > 0.97 > np.mean(pseudo[~quiet] == legal[~quiet])


def test_mirror_is_python_chess_mirror(boards):
    data = encoded(boards)
    flipped = data.mirrored()
    rebuilt = boards_from_arrays(flipped.squares, flipped.white, flipped.castling, flipped.ep)
    for b, m, move in zip(boards, rebuilt, flipped.move, strict=True):
        expected = b.mirror()
        assert m.board_fen() == expected.board_fen() and m.turn == expected.turn
        assert m.castling_rights == expected.castling_rights and m.ep_square == expected.ep_square
        last = next(iter(b.legal_moves), None)
        assert last is None or move == chess.square_mirror(last.from_square) * 64 + chess.square_mirror(last.to_square)
    np.testing.assert_array_equal(material_balance(flipped.squares), -material_balance(data.squares))
    np.testing.assert_array_equal(flipped.target, -data.target)
    np.testing.assert_array_equal(legal_capture_gains(flipped.squares, flipped.white),
                                  legal_capture_gains(data.squares, data.white))
    twice = flipped.mirrored()
    for f in Encoded.FIELDS:
        np.testing.assert_array_equal(getattr(twice, f), getattr(data, f))
    # a row mask flips only those rows
    rows = np.arange(len(data)) % 3 == 0
    part = data.mirrored(rows)
    np.testing.assert_array_equal(part.squares[rows], flipped.squares[rows])
    np.testing.assert_array_equal(part.squares[~rows], data.squares[~rows])
    assert part.squares.dtype == np.int8 and part.target.dtype == np.float32


def test_file_flip_is_python_chess_flip_horizontal_where_no_side_can_castle(boards):
    data = encoded(boards)
    flipped = data.file_flipped()
    rebuilt = boards_from_arrays(flipped.squares, flipped.white, flipped.castling, flipped.ep)
    moved = 0
    for b, f, move, old_move in zip(boards, rebuilt, flipped.move, data.move, strict=True):
        if b.castling_rights:   # castling tells a position from its mirror: left as it was
            assert f.board_fen() == b.board_fen() and move == old_move
            continue
        expected = b.transform(chess.flip_horizontal)
        assert f.board_fen() == expected.board_fen() and f.turn == b.turn and f.ep_square == expected.ep_square
        first = next(iter(b.legal_moves), None)
        if first is not None:
            moved += 1
            assert move == (first.from_square ^ 7) * 64 + (first.to_square ^ 7)   # file = square % 8
    assert moved > 10
    np.testing.assert_array_equal(flipped.target, data.target)
    np.testing.assert_array_equal(material_balance(flipped.squares), material_balance(data.squares))
    twice = flipped.file_flipped()
    for f in Encoded.FIELDS:
        np.testing.assert_array_equal(getattr(twice, f), getattr(data, f))
    rows = np.arange(len(data)) % 2 == 0
    part = data.file_flipped(rows)
    np.testing.assert_array_equal(part.squares[~rows], data.squares[~rows])
    assert part.squares.dtype == np.int8 and part.target.dtype == np.float32


def test_attack_inputs_follow_the_mirror(boards):
    data = encoded(boards)
    spec = InputSpec(planes="six", scalars=("turn",), counts=True, attacks=True, gains=True)
    assert spec.n_planes == 10 and spec.n_extra == 13
    planes, extra = spec.encode(data)
    assert planes.shape == (len(boards), 10, 8, 8) and extra.shape == (len(boards), 13)
    m_planes, m_extra = spec.encode(data.mirrored())
    # the mirror swaps the White and Black attack planes and turns the board upside down
    np.testing.assert_array_equal(m_planes[:, 6], planes[:, 7, ::-1, :])
    np.testing.assert_array_equal(m_planes[:, 9], planes[:, 8, ::-1, :])
    np.testing.assert_array_equal(m_extra[:, -2:], -extra[:, :-3:-1])
    assert spec.describe()["attacks"] and spec.describe()["gains"]


def test_quiet_is_the_same_worked_through_in_blocks():
    # a training run's millions of rows are judged a block at a time (the exchange's temporaries would not fit);
    # the blocks' answers join into the whole's, whatever the block
    from knights.features.attacks import quiet

    boards = random_positions(300, 11)
    squares, white, _ = parse_fens([b.fen() for b in boards])
    check = np.array([b.is_check() for b in boards], dtype=np.int8)
    whole = quiet(squares, white, check, block=10_000)
    assert 20 < whole.sum() < 290
    for block in (1, 7, 64, 299):
        assert (quiet(squares, white, check, block=block) == whole).all(), block
