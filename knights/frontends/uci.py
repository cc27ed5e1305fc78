"""The bot as a UCI engine: ``knights uci`` (any UCI GUI, lichess-bot's ``protocol: uci``).

Commands: ``uci``, ``isready``, ``ucinewgame``, ``position startpos|fen <fen> [moves
...]``, ``go`` with any limits (``wtime btime winc binc movestogo movetime depth nodes
mate infinite ponder searchmoves``: all accepted; the clock and ``movetime`` are
honoured, see below), ``stop``, ``ponderhit``, ``setoption``, ``debug``, ``register``,
``quit``. Options:

==============  =======  ====================================================
name            type     meaning
==============  =======  ====================================================
Evaluator       combo    ``material``, ``democracy`` or a trained ``EL/vN``, each
                         optionally with ``+qsearch`` or ``+threats``; a compiled
                         network with ``+quiesce``, or ``sparse+quiesce``
                         (default: the registry's
                         ``SEARCH_NETWORK`` while the bot searches, its
                         ``ONE_PLY_EVALUATOR`` at Depth 1, or their fallback
                         with an ``info string`` notice)
Stochastic      check    the paper's stochastic opening (default true)
Seed            spin     seed of the opening randomness; -1: fresh entropy
CaptureBonus    spin     centipawns added to captures (the original: 15; default 0)
Move Overhead   spin     milliseconds a move costs beyond its budget (pipes, a busy
                         machine), kept back on a clock for every move to come
                         (:data:`knights.engine.clock.MOVE_OVERHEAD`)
==============  =======  ====================================================

Every ``go`` searches (alpha-beta, :mod:`knights.engine.search`) to the ``Depth`` option
or the ``go``'s own ``depth``, within the clock; each finished iteration answers ``info
depth N seldepth ... score cp X ... pv ...`` (the score from the side to move; a mate is
``score mate N``); at Depth 1 the one-ply bot answers ``info depth 1``. Then ``bestmove
MOVE`` (after ``stop``/``ponderhit`` for ``go infinite``/``go ponder``), after an ``info`` line
whose ``time`` is the milliseconds since the ``go`` was read. Unknown or
malformed input (a bad FEN, an illegal move in the list, an unknown command or option)
is answered with ``info string <reason>`` and the engine carries on: after an illegal
move the position is the one before it; after a bad FEN the previous position is kept;
a line that is not valid text (a stray byte) is reported the same way and skipped
(:class:`~knights.frontends.stdin.Lines`).

The loop never waits on the engine. It waits for input, for the engine's pipe, or for the
deadline of the search in flight, whichever comes first; so ``stop``, ``isready``, ``quit``
and the end of input are answered at once whatever runs. ``stop`` (and ``quit``, and the end
of input, which is taken as ``quit``, as Stockfish does) ends the search and answers its
``bestmove`` within :data:`STOP_GRACE`: the search's own answer when it comes in that time,
else its last finished iteration's move, else the quick move. ``isready`` during a search is
answered ``readyok`` at once; otherwise once the engine has loaded. Any other line read while
a search that ends by itself (a clock, ``movetime``, ``depth``, ``nodes``) or a ``readyok``
is still to come waits for it, in order, as a GUI's next ``position`` and ``go`` wait for
``bestmove``; the ``position``, ``go`` or ``ucinewgame`` that follows ``go infinite`` or ``go
ponder`` ends it. Only errors are said between a command and its answer: what the engine
plays with is said in the next search's ``info string`` lines.

Start-up and time. ``uci`` is answered at once: the option list comes from the files
on disk (:func:`~knights.engine.build.available`), and torch and the model load in a separate
engine process (:class:`~knights.frontends.uci_worker.EngineWorker`) started after ``uciok`` (``readyok`` waits for
them, as UCI allows). Every decision runs there, in order, while this process keeps
reading and keeps the clock: a model load that holds the interpreter lock for half a
second cannot delay an answer. (A program that has the evaluators loaded already, such
as lichess-bot's homemade engine or a test, runs the same worker on a thread instead.) ``go`` gives
the move the time :func:`knights.engine.clock.move_budget` allows (``movetime`` less a
margin, or a share of ``wtime/btime`` plus most of ``winc/binc``, with ``movestogo``);
when that is less than a decision costs (measured when the model loads, then on every
move), or the decision (or the model, for a ``go`` before ``isready``) is not ready in
time, the answer is :func:`knights.engine.clock.quick_move`'s static material choice,
reported as ``info depth 0``, in well under a millisecond.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

import chess

from knights.common import clip, quoted
from knights.engine.clock import (
    MAX_GO_MS,
    MOVE_OVERHEAD,
    ONE_PLY_FLOOR,
    GoLimits,
    move_budget,
    quick_move,
    search_deadlines,
)
from knights.engine.constants import UNLIMITED_DEPTH
from knights.frontends.stdin import Lines
from knights.frontends.uci_worker import NO_DEADLINE, EngineLink

ENGINE_NAME = "KnightsKernels (KS_ChessAI rebuild)"
AUTHOR = "Knights and Kernels"
SEED_MAX = 2**31 - 1
GO_FLAGS = {"infinite", "ponder"}
GO_VALUES = {"wtime", "btime", "winc", "binc", "movestogo", "depth", "nodes", "mate", "movetime"}
CLOCK_KEYS = ("wtime", "btime", "winc", "binc", "movestogo", "movetime")
ASSUMED_COST = 0.05      # seconds a decision is taken to cost before one is measured
COST_MARGIN = 1.25       # a decision is started only when the budget exceeds this times its cost
FALLBACK_TIME = 0.002    # seconds kept back for the quick move and the answer
STOP_GRACE = 0.05
"""Seconds a stopped search has to send its answer before the protocol answers for it (its last
finished iteration's move, or the quick move): the compiled search sees the stop flag within a few
milliseconds, the Python search within a few nodes; a search still waiting for the model to load
does not."""
UNLIMITED_GO = 1.0       # seconds a go with no clock, movetime, depth or nodes may search (from its start)
AT_ONCE = frozenset({"stop", "isready", "quit"})
"""Commands taken at once, never after a search or a readyok still to come."""


class UciSession:
    """The protocol state machine: :meth:`handle` one line at a time; every output
    line goes to ``send``."""

    def __init__(self, send: Callable[[str], None], *, evaluator: str | None = None,
                 seed: int | None = None, stochastic: bool = True, depth: int = UNLIMITED_DEPTH,
                 engine_process: bool | None = None) -> None:
        self.send = send
        self.depth = depth
        # ``knights uci`` runs the engine in its own process; a program that has the evaluators
        # loaded already (lichess-bot's homemade engine, tests) runs it on a thread, sharing them
        engine_process = "knights.evaluate.names" not in sys.modules if engine_process is None else engine_process
        self.link = EngineLink(self.info, lambda: (self.evaluator_name, self.seed, self.stochastic, self.depth),
                               engine_process=engine_process, line=send)
        self.searching: Search | None = None     # the go in flight
        self.board = chess.Board()
        self.evaluator_name = evaluator          # None: the default, resolved at load time
        self.seed = seed
        self.stochastic = stochastic
        self.capture_bonus = 0.0
        self.move_overhead = MOVE_OVERHEAD       # seconds each move costs beyond its budget (option Move Overhead)
        self.pending: str | None = None          # bestmove held back by go infinite / ponder
        self.ready_rid: int | None = None        # the engine's ping whose answer lets readyok go out
        self.deferred: deque[str] = deque()      # lines read while a search or readyok was still to come
        self.hurry = False                       # stop / quit: every line waiting is taken at once
        self.debug = False

    # -- output helpers ---------------------------------------------------------------------
    def info(self, text: str) -> None:
        """``info string TEXT`` on one line; control characters (an escape sequence read from the
        input and quoted back) are written as ``\\xNN``, never sent raw to a terminal or GUI."""
        clean = "".join(c if c.isprintable() or c.isspace() else f"\\x{ord(c):02x}" for c in str(text))
        self.send("info string " + " ".join(clean.split()))

    def _choices(self) -> tuple[list[str], str]:
        """The Evaluator option's names (the files on disk: no torch) and its default for the Depth option."""
        from knights.engine.build import available, default_evaluator
        from knights.engine.spec import parse
        from knights.evaluate.names import EvaluatorError

        names = available()
        try:
            asked = parse(self.evaluator_name).evaluator
        except EvaluatorError:   # reported when the engine is built
            asked = None
        return names, asked if asked in names else default_evaluator(self.depth, names)

    # -- the engine process, and what comes back from it ------------------------------------------
    def poll(self) -> None:
        """Take in what the engine has sent; answer the search in flight when its answer has come
        or its deadline has passed, and ``readyok`` when the engine has done what came before it;
        then the lines that waited for them, in order."""
        while True:
            self.link.pump()
            run = self.searching
            if run is not None:
                if not run.open_ended and self.link.has_answer(run.rid):
                    self._conclude(self.link.take(run.rid), run.budget_text)
                elif (run.deadline is not None and time.monotonic() >= run.deadline) or not self.link.alive:
                    self._conclude(None, run.budget_text)      # out of time, or the engine process died
            if self.ready_rid is not None and (self.link.has_answer(self.ready_rid) or not self.link.alive):
                self.link.take(self.ready_rid)
                self.ready_rid = None
                self.send("readyok")
            if not self.deferred or self.blocked:
                return
            self._execute(self.deferred.popleft())

    @property
    def blocked(self) -> bool:
        """Whether lines other than ``stop``, ``isready`` and ``quit`` wait (:meth:`handle`)."""
        return self.ready_rid is not None or (self.searching is not None and not self.searching.open_ended)

    def wake_in(self) -> float | None:
        """Seconds until the session must act by itself (the deadline of the search in flight);
        ``None``: only input or the engine can give it something to do."""
        run = self.searching
        if run is None or run.deadline is None:
            return None
        return max(0.0, run.deadline - time.monotonic())

    def settle(self) -> None:
        """Wait until nothing holds the lines back (:attr:`blocked`) and every waiting line is taken:
        what the protocol's own loop does between two lines of an input that is all there at once."""
        self.poll()
        while self.blocked or self.deferred:
            self.link.pump_within(self.wake_in())
            self.poll()

    def drain(self) -> None:
        """:meth:`settle`, then wait until the engine has done every request so far (tests)."""
        self.settle()
        self.link.drain()
        self.poll()

    def state(self) -> dict[str, Any]:
        """The engine process's evaluator, engine name and options (tests)."""
        return self.link.state()

    def close(self) -> None:
        """End the engine process."""
        self.link.close()

    # -- commands --------------------------------------------------------------------------------
    def handle(self, line: str) -> bool:
        """Take one input line; ``False`` after ``quit``. ``stop``, ``isready`` and ``quit`` are
        answered at once; any other line waits while :attr:`blocked`, then runs in order."""
        self.poll()
        command = line.split()[0] if line.split() else ""
        if command == "quit":
            self.finish_all()
            return False
        if command not in AT_ONCE and (self.blocked or self.deferred):
            self.deferred.append(line)
        else:
            self._execute(line)
        return True

    def _execute(self, line: str) -> None:
        tokens = line.split()
        if not tokens:
            return
        command, args = tokens[0], tokens[1:]
        try:
            handlers: dict[str, Callable[[list[str]], None]] = {
                "uci": self.cmd_uci, "isready": self.cmd_isready, "ucinewgame": self.cmd_ucinewgame,
                "position": self.cmd_position, "go": self.cmd_go, "stop": self.cmd_stop,
                "ponderhit": self.cmd_ponderhit, "setoption": self.cmd_setoption, "debug": self.cmd_debug,
                "register": lambda _args: None,
            }
            handler = handlers.get(command)
            if handler is None:
                self.info(f"unknown command: {line.strip()[:200]}")
            else:
                handler(args)
        except Exception as exc:  # noqa: BLE001 - never crash on input
            self.info(f"error in {command!r}: {type(exc).__name__}: {exc}")

    def cmd_uci(self, _args: list[str]) -> None:
        names, default = self._choices()
        self.send(f"id name {ENGINE_NAME}")
        self.send(f"id author {AUTHOR}")
        self.send(f"option name Evaluator type combo default {default} " + " ".join(f"var {n}" for n in names))
        self.send(f"option name Stochastic type check default {'true' if self.stochastic else 'false'}")
        seed = -1 if self.seed is None else self.seed
        self.send(f"option name Seed type spin default {seed} min -1 max {SEED_MAX}")
        self.send("option name CaptureBonus type spin default 0 min 0 max 100")
        self.send(f"option name Move Overhead type spin default {round(MOVE_OVERHEAD * 1000)} min 0 max 5000")
        self.send(f"option name Depth type spin default {self.depth} min 1 max {UNLIMITED_DEPTH}")
        self.send("uciok")
        self.link.post("warm")      # torch and the evaluators import there while the GUI sends its options

    def cmd_isready(self, _args: list[str]) -> None:
        """``readyok`` at once during a search (UCI: without stopping it), when the engine is loaded
        and idle, or in a hurry (:meth:`finish_all`); else once the engine has loaded."""
        if self.searching is not None or self.hurry or (self.link.ready and not self.link.loading):
            self.send("readyok")
            return
        self.link.start_loading()
        self.ready_rid = self.link.post("ping")
        self.link.keep(self.ready_rid)

    def cmd_debug(self, args: list[str]) -> None:
        self.debug = bool(args) and args[0].lower() == "on"

    def cmd_ucinewgame(self, _args: list[str]) -> None:
        self.finish_search()
        self.board = chess.Board()
        self.link.post("set", "newgame", True)

    def cmd_position(self, args: list[str]) -> None:
        from knights.engine.user_input import EngineError, check_position

        self.finish_search()
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
                self.info(f"invalid FEN {quoted(fen, 120)} ({clip(str(exc), 120)}); position unchanged")
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
                self.info(f"illegal move {quoted(token)} (move {i + 1} of the list) in {board.fen()}; "
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
            self.link.post("evaluator", value)   # the resolver imports torch: not in this process
            self.link.ready = self.link.loading = False
        elif key == "stochastic":
            if value.lower() not in ("true", "false"):
                self.info(f"Stochastic must be true or false, not {value!r}")
                return
            self.stochastic = stochastic = value.lower() == "true"
            self.link.post("set", "stochastic", stochastic)
        elif key == "seed":
            seed = self._spin(value, -1, SEED_MAX, f"Seed must be an integer from -1 to {SEED_MAX}")
            if seed is None:
                return
            self.seed = new_seed = None if seed < 0 else seed
            self.link.post("set", "seed", new_seed)
        elif key == "depth":
            depth = self._spin(value, 1, UNLIMITED_DEPTH,
                               f"Depth must be an integer from 1 (the one-ply bot) to {UNLIMITED_DEPTH}")
            if depth is None:
                return
            self.depth = depth
            self.link.post("set", "depth", depth)
            self.link.ready = self.link.loading = False   # the default evaluator may change with it
        elif key == "capturebonus":
            cp = self._spin(value, 0, 100, "CaptureBonus must be an integer from 0 to 100 (centipawns)")
            if cp is None:
                return
            self.capture_bonus = bonus = cp / 100.0
            self.link.post("set", "capture_bonus", bonus)
        elif key == "moveoverhead":
            ms = self._spin(value, 0, 5000, "Move Overhead must be an integer from 0 to 5000 (milliseconds)")
            if ms is None:
                return
            self.move_overhead = ms / 1000
        else:
            self.info(f"unknown option {name!r}")

    def _spin(self, value: str, low: int, high: int, rule: str) -> int | None:
        """A spin option's integer when it lies in ``[low, high]``; else ``None``, saying
        ``rule`` and the value refused."""
        try:
            number = int(value)
        except ValueError:
            number = None
        if number is None or not low <= number <= high:
            self.info(f"{rule}, not {value!r}")
            return None
        return number

    def _parse_go(self, args: list[str]) -> tuple[set[str], list[chess.Move], GoLimits, dict[str, int]]:
        flags: set[str] = set()
        searchmoves: list[chess.Move] = []
        values: dict[str, int] = {}
        search: dict[str, int] = {}
        i = 0
        while i < len(args):
            token = args[i]
            if token in GO_FLAGS:
                flags.add(token)
            elif token in GO_VALUES:
                if i + 1 < len(args) and args[i + 1].lstrip("-").isdigit():
                    i += 1
                    number = max(-MAX_GO_MS, min(int(args[i]), MAX_GO_MS))   # no float overflows later
                    if token in CLOCK_KEYS:
                        values[token] = number
                    elif token in ("depth", "nodes"):
                        if number >= 1:
                            search[token] = min(number, UNLIMITED_DEPTH) if token == "depth" else number
                        else:
                            self.info(f"go: {token} must be at least 1, not {args[i]}; ignored")
                    else:                       # mate: no mate search here; the move is searched as usual
                        self.info(f"go: mate {args[i]} is not searched for as such; the move is searched as usual")
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
        return flags, searchmoves, GoLimits(**values), search

    def cmd_go(self, args: list[str]) -> None:
        started = time.perf_counter()
        self.finish_search()
        flags, searchmoves, limits, search = self._parse_go(args)
        board = self.board.copy()
        if not any(True for _ in board.legal_moves):
            self.info(f"no legal moves: the game is over ({'checkmate' if board.is_check() else 'stalemate'})")
            self.pending = "bestmove (none)" if flags & GO_FLAGS else None
            if not flags & GO_FLAGS:
                self.send("bestmove (none)")
            return
        open_ended = bool(flags & GO_FLAGS)      # infinite / ponder: the answer waits for stop or ponderhit
        budget = None if open_ended else move_budget(limits, board.turn, self.move_overhead)
        self.link.start_loading()
        if budget is None and not open_ended and not search:
            search["own_ms"] = round(UNLIMITED_GO * 1000)   # no clock: a fixed time, from when the model is loaded
        wait: float | None = None
        soft = hard = NO_DEADLINE
        if budget is not None:
            cost = self.link.cost if self.link.cost is not None else ASSUMED_COST
            if budget < COST_MARGIN * cost + FALLBACK_TIME:
                if limits.movetime is None and self.link.ready and COST_MARGIN * cost <= ONE_PLY_FLOOR:
                    search["depth"] = 0          # a clock below the GUI's margin: the one-ply decision alone fits
                    budget = ONE_PLY_FLOOR + FALLBACK_TIME
                else:
                    self._quick(board, searchmoves, started,
                                f"{budget * 1e3:.0f} ms for this move, a decision costs ~{cost * 1e3:.0f} ms")
                    return
            wait = max(0.0, budget - FALLBACK_TIME - (time.perf_counter() - started))
            soft, hard = search_deadlines(wait)
        search["sid"] = self.link.begin_search(soft, hard)
        deadline = None if wait is None else time.monotonic() + wait
        rid = self.link.post("decide", board.root().fen(), [m.uci() for m in board.move_stack],
                             [m.uci() for m in searchmoves], deadline, search)
        self.link.keep(rid)          # answered when it comes (poll), or at stop / ponderhit when open-ended
        budget_text = "no clock" if budget is None else f"{budget * 1e3:.0f} ms for this move"
        self.searching = Search(rid, started, board, searchmoves, limits, flags, deadline, budget_text)
        self.poll()                  # a reply there already (a thread worker) is answered now

    def _conclude(self, reply: tuple[str, Any] | None, budget_text: str) -> None:
        """Answer the search in flight with ``reply`` (``None``: it did not come in time)."""
        run, self.searching = self.searching, None
        if run is None:
            return
        self.link.take(run.rid)                      # a later reply is not kept
        if reply is None or reply[0] == "expired":   # the request is dropped or its answer unused
            self.link.pump()                          # the iterations that finished meanwhile
            finished, self.link.last_line = self.link.last_line, None
            self.link.retire_search()                 # its later lines never follow the next go
            move = _pv_move(finished, run.board)
            if move is not None:                      # a finished iteration's move beats the quick move
                self.info(f"the search did not answer in time ({budget_text}); "
                          f"playing its last finished iteration's move")
                self.send(f"info time {_ms_since(run.started)}")
                self.send(f"bestmove {move.uci()}")
                return
            what = "the model is still loading" if not self.link.ready else "the decision did not answer in time"
            self._quick(run.board, run.searchmoves, run.started, f"{what} ({budget_text})")
            return
        self.link.retire_search()
        kind, decision = reply
        if kind != "decision":   # never leave the GUI without a legal move, nor the user without the reason
            self.info(f"error: {decision}; answering with the static material move, not an evaluation")
            move = quick_move(run.board, run.searchmoves)
            self.send(f"info depth 0 time {_ms_since(run.started)} pv {move.uci()}")
            self.send(f"bestmove {move.uci()}")
            return
        ms = _ms_since(run.started)
        if decision["mate_in"] is not None:
            score = f"mate {decision['mate_in']}"
        elif decision["mates"]:
            score = "mate 1"
        else:
            score = f"cp {round(decision['pov'] * 100)}"
        nodes = decision["nodes"]
        nps = int(nodes * 1000 / ms) if ms > 0 else nodes * 1000
        depth = decision["depth"]
        pv = " ".join(decision["pv"]) or decision["move"]
        self.send(f"info depth {depth} seldepth {decision['seldepth']} multipv 1 score {score} nodes {nodes} "
                  f"nps {nps} time {ms} pv {pv}")
        ponder = f" ponder {decision['ponder']}" if decision["ponder"] else ""
        self.send(f"bestmove {decision['move']}{ponder}")

    def _quick(self, board: chess.Board, searchmoves: list[chess.Move], started: float, why: str) -> None:
        """Answer at once with :func:`~knights.engine.clock.quick_move`."""
        move = quick_move(board, searchmoves, self.link.previous_order)
        self.link.retire_search()     # a search given up on stays quiet from now on
        self.info(f"quick move: {why}")
        self.send(f"info depth 0 time {_ms_since(started)} pv {move.uci()}")
        self.send(f"bestmove {move.uci()}")

    def cmd_stop(self, _args: list[str]) -> None:
        self.finish_all()

    def cmd_ponderhit(self, _args: list[str]) -> None:
        """The opponent played the expected move: the ponder search goes on as a timed one."""
        run = self.searching
        if run is None or "ponder" not in run.flags or "infinite" in run.flags:
            self.finish_search()
            return
        budget = move_budget(run.limits, run.board.turn, self.move_overhead)
        if budget is None:                 # a ponder without a clock: as a bare go from here
            budget = UNLIMITED_GO
        wait = max(0.0, budget - FALLBACK_TIME)
        soft, hard = search_deadlines(wait)
        self.link.set_deadlines(soft, hard)
        self.searching = Search(run.rid, time.perf_counter(), run.board, run.searchmoves, run.limits, set(),
                                time.monotonic() + wait, f"{budget * 1e3:.0f} ms after ponderhit")
        self.poll()

    def finish_search(self) -> None:
        """Stop the search in flight, if any, and send its answer within :data:`STOP_GRACE`
        (``stop``; also before a new ``go`` or ``position`` from a GUI that did not send ``stop``)."""
        self.flush_pending()
        run = self.searching
        if run is None:
            return
        self.link.stop_search()
        reply = self.link.take(run.rid) or self.link.wait(run.rid, STOP_GRACE)
        self._conclude(reply, "stopped")

    def finish_all(self) -> None:
        """``stop``, ``quit``, the end of input: the search in flight is stopped and answered, a
        ``readyok`` still to come is sent, and the lines that waited are taken now, each search
        they start stopped by the next line or at the end."""
        self.hurry = True
        try:
            if self.ready_rid is not None:
                self.link.take(self.ready_rid)
                self.ready_rid = None
                self.send("readyok")
            while self.deferred:
                self.finish_search()
                self._execute(self.deferred.popleft())
            self.finish_search()
        finally:
            self.hurry = False

    def flush_pending(self) -> None:
        if self.pending is not None:
            line, self.pending = self.pending, None
            self.send(line)


def _ms_since(started: float) -> int:
    """Whole milliseconds since ``started`` (``time.perf_counter()``): the ``time`` every answer reports,
    from reading its ``go`` (a client takes the rest of its round trip as the pipes' cost)."""
    return max(0, round((time.perf_counter() - started) * 1e3))


def _pv_move(line: str | None, board: chess.Board) -> chess.Move | None:
    """The first move of the ``pv`` of an ``info`` line when it is legal on ``board``."""
    words = (line or "").split()
    if "pv" not in words or words.index("pv") + 1 >= len(words):
        return None
    try:
        move = chess.Move.from_uci(words[words.index("pv") + 1])
    except ValueError:
        return None
    return move if move in board.legal_moves else None


@dataclass
class Search:
    """A ``go`` in flight: its request id, when it was read, what it was asked, and when the
    protocol answers without the engine (``time.monotonic()``; ``None``: when the engine answers,
    or at ``stop``)."""

    rid: int
    started: float
    board: chess.Board
    searchmoves: list[chess.Move]
    limits: GoLimits
    flags: set[str] = field(default_factory=set)
    deadline: float | None = None
    budget_text: str = ""

    @property
    def open_ended(self) -> bool:
        """``go infinite`` / ``go ponder``: its answer waits for ``stop`` or ``ponderhit``."""
        return bool(self.flags & GO_FLAGS)


def serve(stdin: TextIO, stdout: TextIO, **options: Any) -> int:
    """Read commands from ``stdin`` until ``quit`` or end of input (taken as ``quit``). The loop
    waits for a line, the engine's pipe or the search's deadline (:meth:`UciSession.wake_in`),
    whichever comes first; an input that is all there at once (an in-memory stream) is taken a
    line at a time, each after what holds the lines back is done (:meth:`UciSession.settle`)."""
    def send(text: str) -> None:
        stdout.write(text + "\n")
        stdout.flush()

    session = UciSession(send, **options)
    try:
        with Lines(stdin) as lines:
            while True:
                if not lines.waits:
                    session.settle()
                try:
                    got = lines.read(session.wake_in(), also=session.link.waitables())
                except OSError:               # the input has gone (EIO): as its end
                    got = ("", None)
                if got is None:               # the engine sent something, or the deadline came
                    session.poll()
                    continue
                line, problem = got
                if problem is not None:
                    session.info(problem)
                elif not session.handle(line or "quit"):   # the end of input is taken as quit, as Stockfish takes it
                    return 0
    finally:
        session.close()


def main(args: argparse.Namespace | None = None) -> int:
    """``knights uci``: no torch in this process; it loads in the engine process after ``uciok``."""
    try:
        depth = getattr(args, "depth", None)
        if depth is not None and not 1 <= depth <= UNLIMITED_DEPTH:
            print(f"knights uci: --depth must be from 1 to {UNLIMITED_DEPTH}, not {depth}", file=sys.stderr)
            return 2
        return serve(sys.stdin, sys.stdout, evaluator=getattr(args, "evaluator", None), engine_process=True,
                     seed=getattr(args, "seed", None), stochastic=not getattr(args, "deterministic", False),
                     depth=UNLIMITED_DEPTH if depth is None else depth)
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
