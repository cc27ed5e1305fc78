"""Terminal play, driven by piped input: moves, bad input, commands, the saved PGN."""

from __future__ import annotations

import io
import os
import random
import subprocess
import sys
from pathlib import Path

import chess
import chess.pgn
import pytest

from knights.cli import main as cli_main
from knights.engine.one_ply import OnePlyEngine
from knights.engine.spec import ONE_PLY_EVALUATOR, SEARCH_NETWORK
from knights.evaluate.base import MaterialEvaluator
from knights.frontends import terminal as play

REPO = Path(__file__).resolve().parent.parent


def run_game(tmp_path: Path, text: str, **kw) -> tuple[str, chess.pgn.Game, Path]:
    out = io.StringIO()
    kw.setdefault("evaluator", "material")
    kw.setdefault("seed", 1)
    code = play.run(io.StringIO(text), out, games_dir=tmp_path, **kw)
    assert code == 0
    files = sorted(tmp_path.glob("*.pgn"))
    assert len(files) == 1, files
    with open(files[0], encoding="utf-8") as fh:
        game = chess.pgn.read_game(fh)
    assert game is not None
    return out.getvalue(), game, files[0]


def test_piped_moves_commands_and_pgn(tmp_path):
    output, game, path = run_game(tmp_path, "e4\nNf3\nbogus\nundo\nhelp\nmoves\nflip\nfen\nresign\n")
    assert "you play white" in output
    assert output.count("Bot plays 1...") == 1 and "Bot plays 2..." in output
    assert "eval " in output and "(White's view)" in output
    assert "Illegal or unknown move 'bogus'. Legal moves:" in output
    bad_line = next(line for line in output.splitlines() if "'bogus'" in line)
    assert " Nc3 " in bad_line or bad_line.endswith("Nc3")
    assert "Took back your last move and the bot's reply." in output
    assert "Commands:" in output and "Legal moves: " in output
    assert "♔" in output or "♚" in output                      # Unicode pieces
    assert "You resign. Black wins (0-1)." in output
    assert f"Game saved to {path}" in output
    # the PGN: 1. e4 and the bot's reply; Nf3 and its answer were taken back
    moves = list(game.mainline_moves())
    assert len(moves) == 2 and moves[0] == chess.Move.from_uci("e2e4")
    assert game.headers["Result"] == "0-1"
    assert game.headers["White"] == "You" and "KS_ChessAI" in game.headers["Black"]
    assert path.parent == tmp_path and path.suffix == ".pgn"


def test_board_drawn_from_the_players_side(tmp_path):
    output, _, _ = run_game(tmp_path, "flip\nquit\n", color="black", unicode=False)
    lines = output.splitlines()
    rank_lines = [line for line in lines if line[:1].isdigit() and " " in line and len(line) == 17]
    # black's view first (rank 1 at the top), then flipped (rank 8 at the top)
    assert rank_lines[0].startswith("1 ") and rank_lines[8].startswith("8 ")
    assert "  h g f e d c b a" in lines and "  a b c d e f g h" in lines
    assert "Bot plays 1. " in output


def test_end_of_input_ends_the_game_and_saves(tmp_path):
    output, game, _ = run_game(tmp_path, "d4\n")
    assert "End of input: the game stops here." in output
    assert game.headers["Result"] == "*"
    assert len(list(game.mainline_moves())) == 2


def test_san_and_uci_input_and_undo_at_the_start(tmp_path):
    output, game, _ = run_game(tmp_path, "undo\ng1f3\nd2d4\nquit\n", stochastic=False)
    assert "Nothing to undo." in output
    moves = list(game.mainline_moves())
    assert moves[0] == chess.Move.from_uci("g1f3") and moves[2] == chess.Move.from_uci("d2d4")


class AutoPlayer(io.TextIOBase):
    """Stands for a person at the keyboard: reads the bot's moves from the output,
    answers with random legal moves (SAN or UCI), gives up after ``limit`` moves."""

    def __init__(self, out: io.StringIO, seed: int, color: chess.Color, limit: int = 120) -> None:
        self.out, self.rng, self.color, self.limit = out, random.Random(seed), color, limit
        self.board = chess.Board()
        self.read_upto = 0
        self.moves = 0

    def sync(self) -> None:
        """Play the bot's moves printed since the last look on our own board."""
        text = self.out.getvalue()[self.read_upto:]
        self.read_upto = len(self.out.getvalue())
        for line in text.splitlines():
            if line.startswith("Bot plays "):
                self.board.push_san(line.split()[3])

    def readline(self, size: int = -1) -> str:
        self.sync()
        assert self.board.turn == self.color
        if self.moves >= self.limit:
            return "quit\n"
        self.moves += 1
        move = self.rng.choice(list(self.board.legal_moves))
        text = self.board.san(move) if self.rng.random() < 0.5 else move.uci()
        self.board.push(move)
        return text + "\n"


@pytest.mark.parametrize("seed", range(4))
def test_whole_games_against_a_random_human(tmp_path, seed):
    color = chess.WHITE if seed % 2 == 0 else chess.BLACK
    out = io.StringIO()
    human = AutoPlayer(out, seed, color)
    engine = OnePlyEngine(MaterialEvaluator(), seed=seed)
    assert play.run(human, out, color="white" if color else "black", engine=engine, games_dir=tmp_path) == 0
    output = out.getvalue()
    assert "Illegal" not in output and "Traceback" not in output
    (path,) = tmp_path.glob("*.pgn")
    with open(path, encoding="utf-8") as fh:
        game = chess.pgn.read_game(fh)
    board = game.board()
    for move in game.mainline_moves():
        assert move in board.legal_moves
        board.push(move)
    human.sync()
    assert board.fen() == human.board.fen()
    if "Game over" in output:
        assert game.headers["Result"] in ("1-0", "0-1", "1/2-1/2")
    else:
        assert "Stopped." in output and game.headers["Result"] == "*"


def test_default_evaluator_falls_back_with_a_notice(tmp_path, monkeypatch):
    import knights.evaluate.names as ev

    monkeypatch.setattr(ev, "available_evaluators", lambda: ["material"])
    output, _, _ = run_game(tmp_path, "quit\n", evaluator=None)                 # the search's own network
    assert output.splitlines()[0] == (f"note: {SEARCH_NETWORK} is not here (its weights are missing); "
                                      "playing material instead")
    output, _, _ = run_game(tmp_path / "one", "quit\n", evaluator=None, depth=1)   # the one-ply bot's democracy
    assert output.splitlines()[0].startswith(f"note: {ONE_PLY_EVALUATOR} is not here")


def test_bad_options_are_one_line_errors(tmp_path, capsys):
    assert cli_main(["play", "--fen", "not a fen", "--games-dir", str(tmp_path), "--evaluator", "material"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("knights play: error: invalid FEN") and "\n" not in err
    assert cli_main(["play", "--evaluator", "EL/v99", "--games-dir", str(tmp_path)]) == 2
    assert "unknown evaluator" in capsys.readouterr().err
    for flag, value, says in (("--depth", "100", "from 1 (the one-ply bot) to 64"),
                              ("--capture-bonus", "-5", "from 0 to 1 pawn")):
        with pytest.raises(SystemExit):
            cli_main(["play", flag, value, "--games-dir", str(tmp_path)])
        assert says in capsys.readouterr().err


def test_cli_play_with_piped_input(tmp_path):
    """``knights play`` as ``make play`` runs it, stdin piped."""
    proc = subprocess.run([sys.executable, "-m", "knights.cli", "play", "--evaluator", "material", "--seed", "2",
                           "--color", "random", "--games-dir", str(tmp_path / "games"), "--ascii"],
                          input="e4\ne5\nresign\n", capture_output=True, text=True, cwd=REPO, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert "Game saved to" in proc.stdout and "Traceback" not in proc.stderr
    assert len(list((tmp_path / "games").glob("*.pgn"))) == 1


# -- issue 12, item 8: the games folder is checked first; SIGHUP/SIGTERM save the game -----------
@pytest.mark.parametrize("where", ["file", "below-a-file"])
def test_unusable_games_dir_is_one_line_before_the_game(tmp_path, where, monkeypatch, capsys):
    """Before the fix the whole game was played, then ``save_pgn`` died in ``mkdir`` with a
    traceback and the game was lost; now nothing is played and one line names the folder.
    (``knights play``'s own ``main``, in this process: a real process is
    test_cli_play_with_piped_input's.)"""
    blocker = tmp_path / "games"
    blocker.write_text("not a folder\n")
    folder = blocker if where == "file" else blocker / "sub"
    monkeypatch.setattr(sys, "stdin", io.StringIO("e4\nresign\n"))
    assert cli_main(["play", "--evaluator", "material", "--games-dir", str(folder), "--ascii"]) == 2
    out, err = capsys.readouterr()
    err = err.strip()
    assert err.startswith("knights play: error: cannot save games in --games-dir") and str(folder) in err
    assert "\n" not in err and "Traceback" not in err
    assert "Bot plays" not in out and "Your move" not in out   # checked before the game
    assert sys.stdin.read() == "e4\nresign\n"                 # not one line of input read
    assert blocker.read_text() == "not a folder\n"


def test_folder_removed_during_the_game_prints_the_pgn(tmp_path):
    """The folder checked at the start can still vanish; the game is printed, not lost."""
    folder = tmp_path / "games"

    class Vanishing(io.StringIO):
        def readline(self, size: int = -1) -> str:
            line = super().readline(size)
            if line.startswith("resign") and folder.exists():
                folder.rmdir()
                folder.write_text("now a file\n")
            return line

    out = io.StringIO()
    code = play.run(Vanishing("e4\nresign\n"), out, games_dir=folder, evaluator="material", seed=1)
    assert code == 1
    text = out.getvalue()
    assert "1. e4" in text and '[Result "0-1"]' in text


# -- issue 12, item 9: one bad byte on stdin is reported and the game goes on ---------------------
def test_invalid_byte_on_stdin_is_reported_and_the_game_goes_on(tmp_path):
    """Under a strict UTF-8 stdin, ``b"\\xff"`` made ``stdin.readline()`` raise
    UnicodeDecodeError: a traceback and no game. Now the line is reported and ignored."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    proc = subprocess.run([sys.executable, "-m", "knights.cli", "play", "--evaluator", "material", "--seed", "1",
                           "--games-dir", str(tmp_path), "--ascii"],
                          input=b"\xff\ne4\nNf3\xfe\nresign\n", capture_output=True, cwd=REPO, timeout=120,
                          check=False, env=env)
    out, err = proc.stdout.decode(), proc.stderr.decode()
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert "input is not valid utf-8 (byte ff at column 1); line ignored" in out
    assert "(byte fe at column 4)" in out
    assert "Game saved to" in out
    with open(next(tmp_path.glob("*.pgn")), encoding="utf-8") as fh:
        game = chess.pgn.read_game(fh)
    assert game is not None and game.headers["Result"] == "0-1"
    assert next(iter(game.mainline_moves())) == chess.Move.from_uci("e2e4")
