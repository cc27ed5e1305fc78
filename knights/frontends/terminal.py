"""Play the bot in the terminal: ``make play`` / ``knights play``.

    knights play [--color white|black|random] [--evaluator EL/v8] [--seed N]
                 [--deterministic] [--capture-bonus PAWNS] [--fen FEN] [--games-dir games]

The board is drawn with Unicode pieces from your side (``--ascii`` for letters).
Type moves in SAN (``e4``, ``Nf3``, ``O-O``, ``e8=Q``) or UCI (``e2e4``, ``e7e8q``);
commands: ``help``, ``moves``, ``undo`` (take back your last move and the bot's
reply), ``flip``, ``fen``, ``resign``, ``quit``. Input is read line by line
(:class:`~knights.frontends.stdin.Lines`), so a game can be piped in; end of input ends the
game cleanly; a line that is not valid text (a stray byte) is reported and ignored. The
game is saved as PGN in ``games/`` when it ends, however it ends: ``quit``, end of input,
Ctrl-C, a closed terminal (SIGHUP, or a read that fails because the terminal is gone) or
``kill`` (SIGTERM); a SIGHUP or SIGTERM that comes while it is being saved is noted, not
raised. The folder is checked before the game starts; if the PGN still cannot be written
at the end, it is printed instead.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import os
import random
import signal
import sys
import tempfile
import threading
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

import chess
import chess.pgn

from knights.engine.build import build
from knights.engine.constants import MATE_SCORE, UNLIMITED_DEPTH
from knights.engine.rules import game_over, result_of
from knights.engine.search import SearchEngine
from knights.engine.spec import PLAY_MOVETIME, parse
from knights.engine.user_input import EngineError, board_from_fen, parse_move
from knights.frontends.stdin import Lines

BOT_NAME = "KS_ChessAI (Knights and Kernels)"
SLOW_START = 3.0
"""Seconds building the bot may take at a terminal before it says why it is still loading."""
SLOW_START_NOTE = ("Still loading the bot (the first start after an install also compiles its search: a few "
                   "minutes, once; make setup does it).")
HELP = """Moves: SAN (e4, Nf3, O-O, exd5, e8=Q) or UCI (e2e4, g1f3, e7e8q).
Commands:
  help     this text
  moves    list your legal moves
  undo     take back your last move and the bot's reply
  flip     turn the board around
  fen      show the position as FEN
  resign   resign the game (it is saved)
  quit     stop now (the game is saved unfinished)"""


# -- drawing -------------------------------------------------------------------------------
def render(board: chess.Board, orientation: chess.Color = chess.WHITE, *, unicode: bool = True) -> str:
    """The board from ``orientation``'s side, ranks and files labelled; the last
    move's squares are not marked (plain text works in any terminal and in a log)."""
    ranks = range(7, -1, -1) if orientation == chess.WHITE else range(8)
    files = range(8) if orientation == chess.WHITE else range(7, -1, -1)
    lines = []
    for rank in ranks:
        cells = []
        for file in files:
            piece = board.piece_at(chess.square(file, rank))
            if piece is None:
                cells.append("·" if unicode else ".")
            else:
                cells.append(piece.unicode_symbol() if unicode else piece.symbol())
        lines.append(f"{rank + 1} {' '.join(cells)}")
    lines.append("  " + " ".join("abcdefgh"[f] for f in files))
    return "\n".join(lines)


def format_score(score: float) -> str:
    """Pawns from White's side: ``+0.35``; a mate: ``mate``."""
    if abs(score) >= MATE_SCORE:
        return "mate (White wins)" if score > 0 else "mate (Black wins)"
    return f"{score:+.2f}"


def _supports_unicode(stream: TextIO) -> bool:
    encoding = getattr(stream, "encoding", None)
    if not encoding:          # an in-memory text stream holds any character
        return True
    try:
        "♔♚·".encode(encoding)
        return True
    except (UnicodeEncodeError, LookupError):
        return False


class Hangup(KeyboardInterrupt):
    """SIGHUP (the terminal closed) or SIGTERM (``kill``): the game ends as after Ctrl-C, and is saved."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class Hangups:
    """The handler of SIGHUP and SIGTERM for one game: raises :class:`Hangup` in the main thread
    while the game is played; once it is over (:meth:`hold`: it is being saved), the signal is
    only noted, so that the save always finishes."""

    def __init__(self) -> None:
        self.raising = True
        self.noted: int | None = None

    def __call__(self, signum: int, _frame: FrameType | None) -> None:
        if self.raising:
            self.raising = False      # a second signal while the first ends the game is only noted
            raise Hangup(signum)
        self.noted = self.noted or signum

    def hold(self) -> None:
        self.raising = False


# -- saving ----------------------------------------------------------------------------------
def check_games_dir(folder: str | Path) -> Path:
    """Make sure a game can be saved in ``folder`` (created if missing) before it is played;
    :class:`EngineError` (one line) if it is a file, or cannot be created or written."""
    path = Path(folder)
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".knights-write-test-", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        reason = "it is not a folder" if path.exists() and not path.is_dir() else (exc.strerror or str(exc))
        raise EngineError(f"cannot save games in --games-dir {str(folder)!r}: {reason}") from None
    return path


def game_record(board: chess.Board, *, human: chess.Color, bot_name: str, result: str,
                termination: str) -> chess.pgn.Game:
    """The game as PGN, headers included (what is saved, or printed when it cannot be)."""
    game = chess.pgn.Game.from_board(board)
    game.headers["Event"] = "Knights and Kernels: terminal game"
    game.headers["Site"] = "knights play"
    game.headers["Date"] = _dt.datetime.now().strftime("%Y.%m.%d")
    game.headers["White"] = "You" if human == chess.WHITE else bot_name
    game.headers["Black"] = "You" if human == chess.BLACK else bot_name
    game.headers["Result"] = result
    game.headers["Termination"] = termination
    return game


def save_pgn(board: chess.Board, folder: str | Path, *, human: chess.Color, bot_name: str, result: str,
             termination: str) -> Path:
    """Write the game to a new file in ``folder`` and return its path. The file is written in
    full under a temporary name, then renamed: a full disk leaves no empty or cut PGN behind."""
    game = game_record(board, human=human, bot_name=bot_name, result=result, termination=termination)
    now = _dt.datetime.now()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"game-{now.strftime('%Y%m%d-%H%M%S')}-{'white' if human == chess.WHITE else 'black'}"
    path = folder / f"{stem}.pgn"
    n = 1
    while path.exists():
        n += 1
        path = folder / f"{stem}-{n}.pgn"
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            print(game, file=fh, end="\n\n")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


# -- the game loop -----------------------------------------------------------------------------
def run(stdin: TextIO, stdout: TextIO, *, color: str = "white", evaluator: str | None = None,
        seed: int | None = None, stochastic: bool = True, capture_bonus: float = 0.0,
        fen: str | None = None, games_dir: str | Path = "games", unicode: bool | None = None,
        depth: int = UNLIMITED_DEPTH, movetime: float = PLAY_MOVETIME,
        engine: SearchEngine | None = None, hangups: Hangups | None = None) -> int:
    """Play one game reading your input from ``stdin``; returns the exit code (0; 128 + the
    signal for a game ended by SIGHUP or SIGTERM, or by the terminal going away)."""
    def say(text: str = "", end: str = "\n") -> None:
        with contextlib.suppress(OSError, ValueError):   # the terminal is gone (SIGHUP): the game is still saved
            print(text, file=stdout, end=end, flush=True)

    check_games_dir(games_dir)
    board = board_from_fen(fen) if fen else chess.Board()
    if color not in ("white", "black", "random"):
        raise EngineError(f"colour must be white, black or random, not {color!r}")
    if color == "random":
        color = random.Random(seed).choice(("white", "black"))
    human = chess.WHITE if color == "white" else chess.BLACK
    isatty = getattr(stdin, "isatty", None)
    interactive = bool(isatty and isatty())
    if engine is None:
        slow = threading.Timer(SLOW_START, say, [SLOW_START_NOTE])   # a person waiting at a terminal is told why
        slow.daemon = True
        if interactive:
            slow.start()
        try:
            engine = build(parse(evaluator, depth=depth, movetime=movetime, stochastic=stochastic, seed=seed,
                                 capture_bonus=capture_bonus), notice=say)
        finally:
            slow.cancel()
    bot_name = f"{BOT_NAME} [{engine.name}]"
    unicode = _supports_unicode(stdout) if unicode is None else unicode
    orientation = human
    how = "one ply" if getattr(engine, "depth", 1) <= 1 else f"searching {engine.movetime or 'any'} s a move"
    say(f"Knights and Kernels: you play {color} against {engine.name} ({how}, "
        f"{'stochastic opening' if engine.stochastic else 'deterministic'}). Type 'help' for commands.")
    result, termination = "*", "unterminated"
    shown = None   # the (position, orientation) last drawn: redraw only when it changes

    def finish(res: str, term: str, message: str) -> None:
        nonlocal result, termination
        result, termination = res, term
        say(message)

    code = 0
    try:
        with Lines(stdin) as lines:
            while True:
                reason = game_over(board)
                if reason is not None:
                    say(render(board, orientation, unicode=unicode))
                    res = result_of(board)
                    who = {"1-0": "White wins", "0-1": "Black wins"}.get(res, "Draw")
                    finish(res, "normal", f"Game over: {reason}. {who} ({res}).")
                    break
                if board.turn != human:
                    decision = engine.choose(board)
                    san = board.san(decision.move)
                    number = f"{board.fullmove_number}{'.' if board.turn == chess.WHITE else '...'}"
                    board.push(decision.move)
                    say(f"Bot plays {number} {san}   eval {format_score(decision.score)} (White's view)")
                    continue
                if shown != (board.fen(), orientation):
                    say(render(board, orientation, unicode=unicode))
                    shown = (board.fen(), orientation)
                say(f"Your move ({'white' if human == chess.WHITE else 'black'}): ", end="")
                try:
                    line, problem = lines.next_line()
                except OSError as exc:      # EIO: the terminal has closed (its hang-up may follow)
                    say()
                    finish("*", "unterminated", f"The terminal is gone ({exc.strerror or exc}); the game stops here.")
                    code = 128 + signal.SIGHUP
                    break
                if problem is not None:
                    say()
                    say(f"Your {problem}. Type a move or 'help'.")
                    continue
                if not line:
                    say()
                    finish("*", "unterminated", "End of input: the game stops here.")
                    break
                text = line.strip()
                if not interactive:       # piped input: echo it, so the transcript reads like a session
                    say(text)
                command = text.lower()
                if not text:
                    continue
                if command in ("help", "?", "h"):
                    say(HELP)
                elif command in ("moves", "legal"):
                    say("Legal moves: " + " ".join(board.san(m) for m in board.legal_moves))
                elif command == "flip":
                    orientation = not orientation
                elif command == "fen":
                    say(board.fen())
                elif command in ("undo", "takeback"):
                    # your last move and the bot's reply to it, back to your turn
                    if len(board.move_stack) >= 2:
                        board.pop()
                        board.pop()
                        say("Took back your last move and the bot's reply.")
                    else:
                        say("Nothing to undo.")
                elif command == "resign":
                    res = "0-1" if human == chess.WHITE else "1-0"
                    finish(res, "normal", f"You resign. {'Black' if human == chess.WHITE else 'White'} wins ({res}).")
                    break
                elif command in ("quit", "exit"):
                    finish("*", "unterminated", "Stopped.")
                    break
                else:
                    try:
                        move = parse_move(board, text)
                    except EngineError:
                        legal = " ".join(board.san(m) for m in board.legal_moves)
                        say(f"Illegal or unknown move {text!r}. Legal moves: {legal}")
                        continue
                    board.push(move)
    except Hangup as exc:
        say()
        finish("*", "unterminated", f"Stopped by {exc.args[0]}.")
        code = 128 + exc.signum
    except KeyboardInterrupt:
        say()
        finish("*", "unterminated", "Interrupted.")
        code = 130
    finally:
        if hangups is not None:
            hangups.hold()     # from here a hang-up is only noted: the game is saved whatever comes
    try:
        path = save_pgn(board, games_dir, human=human, bot_name=bot_name, result=result, termination=termination)
    except OSError as exc:   # the folder went away, the disk is full: print the game rather than lose it
        game = game_record(board, human=human, bot_name=bot_name, result=result, termination=termination)
        print(f"knights play: error: cannot save the game in {str(games_dir)!r} ({exc.strerror or exc}); "
              f"the PGN follows on standard output", file=sys.stderr)
        say(str(game))
        return code or 1
    say(f"Game saved to {path}")
    if not code and hangups is not None and hangups.noted:
        code = 128 + hangups.noted
    return code


def main(args: argparse.Namespace) -> int:
    """``knights play``: the options come from :func:`knights.cli.build_parser`. A game ended by a
    signal (Ctrl-C, SIGHUP, SIGTERM) or by its terminal going away ends the process as soon as it
    is saved and the output flushed, without the interpreter's teardown: torch's and numba's
    take seconds on a busy machine, and the signal asked for an end."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)   # one ply of ~35 positions: a second thread only adds overhead
    previous: dict[signal.Signals, Any] = {}
    hangups = Hangups()
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGHUP, signal.SIGTERM):
            previous[signum] = signal.signal(signum, hangups)
    try:
        code = run(sys.stdin, sys.stdout, color=getattr(args, "color", "white"),
                   evaluator=getattr(args, "evaluator", None), seed=getattr(args, "seed", None),
                   stochastic=not getattr(args, "deterministic", False),
                   capture_bonus=getattr(args, "capture_bonus", 0.0), fen=getattr(args, "fen", None),
                   games_dir=getattr(args, "games_dir", "games"),
                   unicode=False if getattr(args, "ascii", False) else None,
                   depth=getattr(args, "depth", None) or UNLIMITED_DEPTH,
                   movetime=getattr(args, "movetime", None) or PLAY_MOVETIME, hangups=hangups)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        torch.set_num_threads(threads)
    if code > 128:
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.flush()
        os._exit(code)
    return code
