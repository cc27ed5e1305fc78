"""The search engine (knights.engine.search) and its Zobrist hashes (knights.engine.zobrist)."""

from __future__ import annotations

import random

import chess
import chess.polyglot
import pytest

from knights.engine.constants import MATE
from knights.engine.one_ply import OnePlyEngine
from knights.engine.search import Control, SearchEngine, SearchLimits
from knights.engine.zobrist import hash_after, zobrist
from knights.evaluate.base import MaterialEvaluator


# -- Zobrist --------------------------------------------------------------------------------------
def test_incremental_hash_equals_polyglot_on_every_move_of_random_games():
    """Every legal move of 15 random games, over 100,000 (castling, en passant, promotions,
    captures of rooks on their corners all happen), against python-chess's Polyglot hash."""
    rng = random.Random(3)
    checked = kinds = 0
    seen = set()
    for _ in range(15):
        board = chess.Board()
        h = zobrist(board)
        while not board.is_game_over() and board.ply() < 300:
            moves = list(board.legal_moves)
            for move in moves:
                child = hash_after(board, h, move)
                if board.is_castling(move):
                    seen.add("castling")
                if board.is_en_passant(move):
                    seen.add("en passant")
                if move.promotion:
                    seen.add("promotion")
                board.push(move)
                assert child == chess.polyglot.zobrist_hash(board), (board.fen(), move)
                board.pop()
                checked += 1
            move = rng.choice(moves)
            h = hash_after(board, h, move)
            board.push(move)
        kinds = len(seen)
    assert checked > 100_000 and kinds == 3


def test_en_passant_counts_only_when_a_pawn_can_take():
    board = chess.Board("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1")
    lone = hash_after(board, zobrist(board), chess.Move.from_uci("e2e4"))
    board.push_uci("e2e4")
    assert lone == zobrist(chess.Board(board.fen().replace(" e3 ", " - ")))
    board = chess.Board("4k3/8/8/8/5p2/8/4P3/4K3 w - - 0 1")
    ready = hash_after(board, zobrist(board), chess.Move.from_uci("e2e4"))
    board.push_uci("e2e4")
    assert ready != zobrist(chess.Board(board.fen().replace(" e3 ", " - ")))


# -- depth 1 is the one-ply bot ----------------------------------------------------------------------
def test_depth_one_is_exactly_the_one_ply_bot_stochastic_opening_included():
    """The same seed gives the same moves, scores and candidate lists over whole games."""
    for seed in range(3):
        one_ply = OnePlyEngine(MaterialEvaluator(), stochastic=True, seed=seed)
        search = SearchEngine(MaterialEvaluator(), depth=1, stochastic=True, seed=seed)
        board = chess.Board()
        while not board.is_game_over() and board.ply() < 60:
            a, b = one_ply.choose(board), search.choose(board)
            assert (a.move, a.score, a.candidates, a.rank) == (b.move, b.score, b.candidates, b.rank)
            assert b.depth == 1
            board.push(a.move)


# -- what the search sees ------------------------------------------------------------------------------
def engine(depth: int = 4) -> SearchEngine:
    return SearchEngine(MaterialEvaluator(), depth=depth, stochastic=False)


def test_mate_in_two_is_found_and_reported_as_such():
    """Doubled rooks against a back rank: 1. Rd8+ Rxd8 2. Rxd8#. One ply sees no mate."""
    board = chess.Board("r5k1/5ppp/8/8/8/3R4/5PPP/3R2K1 w - - 0 1")
    assert OnePlyEngine(MaterialEvaluator(), stochastic=False).choose(board).mate_in is None
    decision = engine(4).choose(board)
    assert decision.move == chess.Move.from_uci("d3d8")
    assert decision.mate_in == 2 and decision.pv[0] == decision.move and len(decision.pv) == 3
    assert decision.score == 100.0          # a mate, in the one-ply bot's pawns (MATE_SCORE)


def test_a_defended_piece_is_not_taken_with_the_queen():
    """One ply takes the pawn (+1); two plies see the queen lost to the recapture."""
    board = chess.Board("4k3/8/2p5/3p4/8/8/3Q4/4K3 w - - 0 1")
    greedy = OnePlyEngine(MaterialEvaluator(), stochastic=False).choose(board).move
    assert greedy == chess.Move.from_uci("d2d5")
    assert engine(3).choose(board).move != chess.Move.from_uci("d2d5")


def test_quiescence_finishes_the_exchange():
    """Black is two pawns up; d5 is defended twice. At depth 2 the horizon falls in the middle
    of Rxd5 cxd5 Rxd8+ Kxd8 lines; the capture search plays them out (seldepth beyond 2),
    so the rook stays home and the score is the true -2."""
    board = chess.Board("3rk3/8/2p5/3p4/8/8/8/3RK3 w - - 0 1")
    decision = engine(2).choose(board)
    assert decision.move != chess.Move.from_uci("d1d5")
    assert decision.score == -2.0 and decision.seldepth > 2


def test_repetition_is_a_draw_a_losing_side_takes():
    """A queen down, White can repeat for the third time a position the game has seen twice:
    the search values that move at 0 and plays it (a position seen once before is not yet a
    draw: the opponent could step aside)."""
    board = chess.Board("k7/8/8/8/8/8/1q6/6NK w - - 0 1")
    for uci in ("g1f3", "b2b3", "f3g1", "b3b2") * 2:
        board.push_uci(uci)
    decision = engine(3).choose(board)
    assert decision.move == chess.Move.from_uci("g1f3") and decision.score == 0


def test_fifty_move_rule_draw():
    board = chess.Board("k7/8/8/8/8/8/1q6/6NK w - - 99 80")
    decision = engine(3).choose(board)
    assert decision.score == 0      # every reversible move ends the game in a draw


def test_searchmoves_restrict_the_root():
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    only = [chess.Move.from_uci("h2h3"), chess.Move.from_uci("g2g4")]
    assert engine(3).choose(board, only).move in only


def test_every_move_is_legal_in_random_positions():
    rng = random.Random(7)
    eng = engine(3)
    for _ in range(25):
        board = chess.Board()
        for _ in range(rng.randrange(0, 60)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        if board.is_game_over():
            continue
        decision = eng.choose(board, limits=SearchLimits(nodes=3000))
        assert decision.move in board.legal_moves
        assert decision.candidates[0][0] == decision.move
        assert sorted(m.uci() for m, _ in decision.candidates) == sorted(m.uci() for m in board.legal_moves)


# -- limits, stop, batches -----------------------------------------------------------------------
def test_node_limit_and_stop_request_end_the_search():
    board = chess.Board("r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP2BPPP/R2QKB1R w KQ - 0 9")
    eng = engine(64)
    eng.choose(board, limits=SearchLimits(nodes=2000))
    assert eng.counters.nodes <= 2000

    class StopAtOnce(Control):
        def should_stop(self) -> bool:
            return True

    decision = eng.choose(board, limits=SearchLimits(), control=StopAtOnce())
    assert decision.move in board.legal_moves and decision.depth <= 2


def test_iterations_deepen_and_report():
    board = chess.Board("r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP2BPPP/R2QKB1R w KQ - 0 9")
    seen = []
    decision = engine(3).choose(board, on_iteration=seen.append)
    assert [it.depth for it in seen] == [1, 2, 3] and decision.depth == 3
    assert seen[-1].pv[0] == decision.move and seen[-1].nodes > seen[-2].nodes
    line = seen[-1].uci()
    assert line.startswith("info depth 3 seldepth ") and " pv " + decision.move.uci() in line


def test_leaves_are_evaluated_in_batches_and_cached():
    board = chess.Board("r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP2BPPP/R2QKB1R w KQ - 0 9")
    eng = engine(3)
    eng.choose(board)
    c = eng.counters
    assert c.eval_calls > 0 and c.eval_positions / c.eval_calls > 4      # siblings together
    again = eng.choose(board)      # the same position: the cache answers almost everything
    assert eng.counters.eval_positions < c.eval_positions / 4
    assert again.move in board.legal_moves


def test_stochastic_opening_picks_only_near_the_best():
    picks = set()
    for seed in range(12):
        eng = SearchEngine(MaterialEvaluator(), depth=2, stochastic=True, seed=seed)
        decision = eng.choose(chess.Board())
        best = decision.candidates[0][1]
        assert decision.score >= best - 0.5 - 1e-9
        picks.add(decision.move)
    assert len(picks) > 1      # it does vary


def test_mate_scores_count_down():
    """A mate in one ply scores ``MATE - 1`` and reads as ``mate 1``."""
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    eng = engine(3)
    decision = eng.choose(board)
    assert decision.move == chess.Move.from_uci("a1a8") and decision.mates
    assert eng.last is not None and eng.last.score == MATE - 1 and eng.last.mate_in == 1


@pytest.mark.parametrize("depth", [0, -1])
def test_bad_depth_is_refused(depth):
    from knights.engine.user_input import EngineError

    with pytest.raises(EngineError, match="depth must be at least 1"):
        SearchEngine(MaterialEvaluator(), depth=depth)


def test_null_move_hash_equals_polyglot():
    from knights.engine.zobrist import hash_after_null

    for fen in ("rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3", chess.STARTING_FEN):
        board = chess.Board(fen)
        h = hash_after_null(board, zobrist(board))
        board.push(chess.Move.null())
        assert h == chess.polyglot.zobrist_hash(board)


def test_a_full_evaluation_cache_is_emptied_without_losing_a_value(monkeypatch):
    """The cache used to be cleared between finding the missing values and reading them
    back: a KeyError at the first partly cached node after it filled up."""
    import knights.engine.search as search

    monkeypatch.setattr(search, "EVAL_ENTRIES", 50)
    board = chess.Board("r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP2BPPP/R2QKB1R w KQ - 0 9")
    decision = engine(3).choose(board)
    assert decision.move in board.legal_moves and decision.depth == 3
