"""The compiled board (knights.engine.compiled_board) against python-chess: perft on the standard
suite and on positions from random games, the same legal moves, make/unmake restoring
everything, hashes that follow the position and not the path."""

from __future__ import annotations

import random

import chess
import numpy as np
import pytest

from knights.engine.compiled_arrays import warm_up
from knights.engine.compiled_board import (
    HASH,
    N_STATE,
    Position,
    full_hash,
    is_repetition,
    standard,
    to_chess_move,
)

# (FEN, depth, leaves): the published perft suite (chessprogramming.org "Perft Results")
SUITE = [
    (chess.STARTING_FEN, 4, 197_281),
    ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 3, 97_862),   # Kiwipete
    ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 5, 674_624),                              # position 3
    ("r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", 4, 422_333),      # position 4
    ("r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1", 4, 422_333),      # position 4, mirrored
    ("rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", 3, 62_379),              # position 5
    ("r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", 3, 89_890),  # position 6
]

# tricky one-offs: en passant that would expose the king along the rank, en passant out of
# check, castling through or out of check, promotions with capture, double check, pins
TRICKY = [
    "8/8/8/KPp4r/8/8/8/7k w - c6 0 2",
    "8/8/3k4/8/2pP4/8/8/3K1B2 b - d3 0 1",
    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
    "r3k2r/8/8/8/4r3/8/8/R3K2R w KQkq - 0 1",
    "r3k2r/8/8/8/8/5n2/8/R3K2R w KQkq - 0 1",
    "1r2k2r/8/8/8/8/8/8/R3K2R b KQk - 0 1",
    "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
    "4k3/8/8/8/8/8/8/4K2R w K - 0 1",
    "4k3/8/4r3/8/8/8/3n4/4K3 w - - 0 1",
    "4k3/4r3/8/8/8/8/3PPP2/r3K2R w K - 0 1",
    "8/8/1k6/2b5/2pP4/8/5K2/8 b - d3 0 1",
    "3k4/3p4/8/K1P4r/8/8/8/8 b - - 0 1",
]


@pytest.fixture(scope="module", autouse=True)
def compiled() -> None:
    warm_up()


def py_perft(board: chess.Board, depth: int) -> int:
    if depth == 1:
        return board.legal_moves.count()
    total = 0
    for move in board.legal_moves:
        board.push(move)
        total += py_perft(board, depth - 1)
        board.pop()
    return total


def random_positions(n: int, seed: int = 7) -> list[chess.Board]:
    """Positions along random games that favour captures, checks and promotions."""
    rng = random.Random(seed)
    found: list[chess.Board] = []
    while len(found) < n:
        board = chess.Board()
        for ply in range(rng.randrange(10, 200)):
            moves = list(board.legal_moves)
            if not moves:
                break
            sharp = [m for m in moves if board.is_capture(m) or m.promotion or board.gives_check(m)]
            board.push(rng.choice(sharp if sharp and rng.random() < 0.5 else moves))
            special = board.has_legal_en_passant() or any(m.promotion for m in board.legal_moves)
            if (ply % 9 == 4 or special) and not board.is_game_over():
                found.append(board.copy())
        if not board.is_game_over():
            found.append(board.copy())
    return found[:n]


@pytest.mark.parametrize(("fen", "depth", "leaves"), SUITE)
def test_perft_suite(fen: str, depth: int, leaves: int) -> None:
    assert Position(chess.Board(fen)).perft(depth) == leaves


@pytest.mark.parametrize("fen", TRICKY)
def test_perft_tricky_positions_match_python_chess(fen: str) -> None:
    board = chess.Board(fen)
    assert Position(board).perft(3) == py_perft(board, 3)


def test_perft_on_positions_from_random_games() -> None:
    boards = random_positions(120)
    assert sum(any(m.promotion for m in b.legal_moves) for b in boards) >= 3
    assert sum(b.has_legal_en_passant() for b in boards) >= 1
    assert sum(b.is_check() for b in boards) >= 5
    for board in boards:
        assert Position(board).perft(2) == py_perft(board, 2), board.fen()


def test_legal_moves_are_python_chess_moves() -> None:
    for board in random_positions(150, seed=11) + [chess.Board(f) for f in TRICKY]:
        ours = {to_chess_move(m) for m in Position(board).legal()}
        assert ours == set(board.legal_moves), board.fen()


def test_make_unmake_restores_everything_and_hash_follows_the_position() -> None:
    rng = random.Random(3)
    for board in random_positions(40, seed=5):
        pos = Position(board)
        before = (pos.board.copy(), pos.st.copy())
        for m in pos.legal():
            assert pos.push(m)
            after = board.copy()
            after.push(to_chess_move(m))
            again = Position(after)
            assert np.array_equal(pos.board, again.board), after.fen()
            assert pos.st[HASH] == again.st[HASH] == full_hash(again.board, again.st), after.fen()
            pos.pop()
            assert np.array_equal(pos.board, before[0]) and np.array_equal(pos.st, before[1])
        rng.random()


def test_hash_depends_on_position_not_move_order() -> None:
    a = chess.Board()
    for uci in ("g1f3", "g8f6", "b1c3", "b8c6"):
        a.push_uci(uci)
    b = chess.Board()
    for uci in ("b1c3", "b8c6", "g1f3", "g8f6"):
        b.push_uci(uci)
    c = chess.Board(a.fen())
    assert Position(a).st[HASH] == Position(b).st[HASH] == Position(c).st[HASH]
    d = chess.Board(a.fen().replace(" w ", " b "))
    assert Position(d).st[HASH] != Position(a).st[HASH]
    e = chess.Board(a.fen().replace("KQkq", "Kkq"))
    assert Position(e).st[HASH] != Position(a).st[HASH]
    assert N_STATE > HASH


def test_repetition_is_seen_through_the_game_history() -> None:
    board = chess.Board()
    for uci in ("g1f3", "g8f6", "f3g1", "f6g8"):
        board.push_uci(uci)
    pos = Position(board)                       # the start position again
    assert is_repetition(pos.st, pos.hist)
    fresh = Position(chess.Board())
    assert not is_repetition(fresh.st, fresh.hist)
    # a pawn move in between: the earlier positions can no longer come back
    board = chess.Board()
    for uci in ("g1f3", "g8f6", "e2e4", "f6g8", "f3g1"):
        board.push_uci(uci)
    pos = Position(board)
    assert not is_repetition(pos.st, pos.hist)


def test_standard_boards_only() -> None:
    assert standard(chess.Board())
    assert not standard(chess.Board(chess960=True))
    with pytest.raises(ValueError, match="standard chess"):
        Position(chess.Board("8/8/8/8/8/8/8/8 w - - 0 1"))


def test_a_data_rows_arrays_load_as_its_rebuilt_board_does() -> None:
    """set_from_arrays (a data set's row read straight into the compiled board) equals set_from_chess of the board
    knights.board.arrays rebuilds from the same arrays: pieces, side, castling, en passant, kings and hash."""
    from knights.board.arrays import board_from_arrays, squares_from_board
    from knights.engine.compiled import CASTLE
    from knights.engine.compiled_board import set_from_arrays, set_from_chess

    boards = random_positions(150, seed=17) + [chess.Board(f) for f in TRICKY]
    boards.append(chess.Board("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3"))
    rights = {"K": 1, "Q": 2, "k": 4, "q": 8}
    assert sum(b.ep_square is not None for b in boards) >= 3 and sum(b.castling_rights != 0 for b in boards) >= 10
    for board in boards:
        squares = squares_from_board(board)
        castling = sum(bit for c, bit in rights.items() if c in board.castling_xfen())
        ep = board.ep_square if board.ep_square is not None else -1
        ours, theirs = Position(chess.Board()), Position(chess.Board())
        set_from_arrays(ours, squares, board.turn == chess.WHITE, castling, ep)
        set_from_chess(theirs, board_from_arrays(squares, board.turn == chess.WHITE, castling, ep))
        assert np.array_equal(ours.board, theirs.board) and np.array_equal(ours.st, theirs.st), board.fen()
        assert ours.hist[0] == theirs.hist[0] == ours.st[HASH]
    # a right whose rook has left is refused, as set_from_chess refuses the board python-chess rebuilds
    lost_rook = chess.Board("4k3/8/8/8/8/8/8/4K2R w K - 0 1")
    squares = squares_from_board(lost_rook)
    pos = Position(chess.Board())
    set_from_arrays(pos, squares, True, 1, -1)
    assert pos.st[CASTLE] == 1
    squares[63] = 0   # h1 emptied
    with pytest.raises(ValueError, match="not at home"):
        set_from_arrays(pos, squares, True, 1, -1)
    with pytest.raises(ValueError, match="standard chess"):
        set_from_chess(pos, board_from_arrays(squares, True, 1, -1))
    with pytest.raises(ValueError, match="one king a side"):
        set_from_arrays(pos, np.zeros(64, np.int8), True)
