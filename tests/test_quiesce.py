"""``EL/v21+quiesce`` (knights.engine.judged): the compiled capture search with the network
judging where the captures end, as the compiled search's depth 1 judges each move."""

from __future__ import annotations

import chess
import numpy as np
import pytest

from knights.board.positions import positions_from_boards
from knights.engine import compiled as core
from knights.engine.compiled_search import FastSearchEngine
from knights.engine.constants import INF
from knights.engine.incremental import NetEvaluator, load_net
from knights.engine.judged import QuiescenceEvaluator, split_quiesce
from knights.evaluate.load import load_evaluator
from knights.evaluate.names import EvaluatorError
from knights.learn import registry

NETWORK = "EL/v21"   # pinned: the en-passant test reads a line (the capture) that EL/v21 plays after the push
pytestmark = pytest.mark.skipif(not registry.get(NETWORK).is_trained(), reason=f"{NETWORK} is not trained here")

AFTER_F6 = "r1bqkbnr/1pp3pp/p1p2p2/4p3/3PP3/5N2/PPP2PPP/RNBQK2R w KQkq - 0 6"
"""1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Bxc6 dxc6 5. d4 f6: Nxe5 looks like a pawn won and loses the knight to fxe5."""
MIDDLEGAMES = [
    AFTER_F6,
    "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP2BPPP/R2QKB1R w KQ - 0 9",
    "rnb1kbnr/pppp1ppp/8/4p1q1/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 0 1",
    "r2qkb1r/ppp2ppp/2np1n2/4p3/2B1P1b1/2NP1N2/PPP2PPP/R1BQK2R w KQkq - 0 6",
]


@pytest.fixture(scope="module")
def judged() -> QuiescenceEvaluator:
    return QuiescenceEvaluator(NETWORK)


def test_a_position_with_nothing_to_take_reads_the_network_itself(judged: QuiescenceEvaluator) -> None:
    static = NetEvaluator(load_net(NETWORK), NETWORK)
    for fen in (chess.STARTING_FEN, "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"):
        board = chess.Board(fen)
        assert not any(board.is_capture(m) for m in board.legal_moves) and not board.is_check()
        expected = float(static.evaluate(positions_from_boards([board]))[0])
        assert judged.value(board) == pytest.approx(expected, abs=0.006)     # the search rounds to centipawns
        board.push(chess.Move.null())                                      # the same seen from Black's move
        assert judged.value(board) == pytest.approx(float(static.evaluate(positions_from_boards([board]))[0]),
                                                    abs=0.006)


def test_the_captures_are_played_out_and_the_end_judged() -> None:
    judged = QuiescenceEvaluator(NETWORK, check_plies=0)   # captures only (after fxe5, Qh5+ is a check)
    queen_hangs = chess.Board("rnb1kbnr/pppp1ppp/8/4p1q1/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 0 1")  # Nxg5
    after = queen_hangs.copy()
    after.push_san("Nxg5")
    assert judged.value(queen_hangs) == pytest.approx(judged.value(after), abs=0.006)   # the capture is the line
    assert judged.value(queen_hangs) > 5
    board = chess.Board(AFTER_F6)
    board.push_san("Nxe5")                                       # Black to move takes the knight: fxe5
    taken = board.copy()
    taken.push_san("fxe5")
    assert judged.value(board) == pytest.approx(judged.value(taken), abs=0.006) and judged.value(board) < -1.5
    threatened = chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 b - - 0 1")  # Rd8 would mate, but it is no capture
    assert abs(judged.value(threatened)) < 50
    mated = chess.Board("3R2k1/5ppp/8/8/8/8/5PPP/6K1 b - - 0 1")          # Black in check, no evasion left
    assert judged.value(mated) == 100.0                                    # White's side: a won position
    assert judged.value(mated.mirror()) == -100.0


def test_a_data_sets_rows_are_searched_with_their_en_passant_square(judged: QuiescenceEvaluator) -> None:
    """Rows that carry castling rights and the en-passant square (a data set's) are searched with them;
    arrays without the square do not see the capture exd6 e.p."""
    from types import SimpleNamespace

    from knights.board.arrays import parse_fens_full

    fen = "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2"                      # d7-d5 was just played: exd6 e.p. wins it
    board = chess.Board(fen)
    rows = SimpleNamespace(**parse_fens_full([fen]))
    with_ep = float(judged.evaluate(rows)[0])
    assert with_ep == pytest.approx(judged.value(board), abs=1e-6)
    taken = board.copy()
    taken.push_san("exd6")
    assert with_ep == pytest.approx(judged.value(taken), abs=0.006)          # the capture is the line
    without = float(judged.evaluate(positions_from_boards([board]))[0])
    assert without != pytest.approx(with_ep, abs=0.05)


def test_the_one_ply_engine_hands_it_the_en_passant_square_a_push_leaves(judged: QuiescenceEvaluator) -> None:
    """After e2-e4 beside Black's pawn on d4, dxe3 e.p. takes the pawn: the value the one-ply engine's
    evaluator gives e2-e4 is the capture search's value of the board python-chess reaches, which is
    the value after the capture (White keeps only the c-pawn)."""
    from knights.board.children import expand
    from knights.engine.one_ply import OnePlyEngine

    board = chess.Board("4k3/8/8/8/3p4/8/2P1P3/4K3 w - - 0 1")
    seen: list[float] = []

    class Spy:
        def evaluate(self, positions):                      # what the engine asks, passed on
            values = judged.evaluate(positions)
            seen.extend(values.tolist())
            return values

    children = expand(board)
    push = next(i for i, m in enumerate(children.moves) if m.uci() == "e2e4")
    for move, ep in zip(children.moves, children.ep.tolist(), strict=True):   # as python-chess's push leaves it
        child = board.copy()
        child.push(move)
        assert ep == (-1 if child.ep_square is None else child.ep_square), move
    OnePlyEngine(Spy(), stochastic=False).score_children(board, children)
    after = board.copy()
    after.push_uci("e2e4")
    assert after.ep_square == chess.E3 and after.has_legal_en_passant()
    assert seen[push] == pytest.approx(judged.value(after), abs=1e-6)
    taken = after.copy()
    taken.push_uci("d4e3")
    assert seen[push] == pytest.approx(judged.value(taken), abs=0.006)       # the capture is the line
    after.ep_square = None                                   # without the square the pawn is not taken
    assert judged.value(after) - seen[push] > 0.5


def test_a_mate_reads_as_asked() -> None:
    mated = chess.Board("3R2k1/5ppp/8/8/8/8/5PPP/6K1 b - - 0 1")
    assert QuiescenceEvaluator(NETWORK, mate_pawns=10.0).value(mated) == 10.0


def test_the_side_to_move_may_also_give_check_at_the_first_ply(judged: QuiescenceEvaluator) -> None:
    """Black has nothing to take, but Ne3+ forks the king and the queen: the capture search with the
    checks finds it (the queen is won), the one without stands pat a queen down."""
    fork = chess.Board("6k1/5ppp/8/8/2n5/6P1/6KP/3Q4 b - - 0 1")
    assert not any(fork.is_capture(m) for m in fork.legal_moves)
    without = QuiescenceEvaluator(NETWORK, check_plies=0).value(fork)
    assert without > 4                                            # White's side: a queen against a knight
    assert judged.value(fork) < without - 5                       # the queen is lost to the fork
    mate = chess.Board("6k1/5ppp/8/8/8/6P1/6KP/3Q4 w - - 0 1")   # Qd8# is a quiet check too
    assert judged.value(mate) == 100.0 and abs(QuiescenceEvaluator(NETWORK, check_plies=0).value(mate)) < 50
    start = chess.Board()                                          # no check to give: the same value
    assert judged.value(start) == QuiescenceEvaluator(NETWORK, check_plies=0).value(start)


def test_one_ply_with_it_is_the_compiled_search_at_depth_one() -> None:
    """The best move and its value of the compiled search's depth-1 iteration (each move, then the
    capture search) equal the one-ply choice over this evaluator's values of the moves' positions,
    without the first ply's checks (the search's capture search plays none)."""
    judged = QuiescenceEvaluator(NETWORK, check_plies=0)
    search = FastSearchEngine(net=NETWORK, depth=2, stochastic=False)
    for fen in MIDDLEGAMES:
        board = chess.Board(fen)
        fast, t = search.core, search.core.tables
        fast.load(board)
        t.stats[:] = 0
        t.ctl[core.C_STOP] = 0
        t.ctl[core.C_NODE_LIMIT] = 0
        moves = list(board.legal_moves)
        index, score = fast.iterate(1, -INF, INF, [fast.compiled(m) for m in moves], -1)
        best = {fast.compiled(m): m for m in moves}[int(t.root_moves[index])]
        sign = 1 if board.turn == chess.WHITE else -1
        values = {}
        for m in moves:
            child = board.copy()
            child.push(m)
            values[m] = sign * judged.value(child)
        top = max(values.values())
        assert values[best] == pytest.approx(top, abs=0.006), fen
        assert score / 100 == pytest.approx(top, abs=0.006), fen


def test_the_bot_with_it_keeps_the_knight_the_plain_network_gives_away() -> None:
    from knights.lab.arena.specs import build_player

    board = chess.Board(AFTER_F6)
    assert build_player(f"ours:{NETWORK}:det").choose_move(board) == chess.Move.from_uci("f3e5")
    keeps = build_player(f"ours:{NETWORK}+quiesce:det").choose_move(board)
    assert keeps in board.legal_moves and keeps != chess.Move.from_uci("f3e5")


def test_only_compiled_networks_are_judged_so_and_the_evaluator_names_say_where() -> None:
    assert split_quiesce(f"{NETWORK}+QUIESCE") == NETWORK and split_quiesce("material") is None
    with pytest.raises(ValueError, match=r"material\+qsearch"):
        QuiescenceEvaluator("material")
    with pytest.raises(EvaluatorError, match=rf"ours:{NETWORK}\+quiesce"):
        load_evaluator(f"{NETWORK}+quiesce")


def test_the_builder_plays_it_one_ply_and_searches_its_network_deeper() -> None:
    """Every route builds ``X+quiesce`` with the one builder: one ply ahead it keeps the knight that the plain network
    gives away; deeper it is the network's own compiled search, whose one-ply stage is the plain network."""
    from knights.engine.build import available, build, resolve
    from knights.engine.spec import parse
    from knights.frontends.web.engines import EngineSettings, engine_for

    board, gives_away = chess.Board(AFTER_F6), chess.Move.from_uci("f3e5")
    asked = f"{NETWORK.lower()}+Quiesce"
    assert resolve(parse(asked)).evaluator == f"{NETWORK}+quiesce" and f"{NETWORK}+quiesce" in available()
    one_ply = build(parse(asked, depth=1, stochastic=False))
    assert one_ply.depth == 1 and isinstance(one_ply.one_ply.evaluator, QuiescenceEvaluator)
    assert one_ply.choose(board).move != gives_away
    deeper = build(parse(asked, depth=3, stochastic=False))
    assert isinstance(deeper, FastSearchEngine) and deeper.net_label == NETWORK
    assert not isinstance(deeper.one_ply.evaluator, QuiescenceEvaluator)     # the search's stage is plain
    settings = EngineSettings.from_json({"evaluator": asked, "depth": 1, "stochastic": False})
    assert settings.evaluator == f"{NETWORK}+quiesce"
    assert engine_for(settings).choose(board).move != gives_away
    with pytest.raises(EvaluatorError, match="only the compiled sparse networks"):
        parse("material+quiesce")


def test_the_uci_option_takes_it() -> None:
    from knights.frontends.uci import UciSession

    lines: list[str] = []
    session = UciSession(lines.append, seed=1, engine_process=False)
    try:
        session.handle("uci")
        (option,) = [x for x in lines if x.startswith("option name Evaluator ")]
        assert f"var {NETWORK}+quiesce" in option
        for command in (f"setoption name Evaluator value {NETWORK.lower()}+quiesce", "setoption name Depth value 1",
                        "setoption name Stochastic value false", f"position fen {AFTER_F6}", "go"):
            session.handle(command)
        session.drain()
        (best,) = [x for x in lines if x.startswith("bestmove")]
        assert best.split()[1] != "f3e5" and chess.Move.from_uci(best.split()[1]) in chess.Board(AFTER_F6).legal_moves
        assert session.state()["evaluator"] == f"{NETWORK}+quiesce"
    finally:
        session.close()


def test_the_sparse_democracy_is_the_mean_of_its_judged_networks_and_the_one_ply_default() -> None:
    """``sparse+quiesce`` (the one-ply bot's default): the mean of its members judged where the captures end, at
    equal weights; every route resolves it, and a search deeper than one ply plays the search's own network."""
    from knights.engine.build import build, resolve
    from knights.engine.judged import JudgedDemocracy
    from knights.engine.spec import ONE_PLY_EVALUATOR, SEARCH_NETWORK, SPARSE_DEMOCRACY, BotSpec, parse

    if not all(registry.get(m).is_trained() for m in SPARSE_DEMOCRACY):
        pytest.skip("the sparse democracy's members are not all trained here")
    boards = [chess.Board(f) for f in MIDDLEGAMES]
    boards.append(chess.Board("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3"))   # e.p. and castling
    democracy = JudgedDemocracy()   # (each member judges every board in one compiled call)
    members = [QuiescenceEvaluator(m).evaluate_boards(boards) for m in SPARSE_DEMOCRACY]
    alone = QuiescenceEvaluator(SPARSE_DEMOCRACY[-1])   # a batch carries nothing from one position to the next
    assert members[-1].tolist() == [np.float32(alone.value(b)) for b in boards]
    assert alone.evaluate_boards(boards[::-1]).tolist() == members[-1][::-1].tolist()
    with pytest.raises(ValueError, match="judge_states takes boards"):
        alone.judge_states(np.zeros((2, 64), np.int8), np.zeros((1, 10), np.int64))
    assert democracy.evaluate_boards(boards) == pytest.approx(sum(members) / len(members), abs=1e-5)
    assert democracy.evaluate(positions_from_boards(boards)) == pytest.approx(sum(members) / len(members), abs=1e-5)
    assert resolve(BotSpec(depth=1)).evaluator == parse("SPARSE+Quiesce").evaluator == ONE_PLY_EVALUATOR
    assert ONE_PLY_EVALUATOR == "sparse+quiesce"
    one_ply = build(BotSpec(depth=1, stochastic=False))
    assert isinstance(one_ply.one_ply.evaluator, JudgedDemocracy)
    assert one_ply.choose(chess.Board(AFTER_F6)).move != chess.Move.from_uci("f3e5")
    deeper = build(parse("sparse+quiesce", depth=3, stochastic=False))
    assert isinstance(deeper, FastSearchEngine) and deeper.net_label == SEARCH_NETWORK
    assert not isinstance(deeper.one_ply.evaluator, JudgedDemocracy)
    m = democracy.mate_pawns
    mates = np.array([[True, False, True], [False, False, False], [False, False, True]])
    votes = democracy.vote(np.array([[m, 1.0, -m], [2.0, 3.0, -1.0], [4.0, m, m]]), mates)
    assert votes.tolist() == pytest.approx([m, (1 + 3 + m) / 3, -1 / 3])   # a mate stands; opposite ones average
    with pytest.raises(ValueError, match="at least one network"):
        JudgedDemocracy(())


NO_CASTLING = [
    "r2q1rk1/pp2bppp/2n1pn2/3p4/2PP2b1/2N1PN2/PP2BPPP/R2Q1RK1 w - - 2 10",
    "2r2rk1/pp1q1ppp/2n1pn2/3p4/3P4/P1NBPN2/1P3PPP/2RQ1RK1 b - - 0 15",
    "8/5pk1/6p1/8/3R4/6P1/5PK1/3r4 w - - 0 40",
    "r4rk1/1b2bppp/p3pn2/1p6/3N4/1BN1B3/PPP2PPP/R4RK1 w - - 0 14",
]
"""Positions no side can castle in: there a position and its mirror image (files reversed) are the same chess."""


def test_a_mirrored_network_judges_the_mirror_image(judged: QuiescenceEvaluator) -> None:
    """files_mirrored: the twin's capture search of a position is the network's of the position with its files
    reversed (the same lines, mirrored); mirroring twice gives the network back; a zoned network is refused."""
    from knights.engine.incremental import files_mirrored

    twin = QuiescenceEvaluator(files_mirrored(judged.net), name="twin")
    for fen in NO_CASTLING:
        board = chess.Board(fen)
        mirror = board.transform(chess.flip_horizontal)
        assert twin.value(board) == pytest.approx(judged.value(mirror), abs=1e-4), fen
    assert np.array_equal(files_mirrored(files_mirrored(judged.net)).cols, judged.net.cols)
    assert not np.array_equal(twin.net.cols, judged.net.cols)
    zoned = judged.net._replace(cols=np.zeros((768 * 5 + 1, 4), np.float32))
    with pytest.raises(ValueError, match="king's zones"):
        files_mirrored(zoned)
    with pytest.raises(ValueError, match="fallback"):
        files_mirrored(load_net(None))


def test_the_democracy_asks_the_twins_only_where_no_side_can_castle() -> None:
    """``mirrors``: each member's twin votes beside it where no side can castle (the mean of the member's value of
    the position and of its mirror image); where a side can, the mirror is another position and the plain mean
    stands. Without mirrors, the plain mean everywhere."""
    from knights.engine.judged import JudgedDemocracy

    pair = ("EL/v20", "EL/v21")
    if not all(registry.get(m).is_trained() for m in pair):
        pytest.skip("the networks are not trained here")
    boards = [chess.Board(f) for f in NO_CASTLING[:2] + MIDDLEGAMES]
    plain = [QuiescenceEvaluator(m).evaluate_boards(boards) for m in pair]
    castles = np.array([b.castling_rights != 0 for b in boards])
    mirrored = [QuiescenceEvaluator(m).evaluate_boards([b if c else b.transform(chess.flip_horizontal)
                                                        for b, c in zip(boards, castles, strict=True)]) for m in pair]
    both = np.where(castles, sum(plain) / 2, (sum(plain) + sum(mirrored)) / 4)
    assert JudgedDemocracy(pair, mirrors=True).evaluate_boards(boards) == pytest.approx(both, abs=1e-4)
    assert JudgedDemocracy(pair, mirrors=False).evaluate_boards(boards) == pytest.approx(sum(plain) / 2, abs=1e-5)
    assert castles.any() and not castles.all()


def test_a_version_continued_from_one_that_learned_endings_learned_them_too() -> None:
    """EL/v25 starts from EL/v24's weights and does not train on data/endings again: what it knows of endings is
    its parent's, so it counts as a network that learned them (EL/v19, before the endings data, does not)."""
    from knights.engine.judged import trained_on_endings

    assert "data/endings" not in registry.get("EL/v25").library.MORE and registry.get("EL/v25").library.PARENT
    assert trained_on_endings("EL/v25") and trained_on_endings("EL/v20") and not trained_on_endings("EL/v19")


def test_an_ending_is_judged_by_the_networks_that_learned_endings() -> None:
    """At most ENDING_MEN men (what the endings data starts from): the mean of the members whose data held
    data/endings; more men: every member's; without the rule (``endings=False``), every member's everywhere."""
    from knights.engine.judged import ENDING_MEN, JudgedDemocracy, trained_on_endings
    from knights.engine.spec import SPARSE_DEMOCRACY

    if not all(registry.get(m).is_trained() for m in SPARSE_DEMOCRACY):
        pytest.skip("the sparse democracy's members are not all trained here")
    enders = [m for m in SPARSE_DEMOCRACY if trained_on_endings(m)]
    assert enders and len(enders) < len(SPARSE_DEMOCRACY) and ENDING_MEN == 18
    ending, middlegame = chess.Board("8/5pk1/6p1/8/3R4/6P1/5PK1/3r4 w - - 0 40"), chess.Board(AFTER_F6)
    assert chess.popcount(ending.occupied) <= ENDING_MEN < chess.popcount(middlegame.occupied)
    values = {m: QuiescenceEvaluator(m).evaluate_boards([ending, middlegame]) for m in SPARSE_DEMOCRACY}
    got = JudgedDemocracy().evaluate_boards([ending, middlegame])
    assert got[0] == pytest.approx(np.mean([values[m][0] for m in enders]), abs=1e-5)
    assert got[1] == pytest.approx(np.mean([values[m][1] for m in SPARSE_DEMOCRACY]), abs=1e-5)
    everyone = JudgedDemocracy(endings=False).evaluate_boards([ending])
    assert everyone[0] == pytest.approx(np.mean([values[m][0] for m in SPARSE_DEMOCRACY]), abs=1e-5)
    m = JudgedDemocracy(("EL/v20", "EL/v21")).mate_pawns
    used = np.array([[True, True], [False, True]])                       # the second member sits out position 0
    votes = JudgedDemocracy(("EL/v20", "EL/v21")).vote(np.array([[1.0, 2.0], [-m, 4.0]]),
                                                         np.array([[False, False], [True, False]]), used)
    assert votes.tolist() == pytest.approx([1.0, 3.0])                   # its mate is not counted where it sits out
