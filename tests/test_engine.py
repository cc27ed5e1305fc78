"""The one-ply engine: children arrays against python-chess, exact terminal scores,
the stochastic opening, whole games that never go wrong, clear errors."""

from __future__ import annotations

import random
from collections import Counter

import chess
import numpy as np
import pytest

from knights.board.arrays import parse_fens, squares_from_board
from knights.board.children import expand
from knights.engine.constants import MATE_SCORE
from knights.engine.one_ply import OPENING_MOVES, Decision, OnePlyEngine, opening_weights
from knights.engine.rules import (
    CHECKMATE,
    FIFTY,
    INSUFFICIENT,
    OPPONENT_FIFTY,
    OPPONENT_REPETITION,
    REPETITION,
    STALEMATE,
    game_over,
    mates_in_one,
    opponent_claims,
    opponent_mates,
    terminal_outcomes,
)
from knights.engine.user_input import EngineError, board_from_fen
from knights.evaluate.base import MaterialEvaluator, NetworkEvaluator
from knights.evaluate.load import select_evaluator
from knights.evaluate.names import EvaluatorError
from knights.features.inputs import InputSpec
from knights.lab.arena.game import FORFEIT_ERROR, MAX_PLIES, Settings, play_game
from knights.lab.arena.players import EnginePlayer, Player, RandomPlayer
from knights.learn.nets import ConvNet


def material_engine(**kw) -> OnePlyEngine:
    return OnePlyEngine(MaterialEvaluator(), **kw)


@pytest.fixture(scope="module")
def tiny_network():
    """A small randomly initialised network behind the evaluator interface (no trained
    files), on one thread as the bot plays (tiny batches on a busy machine are much
    slower with more)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    spec = InputSpec(planes="six", scalars=("turn", "check"), counts=True)
    model = ConvNet(spec.n_planes, convs=[(8, 3)], hidden=[16], n_extra=spec.n_extra)
    yield NetworkEvaluator(model, spec, "tiny-random")
    torch.set_num_threads(threads)


# -- children against python-chess -------------------------------------------------------------
def reference_outcome(board: chess.Board, move: chess.Move) -> str | None:
    board.push(move)
    try:
        if board.is_checkmate():
            return CHECKMATE
        if board.is_stalemate():
            return STALEMATE
        if board.is_insufficient_material():
            return INSUFFICIENT
        if board.halfmove_clock >= 100:
            return FIFTY
        if board.is_repetition(3):
            return REPETITION
        return None
    finally:
        board.pop()


def reference_claim(board: chess.Board, move: chess.Move) -> str | None:
    board.push(move)
    try:
        if board.can_claim_threefold_repetition():
            return OPPONENT_REPETITION
        if board.can_claim_fifty_moves():
            return OPPONENT_FIFTY
        return None
    finally:
        board.pop()


def reference_mates(board: chess.Board, move: chess.Move) -> bool:
    """Whether the opponent mates at once after ``move``: every reply tried."""
    board.push(move)
    try:
        for reply in list(board.legal_moves):
            board.push(reply)
            mated = board.is_checkmate()
            board.pop()
            if mated:
                return True
        return False
    finally:
        board.pop()


def assert_children_match(board: chess.Board) -> Counter:
    assert np.array_equal(squares_from_board(board), parse_fens([board.fen()])[0][0]), board.fen()
    children = expand(board)
    outcomes = terminal_outcomes(board, children)
    claims = opponent_claims(board, children, outcomes)
    mated = opponent_mates(board, children, outcomes)
    assert children.moves == list(board.legal_moves)
    seen: Counter = Counter()
    for i, move in enumerate(children.moves):
        after = board.copy()
        after.push(move)
        where = f"{board.fen()} {move.uci()}"
        assert np.array_equal(children.squares[i], squares_from_board(after)), where
        assert bool(children.check[i]) == after.is_check(), where
        assert bool(children.capture[i]) == board.is_capture(move), where
        assert bool(children.zeroing[i]) == board.is_zeroing(move), where
        assert bool(children.castling[i]) == board.is_castling(move), where
        assert bool(children.en_passant[i]) == board.is_en_passant(move), where
        assert outcomes[i] == reference_outcome(board, move), where
        assert claims[i] == (None if outcomes[i] else reference_claim(board, move)), where
        assert mated[i] == (outcomes[i] is None and reference_mates(board, move)), where
        seen[outcomes[i]] += 1
        seen["opponent mates"] += bool(mated[i])
        seen[claims[i]] += 1
        seen["promotion"] += move.promotion is not None
        seen["castling"] += board.is_castling(move)
        seen["en passant"] += board.is_en_passant(move)
    return seen


def random_positions(seed: int, games: int, max_plies: int = 160):
    """Capture-biased random playouts: openings, middlegames and many bare endgames."""
    rng = random.Random(seed)
    for _ in range(games):
        board = chess.Board()
        while not board.is_game_over() and len(board.move_stack) < max_plies:
            yield board
            moves = list(board.legal_moves)
            captures = [m for m in moves if board.is_capture(m)]
            board.push(rng.choice(captures) if captures and rng.random() < 0.5 else rng.choice(moves))


@pytest.mark.slow
def test_children_equal_python_chess_over_random_games():
    seen: Counter = Counter()
    positions = 0
    for board in random_positions(seed=5, games=5, max_plies=220):
        seen += assert_children_match(board)
        positions += 1
    assert positions > 500
    # the playouts exercise every special case
    for kind in (CHECKMATE, STALEMATE, INSUFFICIENT, OPPONENT_REPETITION, "opponent mates", "promotion", "castling",
                 "en passant"):
        assert seen[kind] > 0, (kind, seen)


SPECIAL = [
    "r3k2r/pppq1ppp/2n1bn2/3pp3/3PP3/2N1BN2/PPPQ1PPP/R3K2R w KQkq - 4 8",    # castling both ways, White
    "r3k2r/pppq1ppp/2n1bn2/3pp3/3PP3/2N1BN2/PPPQ1PPP/R3K2R b KQkq - 4 8",    # ... Black
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",         # en passant (White takes)
    "rnbqkbnr/pppp1ppp/8/8/3Pp3/4P3/PPP2PPP/RNBQKBNR b KQkq d3 0 3",         # en passant (Black takes)
    "1n2k3/P1P5/8/8/8/8/5p1p/K5N1 w - - 0 1",                                # promotions, captures, under-promotions
    "1n2k3/P1P5/8/8/8/8/5p1p/K5N1 b - - 0 1",
    "4k3/8/8/2KPp2r/8/8/8/8 w - e6 0 1",                                     # en passant exposing the king
    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
    "4k3/8/8/8/8/8/8/4K2R w K - 0 1",
    "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1",                                  # a mate in one on the back rank
]


@pytest.mark.parametrize("fen", SPECIAL)
def test_children_special_moves(fen, tiny_network):
    board = chess.Board(fen)
    seen = assert_children_match(board)
    assert sum(seen.values()) > 0
    for evaluator in (MaterialEvaluator(), tiny_network):     # and the engine plays them
        for seed in range(5):
            decision = OnePlyEngine(evaluator, seed=seed).choose(board)
            assert decision.move in board.legal_moves
            assert {m for m, _ in decision.candidates} == set(board.legal_moves)


def test_promotions_scored_by_the_piece():
    board = chess.Board("1n2k3/P1P5/8/8/8/8/5p1p/K5N1 w - - 0 1")
    decision = material_engine(stochastic=False).choose(board)
    scores = {m.uci(): s for m, s in decision.candidates}
    assert decision.move.uci() in ("a7b8q", "c7b8q") and decision.score == pytest.approx(11.0)
    assert scores["a7b8n"] == pytest.approx(5.0) and scores["a7a8r"] == pytest.approx(4.0)
    assert scores["c7c8b"] == pytest.approx(2.0) and scores["c7c8q"] == pytest.approx(8.0)


def test_children_chess960_castling():
    board = chess.Board("1rk1r3/pppppppp/8/8/8/8/PPPPPPPP/1RK1R3 w KQkq - 0 1", chess960=True)
    seen = assert_children_match(board)
    assert seen["castling"] == 2


def test_repetition_and_fifty_moves_are_draws():
    board = chess.Board()
    for uci in ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1"]:
        board.push_uci(uci)
    outcomes = dict(zip(expand(board).moves, terminal_outcomes(board, expand(board)), strict=False))
    assert outcomes[chess.Move.from_uci("f6g8")] == REPETITION
    assert sum(o is not None for o in outcomes.values()) == 1
    assert_children_match(board)
    fifty = chess.Board("8/8/4k3/8/8/3K4/R7/8 w - - 99 80")
    assert_children_match(fifty)
    assert set(terminal_outcomes(fifty, expand(fifty))) == {FIFTY}


# -- scores and choices ---------------------------------------------------------------------------
MATES = [
    ("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1", {"a1a8"}),
    ("r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5Q2/PPPP1PPP/RNB1K1NR w KQkq - 0 4", {"f3f7"}),
    ("rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2", {"d8h4"}),
    ("6k1/4Pppp/8/8/8/8/8/6K1 w - - 0 1", {"e7e8q", "e7e8r"}),
    ("6rk/6pp/8/6N1/8/8/8/6K1 w - - 0 1", {"g5f7"}),
    ("7k/8/8/8/8/q7/1r6/6K1 b - - 0 1", {"a3a1"}),
]


@pytest.mark.parametrize("fen,mates", MATES)
def test_mate_in_one_always_found(fen, mates, tiny_network):
    board = chess.Board(fen)
    assert {m.uci() for m in board.legal_moves if reference_outcome(board, m) == CHECKMATE} == mates
    for evaluator in (MaterialEvaluator(), tiny_network):
        for seed in range(25):   # stochastic, at the game's own move number
            decision = OnePlyEngine(evaluator, seed=seed).choose_fen(fen)
            assert decision.move.uci() in mates
            assert decision.mates and decision.rank == 0
            assert decision.score == (MATE_SCORE if " w " in fen else -MATE_SCORE)


BACK_RANK = "4r1k1/3n1ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"   # Rxd7?? Re1#


def test_a_move_that_lets_the_opponent_mate_is_lost(tiny_network):
    board = chess.Board(BACK_RANK)
    greedy = chess.Move.from_uci("d1d7")
    assert reference_mates(board, greedy) and not mates_in_one(chess.Board(BACK_RANK.replace(" w ", " b ")))
    for evaluator in (MaterialEvaluator(), tiny_network):
        for seed in range(10):   # never drawn as a random alternative either
            decision = OnePlyEngine(evaluator, seed=seed).choose(board)
            assert decision.move != greedy and decision.mate_in is None
            assert dict(decision.candidates)[greedy] == -MATE_SCORE
    unguarded = material_engine(stochastic=False, mate_guard=False).choose(board)
    assert unguarded.move == greedy and unguarded.score == pytest.approx(0.0)   # a knight down before it
    # every move loses: the bot still moves, and says it is mated in one
    doomed = chess.Board("8/q1pr4/4p2p/k5P1/8/p7/b1K5/8 w - - 1 36")
    assert all(reference_mates(doomed, m) for m in doomed.legal_moves)
    for seed in range(5):
        decision = material_engine(seed=seed).choose(doomed)
        assert decision.mate_in == -1 and decision.score == -MATE_SCORE
        # every move loses: the one the evaluator likes best (it takes a pawn), not the first generated
        assert doomed.san(decision.move) == "gxh6"


CHECKS_BY_EVERY_ROUTE = [
    ("5k2/8/8/8/8/8/8/4K2R w K - 0 1", "e1g1"),        # castling: the rook gives check
    ("8/8/8/R2pP2k/8/8/8/4K3 w - d6 0 1", "e5d6"),     # en passant uncovers the rook on the rank
    ("4k3/8/8/8/4K3/8/8/4R3 w - - 0 1", "e4d4"),       # the king steps off its rook's file
    ("3k4/6P1/8/8/8/8/8/4K3 w - - 0 1", "g7g8q"),      # a promotion
    ("4k3/8/8/8/8/8/4N3/4R1K1 w - - 0 1", "e2f4"),     # a knight uncovers the rook
]


@pytest.mark.parametrize("fen,check", CHECKS_BY_EVERY_ROUTE)
def test_every_checking_move_is_a_candidate(fen, check):
    from knights.engine.rules import _checking_candidates

    board = chess.Board(fen)
    checks = {m for m in board.legal_moves if board.gives_check(m)}
    assert chess.Move.from_uci(check) in checks
    assert checks <= set(_checking_candidates(board))


def test_checking_candidates_over_random_games():
    from knights.engine.rules import _checking_candidates

    seen = 0
    for board in random_positions(seed=9, games=40):
        checks = {m for m in board.legal_moves if board.gives_check(m)}
        assert checks <= set(_checking_candidates(board)), board.fen()
        seen += len(checks)
    assert seen > 500


def test_the_compiled_guard_agrees_with_python_chess_after_every_move():
    # the one-ply engine asks the compiled board (knights.engine.compiled_board.opponent_mates) on standard
    # boards: after
    # every legal move of random positions, the same answer as mates_in_one on python-chess's board
    from knights.engine.compiled_board import opponent_mates

    checked = found = 0
    for board in random_positions(seed=11, games=30):
        if board.is_game_over():
            continue
        moves = list(board.legal_moves)
        expected = []
        for move in moves:
            board.push(move)
            expected.append(not board.is_game_over() and mates_in_one(board))
            board.pop()
        assert [bool(x) for x in opponent_mates(board, moves)] == expected, board.fen()
        checked += len(moves)
        found += sum(expected)
    assert checked > 20000 and found > 100


def test_a_board_the_compiled_board_cannot_hold_is_guarded_on_python_chess():
    # Chess960 is not the compiled board's (knights.engine.compiled_board.standard): the guard tries the replies itself
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 b - - 0 1", chess960=True)
    children = expand(board)
    mated = opponent_mates(board, children, terminal_outcomes(board, children))
    expected = []
    for move in children.moves:
        board.push(move)
        expected.append(mates_in_one(board))
        board.pop()
    assert [bool(x) for x in mated] == expected and any(expected) and not all(expected)


def test_mates_in_one_against_every_reply():
    checked = found = 0
    for board in random_positions(seed=5, games=60):
        if not board.is_game_over():
            expected = any(reference_outcome(board, m) == CHECKMATE for m in board.legal_moves)
            assert mates_in_one(board) == expected, board.fen()
            checked += 1
            found += expected
    assert checked > 3000 and found > 10


def test_scores_are_from_whites_side_and_ranked_for_the_mover():
    engine = material_engine(stochastic=False)
    white = engine.choose_fen("4k3/8/8/3q4/4P3/8/8/4K3 w - - 0 1")       # exd5 wins the queen
    assert white.move.uci() == "e4d5" and white.score == pytest.approx(1.0)
    black = engine.choose_fen("4k3/8/8/3p4/4Q3/8/8/4K3 b - - 0 1")       # dxe4 wins the queen
    assert black.move.uci() == "d5e4" and black.score == pytest.approx(-1.0)
    scores = [s for _, s in black.candidates]
    assert scores == sorted(scores)                                       # Black: lowest first
    assert isinstance(black, Decision) and len(black.candidates) == chess.Board(
        "4k3/8/8/3p4/4Q3/8/8/4K3 b - - 0 1").legal_moves.count()


WINNING_WITH_STALEMATE = [
    ("k7/8/2N5/8/2NR4/7P/P7/2K5 w - - 3 61", {"d4d7", "c4d6", "c4a5"}),
    ("8/1r6/2nk4/3p4/3p4/3K4/8/8 b - - 25 58", {"b7b2"}),
    ("8/8/5Q2/B7/KP4B1/N2k4/1P6/8 w - - 8 61", {"f6f4"}),
]


@pytest.mark.parametrize("fen,stalemates", WINNING_WITH_STALEMATE)
def test_winning_side_never_stalemates(fen, stalemates, tiny_network):
    board = chess.Board(fen)
    outcomes = dict(zip(expand(board).moves, terminal_outcomes(board, expand(board)), strict=False))
    assert {m.uci() for m, o in outcomes.items() if o == STALEMATE} == stalemates
    for seed in range(20):
        for stochastic in (True, False):
            move = material_engine(stochastic=stochastic, seed=seed).choose(board).move
            assert move.uci() not in stalemates
    # stochastic, early in a game: the draw is never one of the random alternatives
    early = chess.Board(fen.rsplit(" ", 2)[0] + " 0 1")
    for seed in range(60):
        assert material_engine(seed=seed).choose(early).move.uci() not in stalemates


def test_losing_side_steers_into_stalemate():
    # Black is 11 pawns down; ...c3 leaves White without a legal move
    board = chess.Board("8/8/8/4k3/2p5/p4p1p/P1P2P1P/KB4BR b - - 0 40")
    decision = material_engine(stochastic=False).choose(board)
    assert decision.move.uci() == "c4c3" and decision.outcomes[decision.move] == STALEMATE
    assert decision.score == 0.0
    board.push(decision.move)
    assert board.is_stalemate()


def _knight_dance(white: str, black: str) -> chess.Board:
    board = chess.Board(f"{black}/8/8/8/8/8/8/{white} w - - 0 1")
    for uci in ["b1c3", "g8f6", "c3b1", "f6g8", "b1c3", "g8f6", "c3b1"]:
        board.push_uci(uci)
    return board   # Black to move: ...Ng8 repeats the position a third time


def test_no_repetition_claim_left_to_the_opponent_when_winning():
    def board_for(white: str, black: str) -> chess.Board:
        board = chess.Board(f"{black}/8/8/8/8/8/8/{white} w - - 0 1")
        for uci in ["b1c3", "g8f6", "c3b1", "f6g8", "b1c3", "g8f6"]:
            board.push_uci(uci)
        return board   # White to move: Nb1 would let Black repeat the start a third time (...Ng8)

    back = chess.Move.from_uci("c3b1")
    winning = board_for("1N1QK3", "4k1n1")
    for seed in range(10):
        decision = material_engine(seed=seed, stochastic=seed % 2 == 0).choose(winning)
        assert decision.claims == {back: OPPONENT_REPETITION}
        assert decision.move != back and dict(decision.candidates)[back] == 0.0
    losing = board_for("1N2K3", "3qk1n1")
    decision = material_engine(stochastic=False).choose(losing)
    assert decision.claims == {back: OPPONENT_REPETITION}
    assert dict(decision.candidates)[back] == pytest.approx(-9.0)   # Black would not claim
    fifty = chess.Board("4k3/8/8/8/8/8/8/R3K3 w - - 98 80")
    decision = material_engine(stochastic=False).choose(fifty)
    assert all(decision.claims.get(m) == OPPONENT_FIFTY for m, _ in decision.candidates)
    assert decision.score == 0.0
    assert_children_match(winning)
    assert_children_match(fifty)


def test_repetition_only_when_worse():
    losing = _knight_dance("1N1QK3", "4k1n1")      # Black a queen down
    decision = material_engine(stochastic=False).choose(losing)
    assert decision.move.uci() == "f6g8" and decision.outcomes[decision.move] == REPETITION
    winning = _knight_dance("1N2K3", "3qk1n1")     # Black a queen up
    for seed in range(10):
        assert material_engine(seed=seed).choose(winning).move.uci() != "f6g8"


def test_capture_bonus_is_an_option():
    fen = "4k3/7p/8/3n4/8/2N5/7P/4K3 w - - 0 1"     # Nxd5 or not: material says take
    plain = material_engine(stochastic=False).choose_fen(fen)
    bonus = material_engine(stochastic=False, capture_bonus=0.15).choose_fen(fen)
    assert plain.move.uci() == bonus.move.uci() == "c3d5"
    assert bonus.score == pytest.approx(plain.score + 0.15)
    black = material_engine(stochastic=False, capture_bonus=0.15).choose_fen(fen.replace(" w ", " b "))
    assert black.move.uci() == "d5c3" and black.score == pytest.approx(-3.15)


# -- the stochastic opening ---------------------------------------------------------------------
def test_opening_weights_table():
    for move in (1, 2, 3):
        assert opening_weights(move, 30) == pytest.approx([0.65, 0.20, 0.10, 0.05])
    for move in (4, 5):
        assert opening_weights(move, 30) == pytest.approx([0.70, 0.20, 0.10])
    for move in (6, 7):
        assert opening_weights(move, 30) == pytest.approx([0.80, 0.20])
    for move in (8, 9, 40):
        assert opening_weights(move, 30) == pytest.approx([1.0])
    assert opening_weights(1, 2) == pytest.approx([0.65 / 0.85, 0.20 / 0.85])
    assert opening_weights(1, 3) == pytest.approx([0.65 / 0.95, 0.20 / 0.95, 0.10 / 0.95])
    assert opening_weights(1, 1) == pytest.approx([1.0])
    # the searches draw (and value every move near the best exactly) through OPENING_MOVES, where the table stops
    assert len(opening_weights(OPENING_MOVES, 30)) > 1 and len(opening_weights(OPENING_MOVES + 1, 30)) == 1
    with pytest.raises(EngineError):
        opening_weights(1, 0)


def rank_frequencies(board: chess.Board, draws: int, seed: int = 5) -> np.ndarray:
    engine = material_engine(seed=seed)
    counts = Counter(engine.choose(board).rank for _ in range(draws))
    return np.array([counts[r] for r in range(max(counts) + 1)]) / draws


def test_stochastic_distribution_at_move_1():
    freq = rank_frequencies(chess.Board(), 4000)
    assert len(freq) == 4
    assert freq == pytest.approx([0.65, 0.20, 0.10, 0.05], abs=0.025)


def test_stochastic_at_move_6_and_after_move_7():
    board = chess.Board("r1bqkb1r/pppp1ppp/2n2n2/4p3/4P3/2N2N2/PPPP1PPP/R1BQKB1R w KQkq - 4 6")
    freq = rank_frequencies(board, 1500)
    assert len(freq) == 2 and freq == pytest.approx([0.80, 0.20], abs=0.03)
    later = chess.Board(board.fen().replace(" 4 6", " 4 8"))
    assert rank_frequencies(later, 300).tolist() == [1.0]
    at7 = chess.Board(board.fen().replace(" 4 6", " 4 7"))
    assert len(rank_frequencies(at7, 400)) == 2


def test_stochastic_renormalises_with_two_legal_moves():
    board = chess.Board("kr6/8/8/8/8/8/P7/K7 w - - 0 1")
    assert board.legal_moves.count() == 2
    freq = rank_frequencies(board, 3000)
    assert freq == pytest.approx([0.65 / 0.85, 0.20 / 0.85], abs=0.03)


def test_stochastic_is_seedable_and_switchable():
    board = chess.Board()
    a = [material_engine(seed=9).choose(board).move for _ in range(1)]
    runs = [[e.choose(board).move for _ in range(30)] for e in (material_engine(seed=9), material_engine(seed=9))]
    assert runs[0] == runs[1] and a[0] == runs[0][0]
    assert len(set(runs[0])) > 1
    fixed = material_engine(stochastic=False, seed=1)
    assert len({fixed.choose(board).move for _ in range(20)}) == 1


def test_move_number_is_the_games_own():
    # two engines, games at different stages: no counter shared between games
    engine = material_engine(seed=3)
    late = chess.Board("r1bqkb1r/pppp1ppp/2n2n2/4p3/4P3/2N2N2/PPPP1PPP/R1BQKB1R w KQkq - 4 20")
    for _ in range(50):
        engine.choose(chess.Board())
        assert engine.choose(late).rank == 0
    assert Counter(engine.choose(chess.Board()).rank for _ in range(200))[1] > 10


@pytest.mark.parametrize("fen,n", [
    ("kr6/8/8/8/p6p/P7/P6P/K7 w - - 0 1", 1),
    ("kr6/8/8/8/8/8/P7/K7 w - - 0 1", 2),
    ("kr6/8/8/8/7p/8/P6P/K7 w - - 0 1", 3),
    ("7k/8/8/8/8/8/6q1/7K w - - 0 1", 1),          # in check, one way out
])
def test_few_legal_moves(fen, n, tiny_network):
    board = chess.Board(fen)
    assert board.legal_moves.count() == n
    for evaluator in (MaterialEvaluator(), tiny_network):
        for seed in range(30):
            decision = OnePlyEngine(evaluator, seed=seed).choose(board)
            assert decision.move in board.legal_moves
            assert len(decision.candidates) == n


# -- errors --------------------------------------------------------------------------------------
@pytest.mark.parametrize("fen,words", [
    ("R5k1/5ppp/8/8/8/8/5PPP/6K1 b - - 0 1", "checkmate"),
    ("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", "stalemate"),
])
def test_finished_positions_are_a_clear_error(fen, words):
    board = chess.Board(fen)
    assert not any(board.legal_moves)
    with pytest.raises(EngineError, match=f"no legal moves.*{words}"):
        material_engine().choose(board)


@pytest.mark.parametrize("fen", [
    "not a fen", "", "8/8/8/8/8/8/8/8 w - - 0 1", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN w KQkq - 0 1", "kk6/8/8/8/8/8/8/KK6 w - - 0 1",
])
def test_invalid_fen_is_a_clear_error(fen):
    with pytest.raises(EngineError) as info:
        material_engine().choose_fen(fen)
    text = str(info.value)
    assert "\n" not in text and ("invalid FEN" in text or "impossible position" in text)


def test_bad_input_errors():
    engine = material_engine()
    with pytest.raises(EngineError, match="illegal move"):
        board_from_fen("startpos", ["e2e5"])
    with pytest.raises(EngineError, match="illegal move"):
        board_from_fen("startpos", ["0000"])
    assert board_from_fen("startpos", ["e4", "e7e5", "Nf3"]).fullmove_number == 2
    with pytest.raises(EngineError, match=r"expected a chess\.Board"):
        engine.choose("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")  # type: ignore[arg-type]
    with pytest.raises(EngineError, match="not an evaluator"):
        OnePlyEngine(object())  # type: ignore[arg-type]


def test_root_moves_restrict_the_candidates():
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    only = [chess.Move.from_uci("h2h3"), chess.Move.from_uci("g2g3")]
    decision = material_engine(stochastic=False).choose(board, root_moves=only)
    assert decision.move in only and len(decision.candidates) == 2
    # none of them legal: every legal move is a candidate again
    decision = material_engine(stochastic=False).choose(board, root_moves=[chess.Move.from_uci("e2e4")])
    assert decision.move.uci() == "a1a8"


# -- evaluators by name ---------------------------------------------------------------------------
def test_select_evaluator_fallback_is_announced(monkeypatch):
    import knights.evaluate.names as ev

    monkeypatch.setattr(ev, "available_evaluators", lambda: ["material"])
    notes: list[str] = []
    chosen = select_evaluator(None, notice=notes.append)
    assert chosen.name == "material"
    assert len(notes) == 1 and ev.DEFAULT_EVALUATOR in notes[0] and "material" in notes[0]
    assert select_evaluator("material", notice=notes.append).name == "material" and len(notes) == 1
    with pytest.raises(EvaluatorError, match=r"not available.*available: material"):
        select_evaluator("EL/v3")
    with pytest.raises(EvaluatorError, match="unknown evaluator"):
        select_evaluator("EL/v99")
    with pytest.raises(EvaluatorError, match="unknown evaluator"):
        select_evaluator("stockfish")


# -- whole games ------------------------------------------------------------------------------------
def test_player_protocol():
    bot = EnginePlayer(material_engine(seed=1), "bot")
    assert isinstance(bot, Player) and isinstance(RandomPlayer(1), Player)
    move = bot.choose_move(chess.Board())
    assert move in chess.Board().legal_moves and bot.last is not None and bot.last.move == move
    bot.new_game()
    bot.close()
    assert bot.last is None


def test_games_against_random_and_itself(tiny_network):
    results = Counter()
    for seed in range(8):
        evaluator = tiny_network if seed % 4 == 3 else MaterialEvaluator()
        bot = EnginePlayer(OnePlyEngine(evaluator, seed=seed), "bot")
        rnd = RandomPlayer(seed)
        white, black = (bot, rnd) if seed % 2 == 0 else (rnd, bot)
        record = play_game(white, black, settings=Settings(max_plies=160, adjudicate_cp=None, claim_next_move=False))
        assert record.illegal == 0 and not record.error, record.error
        replay = chess.Board()
        for move in record.board.move_stack:    # play_game checks each move; replay to be sure
            assert move in replay.legal_moves
            replay.push(move)
        results[record.termination] += 1
        other = EnginePlayer(OnePlyEngine(evaluator, seed=seed + 100), "bot2")
        record = play_game(bot, other, settings=Settings(max_plies=120, adjudicate_cp=None, claim_next_move=False))
        assert record.illegal == 0 and not record.error, record.error
        assert record.termination != MAX_PLIES or record.plies == 120
        results[record.termination] += 1
    assert sum(results.values()) == 16


def test_play_game_records_a_players_fault():
    class Cheater:
        name = "cheater"

        def choose_move(self, board):
            return chess.Move.from_uci("e2e5")

        def new_game(self):
            pass

        def close(self):
            pass

    class Crasher(Cheater):
        name = "crasher"

        def choose_move(self, board):
            raise RuntimeError("boom")

    record = play_game(Cheater(), RandomPlayer(0))
    assert record.illegal == 1 and record.result == "0-1" and "cheater" in record.error
    record = play_game(RandomPlayer(0), Crasher())
    assert record.termination == FORFEIT_ERROR and record.result == "1-0" and "boom" in record.error


def test_game_over_reasons():
    assert game_over(chess.Board()) is None
    assert game_over(chess.Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")) == "stalemate"
    assert game_over(chess.Board("7k/8/8/8/8/8/8/K7 w - - 0 1")) == "insufficient material"
    assert game_over(chess.Board("7k/8/8/8/8/8/8/KR6 w - - 100 80")) == FIFTY
    board = chess.Board()
    for uci in ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8"]:
        board.push_uci(uci)
    assert game_over(board) == REPETITION


def test_a_draw_the_side_to_move_could_claim_is_its_choice():
    """The arena ends a game on a repetition on the board, not on one the side to move
    could announce: a queen up, Black plays on instead of ...Ng8."""
    from knights.board.outcome import outcome

    board = _knight_dance("1N2K3", "3qk1n1")
    assert board.can_claim_threefold_repetition() and not board.is_repetition(3)
    assert outcome(board) is None and Settings().claim_next_move is False
    assert outcome(board, claim_next_move=True).termination == chess.Termination.THREEFOLD_REPETITION
    record = play_game(EnginePlayer(material_engine(stochastic=False)), EnginePlayer(material_engine(stochastic=False)),
                       board, Settings(max_plies=len(board.move_stack) + 1, adjudicate_cp=None))
    assert record.termination == MAX_PLIES


# -- the benchmarks' pieces (the timings themselves are `knights bench decision soak`) ----------------
def test_bench_pieces_compare_like_with_like():
    from knights.lab.bench.core import make_result
    from knights.lab.bench.engine import middlegame_positions, per_move_loop, soak

    boards = middlegame_positions(6)
    assert len(boards) == 6
    engine = material_engine(stochastic=False)
    for board in boards:
        assert 25 <= board.legal_moves.count() <= 45 and board.fullmove_number >= 10
        ours = engine.choose(board)
        loop = per_move_loop(MaterialEvaluator(), board)
        assert dict(ours.candidates)[loop] == pytest.approx(ours.score)   # the same best value
    tally = soak(4, evaluator=MaterialEvaluator(), max_plies=60)
    assert tally["games"] == 4 and tally["illegal"] == 0 and tally["errors"] == 0
    assert sum(tally["vs_random"].values()) == 2 and sum(tally["self_play"].values()) == 2
    assert make_result("soak", 4.0, 4.0, target=1.0)["passed"]


def test_a_refused_evaluator_name_says_what_the_evaluators_are() -> None:
    from knights.evaluate.names import canonical_evaluator_name

    for name in ("garbage", "EL/v18+qsearch+threats"):
        with pytest.raises(EvaluatorError, match="the evaluators are material, democracy"):
            canonical_evaluator_name(name)
    with pytest.raises(EvaluatorError, match="SL/v2 is a move network"):
        canonical_evaluator_name("sl/v2")
    with pytest.raises(EvaluatorError, match="known are"):
        canonical_evaluator_name("EL/v999")


def test_castling_is_read_as_people_type_it() -> None:
    from knights.engine.user_input import parse_move

    board = chess.Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    for typed, uci in (("o-o", "e1g1"), ("O-O-O", "e1c1"), ("0-0", "e1g1"), ("0-0-0+", "e1c1"), ("e1g1", "e1g1")):
        assert parse_move(board, typed).uci() == uci
    with pytest.raises(EngineError):
        parse_move(chess.Board(), "o-o")                 # not legal from the start
