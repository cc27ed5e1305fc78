"""One game in the browser, and the store that keeps several apart.

A :class:`Game` holds its board, which colour the person plays, the bot
(:func:`~knights.engine.build.build`) and, for every bot move, **what the bot
saw**: each legal move it considered with its score (pawns, White's side), best
first. :meth:`Game.state` is the JSON the page draws from. The
:class:`GameStore` gives each game a random id, so tabs never share a game, and writes
every change to its :class:`~knights.frontends.web.storage.GameDatabase` (SQLite) before the
server answers, so a restarted server goes on with every game; it keeps at most
``limit`` of them (the least recently used one goes first).

>>> store = GameStore()
>>> game = store.new_game({"evaluator": "material", "color": "white", "stochastic": False})
>>> game.play_human("e2e4")
>>> game.play_bot()
True
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
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from knights.common import quoted
from knights.engine.build import compiled_network
from knights.engine.one_ply import Decision
from knights.engine.rules import game_over, result_of
from knights.engine.search import Control, SearchEngine
from knights.engine.user_input import EngineError
from knights.evaluate.names import QUIESCE_SUFFIX
from knights.frontends.web.engines import SETTINGS_FIELDS, Engine, EngineSettings, engine_for
from knights.frontends.web.errors import RequestError
from knights.frontends.web.storage import IDLE_DAYS, MAX_GAMES, MAX_SEEN, GameDatabase, GameRecord, StorageUnavailable

BOT_NAME = "Knights and Kernels"
COLORS = {"white": chess.WHITE, "black": chess.BLACK}
NEW_GAME_FIELDS = ("color", *SETTINGS_FIELDS)
MAX_MOVE_TEXT = 12
BOT_MOVE_LOST = "the bot's move was not kept; it moves again once the games can be saved"

_thinking = threading.Lock()
"""One bot thinks at a time: the machine's cores are better used by one batch than two."""


Stop = Callable[[], bool]
"""Asked while the bot thinks: ``True`` when the person's page has gone (its connection
closed), so the search stops and its move is not played."""


class _StopWhen(Control):
    """A search's :class:`~knights.engine.search.Control` that stops it when ``stop()`` says so."""

    def __init__(self, stop: Stop) -> None:
        self._stop = stop

    def should_stop(self) -> bool:
        return self._stop()


def color_name(color: chess.Color) -> str:
    return "white" if color == chess.WHITE else "black"


def _pawns(score: float) -> float:
    """A score fit for JSON (finite, 3 decimals)."""
    return round(score, 3) if math.isfinite(score) else 0.0


def what_the_bot_saw(board: chess.Board, decision: Decision) -> dict[str, Any]:
    """The page's view of ``decision`` on ``board`` (before the move): the move played, its
    rank and score, what decided it, and every candidate with its score and game-ending
    outcome, in the engine's own order.

    The one-ply bot orders the moves by score, its best first, and plays the first (in the
    opening, with its stochastic opening, one of the best few). A search (``searched``) puts
    the move it found best first, its score searched ``depth`` plies deep, then the others by
    their last values: bounds (it stops looking at a move once it is no better) or values of
    a shallower look when its time ran out (the one-ply score itself, if the second look was
    cut short), which may read better than the played move's. Sorting by the scores shown
    would list those above the move the search chose (34...Bd5 as "choice 17 of 36"), so the
    engine's order is kept. ``line``: the moves the search expected, the played one first."""
    searched = decision.depth > 1 or decision.nodes > 0
    candidates = [{"uci": move.uci(), "san": board.san(move), "score": _pawns(score),
                   "outcome": decision.outcomes.get(move)} for move, score in decision.candidates]
    rank = next(i for i, (move, _) in enumerate(decision.candidates) if move == decision.move)
    line = []
    replay = board.copy(stack=False)
    pv = decision.pv if searched and decision.pv[:1] == (decision.move,) else (decision.move,)
    for move in pv:
        if not replay.is_legal(move):
            break
        line.append({"uci": move.uci(), "san": replay.san(move)})
        replay.push(move)
    return {"ply": len(board.move_stack), "number": board.fullmove_number, "color": color_name(board.turn),
            "fen": board.fen(), "uci": decision.move.uci(), "san": board.san(decision.move),
            "score": _pawns(decision.score), "rank": rank, "depth": decision.depth, "searched": searched,
            "line": line, "candidates": candidates}


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
        self.started = _dt.datetime.now().replace(microsecond=0)

    # -- stored and read back ----------------------------------------------------------------
    def record(self) -> GameRecord:
        """The game as the database keeps it."""
        return GameRecord(self.id, color_name(self.human), self.settings.as_json(), self.board.root().fen(),
                          [m.uci() for m in self.board.move_stack],
                          None if self.resigned is None else color_name(self.resigned), dict(self.seen),
                          self.started.isoformat())

    @classmethod
    def from_record(cls, record: GameRecord) -> Game:
        """The game ``record`` holds, with its bot built again from its settings.
        ValueError (a RequestError for settings no longer offered) when it cannot be played."""
        if record.human not in COLORS or (record.resigned is not None and record.resigned not in COLORS):
            raise ValueError(f"bad colors {record.human!r}, {record.resigned!r}")
        settings = EngineSettings.from_json(record.settings)
        game = cls(record.id, COLORS[record.human], settings, engine_for(settings))
        game.board = chess.Board(record.start_fen)
        for uci in record.moves:
            move = chess.Move.from_uci(uci)
            if move not in game.board.legal_moves:
                raise ValueError(f"the stored move {uci} is not legal in {game.board.fen()}")
            game.board.push(move)
        game.resigned = None if record.resigned is None else COLORS[record.resigned]
        game.seen = {ply: saw for ply, saw in record.seen.items() if 0 <= ply < len(game.board.move_stack)}
        game.started = _dt.datetime.fromisoformat(record.started)
        return game

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
        """The bot as the page and the PGN name it: what plays, so a ``+quiesce`` evaluator searched deeper
        than one ply is named by the network its compiled search plays (``sparse+quiesce``: EL/v25)."""
        evaluator, depth = self.settings.evaluator, self.settings.depth
        if depth > 1 and evaluator.lower().endswith(QUIESCE_SUFFIX):
            evaluator = compiled_network(evaluator) or evaluator
        return f"{BOT_NAME} [{evaluator}" + (f", depth {depth}]" if depth > 1 else "]")

    # -- moves -----------------------------------------------------------------------------
    def _check_open(self) -> None:
        reason = self.over_reason()
        if reason is not None:
            raise RequestError(f"the game is over ({reason}, {self.result()}): start a new game", 409)

    def play_human(self, text: Any) -> None:
        """Play the person's move (UCI such as ``e2e4``, ``e7e8q``, or SAN);
        409 when it is not their turn or the game is over, 422 when illegal."""
        if not isinstance(text, str) or not 0 < len(text.strip()) <= MAX_MOVE_TEXT:
            raise RequestError(f"move must be a move such as 'e2e4' (UCI) or 'Nf3' (SAN), not {quoted(text)}")
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

    @property
    def bot_to_move(self) -> bool:
        return self.over_reason() is None and self.board.turn != self.human

    def play_bot(self, stop: Stop | None = None) -> bool:
        """Let the bot move when it is its turn and the game goes on; keep what it saw.
        ``stop``: asked while it thinks; when it says the person has gone, the search stops
        and nothing is played (the bot is still to move: the page asks again when it is
        back). Whether the bot moved."""
        if not self.bot_to_move:
            return False
        with _thinking:
            if stop is not None and stop():
                return False
            board = self.board.copy()
            if stop is not None and isinstance(self.engine, SearchEngine):
                decision = self.engine.choose(board, control=_StopWhen(stop))
            else:
                decision = self.engine.choose(board)
        if stop is not None and stop():
            return False
        if decision.move not in self.board.legal_moves:   # the engine's contract, checked
            raise EngineError(f"the bot chose {decision.move.uci()}, which is not legal in {self.board.fen()}")
        self.seen[len(self.board.move_stack)] = what_the_bot_saw(self.board, decision)
        for ply in sorted(self.seen)[:-MAX_SEEN]:
            del self.seen[ply]
        self.board.push(decision.move)
        return True

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
        own = set(self._own_moves())
        bot_plies = [i for i in range(len(board.move_stack)) if i not in own]
        return {
            "id": self.id, "fen": board.fen(), "turn": color_name(board.turn), "human": color_name(self.human),
            "bot": self.bot_name, "settings": self.settings.as_json(),
            "moves": [m.uci() for m in board.move_stack], "san": san,
            "legal": sorted(m.uci() for m in board.legal_moves) if to_move else [],
            "last_move": board.move_stack[-1].uci() if board.move_stack else None,
            "check": chess.square_name(king) if king is not None else None,
            "over": reason is not None, "reason": reason, "result": self.result(),
            "saw": self.seen.get(bot_plies[-1]) if bot_plies else None, "bot_moves": len(bot_plies),
            "bot_to_move": self.bot_to_move,
            "can_undo": self.resigned is None and bool(own),
        }


class GameStore:
    """Games by id, each change written to ``db`` (a path, or ``":memory:"``, the default,
    for tests and doctests); at most ``limit`` games, none idle for more than
    ``idle_days`` days (the least recently used is dropped first). Games in use are kept
    in memory too, each with its bot, so a search keeps its tables from move to move."""

    def __init__(self, limit: int = MAX_GAMES, *, db: str | Path = ":memory:",
                 idle_days: float = IDLE_DAYS) -> None:
        self.db = GameDatabase(db, limit=limit, idle_days=idle_days)
        self.limit = limit
        self._games: OrderedDict[str, Game] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.db)

    def save(self, game: Game, lost: str = "the change was not made") -> None:
        """Write ``game`` as it is now (call it under ``game.lock``). When the database refuses,
        the game kept in memory is dropped, so that the next request reads back what is stored,
        and :class:`~knights.frontends.web.storage.StorageUnavailable` says what was ``lost``."""
        try:
            self.db.save(game.record())
        except StorageUnavailable as exc:
            self._forget([game.id])
            raise StorageUnavailable(f"{exc}: {lost}") from None

    def new_game(self, request: Mapping[str, Any], stop: Stop | None = None) -> Game:
        """A new game from a request's fields (``color``: white, black or random, and
        the :class:`~knights.frontends.web.engines.EngineSettings` fields); the bot makes its
        first move when the person plays Black (``stop``: see :meth:`Game.play_bot`)."""
        unknown = sorted(set(request) - set(NEW_GAME_FIELDS))
        if unknown:
            raise RequestError(f"unknown field(s) {', '.join(map(repr, unknown))}; "
                               f"a new game takes {', '.join(NEW_GAME_FIELDS)}")
        color = request.get("color", "white")
        if color not in (*COLORS, "random"):
            raise RequestError(f"color must be white, black or random, not {quoted(color)}")
        settings = EngineSettings.from_json(request)
        if color == "random":
            color = random.Random(settings.seed).choice(sorted(COLORS))
        try:
            engine = engine_for(settings)
        except EngineError as exc:
            raise RequestError(str(exc)) from None
        game = Game(secrets.token_hex(8), COLORS[color], settings, engine)
        with game.lock:
            self.save(game, "no game was started")
            with self._lock:
                self._games[game.id] = game
            self._forget(self.db.prune())
            if game.play_bot(stop):
                self.save(game, BOT_MOVE_LOST)
        return game

    def _forget(self, ids: list[str]) -> None:
        with self._lock:
            for game_id in ids:
                self._games.pop(game_id, None)
            while len(self._games) > self.limit:
                self._games.popitem(last=False)

    def get(self, game_id: str) -> Game:
        """The game ``game_id`` (from memory, or read back from the database), or a 404
        :class:`~knights.frontends.web.errors.RequestError`."""
        with self._lock:
            game = self._games.get(game_id)
            if game is not None:
                self._games.move_to_end(game_id)
                self.db.touch(game_id)
                return game
            try:
                record = self.db.load(game_id)
                game = None if record is None else Game.from_record(record)
            except ValueError as exc:
                raise RequestError(f"the game {game_id} is stored but cannot go on ({exc}); start a new game",
                                   409) from None
            if game is None:
                raise RequestError(f"no game with id {quoted(game_id)}: it never existed, or was dropped (the "
                                   f"server keeps {self.limit} games, none idle for more than "
                                   f"{self.db.idle_seconds / 86400:g} days); start a new game", 404)
            self._games[game_id] = game
        self._forget([])
        return game
