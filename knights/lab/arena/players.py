"""Opponents for matches, from weak to strong, all speaking the ``Player`` protocol.

A player has a ``name``, chooses a move for a board, is told when a new game starts
and is closed when done::

    player = GreedyPlayer(seed=1)
    move = player.choose_move(chess.Board())

The ladder (:mod:`knights.lab.arena.specs` builds them from spec strings such as ``"ab2"``):

==================  ===========================================================
``random``          :class:`RandomPlayer`: a uniformly random legal move.
``greedy``          :class:`GreedyPlayer`: one ply, counting material (the project's
                    table, :data:`knights.board.pieces.CENTIPAWNS`) after each
                    move; takes a mate in one; ties at random.
``ab2``, ``ab3``    our search over material, 2 / 3 plies and its capture search
                    (:class:`EnginePlayer` of :func:`knights.engine.build.build`).
``sf-nodes:N``      :class:`StockfishPlayer`: Stockfish at Skill Level 0 searching
                    N nodes a move (N = 1, 10, 100 in the ladder).
``sf-elo:E``        :class:`StockfishPlayer`: Stockfish with ``UCI_LimitStrength``
                    at ``UCI_Elo`` E (Stockfish 15.1 accepts 1350..2850).
``uci:<command>``   :class:`UciPlayer`: any UCI engine, through python-chess.
==================  ===========================================================

The other opponents are independent references: none of them uses our engine; :class:`EnginePlayer`
wraps any of our bots (:func:`knights.engine.build.build`) as a player.
"""

from __future__ import annotations

import contextlib
import random
import shlex
from collections.abc import Mapping
from typing import Protocol, runtime_checkable

import chess

from knights.board.pieces import CENTIPAWNS, capture_gain
from knights.data.stockfish import Stockfish
from knights.engine.constants import MATE
from knights.engine.one_ply import Decision, OnePlyEngine
from knights.engine.search import SearchEngine
from knights.engine.user_input import EngineError


@runtime_checkable
class Player(Protocol):
    """Anything that plays: ours, these opponents, an external UCI engine."""

    name: str

    def choose_move(self, board: chess.Board) -> chess.Move: ...

    def new_game(self) -> None: ...

    def close(self) -> None: ...




def material_cp(board: chess.Board, color: chess.Color) -> int:
    """Material of ``color`` minus that of the other side, in centipawns."""
    total = 0
    for piece_type in range(1, 6):
        total += CENTIPAWNS[piece_type] * (len(board.pieces(piece_type, color))
                                       - len(board.pieces(piece_type, not color)))
    return total


def move_gain(board: chess.Board, move: chess.Move) -> int:
    """Material the side to move wins with ``move`` (capture and promotion), centipawns."""
    return 100 * capture_gain(board, move)


class _Base:
    """Defaults for the parts of the protocol most players do not need."""

    name = "player"

    def new_game(self) -> None:
        pass

    def close(self) -> None:
        pass

    def reseed(self, seed: int | None) -> None:
        """Restart the player's random choices from ``seed`` (the arena calls this per game)."""
        self.rng = random.Random(seed)

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RandomPlayer(_Base):
    """A uniformly random legal move."""

    def __init__(self, seed: int | None = None, name: str = "random") -> None:
        self.name = name
        self.rng = random.Random(seed)

    def choose_move(self, board: chess.Board) -> chess.Move:
        moves = list(board.legal_moves)
        if not moves:
            raise EngineError(f"no legal moves: the game is over in {board.fen()}")
        return self.rng.choice(moves)


class GreedyPlayer(_Base):
    """One ply of material counting: the move after which its material lead is
    largest (a mate in one beats everything); equal moves are chosen at random."""

    def __init__(self, seed: int | None = None, name: str = "greedy") -> None:
        self.name = name
        self.rng = random.Random(seed)

    def choose_move(self, board: chess.Board) -> chess.Move:
        moves = list(board.legal_moves)
        self.rng.shuffle(moves)
        best, best_score = moves[0], -2 * MATE
        for move in moves:
            score = move_gain(board, move)
            board.push(move)
            if board.is_checkmate():
                score = MATE
            board.pop()
            if score > best_score:
                best, best_score = move, score
        return best


class StockfishPlayer(_Base):
    """The real Stockfish (one thread), weakened by a node limit and Skill Level,
    or by ``UCI_LimitStrength`` / ``UCI_Elo``.

    The whole game is sent (``position fen <start> moves ...``) so that Stockfish
    sees repetitions. With ``elo`` set, Stockfish 15.1 derives a skill level from it
    and picks its (randomised, weakened) move once its search reaches depth
    1 + level; ``nodes`` (default 20,000) only needs to let it get there.
    """

    def __init__(self, *, nodes: int | None = None, skill: int | None = None, elo: int | None = None,
                 depth: int | None = None, movetime_ms: int | None = None, path: str | None = None,
                 hash_mb: int = 16, name: str | None = None) -> None:
        options: dict[str, object] = {}
        if elo is not None:
            options.update({"UCI_LimitStrength": True, "UCI_Elo": int(elo)})
            if nodes is None and depth is None and movetime_ms is None:
                nodes = 20_000
        if skill is not None:
            options["Skill Level"] = int(skill)
        if nodes is None and depth is None and movetime_ms is None:
            raise ValueError("StockfishPlayer needs a nodes, depth or movetime limit")
        self.limits = {"nodes": nodes, "depth": depth, "movetime_ms": movetime_ms}
        self.name = name or (f"sf-elo:{elo}" if elo is not None else f"sf-nodes:{nodes}")
        self._engine = Stockfish(path, threads=1, hash_mb=hash_mb, options=options)

    def new_game(self) -> None:
        self._engine.new_game()

    def reseed(self, seed: int | None) -> None:  # Stockfish draws its own randomness
        pass

    def choose_move(self, board: chess.Board) -> chess.Move:
        result = self._engine.analyse(game_position(board), **self.limits)
        if result.bestmove is None:
            raise RuntimeError(f"{self.name} returned no move for {board.fen()}")
        return chess.Move.from_uci(result.bestmove)

    def close(self) -> None:
        self._engine.close()


def game_position(board: chess.Board) -> str:
    """``<start FEN> moves m1 m2 ...``: what follows ``position fen`` in UCI, with history."""
    root = board.root().fen()
    if not board.move_stack:
        return root
    return root + " moves " + " ".join(m.uci() for m in board.move_stack)


class UciPlayer(_Base):
    """Any UCI engine started by ``command`` (python-chess's ``SimpleEngine``),
    searching ``movetime_ms`` (default 100) or ``nodes`` or ``depth`` per move."""

    def __init__(self, command: str, *, movetime_ms: int | None = None, nodes: int | None = None,
                 depth: int | None = None, options: Mapping[str, str | int | bool | None] | None = None,
                 name: str | None = None) -> None:
        import chess.engine

        if movetime_ms is None and nodes is None and depth is None:
            movetime_ms = 100
        self.limit = chess.engine.Limit(time=None if movetime_ms is None else movetime_ms / 1000,
                                        nodes=nodes, depth=depth)
        self.name = name or f"uci:{command}"
        self._engine = chess.engine.SimpleEngine.popen_uci(shlex.split(command))
        if options:
            self._engine.configure(options)
        self._game = object()

    def new_game(self) -> None:
        self._game = object()  # a new key tells python-chess to send ucinewgame

    def reseed(self, seed: int | None) -> None:
        pass

    def choose_move(self, board: chess.Board) -> chess.Move:
        result = self._engine.play(board, self.limit, game=self._game)
        if result.move is None:
            raise RuntimeError(f"{self.name} returned no move for {board.fen()}")
        return result.move

    def close(self) -> None:
        with contextlib.suppress(Exception):  # the engine is already gone
            self._engine.quit()


class EnginePlayer:
    """A :class:`OnePlyEngine` (or a :class:`SearchEngine`) as a :class:`Player`; ``last``
    is its latest :class:`Decision`."""

    def __init__(self, engine: OnePlyEngine | SearchEngine, name: str | None = None) -> None:
        self.engine = engine
        self.name = name or f"knights-1ply[{engine.name}]"
        self.last: Decision | None = None

    def reseed(self, seed: int | None) -> None:
        """Restart the engine's opening randomness from ``seed`` (the arena calls this per game)."""
        self.engine.reseed(seed)

    def choose_move(self, board: chess.Board) -> chess.Move:
        self.last = self.engine.choose(board)
        return self.last.move

    def new_game(self) -> None:
        self.last = None
        if isinstance(self.engine, SearchEngine):
            self.engine.new_game()

    def close(self) -> None:
        pass
