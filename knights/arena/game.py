"""One game between two players, never raising for a player's fault."""

from __future__ import annotations

from dataclasses import dataclass

import chess

from knights.arena.players import Player
from knights.play.engine import game_over, result_of


@dataclass
class GameRecord:
    board: chess.Board
    result: str
    reason: str
    illegal: int = 0      # moves a player returned that were not legal
    error: str | None = None


def play_game(white: Player, black: Player, *, max_plies: int = 400,
              board: chess.Board | None = None) -> GameRecord:
    """Play one game; never raises for a player's fault: an illegal move, an
    exception or a changed board ends the game (recorded, lost by that player)."""
    board = board.copy() if board is not None else chess.Board()
    for p in (white, black):
        p.new_game()
    while True:
        reason = game_over(board)
        if reason is not None:
            return GameRecord(board, result_of(board), reason)
        if len(board.move_stack) >= max_plies:
            return GameRecord(board, "*", "move cap")
        player = white if board.turn == chess.WHITE else black
        loser = "0-1" if board.turn == chess.WHITE else "1-0"
        before = (board.fen(), len(board.move_stack))
        try:
            move = player.choose_move(board)
        except Exception as exc:  # noqa: BLE001 - recorded, the game goes on with the next
            return GameRecord(board, loser, "error", error=f"{player.name}: {type(exc).__name__}: {exc}")
        if (board.fen(), len(board.move_stack)) != before:
            return GameRecord(board, loser, "error", error=f"{player.name} changed the board it was given")
        if not isinstance(move, chess.Move) or move not in board.legal_moves:
            return GameRecord(board, loser, "illegal move", illegal=1,
                              error=f"{player.name} played {move!r} in {board.fen()}")
        board.push(move)
