"""The bot as a UCI engine: ``knights uci`` (any UCI GUI, lichess-bot's ``protocol: uci``).

Commands: ``uci``, ``isready``, ``ucinewgame``, ``position startpos|fen <fen> [moves
...]``, ``go`` with any limits (``wtime btime winc binc movestogo movetime depth nodes
mate infinite ponder searchmoves``: all accepted; one ply is instant, so the clock is
never in danger), ``stop``, ``ponderhit``, ``setoption``, ``debug``, ``register``,
``quit``. Options:

==============  =======  ====================================================
name            type     meaning
==============  =======  ====================================================
Evaluator       combo    ``material``, ``democracy`` or a trained ``EL/vN``, each
                         optionally with ``+threats`` (default
                         :data:`~knights.evaluate.names.DEFAULT_EVALUATOR`, or its
                         fallback with an ``info string`` notice)
Stochastic      check    the paper's stochastic opening (default true)
Seed            spin     seed of the opening randomness; -1: fresh entropy
CaptureBonus    spin     centipawns added to captures (the original: 15; default 0)
==============  =======  ====================================================

Every ``go`` answers ``info depth 1 ... score cp X ... pv MOVE`` (the score from the
side to move: the only place pawns become centipawns; a mate in one is ``score mate
1``), then ``bestmove MOVE`` (after ``stop``/``ponderhit`` for ``go infinite``/``go
ponder``). Unknown or malformed input (a bad FEN, an illegal move in the list, an
unknown command or option) is answered with ``info string <reason>`` and the engine
carries on: after an illegal move the position is the one before it; after a bad FEN
the previous position is kept.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

import chess

if TYPE_CHECKING:
    from knights.play.engine import OnePlyEngine

ENGINE_NAME = "KnightsKernels 1-ply (KS_ChessAI rebuild)"
AUTHOR = "Knights and Kernels"
SEED_MAX = 2**31 - 1
GO_FLAGS = {"infinite", "ponder"}
GO_VALUES = {"wtime", "btime", "winc", "binc", "movestogo", "depth", "nodes", "mate", "movetime"}


class UciSession:
    """The protocol state machine: :meth:`handle` one line at a time; every output
    line goes to ``send``."""

    def __init__(self, send: Callable[[str], None], *, evaluator: str | None = None,
                 seed: int | None = None, stochastic: bool = True) -> None:
        self.send = send
        self.board = chess.Board()
        self.evaluator_name = evaluator          # None: the default, resolved at load time
        self.seed = seed
        self.stochastic = stochastic
        self.capture_bonus = 0.0
        self.engine: OnePlyEngine | None = None  # built on first need
        self._loaded_name: str | None = None
        self.pending: str | None = None          # bestmove held back by go infinite / ponder
        self.debug = False

    # -- output helpers ---------------------------------------------------------------------
    def info(self, text: str) -> None:
        self.send("info string " + " ".join(str(text).split()))

    # -- engine ------------------------------------------------------------------------------
    def _choices(self) -> tuple[list[str], str]:
        from knights.evaluate.names import EvaluatorError, available_evaluators, default_evaluator_name, resolve_name

        names = available_evaluators()
        try:
            return names, resolve_name(self.evaluator_name, names)
        except EvaluatorError:   # reported when the engine is built; it falls back to the default
            return names, default_evaluator_name(names)

    def ensure_engine(self) -> OnePlyEngine:
        """Build (or rebuild after setoption Evaluator) the engine and return it; a failure to
        load the chosen evaluator is reported and the previous engine (or material) kept."""
        from knights.evaluate.names import select_evaluator
        from knights.play.engine import OnePlyEngine

        if self.engine is not None and self._loaded_name == self.evaluator_name:
            return self.engine
        try:
            evaluator = select_evaluator(self.evaluator_name, notice=self.info)
        except Exception as exc:  # noqa: BLE001 - reported, the engine carries on
            self.info(f"cannot load evaluator {self.evaluator_name!r}: {exc}")
            if self.engine is not None:
                self.evaluator_name = self._loaded_name
                return self.engine
            from knights.evaluate.base import MaterialEvaluator

            evaluator = MaterialEvaluator()
            self.info("playing with the material evaluator")
        self.engine = OnePlyEngine(evaluator, stochastic=self.stochastic, seed=self.seed,
                                   capture_bonus=self.capture_bonus)
        self._loaded_name = self.evaluator_name
        return self.engine

    # -- commands --------------------------------------------------------------------------------
    def handle(self, line: str) -> bool:
        """Process one input line; ``False`` after ``quit``."""
        tokens = line.split()
        if not tokens:
            return True
        command, args = tokens[0], tokens[1:]
        try:
            if command == "quit":
                return False
            handlers: dict[str, Callable[[list[str]], None]] = {
                "uci": self.cmd_uci, "isready": self.cmd_isready, "ucinewgame": self.cmd_ucinewgame,
                "position": self.cmd_position, "go": self.cmd_go, "stop": self.cmd_stop,
                "ponderhit": self.cmd_stop, "setoption": self.cmd_setoption, "debug": self.cmd_debug,
                "register": lambda _args: None,
            }
            handler = handlers.get(command)
            if handler is None:
                self.info(f"unknown command: {line.strip()[:200]}")
            else:
                handler(args)
        except Exception as exc:  # noqa: BLE001 - never crash on input
            self.info(f"error in {command!r}: {type(exc).__name__}: {exc}")
        return True

    def cmd_uci(self, _args: list[str]) -> None:
        names, default = self._choices()
        self.send(f"id name {ENGINE_NAME}")
        self.send(f"id author {AUTHOR}")
        self.send(f"option name Evaluator type combo default {default} " + " ".join(f"var {n}" for n in names))
        self.send(f"option name Stochastic type check default {'true' if self.stochastic else 'false'}")
        seed = -1 if self.seed is None else self.seed
        self.send(f"option name Seed type spin default {seed} min -1 max {SEED_MAX}")
        self.send("option name CaptureBonus type spin default 0 min 0 max 100")
        self.send("uciok")

    def cmd_isready(self, _args: list[str]) -> None:
        self.ensure_engine()
        self.send("readyok")

    def cmd_debug(self, args: list[str]) -> None:
        self.debug = bool(args) and args[0].lower() == "on"

    def cmd_ucinewgame(self, _args: list[str]) -> None:
        self.flush_pending()
        self.board = chess.Board()

    def cmd_position(self, args: list[str]) -> None:
        from knights.play.user_input import EngineError, check_position

        self.flush_pending()
        if not args:
            self.info("position needs 'startpos' or 'fen <fen>'")
            return
        if "moves" in args:
            cut = args.index("moves")
            setup, moves = args[:cut], args[cut + 1:]
        else:
            setup, moves = args, []
        if setup[0] == "startpos" and len(setup) == 1:
            board = chess.Board()
        elif setup[0] == "fen" and len(setup) > 1:
            fen = " ".join(setup[1:])
            try:
                board = chess.Board(fen)
                check_position(board)
            except (ValueError, EngineError) as exc:
                self.info(f"invalid FEN {fen!r} ({exc}); position unchanged")
                return
        else:
            self.info(f"invalid position command: position {' '.join(args)[:200]}; position unchanged")
            return
        for i, token in enumerate(moves):
            try:
                move = board.parse_uci(token)
                if not move:
                    raise ValueError("null move")
            except ValueError:
                self.info(f"illegal move {token!r} (move {i + 1} of the list) in {board.fen()}; "
                          f"position set to before it")
                break
            board.push(move)
        self.board = board

    def cmd_setoption(self, args: list[str]) -> None:
        words = " ".join(args)
        if not args or args[0].lower() != "name":
            self.info(f"setoption needs 'name <option> [value <value>]': setoption {words[:200]}")
            return
        lower = [a.lower() for a in args]
        if "value" in lower:
            cut = lower.index("value")
            name, value = " ".join(args[1:cut]), " ".join(args[cut + 1:])
        else:
            name, value = " ".join(args[1:]), ""
        key = name.lower().replace(" ", "")
        if key == "evaluator":
            from knights.evaluate.names import EvaluatorError, resolve_name

            try:
                self.evaluator_name = resolve_name(value)   # loaded at the next isready / go
            except EvaluatorError as exc:
                self.info(str(exc))
                return
        elif key == "stochastic":
            if value.lower() not in ("true", "false"):
                self.info(f"Stochastic must be true or false, not {value!r}")
                return
            self.stochastic = value.lower() == "true"
            if self.engine is not None:
                self.engine.stochastic = self.stochastic
        elif key == "seed":
            try:
                seed = int(value)
                if not -1 <= seed <= SEED_MAX:
                    raise ValueError
            except ValueError:
                self.info(f"Seed must be an integer from -1 to {SEED_MAX}, not {value!r}")
                return
            self.seed = None if seed < 0 else seed
            if self.engine is not None:
                self.engine.reseed(self.seed)
        elif key == "capturebonus":
            try:
                cp = int(value)
                if not 0 <= cp <= 100:
                    raise ValueError
            except ValueError:
                self.info(f"CaptureBonus must be an integer from 0 to 100 (centipawns), not {value!r}")
                return
            self.capture_bonus = cp / 100.0
            if self.engine is not None:
                self.engine.capture_bonus = self.capture_bonus
        else:
            self.info(f"unknown option {name!r}")

    def _parse_go(self, args: list[str]) -> tuple[set[str], list[chess.Move]]:
        flags: set[str] = set()
        searchmoves: list[chess.Move] = []
        i = 0
        while i < len(args):
            token = args[i]
            if token in GO_FLAGS:
                flags.add(token)
            elif token in GO_VALUES:
                if i + 1 < len(args) and args[i + 1].lstrip("-").isdigit():
                    i += 1
                else:
                    self.info(f"go: '{token}' without a number; ignored")
            elif token == "searchmoves":
                while i + 1 < len(args) and args[i + 1] not in GO_VALUES | GO_FLAGS:
                    i += 1
                    try:
                        move = chess.Move.from_uci(args[i])
                        if move in self.board.legal_moves:
                            searchmoves.append(move)
                        else:
                            self.info(f"searchmoves: {args[i]} is not legal here; ignored")
                    except ValueError:
                        self.info(f"searchmoves: {args[i]!r} is not a UCI move; ignored")
            else:
                self.info(f"go: unknown token {token!r}; ignored")
            i += 1
        return flags, searchmoves

    def cmd_go(self, args: list[str]) -> None:
        self.flush_pending()
        flags, searchmoves = self._parse_go(args)
        started = time.perf_counter()
        board = self.board
        if not any(True for _ in board.legal_moves):
            self.info(f"no legal moves: the game is over ({'checkmate' if board.is_check() else 'stalemate'})")
            self._answer("bestmove (none)", flags)
            return
        engine = self.ensure_engine()
        try:
            decision = engine.choose(board, root_moves=searchmoves or None)
        except Exception as exc:  # noqa: BLE001 - never leave the GUI without a legal move
            self.info(f"engine error ({type(exc).__name__}: {exc}); playing the first legal move")
            move = searchmoves[0] if searchmoves else next(iter(board.legal_moves))
            self._answer(f"bestmove {move.uci()}", flags)
            return
        ms = max(0, round((time.perf_counter() - started) * 1e3))
        if decision.mates:
            score = "mate 1"
        else:
            pov = decision.score_for(board.turn)
            score = f"cp {round(pov * 100)}"
        nodes = len(decision.candidates)
        nps = int(nodes * 1000 / ms) if ms > 0 else nodes * 1000
        self.send(f"info depth 1 seldepth 1 multipv 1 score {score} nodes {nodes} nps {nps} time {ms} "
                  f"pv {decision.move.uci()}")
        self._answer(f"bestmove {decision.move.uci()}", flags)

    def _answer(self, line: str, flags: set[str]) -> None:
        if flags & GO_FLAGS:
            self.pending = line      # sent on stop / ponderhit, as UCI requires
        else:
            self.send(line)

    def cmd_stop(self, _args: list[str]) -> None:
        self.flush_pending()

    def flush_pending(self) -> None:
        if self.pending is not None:
            line, self.pending = self.pending, None
            self.send(line)


def serve(stdin: TextIO, stdout: TextIO, **options: Any) -> int:
    """Read commands from ``stdin`` until ``quit`` or end of input."""
    def send(text: str) -> None:
        stdout.write(text + "\n")
        stdout.flush()

    session = UciSession(send, **options)
    while True:
        line = stdin.readline()
        if not line:
            return 0
        if not session.handle(line):
            return 0


def main(args: argparse.Namespace | None = None) -> int:
    """``knights uci``."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)   # one ply of ~35 positions: a second thread only adds overhead
    try:
        return serve(sys.stdin, sys.stdout, evaluator=getattr(args, "evaluator", None),
                     seed=getattr(args, "seed", None), stochastic=not getattr(args, "deterministic", False))
    except KeyboardInterrupt:
        return 0
    finally:
        torch.set_num_threads(threads)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
