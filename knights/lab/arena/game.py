"""The one game loop: two players, one game, and nothing a player does can stop it.

:func:`play_game` serves the arena (a game from an :class:`~knights.lab.arena.openings.Opening`,
saved as PGN) and the engine's soak benchmark (whole games from the standard start)::

    >>> from knights.lab.arena.players import RandomPlayer
    >>> record = play_game(RandomPlayer(1), RandomPlayer(2), settings=Settings(max_plies=20))
    >>> record.result, record.termination, record.plies
    ('1/2-1/2', 'adjudication: max plies', 20)

How a game ends (:class:`Settings`)
-----------------------------------
Checked before every move, in this order:

* **the rules**: checkmate, stalemate, insufficient material, the seventy-five-move
  and fivefold rules, and the draws a player may claim (threefold repetition and the
  fifty-move rule), claimed at once when they are on the board, as lichess and engine
  tournaments apply them and the engine scores them (:func:`knights.engine.rules.game_over`).
  ``claim_next_move=True`` also ends the game when the side to move *could* claim a
  draw by announcing its next move (python-chess's ``board.outcome(claim_draw=True)``),
  whether it wants the draw or not. That was the arena's rule until the one-ply bot's
  games were read move by move: 14 of 200 against sf-elo:1350 were drawn so while the
  bot was three pawns or more ahead and would have played another move;
* **material**: a side that has been ahead by ``adjudicate_cp`` centipawns of material
  (:data:`knights.board.pieces.CENTIPAWNS`: P=100 N=300 B=300 R=500 Q=900; default
  1000, a queen and a pawn) after each of ``adjudicate_plies`` consecutive plies
  (default 40: twenty moves each) wins: it is winning and has had twenty moves to
  finish. ``adjudicate_cp=None`` switches this off;
* **max plies**: a game that reaches ``max_plies`` plies (book included; default
  300) is drawn.

And on every move, a **forfeit**: the player who raises, changes the board it was
given, or returns anything but a legal move loses at once. A board a player changed is
put back before the game is recorded; :func:`play_game` never raises for a player's
fault, and the :class:`GameRecord` says what went wrong.

Every termination is one of the strings of :data:`TERMINATIONS` or the constants
below; summaries tell wins by ``"checkmate"`` from adjudicated wins.
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Mapping
from dataclasses import dataclass

import chess
import chess.pgn

from knights.board.outcome import outcome
from knights.lab.arena.openings import Opening
from knights.lab.arena.players import Player, material_cp

TERMINATIONS = {
    chess.Termination.CHECKMATE: "checkmate",
    chess.Termination.STALEMATE: "stalemate",
    chess.Termination.INSUFFICIENT_MATERIAL: "insufficient material",
    chess.Termination.SEVENTYFIVE_MOVES: "seventy-five-move rule",
    chess.Termination.FIVEFOLD_REPETITION: "fivefold repetition",
    chess.Termination.FIFTY_MOVES: "fifty-move rule",
    chess.Termination.THREEFOLD_REPETITION: "threefold repetition",
}
"""How the rules end a game, in the words of the PGN ``Termination`` header."""

MATERIAL = "adjudication: material"
MAX_PLIES = "adjudication: max plies"
FORFEIT_ERROR = "forfeit: error"
"""The player raised, or changed the board it was given."""
FORFEIT_ILLEGAL = "forfeit: illegal move"


@dataclass(frozen=True)
class Settings:
    """How the games of a match are played.

    :func:`play_game` reads when a game ends (``max_plies``, ``adjudicate_cp``,
    ``adjudicate_plies``, ``claim_next_move``: see the module docstring); the
    per-move limits ``nodes`` and ``movetime_ms`` are for the ``sf-elo`` and ``uci:``
    players (:func:`knights.lab.arena.specs.build_player`), and ``seed`` seeds the
    schedule (:func:`knights.lab.arena.matches.schedule`).
    """

    max_plies: int = 300
    adjudicate_cp: int | None = 1000
    adjudicate_plies: int = 40
    claim_next_move: bool = False
    nodes: int | None = None
    movetime_ms: int | None = None
    seed: int = 2024


@dataclass
class GameRecord:
    """One finished game: the final board (every move on its stack), who played, how it
    ended, and the seconds each side thought."""

    board: chess.Board
    white: str
    black: str
    result: str             # "1-0", "0-1" or "1/2-1/2"
    termination: str        # a value of TERMINATIONS, or MATERIAL, MAX_PLIES, FORFEIT_*
    opening: str = ""       # the Opening's name, when the game started from one
    book: int = 0           # plies already on the start board (the opening's moves)
    error: str = ""         # what the forfeiting player did wrong
    time_white: float = 0.0
    time_black: float = 0.0

    @property
    def plies(self) -> int:
        """Plies of the game, book included."""
        return len(self.board.move_stack)

    @property
    def illegal(self) -> int:
        """Illegal moves returned: 1 when one ended the game, else 0."""
        return int(self.termination == FORFEIT_ILLEGAL)

    def to_pgn(self, headers: Mapping[str, object] | None = None) -> chess.pgn.Game:
        """The game with the arena's headers (``Termination``, ``Opening``,
        ``OpeningPlies``, ``PlyCount``, and ``Error`` after a forfeit), ``headers``
        written over them, and an "end of book" comment after the book moves."""
        game = chess.pgn.Game.from_board(self.board)
        tags = game.headers
        tags["Event"] = "Knights arena"
        tags["Site"] = "local"
        tags["Date"] = _dt.date.today().strftime("%Y.%m.%d")
        tags["White"] = self.white
        tags["Black"] = self.black
        tags["Result"] = self.result
        tags["Termination"] = self.termination
        tags["Opening"] = self.opening
        tags["OpeningPlies"] = str(self.book)
        tags["PlyCount"] = str(self.plies)
        for key, value in (headers or {}).items():
            tags[key] = str(value)
        if self.book:
            node: chess.pgn.GameNode = game
            for _ in range(self.book):
                node = node.variations[0]
            node.comment = "end of book"
        if self.error:
            tags["Error"] = self.error[:300]
        return game

    def to_dict(self, headers: Mapping[str, object] | None = None) -> dict:
        """The arena's JSON record of the game, its PGN text included; the player names
        are those of the PGN (``headers`` may rename them)."""
        game = self.to_pgn(headers)
        return {"white": game.headers["White"], "black": game.headers["Black"], "result": self.result,
                "termination": self.termination, "plies": self.plies, "opening": self.opening,
                "time_white": round(self.time_white, 4), "time_black": round(self.time_black, 4),
                "error": self.error,
                "pgn": str(game.accept(chess.pgn.StringExporter(headers=True, variations=False, comments=True)))}


@dataclass(frozen=True)
class Forfeit:
    """Why a player loses on the spot: a FORFEIT_* termination and what it did."""

    termination: str
    error: str


def play_game(white: Player, black: Player, start: Opening | chess.Board | None = None,
              settings: Settings = Settings()) -> GameRecord:
    """Play one game from ``start`` (an opening, a board, whose moves count as the
    book, or the standard start) to its end; never raises for a player's fault."""
    if isinstance(start, Opening):
        board, opening = start.board(), start.name
    else:
        board, opening = (chess.Board() if start is None else start.copy()), ""
    book = len(board.move_stack)
    start, played = board.copy(), list[chess.Move]()   # the game so far, should a player corrupt the board
    players = {chess.WHITE: white, chess.BLACK: black}
    spent = {chess.WHITE: 0.0, chess.BLACK: 0.0}
    for player in (white, black):
        player.new_game()
    leader: chess.Color | None = None
    lead_plies = 0
    error = ""
    while True:
        ended = outcome(board, claim_next_move=settings.claim_next_move)
        if ended is not None:
            result, termination = ended.result(), TERMINATIONS[ended.termination]
            break
        if leader is not None and lead_plies >= settings.adjudicate_plies:
            result, termination = _win(leader), MATERIAL
            break
        if len(board.move_stack) >= settings.max_plies:
            result, termination = "1/2-1/2", MAX_PLIES
            break
        side = board.turn
        started = time.perf_counter()
        answer = ask(players[side], board)
        spent[side] += time.perf_counter() - started
        if isinstance(answer, Forfeit):
            result, termination, error = _win(not side), answer.termination, answer.error
            board = _replayed(start, played)   # whatever the player did to the board
            break
        board.push(answer)
        played.append(answer)
        if settings.adjudicate_cp is not None:
            leader, lead_plies = _material_lead(board, settings.adjudicate_cp, leader, lead_plies)
    return GameRecord(board, white.name, black.name, result, termination, opening, book, error,
                      spent[chess.WHITE], spent[chess.BLACK])


def ask(player: Player, board: chess.Board) -> chess.Move | Forfeit:
    """``player``'s legal move on ``board``, or the :class:`Forfeit` it earned.

    The player is handed the game's own board (with its history, for repetitions; a
    copy per move would cost time in proportion to the game's length). A player that
    leaves it changed has searched another position than the one it moves in, and
    forfeits like one that raises; the caller puts the board back."""
    before = _snapshot(board)
    try:
        move = player.choose_move(board)
    except Exception as exc:  # noqa: BLE001 - the player loses, the match goes on
        return Forfeit(FORFEIT_ERROR, f"{player.name}: {type(exc).__name__}: {exc}")
    if _snapshot(board) != before:
        return Forfeit(FORFEIT_ERROR, f"{player.name} changed the board it was given")
    if not isinstance(move, chess.Move) or not board.is_legal(move):
        return Forfeit(FORFEIT_ILLEGAL, f"{player.name} played the illegal move {move!r} in {board.fen()}")
    return move


def _snapshot(board: chess.Board) -> tuple[object, ...]:
    """Everything a player could change on a board, read without building a FEN
    (this runs twice a move): the history's length and every field of the position."""
    return (len(board.move_stack), board.pawns, board.knights, board.bishops, board.rooks, board.queens,
            board.kings, board.occupied_co[chess.WHITE], board.occupied_co[chess.BLACK], board.promoted,
            board.turn, board.castling_rights, board.ep_square, board.halfmove_clock, board.fullmove_number)


def _replayed(start: chess.Board, moves: list[chess.Move]) -> chess.Board:
    """``start`` with ``moves`` played: the game's board as it was before a player
    changed it."""
    board = start.copy()
    for move in moves:
        board.push(move)
    return board


def white_points(result: str) -> float:
    """White's points for a result string: 1 for ``1-0``, 0 for ``0-1``, one half for anything else."""
    return {"1-0": 1.0, "0-1": 0.0}.get(result, 0.5)


def _win(side: chess.Color) -> str:
    return "1-0" if side == chess.WHITE else "0-1"


def _material_lead(board: chess.Board, margin_cp: int, leader: chess.Color | None,
                   plies: int) -> tuple[chess.Color | None, int]:
    """The side ahead by at least ``margin_cp`` after the last move (``None``: neither)
    and for how many consecutive plies it has been."""
    balance = material_cp(board, chess.WHITE)
    if abs(balance) < margin_cp:
        return None, 0
    ahead = balance > 0
    return ahead, plies + 1 if ahead == leader else 1
