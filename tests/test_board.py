"""Tests for knights/board/arrays.py and knights/features/planes.py: FEN -> signed squares and
the encodings built on them."""

from __future__ import annotations

import random

import chess
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knights.board.arrays import board_from_arrays, material_balance, parse_fens, parse_fens_full, squares_from_board
from knights.features.planes import COUNT_WEIGHTS, START_COUNTS, flat_features, piece_counts, signed_plane, six_planes

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
AFTER_E4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1"
# White: rook a8, three knights a1 b1 c1 (two promoted), king e1.
# Black: king e8 (in check), pawn f3, queen h2. Black to move.
ENDGAME = "R3k3/8/8/8/8/5p2/7q/NNN1K3 b - - 0 1"
NO_A1_ROOK = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/1NBQKBNR w Kkq - 0 1"

BACK_RANK = [4, 2, 3, 5, 6, 3, 2, 4]  # R N B Q K B N R


def idx(square: str) -> int:
    """Our index of an algebraic square: a8 = 0 ... h1 = 63."""
    file, rank = ord(square[0]) - ord("a"), int(square[1])
    return (8 - rank) * 8 + file


def one(fen: str) -> tuple[np.ndarray, bool, bool]:
    sq, white, ok = parse_fens([fen])
    return sq[0], bool(white[0]), bool(ok[0])


# -- parse_fens: exact layout ------------------------------------------------------
def test_start_position_layout():
    sq, white, ok = one(START)
    assert ok and white
    assert sq.dtype == np.int8 and sq.shape == (64,)
    assert sq[:8].tolist() == [-c for c in BACK_RANK]          # rank 8, a8..h8
    assert sq[8:16].tolist() == [-1] * 8                        # rank 7
    assert sq[16:48].tolist() == [0] * 32                       # ranks 6..3
    assert sq[48:56].tolist() == [1] * 8                        # rank 2
    assert sq[56:].tolist() == BACK_RANK                        # rank 1, a1..h1
    assert sq[0] == -4 and sq[63] == 4                          # a8 black rook, h1 white rook
    assert sq[idx("e1")] == 6 and sq[idx("e8")] == -6
    assert sq[idx("d1")] == 5 and sq[idx("d8")] == -5
    assert idx("a8") == 0 and idx("h1") == 63


def test_after_e4_black_to_move():
    sq, white, ok = one(AFTER_E4)
    assert ok and not white
    assert sq[idx("e4")] == 1 and sq[idx("e2")] == 0
    assert idx("e4") == 36 and idx("e2") == 52
    start, _, _ = one(START)
    diff = np.flatnonzero(sq != start).tolist()
    assert diff == [36, 52]


def test_endgame_with_promoted_pieces():
    sq, white, ok = one(ENDGAME)
    assert ok and not white
    expected = np.zeros(64, dtype=np.int8)
    expected[idx("a8")] = 4
    expected[idx("e8")] = -6
    expected[idx("f3")] = -1
    expected[idx("h2")] = -5
    expected[[idx("a1"), idx("b1"), idx("c1")]] = 2
    expected[idx("e1")] = 6
    np.testing.assert_array_equal(sq, expected)
    assert (idx("f3"), idx("h2"), idx("c1")) == (45, 55, 58)


def test_fen_with_only_placement_and_side_is_enough():
    sq, white, ok = one("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w")
    assert ok and white
    np.testing.assert_array_equal(sq, one(START)[0])


def test_batch_shapes_and_dtypes():
    sq, white, ok = parse_fens([START, AFTER_E4, ENDGAME])
    assert sq.shape == (3, 64) and sq.dtype == np.int8
    assert white.dtype == bool and ok.dtype == bool
    assert white.tolist() == [True, False, False]
    assert ok.tolist() == [True, True, True]


def test_empty_input_list():
    sq, white, ok = parse_fens([])
    assert sq.shape == (0, 64) and sq.dtype == np.int8
    assert white.shape == (0,) and ok.shape == (0,)
    assert signed_plane(sq).shape == (0, 1, 8, 8)
    assert six_planes(sq).shape == (0, 6, 8, 8)
    assert piece_counts(sq).shape == (0, 10)
    assert flat_features(sq).shape == (0, 394)
    assert material_balance(sq).shape == (0,)


# -- parse_fens: invalid input -----------------------------------------------------
INVALID = {
    "seven ranks": "rnbqkbnr/pppppppp/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "nine ranks": "rnbqkbnr/pppppppp/8/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "rank of 9 squares": "rnbqkbnrp/ppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "rank of 9 squares (digits)": "rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "rank of 7 squares": "rnbqkbnr/pppppppp/7/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "nines as squares": "rnbqkbnr/pppppppp/99999999/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "bad letter": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1",
    "bad letter x": "rnbqkbnr/ppppxppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "digit 0": "rnbqkbnr/pppppppp/08/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "two white kings": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBKKBNR w KQkq - 0 1",
    "no black king": "rnbq1bnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQ - 0 1",
    "no kings at all": "8/8/8/8/8/8/8/8 w - - 0 1",
    "white pawn on rank 8": "P3k3/8/8/8/8/8/8/4K3 w - - 0 1",
    "black pawn on rank 1": "4k3/8/8/8/8/8/8/p3K3 b - - 0 1",
    "white pawn on rank 1": "4k3/8/8/8/8/8/8/4K2P w - - 0 1",
    "side x": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
    "side W": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR W KQkq - 0 1",
    "side wb": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR wb KQkq - 0 1",
    "no side field": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR",
    "empty string": "",
    "blank": "   ",
    "commas for slashes": "rnbqkbnr,pppppppp,8,8,8,8,PPPPPPPP,RNBQKBNR w KQkq - 0 1",
    "non-ascii piece": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNé w KQkq - 0 1",
    "emoji piece": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN\U0001F600 w KQkq - 0 1",
    "unicode chess glyphs": "♜♞♝♛♚♝♞♜/8/8/8/8/8/8/♖♘♗♕♔♗♘♖ w - - 0 1",
    "non-ascii garbage": "ÿ€漢字\x00\x7f garbage ☃",
    "nul bytes": "\x00" * 71 + " w",
    "two spaces before side": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR  w KQkq - 0 1",
    "trailing slash": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR/ w KQkq - 0 1",
    "side only": "w",
    "adjacent digits": "rnbqkbnr/pppppppp/44/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
}


@pytest.mark.parametrize("fen", list(INVALID.values()), ids=list(INVALID))
def test_invalid_fen_is_flagged_and_zeroed(fen):
    sq, white, ok = one(fen)
    assert not ok
    assert not white
    assert not sq.any()


def test_invalid_rows_do_not_disturb_valid_neighbours():
    fens = [START, *INVALID.values(), AFTER_E4, ENDGAME]
    sq, white, ok = parse_fens(fens)
    n_bad = len(INVALID)
    assert ok.tolist() == [True] + [False] * n_bad + [True, True]
    assert white.tolist() == [True] + [False] * n_bad + [False, False]
    assert not sq[1:1 + n_bad].any()
    np.testing.assert_array_equal(sq[0], one(START)[0])
    np.testing.assert_array_equal(sq[-2], one(AFTER_E4)[0])
    np.testing.assert_array_equal(sq[-1], one(ENDGAME)[0])



def test_a_line_break_inside_a_fen_invalidates_that_row_only():
    """A placement holding a line break is no placement, whatever the rows around it: the
    batch is joined by line breaks, and such a FEN once lined up with its neighbours."""
    placement = START.split(" ")[0]
    fens = [placement + "\n w - - 0 1", "8/8/8/8/8/8/8/K6k w - - 0 1", START]
    sq, _, ok = parse_fens(fens)
    assert ok.tolist() == [False, True, True] and not sq[0].any()
    np.testing.assert_array_equal(sq[2], one(START)[0])


@pytest.mark.parametrize("fen", [START, AFTER_E4, ENDGAME, NO_A1_ROOK,
                                 "8/8/8/4k3/8/8/8/4K3 w - - 0 1",
                                 "QQQ1k3/8/8/8/8/8/8/qqq1K3 w - - 12 60"])
def test_valid_fens_pass(fen):
    assert one(fen)[2]


# -- agreement with python-chess ---------------------------------------------------
def random_positions(n: int, seed: int) -> list[chess.Board]:
    rng = random.Random(seed)
    boards: list[chess.Board] = []
    while len(boards) < n:
        board = chess.Board()
        for _ in range(rng.randrange(10, 160)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
            if rng.random() < 0.25:
                boards.append(board.copy(stack=False))
    return boards[:n]


def test_agrees_with_python_chess_on_random_playouts():
    boards = random_positions(300, seed=20190101)
    sq, white, ok = parse_fens([b.fen() for b in boards])
    assert ok.all()
    expected = np.stack([squares_from_board(b) for b in boards])
    np.testing.assert_array_equal(sq, expected)
    assert white.tolist() == [b.turn == chess.WHITE for b in boards]
    # material agrees with python-chess piece sets
    values = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9}
    expected_balance = [sum(v * (len(b.pieces(p, chess.WHITE)) - len(b.pieces(p, chess.BLACK)))
                            for p, v in values.items()) for b in boards]
    np.testing.assert_array_equal(material_balance(sq), np.array(expected_balance, np.float32))
    # a sample of positions must include captures, so the test is not trivial
    assert (np.abs(sq) > 0).sum(axis=1).min() < 32


def test_squares_from_board_start_matches_fen():
    np.testing.assert_array_equal(squares_from_board(chess.Board()), one(START)[0])
    np.testing.assert_array_equal(squares_from_board(chess.Board(ENDGAME)), one(ENDGAME)[0])
    assert squares_from_board(chess.Board()).dtype == np.int8


# -- encodings ---------------------------------------------------------------------
def test_signed_plane():
    sq, _, _ = parse_fens([START, AFTER_E4])
    plane = signed_plane(sq)
    assert plane.shape == (2, 1, 8, 8) and plane.dtype == np.float32
    assert plane[0, 0, 0].tolist() == [-4, -2, -3, -5, -6, -3, -2, -4]
    assert plane[0, 0, 7].tolist() == [4, 2, 3, 5, 6, 3, 2, 4]
    assert plane[0, 0, 1].tolist() == [-1] * 8
    assert plane[1, 0, 4, 4] == 1.0 and plane[1, 0, 6, 4] == 0.0   # e4 filled, e2 empty
    np.testing.assert_array_equal(plane.reshape(2, 64), sq.astype(np.float32))


def test_six_planes_ones_vs_codes():
    sq, _, _ = parse_fens([START])
    ones = six_planes(sq, "ones")
    codes = six_planes(sq, "codes")
    default = six_planes(sq)
    assert ones.shape == codes.shape == (1, 6, 8, 8)
    assert ones.dtype == codes.dtype == np.float32
    np.testing.assert_array_equal(default, ones)
    # e8: black king -> plane 5 (K)
    assert ones[0, 5, 0, 4] == -1.0 and codes[0, 5, 0, 4] == -6.0
    # d1: white queen -> plane 4 (Q)
    assert ones[0, 4, 7, 3] == 1.0 and codes[0, 4, 7, 3] == 5.0
    # b8: black knight -> plane 1 (N)
    assert ones[0, 1, 0, 1] == -1.0 and codes[0, 1, 0, 1] == -2.0
    # f1: white bishop -> plane 2; h8: black rook -> plane 3; c2: white pawn -> plane 0
    assert ones[0, 2, 7, 5] == 1.0 and codes[0, 2, 7, 5] == 3.0
    assert ones[0, 3, 0, 7] == -1.0 and codes[0, 3, 0, 7] == -4.0
    assert ones[0, 0, 6, 2] == 1.0 and codes[0, 0, 6, 2] == 1.0
    # each occupied square is set in exactly one plane, empty squares in none
    per_square = np.abs(ones[0]).sum(axis=0)
    np.testing.assert_array_equal(per_square.reshape(64), (sq[0] != 0).astype(np.float32))
    assert np.abs(ones).sum() == 32
    # plane counts per type: 16 pawns, 4 N, 4 B, 4 R, 2 Q, 2 K
    assert np.abs(ones[0]).sum(axis=(1, 2)).tolist() == [16, 4, 4, 4, 2, 2]
    # "codes" is "ones" times the piece code of its plane
    np.testing.assert_array_equal(codes, ones * np.arange(1, 7, dtype=np.float32).reshape(1, 6, 1, 1))
    # summing the code planes gives back the signed plane
    np.testing.assert_array_equal(codes.sum(axis=1, keepdims=True), signed_plane(sq))


def test_six_planes_endgame():
    sq, _, _ = parse_fens([ENDGAME])
    ones = six_planes(sq)[0]
    assert ones[1, 7, :3].tolist() == [1.0, 1.0, 1.0]   # three white knights a1 b1 c1
    assert ones[4, 6, 7] == -1.0                         # black queen h2
    assert ones[0, 5, 5] == -1.0                         # black pawn f3
    assert ones[3, 0, 0] == 1.0                          # white rook a8
    assert np.abs(ones).sum() == 8


def test_piece_counts_start_position():
    sq, _, _ = parse_fens([START, AFTER_E4])
    counts = piece_counts(sq)
    assert counts.shape == (2, 10) and counts.dtype == np.float32
    np.testing.assert_allclose(counts[0], [1, 3, 3.1, 5, 9, -1, -3, -3.1, -5, -9], rtol=1e-6)
    np.testing.assert_array_equal(counts[1], counts[0])


def test_piece_counts_missing_pieces():
    sq, _, _ = parse_fens([NO_A1_ROOK, ENDGAME])
    counts = piece_counts(sq)
    np.testing.assert_allclose(counts[0], [1, 3, 3.1, 2.5, 9, -1, -3, -3.1, -5, -9], rtol=1e-6)
    # 3 knights (3/2 x 3), 1 rook (1/2 x 5) ; black 1 pawn (1/8), 1 queen
    np.testing.assert_allclose(counts[1], [0, 4.5, 0, 2.5, 0, -0.125, 0, 0, 0, -9], rtol=1e-6)


def test_piece_counts_many_queens():
    sq, _, _ = parse_fens(["QQQ1k3/8/8/8/8/8/8/qqq1K3 w - - 12 60"])
    np.testing.assert_allclose(piece_counts(sq)[0], [0, 0, 0, 0, 27, 0, 0, 0, 0, -27])


def test_piece_count_constants():
    assert START_COUNTS.tolist() == [8, 2, 2, 2, 1]
    np.testing.assert_allclose(COUNT_WEIGHTS, [1, 3, 3.1, 5, 9])


def test_flat_features():
    sq, _, _ = parse_fens([START, AFTER_E4, ENDGAME])
    flat = flat_features(sq)
    assert flat.shape == (3, 394) and flat.dtype == np.float32
    np.testing.assert_array_equal(flat[:, :384], six_planes(sq, "ones").reshape(3, 384))
    np.testing.assert_array_equal(flat[:, 384:], piece_counts(sq))
    # the plane part holds only -1, 0, +1
    assert set(np.unique(flat[:, :384]).tolist()) == {-1.0, 0.0, 1.0}


def test_material_balance():
    sq, _, _ = parse_fens([START, AFTER_E4, NO_A1_ROOK, ENDGAME,
                           "QQQ1k3/8/8/8/8/8/8/4K3 w - - 0 1", "8/8/8/4k3/8/8/8/4K3 w - - 0 1"])
    bal = material_balance(sq)
    assert bal.dtype == np.float32 and bal.shape == (6,)
    # ENDGAME: White R + 3N = 14, Black Q + P = 10
    assert bal.tolist() == [0.0, 0.0, -5.0, 4.0, 27.0, 0.0]


# -- castling / en passant -----------------------------------------------------------
def rights(fens):
    out = parse_fens_full(fens)
    return out["castling"], out["ep"]


def test_parse_fens_full_rights_exact():
    castling, ep = rights([
        START, AFTER_E4, ENDGAME,
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq e6 0 2",
        "r3k2r/8/8/8/8/8/8/R3K2R w Kq - 0 1",
        "r3k2r/8/8/8/8/8/8/R3K2R b Qk - 0 1",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e9 0 1",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e4 0 1",
        "",
    ])
    assert castling.dtype == np.int8 and ep.dtype == np.int8
    assert castling.tolist() == [15, 15, 0, 15, 9, 6, 0, 15, 15, 0]
    # e3 = 20, e6 = 44 (python-chess numbering, a1 = 0); impossible squares -> -1
    assert ep.tolist() == [-1, 20, -1, 44, -1, -1, -1, -1, -1, -1]
    empty_c, empty_ep = rights([])
    assert empty_c.shape == (0,) and empty_ep.shape == (0,)


def test_board_from_arrays_round_trip():
    boards = random_positions(150, seed=7)
    # a capturable en-passant square, so the "legal" FEN output shows it too
    boards.append(chess.Board("rnbqkbnr/ppp1pppp/8/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3"))
    for mode in ("fen", "legal"):
        fens = [b.fen(en_passant=mode) for b in boards]
        sq, white, ok = parse_fens(fens)
        castling, ep = rights(fens)
        assert ok.all()
        assert (ep >= 0).any() and (castling > 0).any() and (castling < 15).any()
        for i, board in enumerate(boards):
            rebuilt = board_from_arrays(sq[i], bool(white[i]), int(castling[i]), int(ep[i]))
            assert rebuilt.fen(en_passant=mode).split()[:4] == fens[i].split()[:4], fens[i]
            assert rebuilt.castling_rights == board.clean_castling_rights()
            np.testing.assert_array_equal(squares_from_board(rebuilt), sq[i])


# -- property: the vectorised parser against python-chess ------------------------------
SEEDS = [START, AFTER_E4, ENDGAME, NO_A1_ROOK, "8/8/8/4k3/8/8/8/4K3 w - - 0 1",
         "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"]
EDIT_CHARS = "pnbrqkPNBRQK123456789/ wb-0xé\t"


def oracle(fen: str) -> tuple[bool | None, np.ndarray | None]:
    """Validity and squares by python-chess's own placement parser plus our extra rules.

    Validity is ``None`` where our rules leave the answer open (a FEN that is valid
    once stripped of surrounding whitespace); the squares are then those of the
    stripped FEN. Adjacent digits such as "44" are refused, as python-chess does."""
    open_question = fen != fen.strip()
    fen = fen.strip()
    placement, sep, rest = fen.partition(" ")
    if not sep or rest[:1] not in ("w", "b") or rest[1:2] not in ("", " "):
        return False, None
    if placement != placement.strip():       # python-chess would forgive a tab here; we do not
        return False, None
    try:
        board = chess.BaseBoard(placement)
    except ValueError:
        return False, None
    if "~" in placement or len(board.pieces(chess.KING, chess.WHITE)) != 1 \
            or len(board.pieces(chess.KING, chess.BLACK)) != 1 \
            or board.pieces_mask(chess.PAWN, chess.WHITE) & (chess.BB_RANK_1 | chess.BB_RANK_8) \
            or board.pieces_mask(chess.PAWN, chess.BLACK) & (chess.BB_RANK_1 | chess.BB_RANK_8):
        return False, None
    return (None if open_question else True), squares_from_board(board)


@st.composite
def edited_fen(draw) -> str:
    fen = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(0, 3))):
        pos = draw(st.integers(0, len(fen)))
        op = draw(st.sampled_from(["replace", "insert", "delete"]))
        ch = draw(st.sampled_from(EDIT_CHARS))
        if op == "insert":
            fen = fen[:pos] + ch + fen[pos:]
        elif op == "replace":
            fen = fen[:pos] + ch + fen[pos + 1:]
        else:
            fen = fen[:pos] + fen[pos + 1:]
    return fen


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(edited_fen(), st.text(max_size=90)), min_size=1, max_size=12))
def test_parser_agrees_with_python_chess_on_edited_fens(fens):
    sq, white, ok = parse_fens(fens)
    assert sq.shape == (len(fens), 64) and ok.shape == white.shape == (len(fens),)
    for i, fen in enumerate(fens):
        valid, squares = oracle(fen)
        if valid is not None:
            assert bool(ok[i]) == valid, fen
        if ok[i]:
            assert squares is not None, fen
            np.testing.assert_array_equal(sq[i], squares, err_msg=fen)
            assert bool(white[i]) == (fen.strip().partition(" ")[2][:1] == "w")
        else:
            assert not sq[i].any() and not white[i]


def test_the_castling_rights_each_move_leaves_are_python_chess_s():
    """castling_after (what the one-ply engine hands its evaluator beside each child): a right goes when its king or
    rook moves or the rook is taken, exactly as python-chess cleans them, over every legal move of random games."""
    import random

    from knights.board.positions import castling_after, castling_code

    rng = random.Random(3)
    checked = 0
    for _ in range(40):
        board = chess.Board()
        for _ in range(60):
            moves = list(board.legal_moves)
            if not moves:
                break
            for move, code in zip(moves, castling_after(castling_code(board), moves), strict=True):
                board.push(move)
                assert castling_code(board) == code, (board.fen(), move)
                board.pop()
                checked += 1
            board.push(rng.choice(moves))
    assert checked > 10_000
