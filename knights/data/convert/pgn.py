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

from pathlib import Path
from typing import IO, TYPE_CHECKING

import chess
import chess.pgn

if TYPE_CHECKING:
    import chess.engine

from knights.data.convert.sink import LimitReached, Sink, at_line
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

    def readline(self) -> str:
        text = self._stream.readline()
        if text:
            self.line += 1
            if self.game_start is None and text.strip():
                self.game_start = self.line
        return text

    def next_game(self) -> None:
        self.game_start = None


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
    """One row per evaluated move of every game in ``text`` (read from ``path``), sent to ``sink``."""
    reader = _LineCountingReader(text)
    game_number = 0
    while True:
        reader.next_game()
        line_before = reader.line
        try:
            game = chess.pgn.read_game(reader, Visitor=_QuietGameBuilder)  # type: ignore[call-overload]
        except Exception as error:  # bad input must never crash a run
            if reader.line == line_before:  # nothing consumed: do not loop forever
                raise
            sink.record()
            sink.report.skip("bad_game", f"{at_line(path, reader.game_start or reader.line)}: "
                                         f"{type(error).__name__}: {error}")
            continue
        if game is None:
            return
        game_number += 1
        sink.record()
        where = at_line(path, reader.game_start or reader.line)
        try:
            _convert_game(game, game_number, where, sink)
        except LimitReached:
            return
        except Exception as error:  # noqa: BLE001 - bad input must never crash a run
            sink.report.skip("bad_game", f"{where}: game {game_number}: {type(error).__name__}: {error}")


def _convert_game(game: chess.pgn.Game, game_number: int, where: str, sink: Sink) -> None:
    """The rows of one game's main line; ``where`` names its first line in messages."""
    report = sink.report
    for error in game.errors:
        reason = "illegal_move" if isinstance(error, (chess.IllegalMoveError, chess.InvalidMoveError,
                                                      chess.AmbiguousMoveError)) else "bad_game"
        report.skip(reason, f"{where}: game {game_number}: {error}")
    try:
        board = game.board()
    except ValueError as error:  # bad FEN or Variant header: the parser skipped the game
        if not game.errors:
            report.skip("bad_game", f"{where}: game {game_number}: {error}")
        return

    nodes = list(game.mainline())
    if type(board) is not chess.Board:
        report.skip("unsupported_variant", f"{where}: game {game_number}: variant "
                                           f"{game.headers.get('Variant', '?')!r}", count=len(nodes))
        return
    common = _game_columns(game, game_number, len(nodes))
    outcome = _RESULTS.get(common["result"])
    elo = {chess.WHITE: common["white_elo"], chess.BLACK: common["black_elo"]}

    before = _white_text(game.eval())  # a root comment may evaluate the start position
    clocks: dict[bool, float | None] = {chess.WHITE: None, chess.BLACK: None}
    for ply, node in enumerate(nodes):
        move = node.move
        mover = board.turn
        after = _white_text(node.eval())
        board_after = board.copy(stack=False)
        board_after.push(move)
        if board_after.is_checkmate():
            after = format_eval(mate=1 if mover == chess.WHITE else -1)

        if before is None:
            report.skip("unlabelled", None if ply == 0 else
                        f"{where}: game {game_number}, ply {ply} ({move.uci()}): no [%eval] before it")
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

        clocks[mover] = node.clock()
        board = board_after
        before = after
