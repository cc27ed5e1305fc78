"""``knights uci``: through python-chess's own UCI client (as GUIs and lichess-bot
use it), and line by line for malformed input."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import chess
import chess.engine
import pytest

from knights.play.uci import UciSession

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def uci_engine():
    engine = chess.engine.SimpleEngine.popen_uci([sys.executable, "-m", "knights.cli", "uci"], timeout=120,
                                                 cwd=str(REPO))
    engine.configure({"Evaluator": "material"})
    yield engine
    engine.quit()


def test_identity_and_options(uci_engine):
    assert "KnightsKernels" in uci_engine.id["name"]
    options = uci_engine.options
    assert options["Evaluator"].type == "combo" and "material" in options["Evaluator"].var
    assert options["Stochastic"].type == "check" and options["Stochastic"].default is True
    assert options["Seed"].type == "spin" and options["Seed"].min == -1
    assert options["CaptureBonus"].type == "spin"


LIMITS = [chess.engine.Limit(time=0.05), chess.engine.Limit(depth=5), chess.engine.Limit(nodes=1000),
          chess.engine.Limit(white_clock=30, black_clock=30, white_inc=1, black_inc=1),
          chess.engine.Limit(white_clock=2, black_clock=2, remaining_moves=10), chess.engine.Limit(mate=2)]


@pytest.mark.parametrize("seed", range(3))
def test_whole_games_against_random_and_itself(uci_engine, seed):
    uci_engine.configure({"Stochastic": True, "Seed": seed})
    rng = random.Random(seed)
    board = chess.Board()
    while not board.is_game_over(claim_draw=True) and len(board.move_stack) < 160:
        if seed == 2 or board.turn == (seed % 2 == 0):   # game 2: the bot against itself
            result = uci_engine.play(board, LIMITS[len(board.move_stack) % len(LIMITS)], info=chess.engine.INFO_ALL)
            assert result.move in board.legal_moves
            assert result.info["depth"] == 1 and "score" in result.info
            board.push(result.move)
        else:
            board.push(rng.choice(list(board.legal_moves)))


def test_scores_from_the_side_to_move(uci_engine):
    uci_engine.configure({"Stochastic": False})
    black = chess.Board("4k3/8/8/3p4/4Q3/8/8/4K3 b - - 0 1")         # ...dxe4 wins the queen
    info = uci_engine.analyse(black, chess.engine.Limit(depth=1))
    assert info["pv"][0] == chess.Move.from_uci("d5e4")
    assert info["score"].relative == chess.engine.Cp(100)           # +1 pawn for Black, to move
    assert info["score"].white() == chess.engine.Cp(-100)
    mate = chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    info = uci_engine.analyse(mate, chess.engine.Limit(time=0.1))
    assert info["score"].relative == chess.engine.Mate(1) and info["pv"][0] == chess.Move.from_uci("a1a8")


def test_searchmoves_and_infinite(uci_engine):
    uci_engine.configure({"Stochastic": False})
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    only = [chess.Move.from_uci("h2h3"), chess.Move.from_uci("g2g4")]
    assert uci_engine.play(board, chess.engine.Limit(time=0.05), root_moves=only).move in only
    with uci_engine.analysis(board) as analysis:       # go infinite ... stop
        first = analysis.get()
        analysis.stop()
        best = analysis.wait()
    assert first["depth"] == 1 and best.move == chess.Move.from_uci("a1a8")


def test_game_over_position(uci_engine):
    mated = chess.Board("R5k1/5ppp/8/8/8/8/5PPP/6K1 b - - 0 1")
    result = uci_engine.play(mated, chess.engine.Limit(time=0.05))
    assert result.move is None


# -- line by line ------------------------------------------------------------------------------------
@pytest.fixture
def session():
    lines: list[str] = []
    s = UciSession(lines.append, evaluator="material", seed=1)
    s.lines = lines  # type: ignore[attr-defined]
    return s


def exchange(session, *commands: str) -> list[str]:
    session.lines.clear()
    for command in commands:
        assert session.handle(command)
    return list(session.lines)


def bestmove(lines: list[str]) -> str:
    (line,) = [x for x in lines if x.startswith("bestmove")]
    return line.split()[1]


def test_handshake(session):
    out = exchange(session, "uci", "isready", "ucinewgame", "isready")
    assert out[0].startswith("id name ") and "uciok" in out and out.count("readyok") == 2
    assert any(x.startswith("option name Evaluator type combo default material") for x in out)


def test_malformed_input_gets_info_string_and_the_engine_carries_on(session):
    out = exchange(session, "position startpos moves e2e4 e7e5")
    assert out == []
    before = session.board.fen()
    for command, words in [
        ("position fen not a fen", "invalid FEN"),
        ("position fen 8/8/8/8/8/8/8/8 w - - 0 1", "invalid FEN"),
        ("position", "position needs"),
        ("position sideways", "invalid position command"),
        ("frobnicate now", "unknown command"),
        ("setoption name Nope value 3", "unknown option"),
        ("setoption name Seed value many", "Seed must be an integer"),
        ("setoption name Stochastic value maybe", "Stochastic must be true or false"),
        ("setoption name Evaluator value EL/v99", "unknown evaluator"),
        ("setoption Evaluator material", "setoption needs"),
    ]:
        out = exchange(session, command)
        assert len(out) == 1 and out[0].startswith("info string ") and words in out[0], (command, out)
        assert session.board.fen() == before, command
    move = bestmove(exchange(session, "go wtime 1000 btime 1000"))
    assert chess.Move.from_uci(move) in session.board.legal_moves


def test_illegal_move_in_the_list(session):
    out = exchange(session, "position startpos moves e2e4 e7e5 e2e5 g1f3")
    assert len(out) == 1 and "illegal move 'e2e5'" in out[0] and "before it" in out[0]
    assert session.board.move_stack == [chess.Move.from_uci("e2e4"), chess.Move.from_uci("e7e5")]
    out = exchange(session, "position startpos moves e2e4 xyz")
    assert "illegal move 'xyz'" in out[0] and len(session.board.move_stack) == 1


def test_go_variants(session):
    exchange(session, "position fen 6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    for go in ("go", "go depth 1", "go nodes 5", "go movetime 10", "go mate 1", "go wtime 5 btime 5 movestogo 3",
               "go depth", "go sideways 3", "go searchmoves a1a8 h2h3 depth 1"):
        out = exchange(session, go)
        assert bestmove(out) == "a1a8", go
        assert any("score mate 1" in x for x in out), go
    out = exchange(session, "go searchmoves h2h3 g2g3")
    assert bestmove(out) in ("h2h3", "g2g3") and any("score cp " in x for x in out)
    out = exchange(session, "go infinite")
    assert not any(x.startswith("bestmove") for x in out) and out[0].startswith("info depth 1")
    assert bestmove(exchange(session, "stop")) == "a1a8"
    assert exchange(session, "stop") == []
    exchange(session, "go ponder")
    assert bestmove(exchange(session, "ponderhit")) == "a1a8"


def test_no_legal_moves_and_quit(session):
    exchange(session, "position fen R5k1/5ppp/8/8/8/8/5PPP/6K1 b - - 0 1")
    out = exchange(session, "go")
    assert out[-1] == "bestmove (none)" and "checkmate" in out[0]
    assert session.handle("quit") is False


def test_options_change_the_engine(session):
    exchange(session, "setoption name Stochastic value false", "setoption name CaptureBonus value 15",
             "setoption name Seed value 7", "isready")
    assert session.engine.stochastic is False and session.engine.capture_bonus == pytest.approx(0.15)
    assert session.engine.seed == 7
    exchange(session, "position fen 4k3/7p/8/3n4/8/2N5/7P/4K3 w - - 0 1")
    out = exchange(session, "go")
    assert bestmove(out) == "c3d5" and any("score cp 315" in x for x in out)


def test_evaluator_names_resolve_as_everywhere_else():
    """The option and the flag take any spelling the one resolver takes (knights.evaluate.names)."""
    lines: list[str] = []
    flagged = UciSession(lines.append, evaluator="el/v8", seed=1)
    flagged.handle("uci")
    assert any(x.startswith("option name Evaluator type combo default EL/v8") for x in lines)
    for spelling, canonical in (("el/8", "EL/v8"), ("Material+THREATS", "material+threats"), ("ensemble", "democracy")):
        lines.clear()
        assert flagged.handle(f"setoption name Evaluator value {spelling}") and lines == []
        assert flagged.evaluator_name == canonical
    flagged.handle("isready")
    assert flagged.ensure_engine().name == "democracy"
