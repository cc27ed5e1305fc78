"""One game in the browser, and the store that keeps several apart.

A :class:`Game` holds its board, which colour the person plays, the bot
(:func:`~knights.web.engines.build_engine`) and, for every bot move, **what the bot
saw**: each legal move it considered with its score (pawns, White's side), best
first. :meth:`Game.state` is the JSON the page draws from. The
:class:`GameStore` gives each game a random id and keeps at most ``limit`` of them
(the least recently used one goes first), so tabs never share a game.

>>> store = GameStore()
>>> game = store.new_game({"evaluator": "material", "color": "white", "stochastic": False})
>>> game.play_human("e2e4")
>>> game.play_bot()
>>> state = game.state()
>>> state["san"][0], len(state["san"]), state["turn"]
('e4', 2, 'white')
>>> len(state["saw"]["candidates"]) == 20   # every legal reply to 1. e4
True
"""

from __future__ import annotations

import datetime as _dt
import math
import random
import secrets
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import chess
import chess.pgn

from knights.play.engine import Decision
from knights.play.rules import game_over, result_of
from knights.play.user_input import EngineError
from knights.web.engines import SETTINGS_FIELDS, Engine, EngineSettings, engine_for
from knights.web.errors import RequestError

BOT_NAME = "Knights and Kernels"
COLORS = {"white": chess.WHITE, "black": chess.BLACK}
NEW_GAME_FIELDS = ("color", *SETTINGS_FIELDS)
MAX_MOVE_TEXT = 12

_thinking = threading.Lock()
"""One bot thinks at a time: the machine's cores are better used by one batch than two."""


def color_name(color: chess.Color) -> str:
    return "white" if color == chess.WHITE else "black"


def _pawns(score: float) -> float:
    """A score fit for JSON (finite, 3 decimals)."""
    return round(score, 3) if math.isfinite(score) else 0.0


def what_the_bot_saw(board: chess.Board, decision: Decision) -> dict[str, Any]:
    """The page's view of ``decision`` on ``board`` (before the move): the move played,
    its rank and score, and every candidate with its score and game-ending outcome."""
    candidates = []
    rank = 0
    for i, (move, score) in enumerate(decision.candidates):
        if move == decision.move:
            rank = i
        candidates.append({"uci": move.uci(), "san": board.san(move), "score": _pawns(score),
                           "outcome": decision.outcomes.get(move)})
    return {"ply": len(board.move_stack), "number": board.fullmove_number, "color": color_name(board.turn),
            "fen": board.fen(), "uci": decision.move.uci(), "san": board.san(decision.move),
            "score": _pawns(decision.score), "rank": rank, "candidates": candidates}


class Game:
    """A game between a person (``human``) and the bot ``engine``, from the start position."""

    def __init__(self, game_id: str, human: chess.Color, settings: EngineSettings, engine: Engine) -> None:
        self.id = game_id
        self.human = human
        self.settings = settings
        self.engine = engine
        self.board = chess.Board()
        self.resigned: chess.Color | None = None
        self.seen: dict[int, dict[str, Any]] = {}   # index of each bot move in the move stack -> what it saw
        self.lock = threading.Lock()
        self.started = _dt.datetime.now()

    # -- where the game stands -------------------------------------------------------------
    def over_reason(self) -> str | None:
        """Why the game is over ("checkmate", "white resigns", ...) or ``None``."""
        if self.resigned is not None:
            return f"{color_name(self.resigned)} resigns"
        return game_over(self.board)

    def result(self) -> str:
        if self.resigned is not None:
            return "0-1" if self.resigned == chess.WHITE else "1-0"
        return result_of(self.board)

    @property
    def bot_name(self) -> str:
        depth = f", depth {self.settings.depth}" if self.settings.depth > 1 else ""
        return f"{BOT_NAME} [{self.settings.evaluator}{depth}]"

    # -- moves -----------------------------------------------------------------------------
    def _check_open(self) -> None:
        reason = self.over_reason()
        if reason is not None:
            raise RequestError(f"the game is over ({reason}, {self.result()}): start a new game", 409)

    def play_human(self, text: Any) -> None:
        """Play the person's move (UCI such as ``e2e4``, ``e7e8q``, or SAN);
        409 when it is not their turn or the game is over, 422 when illegal."""
        if not isinstance(text, str) or not 0 < len(text.strip()) <= MAX_MOVE_TEXT:
            raise RequestError(f"move must be a move such as 'e2e4' (UCI) or 'Nf3' (SAN), not {text!r:.40}")
        self._check_open()
        if self.board.turn != self.human:
            raise RequestError("it is not your turn: the bot is to move", 409)
        board, token = self.board, text.strip()
        try:
            move = chess.Move.from_uci(token)
        except ValueError:
            try:
                move = board.parse_san(token)
            except ValueError:
                move = chess.Move.null()
        if not move or move not in board.legal_moves:
            hint = ""
            if move and chess.Move(move.from_square, move.to_square, chess.QUEEN) in board.legal_moves:
                hint = f" (a promotion: add the piece, e.g. {token[:4]}q)"
            raise RequestError(f"illegal move {token!r} in {board.fen()}{hint}", 422)
        board.push(move)

    def play_bot(self) -> None:
        """Let the bot move when it is its turn and the game goes on; keep what it saw."""
        if self.over_reason() is not None or self.board.turn == self.human:
            return
        with _thinking:
            decision = self.engine.choose(self.board.copy())
        if decision.move not in self.board.legal_moves:   # the engine's contract, checked
            raise EngineError(f"the bot chose {decision.move.uci()}, which is not legal in {self.board.fen()}")
        self.seen[len(self.board.move_stack)] = what_the_bot_saw(self.board, decision)
        self.board.push(decision.move)

    def undo(self) -> None:
        """Take back the person's last move and the bot's reply to it (409 if none)."""
        if self.resigned is not None:
            raise RequestError("the game is over (resigned): start a new game", 409)
        own = self._own_moves()
        if not own:
            raise RequestError("nothing to undo: you have not moved yet", 409)
        while len(self.board.move_stack) > own[-1]:
            self.board.pop()
        self.seen = {ply: saw for ply, saw in self.seen.items() if ply < own[-1]}

    def _own_moves(self) -> list[int]:
        """Indices in the move stack of the person's moves."""
        first = self.board.root().turn
        return [i for i in range(len(self.board.move_stack)) if (first if i % 2 == 0 else not first) == self.human]

    def resign(self) -> None:
        self._check_open()
        self.resigned = self.human

    # -- what the page and the PGN show ----------------------------------------------------
    def pgn(self) -> str:
        """The game as PGN text, with its result."""
        game = chess.pgn.Game.from_board(self.board)
        game.headers["Event"] = "Knights and Kernels: browser game"
        game.headers["Site"] = "knights serve"
        game.headers["Date"] = self.started.strftime("%Y.%m.%d")
        game.headers["White"] = "You" if self.human == chess.WHITE else self.bot_name
        game.headers["Black"] = "You" if self.human == chess.BLACK else self.bot_name
        game.headers["Result"] = self.result()
        reason = self.over_reason()
        game.headers["Termination"] = "unterminated" if reason is None else "normal"
        return str(game) + "\n"

    def state(self) -> dict[str, Any]:
        """Everything the page draws, as JSON-ready values."""
        board = self.board
        replay = board.root()
        san = []
        for move in board.move_stack:
            san.append(replay.san(move))
            replay.push(move)
        reason = self.over_reason()
        to_move = reason is None and board.turn == self.human
        king = board.king(board.turn) if board.is_check() else None
        last_bot = max(self.seen) if self.seen else None
        return {
            "id": self.id, "fen": board.fen(), "turn": color_name(board.turn), "human": color_name(self.human),
            "bot": self.bot_name, "settings": self.settings.as_json(),
            "moves": [m.uci() for m in board.move_stack], "san": san,
            "legal": sorted(m.uci() for m in board.legal_moves) if to_move else [],
            "last_move": board.move_stack[-1].uci() if board.move_stack else None,
            "check": chess.square_name(king) if king is not None else None,
            "over": reason is not None, "reason": reason, "result": self.result(),
            "saw": None if last_bot is None else self.seen[last_bot],
            "can_undo": self.resigned is None and bool(self._own_moves()),
        }


class GameStore:
    """Games by id, at most ``limit`` (the least recently used is dropped first)."""

    def __init__(self, limit: int = 256) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        self.limit = limit
        self._games: OrderedDict[str, Game] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._games)

    def new_game(self, request: Mapping[str, Any]) -> Game:
        """A new game from a request's fields (``color``: white, black or random, and
        the :class:`~knights.web.engines.EngineSettings` fields); the bot makes its
        first move when the person plays Black."""
        unknown = sorted(set(request) - set(NEW_GAME_FIELDS))
        if unknown:
            raise RequestError(f"unknown field(s) {', '.join(map(repr, unknown))}; "
                               f"a new game takes {', '.join(NEW_GAME_FIELDS)}")
        color = request.get("color", "white")
        if color not in (*COLORS, "random"):
            raise RequestError(f"color must be white, black or random, not {color!r:.40}")
        settings = EngineSettings.from_json(request)
        if color == "random":
            color = random.Random(settings.seed).choice(sorted(COLORS))
        try:
            engine = engine_for(settings)
        except EngineError as exc:
            raise RequestError(str(exc)) from None
        game = Game(secrets.token_hex(8), COLORS[color], settings, engine)
        with game.lock:
            game.play_bot()
        with self._lock:
            self._games[game.id] = game
            while len(self._games) > self.limit:
                self._games.popitem(last=False)
        return game

    def get(self, game_id: str) -> Game:
        """The game ``game_id``, or a 404 :class:`~knights.web.errors.RequestError`."""
        with self._lock:
            game = self._games.get(game_id)
            if game is None:
                raise RequestError(f"no game with id {game_id!r:.40}: it never existed or the server was "
                                   "restarted; start a new game", 404)
            self._games.move_to_end(game_id)
            return game
