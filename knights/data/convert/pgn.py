"""Games whose moves carry ``[%eval 0.35]`` / ``[%eval #-3]`` comments.

The Lichess game database writes them: pawns (or a mate count) from White's side.
A move's comment evaluates the position *after* it, so the row for a move takes its
``cp`` from the comment of the previous move. The first move of a game (and any
move after an unevaluated one) therefore has no label: it is skipped and counted as
``"unlabelled"``. The game's headers fill the game columns (players, Elo, result,
time control), and the clock comments the ``clock`` columns; the loss of each move
(``cp_loss``, ``winrate_loss`` and the blunder flags) comes from the evaluations
before and after it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import IO, TYPE_CHECKING

import chess
import chess.pgn

if TYPE_CHECKING:
    import chess.engine

from knights.board.arrays import fen_fields_problem, position_problem
from knights.common import clip
from knights.data.convert.sink import CorruptInput, LimitReached, Sink, at_line, short
from knights.data.csslab import (
    BLUNDER_CP_PAWNS,
    BLUNDER_WINRATE,
    eval_to_pawns,
    format_bool,
    format_eval,
    format_pawns,
    negate_eval,
    position_columns,
    winrate,
)


class _LineCountingReader:
    """Wraps a text stream for :func:`chess.pgn.read_game` (which only calls
    ``readline``) and remembers where the current game starts."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self.line = 0
        self.game_start: int | None = None
        self.lines: list[str] = []   # the raw lines of the current game

    def readline(self) -> str:
        text = self._stream.readline()
        if text:
            self.line += 1
            if self.game_start is None and text.strip():
                self.game_start = self.line
            self.lines.append(text)
        return text

    def next_game(self) -> None:
        self.game_start = None
        self.lines = []


ERROR_TEXT = 120
"""The most of a python-chess error's text a message keeps (it may quote a whole header)."""

_COMMENT = re.compile(r"\{[^}]*\}?|;[^\n]*")


def _mainline_plies(lines: list[str]) -> int:
    """How many moves the main line of a game's raw text holds, legal or not (python-chess
    stops at an illegal move and does not report the moves after it)."""
    movetext = "".join(line for line in lines if not line.lstrip().startswith(("[", "%")))
    depth = plies = 0
    for match in chess.pgn.MOVETEXT_REGEX.finditer(_COMMENT.sub(" ", movetext)):
        token = match.group(0)
        if token == "(":
            depth += 1
        elif token == ")":
            depth = max(0, depth - 1)
        elif match.group(1) and depth == 0:
            plies += 1
    return plies


class _QuietGameBuilder(chess.pgn.GameBuilder[chess.pgn.Game]):
    """Collects parsing errors in ``game.errors`` without logging them: the
    converter counts them instead."""

    def handle_error(self, error: Exception) -> None:
        self.game.errors.append(error)


def _white_text(score: chess.engine.PovScore | None) -> str | None:
    """A PGN ``[%eval]`` as the ``cp`` column writes it, or ``None``."""
    if score is None:
        return None
    white = score.white()
    mate = white.mate()
    if mate is not None:
        return None if mate == 0 else format_eval(mate=mate)
    cp = white.score()
    return None if cp is None else format_eval(cp=cp)


def _seconds(value: float | None) -> str | None:
    if value is None:
        return None
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


_RESULTS = {"1-0": (True, False, False), "0-1": (False, True, False), "1/2-1/2": (False, False, True)}


def _game_columns(game: chess.pgn.Game, game_number: int, num_ply: int) -> dict[str, str]:
    """The columns that are the same for every move of ``game``."""
    h = game.headers
    game_id = h.get("GameId") or h.get("ID") or ""
    site = h.get("Site", "")
    if not game_id and "://" in site:
        game_id = site.rstrip("/").rsplit("/", 1)[-1]
    row = {
        "game_id": game_id or str(game_number),
        "type": h.get("Event", ""),
        "result": h.get("Result", ""),
        "white_player": h.get("White", ""),
        "black_player": h.get("Black", ""),
        "white_elo": h.get("WhiteElo", "") if h.get("WhiteElo", "").isdigit() else "",
        "black_elo": h.get("BlackElo", "") if h.get("BlackElo", "").isdigit() else "",
        "time_control": h.get("TimeControl", ""),
        "num_ply": str(num_ply),
        "termination": h.get("Termination", ""),
    }
    outcome = _RESULTS.get(row["result"])
    if outcome is not None:
        row["white_won"], row["black_won"], row["no_winner"] = (format_bool(x) for x in outcome)
    return row


def convert(text: IO[str], path: Path, sink: Sink) -> None:
    """One row per evaluated move of every game in ``text`` (read from ``path``), sent to ``sink``.

    Every main-line ply read is counted (:attr:`ConvertReport.records_read`) and becomes
    a row or a skip under a reason; a game with no ply, or that cannot be read, counts as one."""
    reader = _LineCountingReader(text)
    game_number = 0
    while True:
        reader.next_game()
        line_before = reader.line
        try:
            game = chess.pgn.read_game(reader, Visitor=_QuietGameBuilder)  # type: ignore[call-overload]
        except CorruptInput:
            raise
        except Exception as error:  # bad input must never crash a run
            if reader.line == line_before:  # nothing consumed: do not loop forever
                raise
            sink.record()
            sink.report.skip("bad_game", f"{at_line(path, reader.game_start or reader.line)}: "
                                         f"{type(error).__name__}: {clip(str(error), ERROR_TEXT)}")
            continue
        if game is None:
            return
        game_number += 1
        where = at_line(path, reader.game_start or reader.line)
        nodes = list(game.mainline())
        plies = max(_mainline_plies(reader.lines), len(nodes))
        sink.record(max(plies, 1))
        done = [0]   # plies of ``nodes`` already written or skipped
        try:
            _convert_game(game, nodes, plies, game_number, where, sink, done)
        except LimitReached:
            return
        except Exception as error:  # noqa: BLE001 - bad input must never crash a run
            sink.report.skip("bad_game", f"{where}: game {game_number}: {type(error).__name__}: "
                                         f"{clip(str(error), ERROR_TEXT)}",
                             count=max(plies, 1) - done[0])


def _convert_game(game: chess.pgn.Game, nodes: list[chess.pgn.ChildNode], plies: int, game_number: int,
                  where: str, sink: Sink, done: list[int]) -> None:
    """The rows of one game's main line; ``where`` names its first line in messages.
    ``plies`` main-line moves were read (``nodes`` are those python-chess could play);
    ``done[0]`` counts the plies accounted for so far, as rows or skips."""
    report = sink.report
    messages = [f"{where}: game {game_number}: {clip(str(error), ERROR_TEXT)}" for error in game.errors]
    illegal = any(isinstance(error, (chess.IllegalMoveError, chess.InvalidMoveError, chess.AmbiguousMoveError))
                  for error in game.errors)
    try:
        board = game.board()
    except ValueError as error:  # bad FEN or Variant header: the parser skipped the game
        report.skip("bad_fen" if "FEN" in game.headers else "bad_game",
                    (messages or [f"{where}: game {game_number}: {clip(str(error), ERROR_TEXT)}"])[0],
                    count=max(plies, 1))
        done[0] = max(plies, 1)
        return
    if type(board) is not chess.Board:
        report.skip("unsupported_variant", f"{where}: game {game_number}: variant "
                                           f"{short(game.headers.get('Variant', '?'))}", count=max(plies, 1))
        done[0] = max(plies, 1)
        return
    fields = game.headers.get("FEN", "").split()
    problem = (fen_fields_problem(fields[2] if len(fields) > 2 else "", fields[3] if len(fields) > 3 else "")
               or position_problem(board))   # the one rule the chunk reader and the other converters apply
    if problem is not None:
        report.skip("bad_fen", f"{where}: game {game_number}: impossible [FEN] {board.fen()!r}: {problem}",
                    count=max(plies, 1))
        done[0] = max(plies, 1)
        return
    if plies == 0:
        report.skip("no_moves", messages[0] if messages else f"{where}: game {game_number}: no moves")
        done[0] = 1
        return
    dropped = plies - len(nodes)   # the unplayable move and every move after it
    if dropped:
        first = messages.pop(0) if messages else f"{where}: game {game_number}: unplayable move"
        report.skip("illegal_move" if illegal else "bad_game", first, count=1)
        report.skip("after_illegal_move", f"{where}: game {game_number}: {dropped - 1} moves after it dropped",
                    count=dropped - 1)
    for message in messages:   # errors in side lines: no main-line ply lost, kept for the user
        report.note(message)
    done[0] = dropped

    common = _game_columns(game, game_number, len(nodes))
    outcome = _RESULTS.get(common["result"])
    elo = {chess.WHITE: common["white_elo"], chess.BLACK: common["black_elo"]}

    before = _white_text(game.eval())  # a root comment may evaluate the start position
    clocks: dict[bool, float | None] = {chess.WHITE: None, chess.BLACK: None}
    for ply, node in enumerate(nodes):
        move = node.move
        mover = board.turn
        if not move:   # a null move ("--"): no move was played, and what follows is no game of chess
            report.skip("null_move", f"{where}: game {game_number}, ply {ply}: null move, rest of the game dropped")
            report.skip("after_null_move", None, count=len(nodes) - ply - 1)
            done[0] += len(nodes) - ply
            return
        after = _white_text(node.eval())
        board_after = board.copy(stack=False)
        board_after.push(move)
        if board_after.is_checkmate():
            after = format_eval(mate=1 if mover == chess.WHITE else -1)

        if before is None:
            report.skip("unlabelled", None if ply == 0 else
                        f"{where}: game {game_number}, ply {ply} ({move.uci()}): no [%eval] before it")
            done[0] += 1
        else:
            row: dict[str, object] = dict(common)
            row.update(position_columns(board))
            row["move_ply"] = str(ply)
            row["move"] = move.uci()
            row["is_capture"] = format_bool(board.is_capture(move))
            row["cp"] = before
            row["cp_rel"] = before if mover == chess.WHITE else negate_eval(before)
            row["active_elo"], row["opponent_elo"] = elo[mover], elo[not mover]
            if outcome is not None:
                white_won, black_won, _ = outcome
                row["active_won"] = format_bool(white_won if mover == chess.WHITE else black_won)
            row["clock"], row["opp_clock"] = _seconds(clocks[mover]), _seconds(clocks[not mover])

            sign = 1.0 if mover == chess.WHITE else -1.0
            mover_before = sign * eval_to_pawns(before)
            row["winrate"] = f"{winrate(mover_before):.4f}"
            if after is not None:
                mover_after = sign * eval_to_pawns(after)
                loss = round(max(0.0, mover_before - mover_after), 2)
                row["cp_loss"] = format_pawns(loss)
                row["is_blunder_cp"] = format_bool(loss >= BLUNDER_CP_PAWNS)
                opp_wr = winrate(-mover_after)
                wr_loss = round(max(0.0, winrate(mover_before) - (1.0 - opp_wr)), 4)
                row["opp_winrate"] = f"{opp_wr:.4f}"
                row["winrate_loss"] = f"{wr_loss:.4f}"
                row["is_blunder_wr"] = format_bool(wr_loss >= BLUNDER_WINRATE)
            sink.write(row)
            done[0] += 1

        clocks[mover] = node.clock()
        board = board_after
        before = after
